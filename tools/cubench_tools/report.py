"""The one page a user hands their team: two or more cubench result files (one per build, e.g. a
CUDA toolkit each), compared, as one Markdown file and one self-contained HTML file.

  tools/report --out PATH [LABEL=]RESULT.json [LABEL=]RESULT.json [...]
               [--filter R] [--rename R=S] [--rename-in N:R=S] [--alpha A] [--min-effect E]
               [--no-utest] [--history DB]

e.g. tools/report --out report 11.8=cuda-11.8.json 12.4=cuda-12.4.json 13.0=cuda-13.0.json

--history DB (a tools/history database) adds a trend section at the end: each compared row's time
across the history's runs on the base build's GPU, a chart per family with its change points.

Writes PATH.md (GitHub shows it; its charts are PNGs in PATH-charts/, beside it) and PATH.html
(one file: its charts embedded, nothing outside it needed), and prints their paths. LABEL names a
build on the page (without one, the stack the file names: "CUDA 13.0 (cuBLAS 13.1.0)"; a LibTorch
build's, by its PyTorch: "LibTorch 2.5.1+cu124 (CUDA 12.4, cuDNN 9.1.0, cuBLAS 12.4.5)"). Builds
of one PyTorch install (tools/run-matrix --torch under two labels) are said, first, to be an A/A.
A run without a GPU is titled by the CPU ("the CPU (no GPU)"). The first file is the base: every
other build is judged against it, row by row, by tools/compare's rule
(tools/cubench_tools/verdicts.py: a U test over processes where both files are merged from
several; else the one-process rule, which calls no change under 10%; the options are compare's).
The page holds:
  - first, per other build, its rows counted against the base ("13.0 against 11.8: faster in 43
    of 78 rows (1.02-5.89x), slower in 1 (...), the same in 31, too noisy to tell in 3") and one
    recommendation with its reason (pick it, keep the base, either, or no pick: a pick needs
    faster or slower rows whose cycles changed too, more of them than the rule's false-positive
    rate makes likely among that many rows); with three builds or more, each build against the
    one before it as well; then each family's
    sentence (a family is mixed only where its called rows split past a quarter) and how to read
    the page;
  - per family, its verdict in one sentence made from its rows ("13.0 is 2.1-3.3x faster than
    11.8 at svd (4 of 4 rows significant); 12.4 gained nothing there (no significant change)"),
    then the rows behind it: each build's median time, speed-up, verdict and significance (a
    row's long message, such as why it was not timed, cut to its first clauses in the cell, [1],
    and whole under the table); and the family's chart (tools/plot's);
  - the GPU's conditions during each build's run: GPU, power cap and clocks, the SM clock the
    samples ran at, rows power-capped or throttled, other processes on the GPU, the samples;
  - the kernels that changed: rows whose notes name other kernels (cubench --cubench_kernels=on)
    or another cuBLASLt algorithm than the base's;
  - what was not built and why (context "not_built"), rows not run (context "not_run": a list of
    {"family", "reason", "configurations"}, or JSON text of one), rows skipped (their status not
    run or not supported, with its reason: skips, not failures) and rows missing for no reason a
    file gives;
  - the cost side: the start-up families' rows, peak memory (peak_mem_bytes / used_mem_bytes)
    per family and build, the first calls' time;
  - the exact commands (context "command_line", which tools/run-matrix records; else the
    executable) and every version and build field of each file's context, with what the puzzling
    ones mean (cuda_architectures, google_benchmark, ...).
A build of one process is judged by the one-process rule, and its significance cells say so
("one process a side: one process: run more"): merge several processes per build
(tools/run-matrix, or tools/merge-processes) for verdicts on smaller changes.
Bad input (a file missing, not JSON, not Google Benchmark's, fewer than two files, two files with
one label, an unwritable PATH) is one line on stderr and exit status 2, and nothing is written.
"""
import copy
import json
import math
import os
import re
import shlex
import statistics
import sys

from . import cli
from . import family_charts
from . import ratio_chart as ratio_chart_module
from . import rows as rowsel
from . import verdicts
from .verdicts import FASTER, SAME, SLOWER, TOO_NOISY
from .page import (Bullets, Chart, Code, CodeBlock, Details, Folded, Heading, Paragraph, Strong,  # noqa: E402
                         Table, Verdict, html_page, markdown)
from .results import (MEASURED, NOT_BUILT_FIELD, SCHEMA_FIELD, SKIPS, InputError, label_of,  # noqa: E402
                     load, merged_schema, not_built_of, ran_on)

PROG = "tools/report"
# Context fields that may hold the command a file was made with, the first present wins:
# tools/run-matrix records "command_line"; the others are read where a runner wrote them.
COMMAND_FIELDS = ("command_line", "command", "cubench_command", "argv")
NOT_RUN_FIELD = "not_run"
# The families whose rows are a cost (a fresh process per sample), not a speed.
STARTUP = "startup"
# A speed-up is written as a multiple from here on ("2.1x faster"), as a percentage below it.
MULTIPLE_FROM = 1.5
# A row's peak memory that moved by this much against the base is named under the memory table.
MEMORY_CHANGE = 0.10
# The most characters of a row's message (an error, a reason it was not run) that a table cell
# shows: a longer one would widen its column until the times beside it scroll off the page; the
# whole message goes under the table.
SHORT_MESSAGE = 40
# Where a message is cut into clauses for its short form: after ":", ";", "." or "," and before "(".
CLAUSE_END = re.compile(r"(?<=[:;.,]) | (?=\()")
# Context fields with a section of their own (conditions, commands, builds), left out of the
# table of versions and build fields.
SHOWN_ELSEWHERE = {SCHEMA_FIELD, NOT_BUILT_FIELD, NOT_RUN_FIELD, *COMMAND_FIELDS, "executable", "note",
                   "gpu", "gpu_power_limit_W", "gpu_default_sm_clock_mhz", "gpu_max_sm_clock_mhz",
                   "gpu_other_processes_at_start", "nvml", "copy_ceiling_GBps", "processes",
                   "process_dates", "date", "interrupted"}
# tools/plot's hand-made charts and the family each belongs to; a generic chart is its family's
# name with / as _ (family_charts.generic).
OTHER = ""  # the charts of no family with a section of its own
HAND_MADE_CHART_FAMILY = {"gemm.png": "gemm", "sigmoid.png": "sigmoid", "allreduce.png": "allreduce",
                          "svd.png": "svd", "resnet.png": "resnet50_train",
                          "resnet-memory.png": "resnet50_train", "transformer.png": "transformer_fwd"}


# --- the command line -----------------------------------------------------------------------------

def parse_args(argv):
    p = cli.parser(PROG, __doc__)
    p.add_argument("files", nargs="+", metavar="[LABEL=]RESULT.json",
                   help="a result file per build, the base first; LABEL names the build on the page")
    p.add_argument("--out", required=True, metavar="PATH",
                   help="writes PATH.md, PATH.html and PATH-charts/ (the Markdown's charts)")
    p.add_argument("--filter", help="regex on benchmark names (after renaming)")
    p.add_argument("--rename", action="append", default=[], metavar="REGEX=REPLACEMENT",
                   help="rewrite names before matching, as tools/compare's")
    p.add_argument("--rename-in", action="append", default=[], metavar="N:REGEX=REPLACEMENT",
                   help="as --rename, in the Nth file only (1-based)")
    p.add_argument("--alpha", type=float, default=verdicts.DEFAULT_ALPHA,
                   help=f"significance level (default {verdicts.DEFAULT_ALPHA})")
    p.add_argument("--min-effect", type=float, default=verdicts.DEFAULT_MIN_EFFECT,
                   help=f"smallest relative change called a change (default {verdicts.DEFAULT_MIN_EFFECT})")
    p.add_argument("--no-utest", action="store_true", help="no significance test (the spread rule alone)")
    p.add_argument("--history", metavar="DB",
                   help="a tools/history database: a trend chart per family of the compared rows "
                        "across its runs on the base build's GPU, change points marked")
    args = p.parse_args(argv)
    args.filter_given = args.filter is not None
    args.filter = "." if args.filter is None else args.filter
    verdicts.check_options(args.alpha, args.min_effect)
    if len(args.files) < 2:
        raise InputError("needs two result files or more, one per build (the base first), "
                         f"got {len(args.files)}")
    return args


