"""Compare cubench result files: a verdict per row, by the one rule every tool uses.

  tools/compare BASE.json OTHER.json [MORE.json ...] [--filter R] [--rename R=S] [--rename-in N:R=S]
                [--alpha A] [--min-effect E] [--no-utest] [--table] [--counters C,...]
                [--format md|csv]

One row per benchmark the base file and another file both have; per file its median time (in the
unit that keeps three significant digits: 6.57 us, 1.01 ms), and for each file after the first the
change of the time against the base, the change of the cycles (time x SM clock, where the rows
carry their clock) and the verdict, one of:
  faster / slower     the change is real by the rule below
  same                the change is under --min-effect (default 0.02, 2%), or under what the
                      processes could have shown and the test says nothing
  too noisy to tell   a change the samples cannot tell from noise; the cell says why, e.g.
                      "one process: run more"
The rule (tools/cubench_tools/verdicts.py, which tools/report and tools/history use too):
  - both files merged from several processes of their build (tools/merge-processes and
    tools/run-matrix write them): a process is a sample, and a Mann-Whitney U test over them
    must give p < --alpha (default 0.05) with a median change of at least --min-effect; --no-utest
    asks instead for a change beyond either side's spread (interquartile range / median);
  - a side of one process (cubench's default run, with or without repetitions): a change of at
    least 10%, at least twice either row's own sample spread (sample_cv), with the rows' 95%
    intervals (time_ci_pct) apart; 15% more for each side whose row says its time depends on
    what its process drew (host-paced: gpu_util_pct under 90%, or not queued ahead of the GPU
    with its noise never settled; chosen per process: autotuned). One-process A/A pairs of one
    build differ by up to 15% on a small GEMM and 1.5x on such rows, so a smaller change in one
    process is not called; docs/methodology.md ("Reading a comparison") and
    docs/results/verdict-bars.py show the rule on every committed A/A.
Every threshold is on |ln(other / base)|: swapping the files flips faster and slower, nothing else.
With two files and no --table the table is compact: the two times, the changes and the verdict.
--table (any number of files) adds each file's Mcycles and counters and the U test's p: by default
the main counters of the families compared, then those present of TFLOPS, GBps, busbw_GBps,
images_per_s, peak_mem_bytes and fragmentation; --counters names others (a counter's unit, where
the file's schema declares one, is in its header). --format csv gives the same rows as CSV (times
in microseconds).
Under the table: per file after the first, one line that counts its verdicts ("B against A:
faster in 18 of 24 rows (1.05-3.3x), slower in 1 (...), the same in 3, too noisy to tell in 2");
rows a file lacks, by name; rows a file did not time (an error, or a skip: not run, not
supported), with their message in the time cell; rows whose family a build left out (the
family needs an optional library the file's context "not_built" says the build went without),
marked `not built`; `!` after a verdict where the files' SM clocks differ by more than 5% in the
row, and the faster/slower rows whose cycles changed under --min-effect (the clock made the
difference, not the work); the rows where both files name what ran (cubench
--cubench_kernels=on names the kernels; gemm names its cuBLASLt algorithm) and it differs;
files run on different GPUs. Two files that would read the same in a header (the same stack) are
told apart by GPU, then file name, then path.

Bad input is one line on stderr and exit status 2: a file that is not a result file (not a file,
not UTF-8, not JSON, not Google Benchmark output, a field of the wrong type), files that share no
benchmark, --filter that matches nothing or is not a regex, --alpha outside (0, 1), --min-effect
outside [0, 1), an unknown counter. A file cut mid-write (its run killed), or from a run
interrupted (Ctrl-C), loads its complete rows with a warning.
"""
import csv
import io
import math
import os
import sys

from . import cli
from . import rows as rowsel
from . import verdicts
from .build_context import ran_on
from .input_error import InputError
from .result_schema import merged_schema, unit
from .results import load

# The counter columns a table shows by default besides its families' main counters, and all of
# them for files written before the schema: the table these files always gave.
LEGACY_SHOWN = ("TFLOPS", "GBps", "busbw_GBps", "images_per_s", "peak_mem_bytes", "fragmentation")


