"""A results history a team keeps: every run of every result file in one SQLite database, each
row's figures across runs, the change points found in them and what differed there.

  tools/history add FILE... [--db PATH]
      Every row of every result file into the history (default results/history.sqlite), keyed by
      the run's GPU, driver, toolkit and library versions, cubench revision, date, host and
      flags; each row with its median time, the samples' spread, counters, conditions, status and
      kernels. A file added before (the same bytes) adds nothing; a file cut mid-write, or from an
      interrupted run, adds its complete rows and says so. One transaction per file: a crash
      mid-add loses nothing added before it.
  tools/history show [--db PATH] [--gpu NAME] [--filter REGEX] [--min-effect E] [--out-dir DIR]
      Per row, its figures across runs (oldest first) and its change points, each explained by
      what differed between the runs either side (toolkit, a library, driver, cubench revision,
      GPU, power limit, host; the row's clock, power cap and kernels). --out-dir: a chart per
      family (each row's time across runs, its change points marked).
  tools/history regressions --since DATE|REVISION [--db PATH] [--gpu NAME] [--filter REGEX]
                            [--min-effect E] [--alpha A]
      The rows whose newest run on or after DATE (as the files' dates: 2026-12-01) or the first
      run of cubench REVISION is slower than the row's last run before it (or, where no run is
      before it, than its first run since), by the rule tools/compare uses
      (tools/cubench_tools/verdicts.py: a U test over processes where both runs are merged files
      of several processes, else the one-process rule, which calls no change under 10%, nor under
      1.27x in a row host-paced or autotuned): each
      with what differed between the two runs. Exit status 1 when there is any (a CI gate), 0
      when there is none: two one-process runs of one build pass it, as they pass compare.
      A file without a valid run date (context "date", ISO 8601) is refused: runs are ordered
      by it. Every file is checked before any is added.

`show` marks, per run, the verdict against the row's run before it (the same rule) beside the
change points. How a change point is found (change_points.py): a step fit over the runs, as asv's, its penalty
from the series' own run-to-run noise, then kept only where the step is at least --min-effect (2%)
and more than three standard errors of the segments' means. --gpu keeps the runs whose GPU's name
holds NAME: a history of a fleet mixes GPUs, whose figures are not one series.
"""
import datetime
import math
import os
import re
import sqlite3
import statistics
import sys

from . import change_points
from . import cli
from . import history_charts
from . import history_store
from . import json_values
from . import rows as rowsel
from . import verdicts
from .input_error import InputError

DEFAULT_DB = os.path.join("results", "history.sqlite")


def _arguments(argv):
    p = cli.parser("tools/history", __doc__)
    commands = p.add_subparsers(dest="command", required=True, parser_class=cli.Parser)
    add = commands.add_parser("add", help="add result files")
    add.add_argument("files", nargs="+")
    for name in ("show", "regressions"):
        c = commands.add_parser(name, help=f"{name} of the history")
        c.add_argument("--gpu", help="only runs whose GPU's name holds this")
        c.add_argument("--filter", help="only rows whose name matches this regex")
        c.add_argument("--min-effect", type=float, default=verdicts.DEFAULT_MIN_EFFECT,
                       help="the least change called one (default 0.02: 2%%)")
        c.add_argument("--alpha", type=float, default=verdicts.DEFAULT_ALPHA,
                       help="the U test's significance level (default 0.05)")
        if name == "show":
            c.add_argument("--out-dir", help="a chart per family here")
        else:
            c.add_argument("--since", required=True, help="DATE (2026-12-01) or a cubench revision")
    for c in (add, *[commands.choices[n] for n in ("show", "regressions")]):
        c.add_argument("--db", default=DEFAULT_DB, help=f"the history's file (default {DEFAULT_DB})")
    args = p.parse_args(argv)
    # SQLite keeps nothing of "" (a temporary database) or ":memory:": the history is a file.
    if args.db in ("", ":memory:"):
        raise InputError(f"--db {args.db!r}: SQLite's {'temporary' if not args.db else 'in-memory'} "
                         "database keeps nothing; name the history's file (e.g. "
                         f"{DEFAULT_DB}, the default)")
    if args.command == "regressions":
        _check_since(args.since)
    if args.command != "add":
        verdicts.check_options(args.alpha, args.min_effect)
    if getattr(args, "filter", None):
        try:
            args.filter = re.compile(args.filter)
        except re.error as e:
            raise InputError(f"--filter {args.filter!r}: not a valid regex: {e}")
    return args


def add(args):
    # Every file is read and checked before the history is opened: a refused file (not a result
    # file, no valid date) leaves no database behind, nor half of a list of files added.
    checked = [history_store.read_file(path) for path in args.files]
    if args.db == DEFAULT_DB:  # the default's folder is made; a named one must exist
        os.makedirs(os.path.dirname(args.db), exist_ok=True)
    made = not os.path.exists(args.db)
    try:
        db = history_store.connect(args.db)
        for path, read in zip(args.files, checked):
            rows, why = history_store.add_file(db, path, read)
            print(f"{path}: {why}" if rows == 0 and why else
                  f"{path}: {rows} rows added" + (f" ({why})" if why else ""))
    except BaseException:
        if made:  # a history this command made and then added nothing to is not left behind
            history_store.remove_if_empty(args.db)
        raise
    return 0


class StoredRow:
    """A row as the history holds it, read as verdicts.judge reads a result file's: its times (each
    repetition's, or each process's of a merged file) and its counters' medians."""

    def __init__(self, point):
        self.times = list(point["times"])
        self.counters = point["counters"]
        # what the row's label said (its notes: queued, how sampling stopped, autotuned), which
        # the rule reads to know whether a row's time depends on what its process drew
        self.notes = point.get("notes", [])

    def median_time(self):
        return statistics.median(self.times)

    def median(self, counter):
        value = self.counters.get(counter)
        return float(value) if json_values.is_number(value) else math.nan