def label_and_path(spec):
    """(label or None, path) of LABEL=RESULT.json or RESULT.json; a path that exists as given is a
    path even where it holds '='."""
    if "=" not in spec or os.path.exists(spec):
        return None, spec
    label, path = spec.split("=", 1)
    if not label.strip() or not path:
        raise InputError(f"'{spec}': want LABEL=RESULT.json (e.g. 11.8=cuda-11.8.json) or RESULT.json")
    return label.strip(), path


def output_paths(out):
    """(PATH.md, PATH.html, PATH-charts) for --out PATH (a .md or .html ending is let be)."""
    stem = re.sub(r"\.(md|html)$", "", out)
    # '', '.md', 'dir/' or '.' name no file: their outputs would be hidden ones (.md, .html, -charts)
    if os.path.basename(stem) in ("", ".", ".."):
        raise InputError(f"--out {out!r}: names no file; give PATH for PATH.md, PATH.html and "
                         "PATH-charts/ (e.g. --out report)")
    return stem + ".md", stem + ".html", stem + "-charts"


def check_outputs(md_path, html_path, charts_dir):
    """Every output checked before any work, so bad input writes nothing."""
    cli.check_output_file(md_path, "--out")
    cli.check_output_file(html_path, "--out")
    if os.path.exists(charts_dir) and not os.path.isdir(charts_dir):
        raise InputError(f"--out {charts_dir}: exists and is not a directory (the charts' folder)")
    if os.path.isdir(charts_dir):  # one there already is written into: found out now, not after
        cli.output_dir(charts_dir, "--out")


# --- the builds and their rows --------------------------------------------------------------------

class Build:
    """One result file: its label on the page, its context and its rows {name: Result}."""

    def __init__(self, label, path, context, results):
        self.label, self.path, self.context, self.results = label, path, context, results
        self.not_built = not_built_of(context, path)
        self.not_run = not_run_of(context, path)

    def processes(self):
        return verdicts.processes_of(self.context)

    def repetitions(self):
        """The most samples any row of the file has (a merged file's sample is a process)."""
        return max((len(r.times) for r in self.results.values()), default=0)

    def samples_text(self):
        processes = self.context.get("processes")
        if processes:
            return f"{processes} processes, one sample each"
        n = self.repetitions()
        if n > 1:
            return f"one process, {n} repetitions"
        return "one process, one repetition: no significance test"


def not_run_of(context, path):
    """[{"family", "reason", "configurations"}] of context "not_run" (a list, or JSON text of one,
    as a string is what Google Benchmark's context holds); [] where the file has none."""
    value = context.get(NOT_RUN_FIELD)
    if value is None:
        return []
    where = f"{path}: context \"{NOT_RUN_FIELD}\""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as e:
            raise InputError(f"{where} is not JSON ({e.msg} at line {e.lineno} column {e.colno})")
    entry_ok = (lambda e: isinstance(e, dict) and isinstance(e.get("family"), str)
                and isinstance(e.get("reason"), str)
                and isinstance(e.get("configurations", []), (int, str, list)))
    if not isinstance(value, list) or not all(entry_ok(e) for e in value):
        raise InputError(f"{where} is not a list of {{\"family\": ..., \"reason\": ..., "
                         "\"configurations\": ...}} objects")
    return value


def load_builds(args):
    specs = [label_and_path(spec) for spec in args.files]
    rules = rowsel.rename_rules(args.files, args.rename, args.rename_in)
    read = [(label, path) + load(path, file_rules) for (label, path), file_rules in zip(specs, rules)]
    labels = build_labels([(label, path, ctx) for label, path, ctx, _ in read])
    return [Build(lab, path, ctx, res) for lab, (_, path, ctx, res) in zip(labels, read)]


def build_labels(specs):
    """Each build's label: the one given, else the stack its file names; never two alike (two
    given alike is an error; files of one stack are told apart as tools/compare tells them)."""
    given = [label for label, _, _ in specs if label is not None]
    twice = sorted({label for label in given if given.count(label) > 1})
    if twice:
        raise InputError(f"two files are labelled '{twice[0]}': a label names one build")
    return rowsel.unique_labels([path for _, path, _ in specs], [ctx for _, _, ctx in specs],
                                [label for label, _, _ in specs])


def timed(result):
    return result is not None and result.measured()


class Judgement:
    """One row of one build against the base: the verdict on its time (verdicts.judge, the rule
    every tool uses), with what the page says about it."""

    def __init__(self, base, other, args, base_processes, processes):
        self.verdict = verdicts.judge(base, other, base_processes, processes, args.alpha,
                                      args.min_effect, args.no_utest)
        self.word, self.p = self.verdict.word, self.verdict.p
        self.speedup = base.median_time() / other.median_time()
        self.cycles_change = other.mcycles() / base.mcycles() - 1  # NaN without clocks
        self.clock_mark = rowsel.clock_differs(base, other)
        self.significance = self.significance_text()

    def significance_text(self):
        v = self.verdict
        if v.rule == verdicts.ONE_PROCESS:
            return "one process a side" + (f": {v.why}" if v.why else "")
        if v.rule == verdicts.NO_UTEST:
            return "no U test (--no-utest)" + (f": {v.why}" if v.why else "")
        return f"p = {v.p:.2g}" + (f" ({v.why})" if v.why else "")


class Comparison:
    """The rows compared (compare --table's: the base's rows another build has, and rows a build
    left out with a reason), their families, and each other build's judgement of each."""

    def __init__(self, builds, args):
        self.builds, self.base, self.others, self.args = builds, builds[0], builds[1:], args
        self.schema = merged_schema([b.context for b in builds])
        self.left_out = rowsel.LeftOut([(b.path, b.context, b.results) for b in builds], self.schema)
        self.names = self.compared_names()
        self.family = {n: self.family_of(n) for n in self.names}
        self.judgements = {}
        for n in self.names:
            for i, b in enumerate(builds[1:], 1):
                base_r, r = self.base.results.get(n), b.results.get(n)
                if timed(base_r) and timed(r):
                    self.judgements[(n, i)] = Judgement(base_r, r, args, self.base.processes(),
                                                        b.processes())

    def compared_names(self):
        wanted = rowsel.name_filter(self.args.filter)
        base = self.base.results
        if self.args.filter_given and not any(wanted.search(n) for b in self.builds for n in b.results):
            raise InputError(f"--filter '{self.args.filter}' matches no benchmark of the files")
        names = [n for n in base if wanted.search(n) and any(n in b.results for b in self.others)]
        names += self.left_out.rows(names, wanted)
        if not names:
            matching = f" matching --filter '{self.args.filter}'" if self.args.filter_given else ""
            raise InputError(f"no benchmark of {self.base.path}{matching} is in the other files (names "
                             "must match exactly; --rename can map one naming onto another)")
        return names

    def family_of(self, name):
        return next(b.results[name] for b in self.builds if name in b.results).family

    def families(self):
        """{family: [row names]}, in the order the rows come."""
        out = {}
        for n in self.names:
            out.setdefault(self.family[n], []).append(n)
        return out

    def why_not_built(self, name, i):
        return self.left_out.why(name, i)


def is_startup(family):
    return family == STARTUP or family.startswith(STARTUP + "/")


def row_title(name, family=None):
    """A row as the page names it: without Google Benchmark's "/manual_time", and in its family's
    table without the family ("gesvd/fp32/1024")."""
    base = name[:-len("/manual_time")] if name.endswith("/manual_time") else name
    return base[len(family) + 1:] if family and base.startswith(family + "/") else base