def parse_args(argv):
    p = cli.parser("tools/compare", __doc__)
    p.add_argument("files", nargs="+", help="result JSON files (Google Benchmark format); the first is the base")
    p.add_argument("--table", action="store_true", help="the full table: Mcycles, counters and p per file")
    p.add_argument("--format", choices=("md", "csv"), default="md", help="md (default) or csv")
    p.add_argument("--filter", help="regex on benchmark names (after renaming)")
    p.add_argument("--alpha", type=float, default=verdicts.DEFAULT_ALPHA,
                   help=f"significance level of the U test (default {verdicts.DEFAULT_ALPHA})")
    p.add_argument("--min-effect", type=float, default=verdicts.DEFAULT_MIN_EFFECT,
                   help=f"smallest relative change called a change (default {verdicts.DEFAULT_MIN_EFFECT})")
    p.add_argument("--rename", action="append", default=[], metavar="REGEX=REPLACEMENT",
                   help="rewrite names before matching (e.g. 'sigmoid/torch/=sigmoid/vectorized/')")
    p.add_argument("--rename-in", action="append", default=[], metavar="N:REGEX=REPLACEMENT",
                   help="as --rename, in the Nth file only (1-based): e.g. '1:_graph/=/' sets a "
                        "graph variant against the other file's eager rows")
    p.add_argument("--counters", help="comma-separated counters to show (implies --table), any the "
                                      "compared rows carry (default with --table: the main counters of "
                                      f"their families, then those present of {','.join(LEGACY_SHOWN)})")
    p.add_argument("--no-utest", action="store_true",
                   help="merged files: a change beyond either side's spread instead of the U test")
    args = p.parse_args(argv)
    if len(args.files) < 2:
        raise InputError("compare needs at least two files: the base and one to judge against it")
    args.filter_given = args.filter is not None
    args.filter = "." if args.filter is None else args.filter
    args.counters_given = args.counters is not None
    args.full = args.table or args.counters_given or len(args.files) > 2
    verdicts.check_options(args.alpha, args.min_effect)
    return args


def fmt(x):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return f"{x:.4g}" if abs(x) < 1000 or abs(x) >= 1e6 else f"{x:.0f}"


def is_timed(result):
    return result is not None and result.measured()


def carries_clocks(loaded, names):
    """Whether the cycles columns are shown: a compared row of some file carries its SM clock."""
    return any(n in res and any(not math.isnan(c) for c in res[n].clocks)
               for _, _, res in loaded for n in names)


def column(counter, schema):
    """A counter's column name: with its unit where the schema declares one."""
    u = unit(counter, schema)
    return f"{counter} ({u})" if u and u != counter else counter


def shown_counters(args, loaded, names, schema):
    """The counter columns: --counters as given, each one the compared rows carry (another is an
    error that lists those they carry); with --table by default the main counters of the families
    in the table, then those of LEGACY_SHOWN, each where a compared row carries it; none in the
    compact two-file table."""
    if not args.full:
        return []
    present = []
    for _, _, results in loaded:
        for n in names:
            for c in (results[n].counters if n in results else ()):
                if c not in present:
                    present.append(c)
    if args.counters_given:
        wanted = [c for c in args.counters.split(",") if c]
        unknown = [c for c in wanted if c not in present]
        if unknown:
            carried = ", ".join(sorted(present, key=str.lower)) or "none"
            raise InputError(f"--counters: unknown counter(s) {', '.join(unknown)}: not in the "
                             f"compared rows, whose counters are: {carried}")
        return list(dict.fromkeys(wanted))
    mains = []
    for _, _, results in loaded:
        for n in names:
            family = schema.families.get(results[n].family) if schema is not None and n in results else None
            if family is not None and family.main_counter:
                mains.append(family.main_counter)
    return [c for c in dict.fromkeys(mains + list(LEGACY_SHOWN)) if c in present]