def judge(before, after, args):
    """The Verdict on a row's later run against its earlier one (two points of a series)."""
    processes = [verdicts.processes_of(p["fields"]) for p in (before, after)]
    return verdicts.judge(StoredRow(before), StoredRow(after), processes[0], processes[1],
                          args.alpha, args.min_effect)


def _ratio_text(ratio):
    """A step's ratio (after / before, of the time) as compare spells a change: "1.41x faster"."""
    return f"{1 / ratio:.3g}x faster" if ratio < 1 else f"{ratio:.3g}x slower"


def show(args):
    db = history_store.connect(args.db, create=False)
    series = history_store.series(db, args.filter, args.gpu)
    if not series:
        raise InputError(f"{args.db}: no measured rows match (--filter, --gpu)")
    changes = change_points.changes_of(series, args.min_effect)
    for name, points in series.items():
        print(f"\n### {name}\n")
        print("| run | date | cubench | CUDA | cuBLAS | GPU | time | spread | against the run before | "
              "change point |")
        print("|---:|---|---|---|---|---|---:|---:|---|---|")
        at = {i: (ratio, words) for i, ratio, words in changes[name]}
        for k, p in enumerate(points):
            f = p["fields"]
            mark = ""
            if k in at:
                ratio, words = at[k]
                mark = f"{_ratio_text(ratio)}: {words}"
            against = ""
            if k > 0:
                v = judge(points[k - 1], p, args)
                against = verdicts.speedup_text(v) if v.called else verdicts.word_of(v)
            spread = "" if p["spread"] is None else f"{100 * p['spread']:.2g}%"
            print(f"| {k + 1} | {p['date'] or ''} | {f.get('git_revision', '')} | "
                  f"{f.get('cuda_toolkit', '')} | {f.get('cublas', '')} | {f.get('gpu', '')} | "
                  f"{rowsel.time_text(p['median_us'])} | {spread} | {against} | {mark} |")
    found = sum(len(c) for c in changes.values())
    runs = len({p["run"] for points in series.values() for p in points})
    print(f"\n{len(series)} rows over {runs} runs; {found} change points "
          f"(a step fit, kept where at least {args.min_effect:.0%} and beyond three standard errors); "
          "spread: the interquartile range over the median of a run's repetitions or processes, "
          "or, of one repetition, its samples' cv")
    if args.out_dir:
        for path in history_charts.trend_charts(cli.output_dir(args.out_dir), series, changes):
            print(path)
    return 0


DATE_LIKE = re.compile(r"\d{4}-\d{2}-\d{2}.*")


def _check_since(since):
    """--since that begins as a date must be one (YYYY-MM-DD or an ISO date-time), not be read as a
    date it is not; anything else is a revision, checked against the runs (_since_index)."""
    if DATE_LIKE.fullmatch(since):
        try:
            datetime.datetime.fromisoformat(since)
        except ValueError:
            raise InputError(f"--since {since}: not a date (YYYY-MM-DD, or an ISO date-time such as "
                             "2026-12-01T09:30)")


def _since_index(points, since):
    """The index of the first point on or after `since` (a date, or a revision's first run)."""
    if DATE_LIKE.fullmatch(since):
        return next((k for k, p in enumerate(points) if (p["date"] or "") >= since), None)
    return next((k for k, p in enumerate(points)
                 if (p["fields"].get("git_revision") or "").startswith(since)), None)


def regressions(args):
    db = history_store.connect(args.db, create=False)
    series = history_store.series(db, args.filter, args.gpu)
    if not series:
        raise InputError(f"{args.db}: no measured rows match (--filter, --gpu)")
    if not any(_since_index(points, args.since) is not None for points in series.values()):
        if not DATE_LIKE.fullmatch(args.since):  # not a date, and no run's revision either
            raise InputError(f"--since {args.since}: not a date (YYYY-MM-DD, or an ISO date-time "
                             "such as 2026-12-01T09:30) nor the cubench revision of any run in "
                             f"{args.db}")
        raise InputError(f"--since {args.since}: no run of the history is on or after it")
    slower = []
    for name, points in series.items():
        first = _since_index(points, args.since)
        if first is None:
            continue
        newest = len(points) - 1
        baseline = first - 1 if first > 0 else first
        if newest == baseline:
            continue  # one run of the row: nothing to judge it against
        before, after = points[baseline], points[newest]
        v = judge(before, after, args)
        if v.word == verdicts.SLOWER:
            slower.append(f"{name}: {verdicts.speedup_text(v)} in run {newest + 1} ({after['date']}, "
                          f"{after['path']}) than in run {baseline + 1} ({before['date']}, "
                          f"{before['path']}): {change_points.explain(before, after)}")
    for line in slower:
        print(line)
    print(f"{len(slower)} row(s) slower since {args.since} by compare's rule "
          f"({verdicts.rule_text(verdicts.UTEST, args.alpha, args.min_effect)}; "
          f"{verdicts.rule_text(verdicts.ONE_PROCESS, args.alpha, args.min_effect)})")
    return 1 if slower else 0


def main(argv):
    args = _arguments(argv)
    try:
        return {"add": add, "show": show, "regressions": regressions}[args.command](args)
    except sqlite3.OperationalError as e:  # the file changed under us: read-only, locked, gone
        raise InputError(f"{args.db}: SQLite cannot use it ({e})")