# --- the words --------------------------------------------------------------------------------------

def fmt_time(us):
    for unit, scale in (("s", 1e6), ("ms", 1e3), ("us", 1.0)):
        if us >= scale:
            return f"{us / scale:.4g} {unit}"
    return f"{us * 1e3:.4g} ns"


def fmt_bytes(n):
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"


def fmt_multiple(r):
    return f"{r:.1f}" if r >= MULTIPLE_FROM else f"{r:.2f}"


def fmt_percent(r):
    pct = (r - 1) * 100
    return f"{pct:.0f}" if round(pct, 1) >= 10 else f"{pct:.1f}"  # 9.97 reads 10, not 10.0


def fmt_range(ratios):
    """Factors above 1 as a reader says them, in one unit: "2.1-3.3x" (or "1.08-2.0x") where the
    largest is MULTIPLE_FROM or more, else "5.2-8.0%"; one value where they all read alike."""
    fmt, unit = (fmt_multiple, "x") if max(ratios) >= MULTIPLE_FROM else (fmt_percent, "%")
    lo, hi = fmt(min(ratios)), fmt(max(ratios))
    return f"{hi}{unit}" if lo == hi else f"{lo}-{hi}{unit}"


def rows_word(n):
    return f"{n} row" if n == 1 else f"{n} rows"


class Outcome:
    """One build's rows of one family against the base, counted for the family's sentence."""

    def __init__(self, label, judgements, not_built_why):
        self.label, self.n, self.not_built_why = label, len(judgements), not_built_why
        self.faster = [j.speedup for j in judgements if j.word == FASTER]
        self.slower = [1 / j.speedup for j in judgements if j.word == SLOWER]
        self.noisy = sum(j.word == TOO_NOISY for j in judgements)
        self.one_process = any(j.verdict.rule == verdicts.ONE_PROCESS for j in judgements)

    def weight(self):
        """The clause with the most to say comes first."""
        return (len(self.faster) + len(self.slower),)


def clause(outcome, base_label, family, first, no_utest):
    """One build's part of a family's sentence; the family is named in the first clause ("at
    svd"), the later ones say "there"."""
    o, place = outcome, (f"at {family}" if first else "there")
    if o.not_built_why:
        return f"{o.label} was built without {family if first else 'it'} ({o.not_built_why})"
    if o.n == 0:
        return f"{o.label} has no row of {family if first else 'it'} to compare"
    kind = "called" if o.one_process else ("beyond their spread" if no_utest else "significant")
    counted = f"{len(o.faster) + len(o.slower)} of {rows_word(o.n)} {kind}"
    noisy = f"; {o.noisy} too noisy to tell" if o.noisy else ""
    if o.faster and o.slower:
        return (f"{o.label} is faster than {base_label} {place} in {len(o.faster)} of {rows_word(o.n)} "
                f"({fmt_range(o.faster)}) and slower in {len(o.slower)} ({fmt_range(o.slower)}){noisy}")
    if o.faster:
        return f"{o.label} is {fmt_range(o.faster)} faster than {base_label} {place} ({counted}{noisy})"
    if o.slower:
        return f"{o.label} is {fmt_range(o.slower)} slower than {base_label} {place} ({counted}{noisy})"
    if o.noisy:
        return (f"{o.label} gained nothing {place} that the samples can show ({o.noisy} of "
                f"{rows_word(o.n)} too noisy to tell)")
    return f"{o.label} gained nothing {place} (every row the same)"


def family_outcomes(comparison, family, names):
    """Each other build's Outcome at the family, in build order; None where the base has no
    timed row of it (nothing to compare against)."""
    c = comparison
    if not any(timed(c.base.results.get(n)) for n in names):
        return None
    outcomes = []
    for i, b in enumerate(c.others, 1):
        judged = [c.judgements[(n, i)] for n in names if (n, i) in c.judgements]
        whys = [c.why_not_built(n, i) for n in names]
        why = whys[0] if whys and all(whys) and not judged else None
        outcomes.append(Outcome(b.label, judged, why))
    return outcomes


def family_sentence(comparison, family, names):
    """The family's verdict in one sentence, from its rows' judgements."""
    c = comparison
    outcomes = family_outcomes(c, family, names)
    if outcomes is None:
        why = next((c.why_not_built(n, 0) for n in names if c.why_not_built(n, 0)), None)
        lacking = f"was built without it ({why})" if why else "has no timed row of it"
        ran = [b.label for b in c.others if any(timed(b.results.get(n)) for n in names)]
        return (f"Not compared: {c.base.label}, the base, {lacking}"
                + (f"; {' and '.join(ran)} ran it." if ran else "."))
    ordered = sorted(outcomes, key=lambda o: tuple(-w for w in o.weight()))  # stable: build order
    clauses = [clause(o, c.base.label, family, i == 0, c.args.no_utest) for i, o in enumerate(ordered)]
    return "; ".join(clauses) + "."


# --- the page's first sentence: the family verdicts counted ---------------------------------------

FASTER_FAMILY, SLOWER_FAMILY, MIXED_FAMILY, SAME_FAMILY = "faster", "slower", "mixed", "same"
# A family is mixed only where its rows called faster or slower split by more than this: the
# smaller side is over a quarter of them. 21 faster and 3 slower is faster (3 of 24 is 12.5%).
MIXED_SHARE = 0.25


def standing(outcome):
    """Where one build stands at one family against the base: faster, slower, mixed or same;
    None where the family was not compared (the build lacks it)."""
    o = outcome
    if o.not_built_why or o.n == 0:
        return None
    faster, slower = len(o.faster), len(o.slower)
    if not faster and not slower:
        return SAME_FAMILY
    if min(faster, slower) > MIXED_SHARE * (faster + slower):
        return MIXED_FAMILY
    return FASTER_FAMILY if faster > slower else SLOWER_FAMILY


def standings(comparison):
    """{build label: {family: standing or None}}, over every family of the page, in its order."""
    c = comparison
    out = {b.label: {} for b in c.others}
    for family, names in c.families().items():
        outcomes = family_outcomes(c, family, names)
        for b, o in zip(c.others, outcomes or [None] * len(c.others)):
            out[b.label][family] = standing(o) if o is not None else None
    return out


def judged_rows(comparison, i):
    """[(row, Verdict)] of build i against the base, every row both timed."""
    c = comparison
    return [(n, c.judgements[(n, i)].verdict) for n in c.names if (n, i) in c.judgements]


def step_judgements(comparison, j, i):
    """{row: Judgement} of build i against build j (the one before it), every row both timed:
    the question of a user who has j and considers i."""
    c, base, other = comparison, comparison.builds[j], comparison.builds[i]
    out = {}
    for n in c.names:
        b, r = base.results.get(n), other.results.get(n)
        if timed(b) and timed(r):
            out[n] = Judgement(b, r, c.args, base.processes(), other.processes())
    return out


def the_work_changed(judgement, min_effect):
    """Whether a faster or slower row's cycles (time x SM clock) moved too: a row whose cycles
    changed under min_effect ran faster or slower because its clock did, and says nothing of the
    build. A row without clocks is taken at its word."""
    return not abs(judgement.cycles_change) < min_effect  # NaN: not known, so it counts