class Table:
    """The compared rows of the files and every verdict, ready to print."""

    def __init__(self, files, args):
        self.args = args
        rules = rowsel.rename_rules(files, args.rename, args.rename_in)
        self.loaded = [(path,) + load(path, r) for path, r in zip(files, rules)]
        contexts = [ctx for _, ctx, _ in self.loaded]
        self.schema = merged_schema(contexts)
        self.processes = [verdicts.processes_of(ctx) for ctx in contexts]
        self.labels = rowsel.unique_labels(files, contexts)
        wanted = rowsel.name_filter(args.filter)
        base_path, _, base = self.loaded[0]
        if args.filter_given and not any(wanted.search(n) for _, _, res in self.loaded for n in res):
            raise InputError(f"--filter '{args.filter}' matches no benchmark of the files")
        self.left_out = rowsel.LeftOut(self.loaded, self.schema)
        names = [n for n in base if wanted.search(n) and any(n in r for _, _, r in self.loaded[1:])]
        self.names = names + self.left_out.rows(names, wanted)
        if not self.names:
            matching = f" matching --filter '{args.filter}'" if args.filter_given else ""
            raise InputError(f"no benchmark of {base_path}{matching} is in the other files (names must "
                             "match exactly; --rename can map one naming onto another)")
        self.missing = rowsel.missing_rows(self.loaded, self.names, wanted, self.left_out)
        self.counters = shown_counters(args, self.loaded, self.names, self.schema)
        self.cycles = carries_clocks(self.loaded, self.names)
        # (row, file index) -> Verdict, for every row both the base and the file timed
        self.verdicts = {}
        for n in self.names:
            b = base.get(n)
            for i, (_, _, res) in enumerate(self.loaded[1:], 1):
                r = res.get(n)
                if is_timed(b) and is_timed(r):
                    self.verdicts[(n, i)] = verdicts.judge(
                        b, r, self.processes[0], self.processes[i], args.alpha, args.min_effect,
                        args.no_utest)

    def header(self):
        csv_form = self.args.format == "csv"
        out = ["benchmark"]
        for i, lab in enumerate(self.labels):
            out.append(f"{lab}: time us" if csv_form else (lab if not self.args.full else f"{lab}: time"))
            if self.args.full:
                out += [f"{lab}: Mcycles"] if self.cycles else []
                out += [f"{lab}: {column(c, self.schema)}" for c in self.counters]
            if i > 0:
                out.append(f"{lab}: change %" if self.args.full or len(self.labels) > 2 else "change %")
                if self.cycles:
                    out.append(f"{lab}: cycles change %" if self.args.full else "cycles change %")
                out += [f"{lab}: p"] if self.args.full else []
                out.append(f"{lab}: verdict" if self.args.full else "verdict")
        return out

    def cells(self, name, i):
        """File i's cells of row name."""
        path, _, res = self.loaded[i]
        r, b = res.get(name), self.loaded[0][2].get(name)
        width = 1 + ((1 if self.cycles else 0) + len(self.counters) if self.args.full else 0)
        judge_width = (1 + (1 if self.cycles else 0) + (1 if self.args.full else 0) + 1) if i > 0 else 0
        if not is_timed(r):
            if r is not None and r.message:
                # a table to read gets the message cut to its first clauses; CSV keeps it whole
                cell = r.message if self.args.format == "csv" else rowsel.short_message(r.message, name)
            else:
                cell = rowsel.NOT_BUILT if self.left_out.why(name, i) else "missing"
            return [cell] + [""] * (width - 1 + judge_width)
        time = fmt(r.median_time()) if self.args.format == "csv" else rowsel.time_text(r.median_time())
        cells = [time]
        if self.args.full:
            cells += [fmt(r.mcycles())] if self.cycles else []
            cells += [fmt(r.median(c)) for c in self.counters]
        if i == 0:
            return cells
        v = self.verdicts.get((name, i))
        if v is None:
            return cells + [""] * judge_width
        cells.append(f"{v.change * 100:+.1f}")
        if self.cycles:
            cycles_change = (r.mcycles() / b.mcycles() - 1) * 100
            cells.append("" if math.isnan(cycles_change) else f"{cycles_change:+.1f}")
        if self.args.full:
            cells.append("" if v.p is None else f"{v.p:.3g}")
        word = verdicts.word_of(v)
        if rowsel.clock_differs(b, r):
            word += " !"
        return cells + [word]

    def rows(self):
        return [[n] + [c for i in range(len(self.loaded)) for c in self.cells(n, i)] for n in self.names]

    def notes(self):
        a, notes = self.args, []
        gpus = {ran_on(ctx) for _, ctx, _ in self.loaded}
        if len(gpus) > 1:
            notes.append(f"files ran on different GPUs: {', '.join(sorted(gpus))}")
        for i in range(1, len(self.loaded)):
            judged = [(n, self.verdicts[(n, i)]) for n in self.names if (n, i) in self.verdicts]
            if judged:
                notes.append(verdicts.summary(self.labels[i], self.labels[0], judged))
        rules = {v.rule for v in self.verdicts.values()}
        if rules:
            notes.append("faster / slower: " + "; or, ".join(
                verdicts.rule_text(r, a.alpha, a.min_effect) for r in
                (verdicts.UTEST, verdicts.NO_UTEST, verdicts.ONE_PROCESS) if r in rules)
                + " (docs/methodology.md, Reading a comparison)")
        if any(v.why.startswith("one process") for v in self.verdicts.values()):
            notes.append(verdicts.ONE_PROCESS_CAVEAT)
        notes += self.left_out.notes(self.names, self.labels)
        notes += rowsel.missing_notes(self.missing, self.labels)
        untimed = [f"{n} in {self.labels[i]}" for n in self.names for i, (_, _, res) in enumerate(self.loaded)
                   if n in res and not is_timed(res[n])]
        if untimed:
            cut = [f"{n} in {self.labels[i]}: {res[n].message}" for n in self.names
                   for i, (_, _, res) in enumerate(self.loaded)
                   if n in res and not is_timed(res[n]) and res[n].message
                   and rowsel.short_message(res[n].message, n).endswith(" ...")]
            notes.append(f"not timed, no verdict ({len(untimed)}; the message is in the time cell"
                         + (", whole below where cut" if cut else "") + "): " + rowsel.named(untimed))
            notes += cut
        if any(rowsel.clock_differs(self.loaded[0][2][n], self.loaded[i][2][n])
               for (n, i) in self.verdicts):
            notes.append(f"! after a verdict: the two files' median SM clocks differ by more than "
                         f"{rowsel.CLOCK_MARK * 100:g}% in that row")
        judged = [(n, self.labels[i], v, self.cycles_change(n, i)) for (n, i), v in self.verdicts.items()]
        clocked = rowsel.clock_made_it(judged, a.min_effect, len(self.loaded) > 2)
        if clocked:
            notes.append(clocked)
        ran = self.ran_differently()
        if ran:
            notes.append(ran)
        return notes

    def cycles_change(self, name, i):
        b, r = self.loaded[0][2][name], self.loaded[i][2][name]
        return r.mcycles() / b.mcycles() - 1  # NaN where a side has no clock

    def ran_differently(self):
        """The note on faster/slower rows where both files name what ran and it differs."""
        lines = []
        for (n, i), v in self.verdicts.items():
            if not v.called:
                continue
            differs = rowsel.ran_differently(self.loaded[0][2][n], self.loaded[i][2][n])
            if differs:
                mine, theirs = differs
                lines.append(f"- {n}: {v.word} under {self.labels[i]}, where {mine}; under "
                             f"{self.labels[0]}, {theirs}")
        if not lines:
            return None
        return (f"{len(lines)} faster or slower verdict(s) where another kernel or algorithm ran:\n"
                + "\n".join(lines))


def render(header, rows, notes, form):
    if form == "csv":
        out = io.StringIO()
        w = csv.writer(out)
        w.writerow(header)
        w.writerows(rows)
        return out.getvalue()
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    lines += [f"\n{n}" for n in notes]
    return "\n".join(lines) + "\n"


def build_table(files, args):
    """(header, rows, notes) of the files compared."""
    t = Table(files, args)
    return t.header(), t.rows(), t.notes()


def main(argv):
    args = parse_args(argv)
    header, rows, notes = build_table(args.files, args)
    sys.stdout.write(render(header, rows, notes, args.format))
    return 0