def recommendation(label, base_label, judgements, min_effect):
    """One line: which build to pick for these rows, and why. judgements: {row: Judgement}. A pick
    needs more than noise: faster or slower rows whose cycles changed as well (not the clock), and
    more of them than the rule's false-positive rate makes likely among that many rows."""
    judged = [(n, j.verdict) for n, j in judgements.items()]
    c = verdicts.counts(judged)
    if not judged:
        return f"No recommendation for {label}: no row both builds timed."
    work = {n for n, j in judgements.items() if j.verdict.called and the_work_changed(j, min_effect)}
    clock = len(c[FASTER]) + len(c[SLOWER]) - len(work)
    faster = [(n, v) for n, v in c[FASTER] if n in work]
    slower = [(n, v) for n, v in c[SLOWER] if n in work]
    noisy = c[TOO_NOISY]
    clock_words = (f"; {clock} more changed with the SM clock only (their cycles did not)"
                   if clock else "")
    allowed = verdicts.noise_calls(len(judged))
    if faster or slower:
        if len(faster) + len(slower) <= allowed:
            return (f"No pick between {label} and {base_label}: {len(faster) + len(slower)} of "
                    f"{rows_word(len(judged))} called, no more than the rule calls between two "
                    f"runs of one build ({allowed} of {len(judged)} at 1 in "
                    f"{1 / verdicts.FALSE_POSITIVE_RATE:.0f}){clock_words}.")
    if faster and not slower:
        return (f"Pick {label} over {base_label}: faster in {rows_word(len(faster))} and slower in "
                f"none{clock_words}.")
    if slower and not faster:
        return (f"Keep {base_label}: {label} is slower in {rows_word(len(slower))} and faster in "
                f"none{clock_words}.")
    if faster and slower:
        gain = statistics.geometric_mean([v.speedup for _, v in faster + slower])
        worst = ", ".join(row_title(n) for n, _ in sorted(slower, key=lambda x: x[1].speedup)[:3])
        more = f" and {len(slower) - 3} more" if len(slower) > 3 else ""
        if gain >= 1:
            return (f"Pick {label} over {base_label} unless your workload is among its slower rows "
                    f"({worst}{more}): across the {len(faster) + len(slower)} rows that changed it is "
                    f"{gain:.3g}x faster (geometric mean){clock_words}.")
        return (f"Keep {base_label} unless your workload is among {label}'s faster rows: across the "
                f"{len(faster) + len(slower)} rows that changed {label} is {1 / gain:.3g}x slower "
                f"(geometric mean){clock_words}.")
    if clock:
        return (f"No pick between {label} and {base_label}: every row called changed with the SM "
                f"clock only ({clock}), not the work.")
    if noisy:
        return (f"No reason to switch to {label} that these files can show: {len(noisy)} of "
                f"{len(judged)} rows are too noisy to tell; run more processes per build "
                "(tools/run-matrix) to decide.")
    return f"Either {label} or {base_label}: every row is the same."


def overall_blocks(comparison):
    """The page's first words: per other build, its rows against the base counted (the rule every
    tool uses), then one recommendation line with its reason; with three builds or more, each
    build against the one before it as well (the upgrade a user of that one weighs)."""
    c = comparison
    blocks = []
    for i, b in enumerate(c.others, 1):
        judged = judged_rows(c, i)
        line = verdicts.summary(b.label, c.base.label, judged) if judged else \
            f"{b.label} against {c.base.label}: no row both timed"
        not_compared = [f for f, st in standings(c)[b.label].items() if st is None]
        tail = f"; not compared: {', '.join(not_compared)}." if not_compared else "."
        blocks.append(Paragraph([Strong(b.label), line[len(b.label):] + tail]))
        judgements = {n: c.judgements[(n, i)] for n in c.names if (n, i) in c.judgements}
        blocks.append(Paragraph(recommendation(b.label, c.base.label, judgements, c.args.min_effect)))
    for i in range(2, len(c.builds)):
        before, b = c.builds[i - 1], c.builds[i]
        step = step_judgements(c, i - 1, i)
        judged = [(n, j.verdict) for n, j in step.items()]
        line = verdicts.summary(b.label, before.label, judged) if judged else \
            f"{b.label} against {before.label}: no row both timed"
        blocks.append(Paragraph([Strong(b.label), line[len(b.label):] + "."]))
        blocks.append(Paragraph(recommendation(b.label, before.label, step, c.args.min_effect)))
    return blocks


# --- the sections -----------------------------------------------------------------------------------

def cell_of(comparison, name, i):
    b = comparison.builds[i]
    r = b.results.get(name)
    if r is None:
        return rowsel.NOT_BUILT if comparison.why_not_built(name, i) else "missing"
    if r.status != MEASURED:  # its message: an error's, or a skip's (not run, not supported)
        return folded_message(r.message, name, b.label)
    return fmt_time(r.median_time()) if r.times else "missing"


def folded_message(message, name, label):
    """A row's message in build label's cell: without the row's own name in front (the row names
    it) and, where longer than SHORT_MESSAGE, as its first clauses, the whole message under the
    table with the build it is of (Folded)."""
    title = row_title(name)
    text = message
    for prefix in (name + ": ", title + ": "):
        if text.startswith(prefix):
            text = text[len(prefix):]
            break
    short = short_message(text)
    return text if short == text else Folded(short, f"{label}: {message}")


def short_message(text):
    """The longest run of text's first clauses that fits in SHORT_MESSAGE characters ("inaccurate
    here, reported, not timed"); a first clause longer than that, cut at a word and marked ..."""
    if len(text) <= SHORT_MESSAGE:
        return text
    clauses = CLAUSE_END.split(text)
    short = clauses[0]
    for clause in clauses[1:]:
        longer = f"{short} {clause}"
        if len(longer.rstrip(":;,. ")) > SHORT_MESSAGE:
            break
        short = longer
    short = short.rstrip(":;,. ")
    if len(short) > SHORT_MESSAGE:
        short = short[:SHORT_MESSAGE - 3].rsplit(" ", 1)[0].rstrip(":;,. ") + "..."
    return short


def rows_table(comparison, names, family):
    """Row, each build's median time, then per other build its speed-up, verdict, significance."""
    c = comparison
    header = ["row"] + [f"{b.label} time" for b in c.builds]
    for b in c.others:
        header += [f"{b.label} speed-up", f"{b.label} verdict", f"{b.label} significance"]
    rows = []
    for n in names:
        row = [Code(row_title(n, family))] + [cell_of(c, n, i) for i in range(len(c.builds))]
        for i in range(1, len(c.builds)):
            j = c.judgements.get((n, i))
            if j is None:
                row += ["", "", ""]
                continue
            row += [f"{j.speedup:.2f}x", Verdict(j.word + (" !" if j.clock_mark else "")), j.significance]
        rows.append(row)
    right = list(range(1, len(c.builds) + 1)) + [len(c.builds) + 1 + 3 * k for k in range(len(c.others))]
    return Table(header, rows, right)


def rows_notes(comparison, names):
    """What the table's marks mean, and the verdicts the clock made (compare's note)."""
    c, notes = comparison, []
    marks = [j for (n, _), j in c.judgements.items() if n in names and j.clock_mark]
    if marks:
        notes.append(f"! after a verdict: the SM clocks of the two builds differ by more than "
                     f"{rowsel.CLOCK_MARK * 100:g}% in that row (see the GPU's conditions).")
    judged = [(n, c.builds[i].label, j.verdict, j.cycles_change)
              for (n, i), j in c.judgements.items() if n in names]
    clocked = rowsel.clock_made_it(judged, c.args.min_effect, True)
    if clocked:
        notes.append(clocked + ".")
    return notes


def family_blocks(comparison, family, names, charts):
    """The family's sentence, its rows' table with the notes on its marks, and its charts
    (charts: {family: [blocks]}, from chart_blocks)."""
    spec = comparison.schema.families.get(family) if comparison.schema is not None else None
    title = f"{family}: {spec.description}" if spec is not None and spec.description else family
    blocks = [Heading(3, title, anchor=anchor(family)),
              Paragraph(family_sentence(comparison, family, names)),
              rows_table(comparison, names, family)]
    blocks += [Paragraph(note) for note in rows_notes(comparison, names)]
    blocks += charts.get(family, [])
    return blocks


def anchor(family):
    return "family-" + re.sub(r"[^A-Za-z0-9]+", "-", family).strip("-")


def verdict_blocks(comparison):
    families = comparison.families()
    items = [[Strong(family), ": ", family_sentence(comparison, family, names)]
             for family, names in families.items()]
    return [Heading(2, "Verdicts"),
            Paragraph(f"Each build against {comparison.base.label}, on the time, row by row; a family's "
                      "sentence counts its rows (the rule: How to read this page, below)."),
            Bullets(items)]


def row_blocks(comparison, charts):
    blocks = [Heading(2, "Rows"),
              Paragraph("Per family: its sentence, the rows behind it (each build's median time, its "
                        f"speed-up against {comparison.base.label}, the verdict and its significance) and "
                        "its chart. The start-up families are under Cost.")]
    for family, names in comparison.families().items():
        if not is_startup(family):
            blocks += family_blocks(comparison, family, names, charts)
    return blocks


# --- the GPU's conditions -------------------------------------------------------------------------

def row_medians(build, counter):
    """[(row, median of counter)] over the build's timed rows that carry it."""
    out = []
    for name, r in build.results.items():
        if timed(r) and not math.isnan(r.median(counter)):
            out.append((name, r.median(counter)))
    return out


def context_value(build, field, unit=""):
    value = build.context.get(field)
    return "not recorded" if value in (None, "") else f"{value}{unit}"


def context_number(build, field, unit):
    """A context figure rounded as a reader takes it ("4188 GB/s", not 4188.283403)."""
    try:
        return f"{float(build.context[field]):.0f}{unit}"
    except (KeyError, ValueError):
        return context_value(build, field, unit)


def sm_clock_text(build):
    clocks = [v for _, v in row_medians(build, "sm_clock_MHz")]
    if not clocks:
        return "not recorded"
    return (f"median {statistics.median(clocks):.0f} MHz ({min(clocks):.0f}-{max(clocks):.0f} "
            f"over {rows_word(len(clocks))})")


# A board power reading this far over the card's enforced limit is not a reading: files from before
# cubench read NVML's energy counter at its update boundaries held such figures (969 W on a
# 700 W H100; docs/results/h100/README.md, "Power").
OVER_LIMIT = 1.03


def power_text(build):
    watts = [v for _, v in row_medians(build, "power_W")]
    if not watts:
        return "not recorded"
    text = f"median {statistics.median(watts):.0f} W, highest {max(watts):.0f} W"
    try:
        limit = float(str(build.context.get("gpu_power_limit_W", "")).split()[0])
    except (ValueError, IndexError):
        return text
    over = [w for w in watts if w > limit * OVER_LIMIT]
    if over:
        text += (f"; {len(over)} row(s) over the card's {limit:.0f} W limit: not readings, figures of "
                 "an old reader of the energy counter (before it was read at its update boundaries)")
    return text


def rows_over_zero(build, counter):
    return [(n, v) for n, v in row_medians(build, counter) if v > 0]


def capped_text(build):
    carried = row_medians(build, "power_capped_pct")
    if not carried:
        return "not recorded"
    capped = [v for _, v in carried if v > 0]
    if not capped:
        return f"none of {rows_word(len(carried))}"
    return f"{len(capped)} of {rows_word(len(carried))} (up to {max(capped):.0f}% of polls)"


def throttled_text(build):
    carried = row_medians(build, "slowdown_pct") + row_medians(build, "throttled_samples")
    if not carried:
        return "not recorded"
    rows = sorted({row_title(n) for n, _ in rows_over_zero(build, "slowdown_pct")
                   + rows_over_zero(build, "throttled_samples")})
    return "none" if not rows else f"{rows_word(len(rows))}: " + ", ".join(rows[:rowsel.NAMED_IN_NOTE]) + \
        (f" and {len(rows) - rowsel.NAMED_IN_NOTE} more" if len(rows) > rowsel.NAMED_IN_NOTE else "")


def other_processes_text(build):
    at_start = build.context.get("gpu_other_processes_at_start")
    during = row_medians(build, "other_processes")
    start = f"{at_start} at start" if at_start not in (None, "") else "not recorded at start"
    if not during:
        return start
    busy = [v for _, v in during if v > 0]
    return start + ("; none during the samples" if not busy else
                    f"; up to {max(busy):.0f} during the samples of {rows_word(len(busy))}")


def dates_text(build):
    return build.context.get("process_dates") or build.context.get("date") or "not recorded"


CONDITIONS = (
    ("GPU", lambda b: ran_on(b.context, why=True)),
    ("power limit", lambda b: context_value(b, "gpu_power_limit_W", " W")),
    ("default / max SM clock", lambda b: f"{context_value(b, 'gpu_default_sm_clock_mhz', ' MHz')} / "
                                         f"{context_value(b, 'gpu_max_sm_clock_mhz', ' MHz')}"),
    ("SM clock of the samples", sm_clock_text),
    ("board power", power_text),
    ("rows power-capped", capped_text),
    ("rows throttled", throttled_text),
    ("other processes on the GPU", other_processes_text),
    ("copy ceiling", lambda b: context_number(b, "copy_ceiling_GBps", " GB/s")),
    ("NVML", lambda b: context_value(b, "nvml")),
    ("samples", lambda b: b.samples_text()),
    ("run", dates_text),
)


def condition_warnings(comparison):
    """What a reader must know before trusting a verdict: the GPU differed, was capped, throttled
    or shared, or a build's samples cannot carry a significance test."""
    c, out = comparison, []
    gpus = {ran_on(b.context) for b in c.builds}
    if len(gpus) > 1:
        out.append(f"The builds ran on different GPUs: {', '.join(sorted(gpus))}.")
    limits = {b.context.get("gpu_power_limit_W") for b in c.builds} - {None}
    if len(limits) > 1:
        out.append(f"The power limit differed between runs: {', '.join(sorted(limits))} W.")
    for b in c.builds:
        capped = rows_over_zero(b, "power_capped_pct")
        if capped:
            out.append(f"{b.label} ran power-capped in {rows_word(len(capped))}: its clock, and so its time, "
                       "followed the power cap there (the cycles columns of tools/compare --table take "
                       "the clock out).")
        throttled = {n for n, _ in rows_over_zero(b, "slowdown_pct") + rows_over_zero(b, "throttled_samples")}
        if throttled:
            out.append(f"{b.label} was throttled in {rows_word(len(throttled))} (thermal or hardware "
                       "slowdown, or samples under 75% of the default clock).")
        busy = [v for _, v in row_medians(b, "other_processes") if v > 0]
        start = str(b.context.get("gpu_other_processes_at_start", "0")).split(" ")[0]
        if busy or start not in ("0", ""):
            out.append(f"{b.label} shared the GPU with other processes ({other_processes_text(b)}).")
    marked = sorted({n for (n, _), j in c.judgements.items() if j.clock_mark})
    if marked:
        out.append(f"The SM clock differed by more than {rowsel.CLOCK_MARK * 100:g}% from the base's in "
                   f"{rows_word(len(marked))} (marked ! in the tables).")
    return out


def conditions_blocks(comparison):
    c = comparison
    rows = [[what] + [text(b) for b in c.builds] for what, text in CONDITIONS]
    warnings = condition_warnings(c)
    return [Heading(2, "The GPU's conditions"),
            Paragraph("From each file's context and the counters its rows carry (the medians over "
                      "each row's samples)."),
            Table([""] + [b.label for b in c.builds], rows),
            Bullets(warnings) if warnings else Paragraph("Nothing to warn of: one GPU, no power cap "
                                                         "or throttling recorded, no other process.")]


# --- kernels, what was left out, cost -------------------------------------------------------------

def kernel_blocks(comparison):
    c = comparison
    rows, named = [], 0
    for n in c.names:
        named += n in c.base.results and rowsel.names_what_ran(c.base.results[n])
        for i, b in enumerate(c.others, 1):
            named += n in b.results and rowsel.names_what_ran(b.results[n])
            differs = (rowsel.ran_differently(c.base.results[n], b.results[n])
                       if n in c.base.results and n in b.results else None)
            j = c.judgements.get((n, i))
            if differs and j is not None and j.verdict.called:  # what ran explains a verdict
                mine, theirs = differs
                word = Verdict(f"{j.word} ({j.speedup:.2f}x)")
                rows.append([Code(row_title(n)), b.label, word, Code(mine), Code(theirs)])
    blocks = [Heading(2, "Kernels that changed")]
    if rows:
        blocks += [Paragraph(f"Rows called faster or slower where both builds name what ran (kernels, or "
                             f"cuBLASLt's algorithm) and it differs from {c.base.label}'s: the library's "
                             "own reason for the verdict."),
                   Table(["row", "build", "verdict", "what ran there", f"what ran under {c.base.label}"],
                         rows)]
    elif named:
        blocks.append(Paragraph("The same kernels and algorithms ran under every build, in every row "
                                "whose notes name them."))
    else:
        blocks.append(Paragraph("The files name no kernels: run cubench with --cubench_kernels=on "
                                "(tools/run-matrix --kernels) for each row's kernels."))
    return blocks


def configurations_text(configurations):
    if isinstance(configurations, int):
        return [f"{configurations} configuration{'s' if configurations != 1 else ''}"]
    if isinstance(configurations, str):
        return [configurations]
    out = [f"{len(configurations)} configuration{'s' if len(configurations) != 1 else ''}: "]
    for k, name in enumerate(configurations):
        out += ([", "] if k else []) + [Code(str(name))]
    return out


def left_out_blocks(comparison):
    c = comparison
    items = []
    for b in c.builds:
        for library, why in b.not_built.items():
            families = sorted(name for name, f in (c.schema.families.items() if c.schema else ())
                              if f.library == library)
            needs = (f" (the famil{'y' if len(families) == 1 else 'ies'} {', '.join(families)})"
                     if families else "")
            items.append([Strong(b.label), f": not built: {library}{needs}: {why}"])
    for b in c.builds:
        for entry in b.not_run:
            items.append([Strong(b.label), f": not run: {entry['family']}: {entry['reason']}"]
                         + ([" ("] + configurations_text(entry["configurations"]) + [")"]
                            if "configurations" in entry else []))
    items += skipped_rows_items(c)
    items += missing_rows_items(c)
    return [Heading(2, "Not built, not run"),
            Bullets(items) if items else Paragraph("Every build built and ran every row compared.")]


SKIP_WORDS = {"not_run": "not run", "not_supported": "not supported"}


def skipped_rows_items(comparison):
    """Each build's rows skipped (their status: not run at their turn, not supported here),
    grouped by the reason: they are not failures, and a reader should know what was not run."""
    c, items = comparison, []
    wanted = rowsel.name_filter(c.args.filter)
    for b in c.builds:
        skipped = {}
        for n, r in b.results.items():
            if wanted.search(n) and r.status in SKIPS:
                skipped.setdefault((r.status, r.reason), []).append(row_title(n))
        for (status, reason), names in skipped.items():
            items.append([Strong(b.label), f": {SKIP_WORDS[status]}: "] + named_rows(names)
                         + ([f": {reason}"] if reason else []))
    return items


def missing_rows_items(comparison):
    """Rows a build lacks that its file gives no reason for, and rows only other builds ran."""
    c, items = comparison, []
    wanted = rowsel.name_filter(c.args.filter)
    for i, b in enumerate(c.others, 1):
        lacking = [n for n in c.base.results if wanted.search(n) and n not in b.results
                   and not c.why_not_built(n, i)]
        if lacking:
            items.append([Strong(b.label), f": lacks {rows_word(len(lacking))} of {c.base.label}'s, for no "
                          "reason its file gives: "] + named_rows(lacking))
        extra = [n for n in b.results if wanted.search(n) and n not in c.base.results and n not in c.names]
        if extra:
            items.append([Strong(b.label), f": {rows_word(len(extra))} that {c.base.label} lacks, "
                          "not compared: "] + named_rows(extra))
    return items


def named_rows(names):
    out = []
    for k, n in enumerate(names[:rowsel.NAMED_IN_NOTE]):
        out += ([", "] if k else []) + [Code(n)]
    more = len(names) - rowsel.NAMED_IN_NOTE
    return out + ([f" and {more} more"] if more > 0 else [])


def memory_cell(comparison, i, names):
    build = comparison.builds[i]
    if not any(timed(build.results.get(n)) for n in names):
        return rowsel.NOT_BUILT if all(comparison.why_not_built(n, i) for n in names) else "-"
    peaks = [build.results[n].median("peak_mem_bytes") for n in names if timed(build.results.get(n))]
    used = [build.results[n].median("used_mem_bytes") for n in names if timed(build.results.get(n))]
    peaks, used = [v for v in peaks if not math.isnan(v)], [v for v in used if not math.isnan(v)]
    if not peaks and not used:
        return ""
    return f"{fmt_bytes(max(peaks)) if peaks else '-'} / {fmt_bytes(max(used)) if used else '-'}"


def memory_changes(comparison):
    """Rows whose peak memory moved by MEMORY_CHANGE or more against the base's."""
    c, items = comparison, []
    for b in c.others:
        moved = []
        for n in c.names:
            base_r, r = c.base.results.get(n), b.results.get(n)
            if not (timed(base_r) and timed(r)):
                continue
            was, now = base_r.median("peak_mem_bytes"), r.median("peak_mem_bytes")
            if was > 0 and now >= 0 and abs(now / was - 1) >= MEMORY_CHANGE:
                moved.append((n, was, now))
        for n, was, now in moved[:rowsel.NAMED_IN_NOTE]:
            items.append([Strong(b.label), ": ", Code(n), f" peaks at {fmt_bytes(now)} against "
                          f"{fmt_bytes(was)} under {c.base.label} ({(now / was - 1) * 100:+.0f}%)"])
        if len(moved) > rowsel.NAMED_IN_NOTE:
            items.append([Strong(b.label), f": and {len(moved) - rowsel.NAMED_IN_NOTE} more rows"])
    return items


def first_calls_text(comparison):
    c = comparison
    common = [n for n in c.names
              if all(timed(b.results.get(n)) and not math.isnan(b.results[n].median("first_call_ms"))
                     for b in c.builds)]
    if not common:
        return None
    sums = [sum(b.results[n].median("first_call_ms") for n in common) * 1e3 for b in c.builds]  # us
    return (f"First calls (each row's first run: module loading and library set-up), summed over the "
            f"{rows_word(len(common))} every build ran: "
            + "; ".join(f"{b.label} {fmt_time(s)}" for b, s in zip(c.builds, sums)) + ".")


def cost_blocks(comparison, charts):
    c = comparison
    blocks = [Heading(2, "Cost: start-up and memory")]
    startup = {f: names for f, names in c.families().items() if is_startup(f)}
    if startup:
        blocks.append(Paragraph("Start-up, a fresh process per sample: what a user waits for before the "
                                "first result."))
        for family, names in startup.items():
            blocks += family_blocks(c, family, names, charts)
    else:
        blocks.append(Paragraph("No start-up rows in the files (cubench's startup/ families)."))
    memory_rows = [[Code(f)] + [memory_cell(c, i, names) for i in range(len(c.builds))]
                   for f, names in c.families().items()]
    memory_rows = [row for row in memory_rows
                   if any(cell not in ("", "-", rowsel.NOT_BUILT) for cell in row[1:])]
    blocks.append(Heading(3, "Peak memory", anchor="peak-memory"))
    if memory_rows:
        blocks += [Paragraph("Per family and build, the highest over its rows of the operation's own memory "
                             "pool: reserved (peak_mem_bytes) / in use (used_mem_bytes)."),
                   Table(["family"] + [b.label for b in c.builds], memory_rows, range(1, len(c.builds) + 1))]
        changes = memory_changes(c)
        blocks.append(Bullets(changes) if changes else
                      Paragraph(f"No row's peak memory moved by {MEMORY_CHANGE * 100:g}% or more against "
                                f"{c.base.label}."))
    else:
        blocks.append(Paragraph("The rows carry no peak_mem_bytes or used_mem_bytes."))
    first_calls = first_calls_text(c)
    if first_calls:
        blocks.append(Paragraph(first_calls))
    return blocks


# --- commands and versions ------------------------------------------------------------------------

def command_of(build):
    """(the command the file was made with, or None; what the page says besides)."""
    for field in COMMAND_FIELDS:
        value = build.context.get(field)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return shlex.join(value), None
        if isinstance(value, str) and value:
            return value, None
    executable = build.context.get("executable")
    said = "the file does not hold its command line"
    return None, f"{said}; its executable: {executable}" if executable else said


def command_blocks(comparison, argv):
    blocks = [Heading(2, "Commands")]
    for b in comparison.builds:
        command, note = command_of(b)
        processes = b.context.get("processes")
        blocks.append(Paragraph([Strong(b.label), ": ", Code(b.path)]
                                + ([f", {processes} processes of"] if processes and command else [])
                                + ([f" ({note})"] if note else [":"] if command else [])))
        if command:
            blocks.append(CodeBlock(command))
    blocks += [Paragraph("This page:"), CodeBlock(shlex.join(["tools/report", *argv]))]
    return blocks


def scalar(value):
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


# What a context field is, where its name or value leaves a reader guessing (cubench's
# fixtures/detail/report/context.cpp writes them; Google Benchmark writes library_build_type).
FIELD_MEANINGS = {
    "google_benchmark": "the Google Benchmark library the build linked, as CMake found it where the build "
                        "was configured: it runs each row's loop and writes this file; the times are "
                        "cubench's own (manual time, which cubench measures itself), so its version does "
                        "not enter them",
    "library_build_type": "how Google Benchmark's own library was compiled (debug: without NDEBUG, as "
                          "Debian's is): it concerns the library's timing loop, which cubench's rows do not "
                          "use (docs/setup.md)",
    "build_type": "cubench's own CMake build type",
    "cuda_toolkit": "the toolkit the build was compiled with",
    "cuda_runtime": "the CUDA runtime the binary ran with",
    "cuda_driver_api": "the driver's CUDA version: the machine's driver, not the build's",
    "git_revision": "the cubench commit built",
    "host_compiler": "the C++ compiler of the build",
    "stopping": "cubench's rule for when a row has enough samples",
    "world": "how the process ran: alone or as MPI ranks",
    "datasheet": "the datasheet whose peaks pct_peak is of",
}


def architectures_of(value):
    """The GPU architectures ({"90"}) a cuda_architectures value names, or None where it names
    none (OFF, all, or a form not read here)."""
    native = re.fullmatch(r"native \(([0-9a-z ;,]+)\)", value)
    listed = native.group(1) if native else value
    numbers = [re.fullmatch(r"([0-9]+[a-z]?)(-real|-virtual)?", part.strip())
               for part in re.split(r"[;, ]+", listed)]
    if not numbers or not all(numbers):
        return None
    return {m.group(1) for m in numbers}


def sm_list(archs):
    return ", ".join("sm_" + a for a in sorted(archs))


def architecture_value_meaning(value):
    """What one cuda_architectures value says (cmake/CudaArchitectures.cmake chooses it)."""
    archs = architectures_of(value)
    if value.startswith("native") and archs:
        return f"{value}: configure saw the machine's GPU and built for it alone ({sm_list(archs)})"
    if archs and "-real" in value:  # configure's list where it sees no GPU has this form
        return (f"{value}: configure's list where it saw no GPU (every architecture from 7.5 up that the "
                f"toolkit lists, the newest also as PTX), or one named so ({sm_list(archs)})")
    if archs:
        return (f"{value}: named at configure (-DCMAKE_CUDA_ARCHITECTURES or CUDAARCHS): "
                f"{sm_list(archs)} code")
    if value == "OFF":
        return ("OFF: CMake passed no architecture flags, so the file does not say which GPU code the "
                "build holds")
    return ""


def architectures_meaning(values):
    """What the cuda_architectures values say, each one that occurs, and whether the builds'
    GPU code is for the same architectures however the value is written."""
    said = ["the GPU code the build holds (CMAKE_CUDA_ARCHITECTURES)"]
    said += [m for m in (architecture_value_meaning(v) for v in dict.fromkeys(values) if v != "-") if m]
    archs = [architectures_of(v) for v in values if v != "-"]
    if len(set(values)) > 1 and archs and all(a is not None and a == archs[0] for a in archs):
        said.append(f"every build holds {sm_list(archs[0])} code: the same, written differently")
    return "; ".join(said)


def field_meaning(field, values):
    if field == "cuda_architectures":
        return architectures_meaning(values)
    meaning = FIELD_MEANINGS.get(field, "")
    if field == "google_benchmark" and len(set(values) - {"-"}) > 1:
        meaning += ("; the versions differ because each build took the one of the system it was "
                    "configured on")
    return meaning


def version_blocks(comparison):
    """Every version and build field of the contexts, with what the puzzling ones mean: what
    differs between the builds is what the comparison compares."""
    c, fields = comparison, []
    for b in c.builds:
        for field, value in b.context.items():
            if field not in fields and field not in SHOWN_ELSEWHERE and scalar(value):
                fields.append(field)
    rows = []
    for field in fields:
        values = [str(b.context[field]) if scalar(b.context.get(field)) else "-" for b in c.builds]
        differs = "yes" if len(set(values)) > 1 else ""
        rows.append([Code(field)] + values + [differs, field_meaning(field, values)])
    return [Heading(2, "Libraries and build"),
            Paragraph("Every version and build field of each file's context (-: the file has no such "
                      "field), and what the puzzling ones mean."),
            Table(["field"] + [b.label for b in c.builds] + ["differs", "what it is"], rows, prose=True)]


def verdict_rule(args):
    """The rule the verdicts were given by, in words."""
    effect = f"{args.min_effect * 100:g}%"
    if args.no_utest:
        return f"the median changed by at least {effect} and beyond either side's spread (no U test)"
    return (f"a Mann-Whitney U test over the samples gives p < {args.alpha:g} and the median changed "
            f"by at least {effect}")


def has_folded(comparison):
    """Whether a rows table folds a message (a cell says [1])."""
    c = comparison
    return any(isinstance(cell_of(c, n, i), Folded) for n in c.names for i, b in enumerate(c.builds)
               if b.results.get(n) is not None and b.results[n].status != MEASURED)


def reading_blocks(comparison):
    c, args = comparison, comparison.args
    rules = [verdicts.rule_text(r, args.alpha, args.min_effect) for r in
             (verdicts.UTEST, verdicts.NO_UTEST, verdicts.ONE_PROCESS)
             if any(j.verdict.rule == r for j in c.judgements.values())]
    items = [f"faster / slower: {'; or, '.join(rules) or verdict_rule(args)}; too noisy to tell: a "
             "change the samples cannot tell from noise (why, in the significance cell); same: a "
             f"change under {args.min_effect * 100:g}%, or one the samples could have shown and did "
             "not (docs/methodology.md, Reading a comparison).",
             f"The rows' tables: each build's median time; speed-up: {c.base.label}'s time over the "
             "build's (above 1 is faster); ! after a verdict: the two builds' SM clocks differ by more than "
             f"{rowsel.CLOCK_MARK * 100:g}% in that row"
             + ("; [1] after a cell's words: the row's message, whole under the table." if has_folded(c)
                else ".")]
    if any(j.verdict.rule == verdicts.ONE_PROCESS for j in c.judgements.values()):
        items.append(verdicts.ONE_PROCESS_CAVEAT + ".")
    return [Heading(2, "How to read this page"), Bullets(items)]


# --- the page ---------------------------------------------------------------------------------------

def stack_of(build):
    """The stack a file names, without the processes the header says separately."""
    return label_of(build.path, {k: v for k, v in build.context.items() if k != "processes"})


def one_install_warnings(builds):
    """A warning per group of builds of one PyTorch install (tools/run-matrix records each build's
    Torch_DIR, as its real path, and torch version): their comparison is an A/A, said first, as a
    reader would otherwise read it as two PyTorch builds."""
    groups = {}
    for b in builds:
        key = (b.context.get("torch_dir"), b.context.get("torch_version"))
        if all(key):
            groups.setdefault(key, []).append(b.label)
    return [f"{', '.join(labels[:-1])} and {labels[-1]} are one PyTorch install (torch {version}, "
            f"Torch_DIR {torch_dir}): this comparison is an A/A, the install against itself, not "
            "two PyTorch builds; a difference between them is noise."
            for (torch_dir, version), labels in groups.items() if len(labels) > 1]


def header_blocks(comparison, first_chart=()):
    c = comparison
    gpus = sorted({ran_on(b.context) for b in c.builds})
    title = f"cubench report: {', '.join(b.label for b in c.builds)} on {' and '.join(gpus)}"
    items = [[Strong(b.label), " (the base)" if k == 0 else "", ": ", Code(b.path),
              f": {stack_of(b)}; {b.samples_text()}"] for k, b in enumerate(c.builds)]
    warnings = [Paragraph([Strong("Warning:"), " " + w]) for w in one_install_warnings(c.builds)]
    blocks = [Heading(1, title)] + warnings
    blocks += overall_blocks(c) + list(first_chart) + [Bullets(items)]
    notes = list(dict.fromkeys(b.context["note"] for b in c.builds if isinstance(b.context.get("note"), str)))
    if notes:  # hand-made or annotated files say so before anything is read from them
        blocks.append(Paragraph(("The files say: " if len(notes) == 1 else "Notes in the files: ")
                                + " / ".join(notes)))
    return title, blocks


def chart_blocks(comparison, paths, notes):
    """{family: [its charts, and tools/plot's notes on what it left out of them]} for the
    families with a section; charts and notes of no such family under OTHER."""
    families = set(comparison.family.values())
    out = {}
    for path in paths:
        name = os.path.basename(path)
        family = HAND_MADE_CHART_FAMILY.get(name) or next(
            (f for f in families if f.replace("/", "_") + ".png" == name), None)
        family = family if family in families else OTHER
        out.setdefault(family, []).append(Chart(path, f"{family} chart" if family != OTHER else name))
    for note in notes:  # plot's notes begin with the family they are about: "allreduce: left out..."
        family = note.split(":", 1)[0]
        out.setdefault(family if family in families else OTHER, []).append(Paragraph(f"Not drawn: {note}."))
    return out


def draw_charts(builds, charts_dir):
    """tools/plot's charts of the builds, a colour per build; (paths, notes on what was left out)."""
    try:
        cli.quiet_matplotlib()
        import matplotlib  # noqa: F401 - checked before the work, not in the middle of it
    except ImportError:
        raise InputError("matplotlib is missing (Debian: apt-get install python3-matplotlib)")
    charts, notes = family_charts.charts_for([(b.label, b.context, b.results) for b in builds], charts_dir)
    if charts:
        cli.output_dir(charts_dir, "--out")
    return [chart() for chart in charts], notes


def ratio_chart(comparison, charts_dir):
    """The first screen's chart: every row's speed-up against the base with its interval, one
    PNG in charts_dir; [] where no row was judged."""
    c = comparison
    rows = [(n, i, c.base.results[n], c.builds[i].results[n], j.verdict)
            for (n, i), j in c.judgements.items()]
    if not rows:
        return []
    cli.output_dir(charts_dir, "--out")
    path = ratio_chart_module.draw(os.path.join(charts_dir, "every-row.png"), rows,
                                   {i: b.label for i, b in enumerate(c.builds) if i}, c.family)
    return [Chart(path, "every row's speed-up against the base, with its interval")]


def folded(summary, blocks):
    """A section folded under a one-line summary of what it holds; opened, it reads as before."""
    return [Details(summary, blocks)]


def page(comparison, argv, chart_paths, chart_notes, first_chart=()):
    """The answer on the first screen (each build's rows counted and the pick, one chart of every
    row, the families' sentences), then, folded, how to read it, the rows and charts behind it,
    and what a reader checks before trusting it."""
    charts = chart_blocks(comparison, chart_paths, chart_notes)
    title, blocks = header_blocks(comparison, list(first_chart))
    blocks += verdict_blocks(comparison)
    blocks += folded("How to read this page", reading_blocks(comparison))
    blocks += folded("Rows: each family's table and chart", row_blocks(comparison, charts))
    if charts.get(OTHER):
        blocks += folded("Other charts", charts[OTHER])
    blocks += folded("The GPU's conditions", conditions_blocks(comparison))
    blocks += folded("Kernels that changed", kernel_blocks(comparison))
    blocks += folded("Not built, not run, missing", left_out_blocks(comparison))
    blocks += folded("The cost side: start-up, memory, first calls", cost_blocks(comparison, charts))
    blocks += folded("Commands", command_blocks(comparison, argv))
    blocks += folded("Versions and build fields", version_blocks(comparison))
    return title, blocks


def open_history(db_path):
    """The --history database, opened before any work (a bad one is one line, nothing written)."""
    from . import history_store
    return history_store.connect(db_path, create=False)


def trend_blocks(builds, db, db_path, charts_dir, min_effect):
    """The compared rows across a history's runs on the base build's GPU (tools/history): a
    heading, what was found, a chart per family."""
    from . import change_points
    from . import history_charts
    from . import history_store
    names = {r.run_name for b in builds for r in b.results.values()}
    gpu = builds[0].context.get("gpu") or None
    series = {n: p for n, p in history_store.series(db, None, gpu).items() if n in names}
    blocks = [Heading(2, "Trend: the history's runs", anchor="trend")]
    if not series:
        return blocks + [Paragraph(f"{db_path} holds none of these rows on {gpu or 'this GPU'}.")]
    changes = change_points.changes_of(series, min_effect)
    found = [f"{name}: {'slower' if ratio > 1 else 'faster'} x{ratio:.3g} from run {i + 1} ({words})"
             for name, c in changes.items() for i, ratio, words in c]
    runs = len({p["run"] for points in series.values() for p in points})
    blocks.append(Paragraph(
        f"From {db_path}: {len(series)} of the compared rows over {runs} runs on {gpu}; "
        f"{len(found)} change point(s) (tools/history's step fit: at least {min_effect:.0%} and "
        "beyond three standard errors; docs/history.md)."))
    if found:
        blocks.append(Bullets(found[:20] + ([f"and {len(found) - 20} more (tools/history show)"]
                                            if len(found) > 20 else [])))
    for path in history_charts.trend_charts(cli.output_dir(charts_dir, "--out"), series, changes,
                                     prefix="trend-"):
        blocks.append(Chart(path, f"trend of {os.path.basename(path)[6:-4]} across the history"))
    return blocks


def main(argv):
    args = parse_args(argv)
    md_path, html_path, charts_dir = output_paths(args.out)
    check_outputs(md_path, html_path, charts_dir)
    history_db = open_history(args.history) if args.history else None
    builds = load_builds(args)
    comparison = Comparison(builds, args)
    chart_paths, chart_notes = draw_charts(builds, charts_dir)
    title, blocks = page(comparison, argv, chart_paths, chart_notes, ratio_chart(comparison, charts_dir))
    if args.history:
        blocks += trend_blocks(builds, history_db, args.history, charts_dir, args.min_effect)
    cli.write_file(md_path, markdown(blocks, os.path.dirname(os.path.abspath(md_path))), "--out")
    cli.write_file(html_path, html_page(blocks, title), "--out")
    print(md_path)
    print(html_path)
    return 0

