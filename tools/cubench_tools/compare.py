"""Compare cubench result files.

  tools/compare a.json b.json [--filter R] [--rename R=S] [--alpha A] [--no-utest]
                              [-a] [--no-color] [-d OUT.json]
      Google Benchmark's own compare.py (benchmarks mode, U-test on), found at $GBENCH_COMPARE or
      /usr/share/benchmark/compare.py. --filter and --rename(-in) select and rename rows before it
      reads them; --alpha, --no-utest, -a, --no-color and -d are compare.py's own options.
      Its colours only reach a terminal: output to a file or a pipe is plain text, as is any
      output while NO_COLOR is set to a non-empty value (https://no-color.org).
      It reads copies of the two files, made so that it prints well: only the rows both files
      time (so its geometric mean is of the same rows), each row's times in the unit (ns, us, ms
      or s, in the Unit column it adds) that keeps them at three significant digits or more
      (compare.py prints whole numbers). A row a file did not time (its status: an error such as
      "inaccurate here, reported, not timed", or a skip: not run, not supported) is left out,
      named in one line under the output with its message.
      Rows where a side has one repetition (no U test can run) get a verdict column instead, by
      the rows' own confidence intervals as --table judges them (below, at its default
      --min-effect), with a count and the caveat under the output; where a file's rows carry no
      time_ci_pct (older files), one line says why they have no verdict.
  tools/compare --table base.json other.json [more.json ...] [--format md|csv] [--counters C,...]
                        [--alpha A] [--min-effect E] [--no-utest]
      The N-way table compare.py lacks: one row per benchmark, per file its median time, its
      Mcycles and counters, and for each file after the first the change of the time and of the
      cycles against the first file, the U test's p and a verdict on the time, one of:
        faster / slower    a Mann-Whitney U test over the samples gives p < --alpha (default 0.05)
                           AND the median changed by at least --min-effect (default 0.02, 2%)
        too noisy to tell  not flagged, but a change of --min-effect could not have been flagged
                           either: the U test cannot reach p < --alpha at these sample counts at
                           all (3 vs 3 samples: its smallest two-sided p is 0.1), or a side's
                           spread exceeds --min-effect (spread: interquartile range / median,
                           robust to one outlying process, as the rank-based test itself is)
        same               not flagged, with enough samples and a spread under --min-effect
      This is the rule the A/A passed with: a sample is a process (files merged by
      tools/merge-processes; tools/run-matrix makes them); files of one process's repetitions get
      a note saying why their verdicts are weak. The verdict is on the time for every family (a
      rate counter is the time's inverse, and a memory figure is not a sample). With --no-utest
      there is no p: faster/slower where the median changed by at least --min-effect and by more
      than either side's spread; too noisy to tell where a spread exceeds --min-effect and the
      change is inside it; else same (a single sample shows no spread).
      One repetition a side (two single-process runs, as cubench's default run gives): the U
      test cannot run, so the rows' own samples judge them. Every cubench row carries
      time_ci_pct, the half-width of its time's 95% confidence interval in % of it; the p cell
      says CI, and the verdict is faster/slower where the median changed by at least
      --min-effect and the two intervals (time +- time x time_ci_pct / 100) do not overlap,
      same where the change is under --min-effect, else too noisy to tell (a row of one sample
      has no interval: too noisy, unless the change is under --min-effect). One line under the
      table says what such a verdict cannot see: the spread between processes, larger than a
      process's own (docs/methodology.md); merge several processes per build for a verdict that
      holds. A file without time_ci_pct (older) gets no such verdict: one line says why, exit
      status 2, unless --no-utest. A note under the table counts the verdicts of each kind.
      `!` marks rows whose SM clocks differ by more than 5% between files, and a note says when
      files ran on different GPUs.
      The clock view (nvbench's robust compare): Mcycles is the median over samples of
      time x sm_clock_MHz (each sample with its own clock: cycles, in millions), and cycles
      change % its change against the first file: the work with the clock taken out. Left empty
      where a side lacks sm_clock_MHz; the columns are left out when no compared row has a clock.
      A note names the faster/slower rows whose cycles changed under --min-effect: the clock made
      the difference (faster because it ran at a higher clock), not the code.
      Counter columns: --counters names any counter the compared rows carry; by default the main
      counters of the table's families (from the files' schema), then those present of TFLOPS,
      GBps, busbw_GBps, images_per_s, peak_mem_bytes and fragmentation (for files without a
      schema: those alone, as before it). A counter's unit, where the schema declares one, is in
      its header.
      A row whose family a build left out (the family needs an optional library, the schema's
      "library", that the file's context "not_built" says the build went without) is not dropped:
      its cell there says `not built` and a note under the table says why, one line per build and
      library (e.g. no NCCL for CUDA 11.8). A row such a file lacks is listed when every file
      lacking it says so; with the base lacking it, the row has no verdicts.
      A row a file did not time shows its message (an error's, or a skip's: not run, not
      supported) in the time cell, and gets no verdict.
      What ran: where a faster or slower row's notes name other kernels or another cuBLASLt
      algorithm than the base file's (cubench --cubench_kernels=on names a run's kernels), a note
      lists the row with both.

An option the mode does not take (--format, --min-effect, --counters without --table; -a,
--no-color, -d with it) is an error, as is input that is malformed (not a file, not UTF-8, not
JSON, not Google Benchmark output, a field of the wrong type), files that share no benchmark, or,
for --table, fewer than two repetitions for the U test in a file without time_ci_pct: one line
on stderr and exit status 2. A file cut
mid-write (its run killed), or from a run interrupted (Ctrl-C), loads its complete rows with a
warning.
"""
import argparse
import csv
import functools
import io
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

from . import cli
from .results import (MEASURED, US_PER_UNIT, InputError, is_iteration, is_number, label_of,  # noqa: E402
                     load, merged_schema, not_built_of, outcome, read, renamed, run_name, schema_of,
                     unit)

DEFAULT_ALPHA = 0.05
# Below this a difference is `same` however small its p-value: A/A runs of one binary on the H200
# show real but immaterial shifts under it.
DEFAULT_MIN_EFFECT = 0.02
# The counter columns a table shows by default besides its families' main counters, and all of
# them for files written before the schema: the table these files always gave.
LEGACY_SHOWN = ("TFLOPS", "GBps", "busbw_GBps", "images_per_s", "peak_mem_bytes", "fragmentation")
FASTER, SLOWER, SAME, TOO_NOISY = "faster", "slower", "same", "too noisy to tell"
VERDICTS = (FASTER, SLOWER, SAME, TOO_NOISY)
# A row whose SM clocks differ more than this between files is marked `!`.
CLOCK_MARK = 0.05
# At most this many rows are named in a note; the rest are counted.
NAMED_IN_NOTE = 5
COMPARE_PY_MODE = "two-file mode (compare.py)"
# Options only one mode has: {argparse dest: the flag as the user writes it}.
TABLE_ONLY = {"format": "--format", "min_effect": "--min-effect", "counters": "--counters"}
COMPARE_PY_ONLY = {"display_aggregates_only": "-a", "no_color": "--no-color", "dump_to_json": "-d"}


def parse_args(argv):
    p = cli.parser("tools/compare", __doc__)
    p.add_argument("files", nargs="+", help="result JSON files (Google Benchmark format)")
    p.add_argument("--table", action="store_true", help="N-way table instead of compare.py")
    p.add_argument("--format", choices=("md", "csv"), help="--table: md (default) or csv")
    p.add_argument("--filter", help="regex on benchmark names (after renaming)")
    p.add_argument("--alpha", type=float, help=f"significance level (default {DEFAULT_ALPHA})")
    p.add_argument("--min-effect", type=float,
                   help=f"--table: smallest relative change called a change (default {DEFAULT_MIN_EFFECT})")
    p.add_argument("--rename", action="append", default=[], metavar="REGEX=REPLACEMENT",
                   help="rewrite names before matching (e.g. 'sigmoid/torch/=sigmoid/vectorized/')")
    p.add_argument("--rename-in", action="append", default=[], metavar="N:REGEX=REPLACEMENT",
                   help="as --rename, in the Nth file only (1-based): e.g. '1:_graph/=/' sets a "
                        "graph variant against the other file's eager rows")
    p.add_argument("--counters", help="--table: comma-separated counters to show, any the compared "
                                      "rows carry (default: the main counters of their families, "
                                      f"then those present of {','.join(LEGACY_SHOWN)})")
    p.add_argument("--no-utest", action="store_true", help="no significance test")
    p.add_argument("-a", "--display_aggregates_only", action="store_true",
                   help="compare.py's: show only the aggregates")
    p.add_argument("--no-color", action="store_true", help="compare.py's: no colours (there are none anyway "
                                                        "off a terminal or with NO_COLOR set)")
    p.add_argument("-d", "--dump_to_json", metavar="OUT.json", help="compare.py's: also write its report")
    args = p.parse_args(argv)
    check_mode_options(args)
    args.filter_given = args.filter is not None
    args.counters_given = args.counters is not None
    for dest, default in (("format", "md"), ("filter", "."), ("alpha", DEFAULT_ALPHA),
                          ("min_effect", DEFAULT_MIN_EFFECT)):
        if getattr(args, dest) is None:
            setattr(args, dest, default)
    check_significance_options(args)
    return args


def check_significance_options(args):
    """--alpha and --min-effect, as every tool that judges a change with compare's rule takes them."""
    if not 0 < args.alpha < 1:
        raise InputError(f"--alpha wants a significance level between 0 and 1, got {args.alpha}")
    if not 0 <= args.min_effect < math.inf:
        raise InputError(f"--min-effect wants a relative change of 0 or more, got {args.min_effect}")


def check_mode_options(args):
    """An option the chosen mode would not use is an error, not silently dropped."""
    mode, foreign = ("--table", COMPARE_PY_ONLY) if args.table else (COMPARE_PY_MODE, TABLE_ONLY)
    for dest, flag in foreign.items():
        if getattr(args, dest) not in (None, False):
            raise InputError(f"{flag} is not an option of {mode}")


def name_filter(args):
    try:
        return re.compile(args.filter)
    except re.error as e:
        raise InputError(f"--filter is not a valid regex: {e}")


def rename_rules(args):
    """[[(regex, replacement)] per file] from --rename (every file) and --rename-in (one file)."""
    def rule(r, option):
        if "=" not in r:
            raise InputError(f"{option} wants REGEX=REPLACEMENT, got '{r}'")
        return tuple(r.split("=", 1))
    rules = [[rule(r, "--rename") for r in args.rename] for _ in args.files]
    for r in args.rename_in:
        index, _, rest = r.partition(":")
        if not index.isdigit() or not 1 <= int(index) <= len(args.files):
            raise InputError(f"--rename-in wants N:REGEX=REPLACEMENT with N a file's place "
                             f"(1 to {len(args.files)}), got '{r}'")
        rules[int(index) - 1].append(rule(rest, "--rename-in"))
    return rules


def utest(a, b):
    from scipy.stats import mannwhitneyu
    return float(mannwhitneyu(a, b, alternative="two-sided").pvalue)


@functools.lru_cache(maxsize=None)
def smallest_p(n, m):
    """The smallest p-value the U test can give for n against m samples: that of two samples that
    do not overlap at all (3 vs 3: 0.1, 5 vs 5: 0.008). Asked of scipy itself, so it is the
    figure utest() would give, whichever method scipy picks at these counts."""
    return utest(list(range(n)), list(range(n, n + m)))


def spread(times):
    """A side's noise: interquartile range over median. The IQR and not the range (max - min):
    the U test works on ranks, so one outlying sample (one slow process) moves it by one rank at
    most and it still flags a clean shift (5 vs 5 with two pairs crossed gives p = 0.03); the
    range would call every such row too noisy. One sample shows no spread: 0."""
    if len(times) < 2:
        return 0.0
    q1, _, q3 = statistics.quantiles(times, n=4, method="inclusive")
    return (q3 - q1) / statistics.median(times)


def verdict(base, other, args):
    """(change in %, p-value or None, word) of the time from base to other; word is one of
    VERDICTS. faster/slower: p < alpha and a median change of at least min_effect (without the
    U test: a change of at least min_effect and beyond either side's spread). Otherwise `too noisy
    to tell` where a change of min_effect could not have been flagged: the test cannot reach
    p < alpha at these counts, or a side's spread exceeds min_effect; `same` where it could."""
    a, b = base.times, other.times
    change = statistics.median(b) / statistics.median(a) - 1.0
    noise = max(spread(a), spread(b))
    if args.no_utest:
        p, shown = None, abs(change) >= max(args.min_effect, noise)
        blind = noise > args.min_effect
    else:
        p = utest(a, b)
        shown = p < args.alpha and abs(change) >= args.min_effect
        blind = noise > args.min_effect or smallest_p(len(a), len(b)) >= args.alpha
    if shown:
        word = SLOWER if change > 0 else FASTER
    else:
        word = TOO_NOISY if blind else SAME
    return change * 100, p, word


# What a row of one process says of its own time: the half-width of the 95% confidence interval
# of its mean, in % of it, from its samples (cubench writes it since 9cd2164 of 2026-12-04).
CI_COUNTER = "time_ci_pct"
CI_P = "CI"  # the p cell of a verdict by the rows' confidence intervals (there is no p-value)


def has_ci(result):
    """Whether a row carries what the confidence-interval rule needs (older files do not)."""
    return not math.isnan(result.median(CI_COUNTER))


def ci_half_width(result):
    """The row's 95% interval's half-width, in microseconds; infinite where the row has under two
    samples (cubench writes 0 there: one sample shows no spread, which is not no noise)."""
    if result.median("samples") < 2:  # NaN (not carried) compares False: trust time_ci_pct
        return math.inf
    return result.median_time() * result.median(CI_COUNTER) / 100


def intervals_apart(base, other):
    """Whether the two rows' intervals (time +- its half-width) do not overlap."""
    a, b = base.median_time(), other.median_time()
    return abs(b - a) > ci_half_width(base) + ci_half_width(other)


def ci_verdict(base, other, args):
    """(change in %, word) by the rows' own samples, where a side has one repetition: faster or
    slower where the median changed by at least min_effect and the two 95% intervals are apart;
    same where the change is under min_effect; else too noisy to tell."""
    change = other.median_time() / base.median_time() - 1.0
    if abs(change) < args.min_effect:
        word = SAME
    elif intervals_apart(base, other):
        word = SLOWER if change > 0 else FASTER
    else:
        word = TOO_NOISY
    return change * 100, word


def fmt(x):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    if abs(x) >= 1e6:
        return f"{x:.4g}"
    return f"{x:.4g}" if abs(x) < 1000 else f"{x:.0f}"


def build_table(files, args):
    loaded = [(path,) + load(path, rules) for path, rules in zip(files, rename_rules(args))]
    schema = merged_schema([ctx for _, ctx, _ in loaded])
    wanted_names = name_filter(args)
    base_path, base_ctx, base = loaded[0]
    if args.filter_given and not any(wanted_names.search(n) for n in base):
        raise InputError(f"--filter '{args.filter}' matches no benchmark of {base_path}")
    left_out = LeftOut(loaded, schema)
    names = [n for n in base if wanted_names.search(n) and any(n in r for _, _, r in loaded[1:])]
    names += left_out.rows(names, wanted_names)
    if not names:
        raise InputError(f"no benchmark of {base_path} is in the other files (names must match "
                         "exactly; --rename can map one naming onto another)")
    gpus = {ctx.get("gpu", "?") for _, ctx, _ in loaded}
    labels = [label_of(p, c) for p, c, _ in loaded]
    if len(set(labels)) < len(labels):  # the same stack twice (an A/A run): name the files too
        labels = [f"{lab} [{os.path.basename(p)}]" for lab, (p, _, _) in zip(labels, loaded)]
    counters = shown_counters(args, loaded, names, schema)
    cycles = carries_clocks(loaded, names)
    header = table_header(labels, [column(c, schema) for c in counters], cycles)
    # judged: (row name, file's label, word, cycles change %, rule: see judgement()) per verdict
    rows, judged = [], []
    for n in names:
        row = [n]
        for i, (path, _, res) in enumerate(loaded):
            missing = NOT_BUILT if left_out.why(n, i) else "missing"
            row += file_cells(n, res.get(n), base.get(n), i > 0, path, base_path, counters, cycles,
                              args, judged, labels[i], missing)
        rows.append(row)
    notes = []
    if len(gpus) > 1:
        notes.append(f"files ran on different GPUs: {', '.join(sorted(gpus))}")
    notes += left_out.notes(names, labels)
    if judged:
        notes.append(summary_note([word for _, _, word, _, _ in judged], args,
                                  {rule for *_, rule in judged}))
    clocked = clock_made_it(judged, args, len(loaded) > 2)
    if clocked:
        notes.append(clocked)
    ran = what_ran_differs(names, loaded, labels, judged)
    if ran:
        notes.append(ran)
    if any(cell.endswith(" !") for row in rows for cell in row):
        notes.append(f"! after a verdict: the two files' median SM clocks differ by more than "
                     f"{CLOCK_MARK * 100:g}% in that row")
    if any(rule == "ci" for *_, rule in judged):
        notes.append(ONE_REPETITION_CAVEAT)
    single = [os.path.basename(p) for p, ctx, _ in loaded if not ctx.get("processes")]
    u_tested = not judged or any(rule == "utest" for *_, rule in judged)
    if single and not args.no_utest and u_tested:
        notes.append(single_process_note(single))
    return header, rows, notes


NOT_BUILT = "not built"


class LeftOut:
    """Rows a file lacks because its build left their family out: the family's source needs an
    optional library (the schema's "library") that the file's context["not_built"] says the build
    went without, and why. Such rows stay in the table, marked, instead of vanishing."""

    def __init__(self, loaded, schema):
        self.loaded, self.schema = loaded, schema
        self.not_built = [not_built_of(ctx, path) for path, ctx, _ in loaded]

    def library(self, name):
        """The optional library the family of row `name` needs ("" for none or not known)."""
        if self.schema is None:
            return ""
        holder = next(res[name] for _, _, res in self.loaded if name in res)
        family = self.schema.families.get(holder.family)
        return family.library if family is not None else ""

    def why(self, name, i):
        """Why file i has no row `name`, or None (it has it, or no build note explains it)."""
        if name in self.loaded[i][2] or not self.not_built[i]:
            return None
        return self.not_built[i].get(self.library(name)) if self.library(name) else None

    def rows(self, listed, wanted):
        """Rows not yet listed that some file has and every file lacking them was built without."""
        out = []
        for _, _, res in self.loaded:
            for n in res:
                if n in listed or n in out or not wanted.search(n):
                    continue
                lacking = [i for i, (_, _, r) in enumerate(self.loaded) if n not in r]
                if lacking and all(self.why(n, i) for i in lacking):
                    out.append(n)
        return out

    def notes(self, names, labels):
        """One line per file and library its build left out, for the rows it marks."""
        said = {}
        for n in names:
            for i in range(len(self.loaded)):
                why = self.why(n, i)
                if why:
                    said.setdefault((i, self.library(n)), why)
        return [f"{NOT_BUILT} under {labels[i]}: the {lib} families ({why})"
                for (i, lib), why in sorted(said.items())]


def carries_clocks(loaded, names):
    """Whether the cycles columns are shown: a compared row of some file carries its SM clock
    (files without clocks, e.g. tools/torch_reference.py's of old, keep the table they had)."""
    return any(n in res and any(not math.isnan(c) for c in res[n].clocks)
               for _, _, res in loaded for n in names)


def table_header(labels, columns, cycles):
    header = ["benchmark"]
    for i, lab in enumerate(labels):
        header.append(f"{lab}: time us")
        header += [f"{lab}: Mcycles"] if cycles else []
        header += [f"{lab}: {c}" for c in columns]
        if i > 0:
            header.append(f"{lab}: change %")
            header += [f"{lab}: cycles change %"] if cycles else []
            header += [f"{lab}: p", f"{lab}: verdict"]
    return header


def file_cells(name, r, b, judging, path, base_path, counters, cycles, args, judged, label,
               missing="missing"):
    """One file's cells of a row: r its Result, b the base file's (None where the base lacks the
    row), judging False for the base file itself; missing is the cell where r is None. A verdict
    given is appended to judged."""
    blank_judgement = [""] * ((4 if cycles else 3) if judging else 0)
    if not is_timed(r):  # its message: an error's, or a skip's (not run, not supported)
        cell = r.message if r is not None and r.message else missing
        return [cell] + [""] * ((1 if cycles else 0) + len(counters)) + blank_judgement
    cells = [fmt(r.median_time())] + ([fmt(r.mcycles())] if cycles else [])
    cells += [fmt(r.median(c)) for c in counters]
    if not judging:
        return cells
    if not is_timed(b):
        return cells + blank_judgement
    change, p, word, rule = judgement(name, b, r, path, base_path, args)
    cycles_change = (r.mcycles() / b.mcycles() - 1) * 100  # NaN where a side has no clock
    judged.append((name, label, word, cycles_change, rule))
    clock_b, clock_r = b.median("sm_clock_MHz"), r.median("sm_clock_MHz")
    if clock_b > 0 and clock_r > 0 and abs(clock_r / clock_b - 1) > CLOCK_MARK:  # NaN: unknown
        word += " !"
    cells.append(f"{change:+.1f}")
    if cycles:
        cells.append("" if math.isnan(cycles_change) else f"{cycles_change:+.1f}")
    return cells + [p if isinstance(p, str) else "" if p is None else f"{p:.3g}", word]


def one_repetition(base, other, args):
    """Whether the U test cannot run on the row: a side has a single repetition."""
    return not args.no_utest and (len(base.times) < 2 or len(other.times) < 2)


def judgement(name, b, r, path, base_path, args):
    """(change %, p: a number, None or CI_P, word, rule: "utest", "no-utest" or "ci") of a row. A
    row where a side has one repetition is judged by its confidence intervals where both rows carry
    them; a file without them (older) gets no verdict, in one line that says why."""
    if one_repetition(b, r, args):
        if not (has_ci(b) and has_ci(r)):
            raise InputError(f"{name}: the U test needs at least 2 repetitions in each file "
                             f"({len(b.times)} in {base_path}, {len(r.times)} in {path}); "
                             "run with --benchmark_repetitions=5, or pass --no-utest")
        change, word = ci_verdict(b, r, args)
        return change, CI_P, word, "ci"
    change, p, word = verdict(b, r, args)
    return change, p, word, "no-utest" if args.no_utest else "utest"


def rule_words(rule, args):
    """(what flags a row, what makes it too noisy to tell) under one rule of judgement()."""
    effect = f"{args.min_effect * 100:g}%"
    if rule == "no-utest":
        return (f"no U test: a median change of at least {effect} and beyond either side's spread",
                f"a side's spread, IQR / median, is over {effect} and the change inside it")
    if rule == "ci":
        return (f"a side of one repetition: a median change of at least {effect} with the rows' 95% "
                "confidence intervals apart",
                f"a change of at least {effect} inside the intervals")
    return (f"U test p < {args.alpha:g} and a median change of at least {effect}",
            f"the U test cannot reach p < {args.alpha:g} at their sample counts, or a side's "
            f"spread, IQR / median, is over {effect}")


def summary_note(words, args, rules=None):
    """How many verdicts say what, and the rules that gave them (rules: those of judgement()
    used; by default the one args name)."""
    flagged = sum(w in (FASTER, SLOWER) for w in words)
    noisy = words.count(TOO_NOISY)
    if rules is None:
        rules = {"no-utest" if args.no_utest else "utest"}
    said = [rule_words(r, args) for r in ("utest", "no-utest", "ci") if r in rules]
    rule = "; or ".join(flags for flags, _ in said)
    blind = "; or ".join(why for _, why in said)
    return (f"{flagged} of this table's {len(words)} verdicts say faster or slower ({rule}); "
            f"{noisy} say too noisy to tell ({blind})")


# Under every table or comparison with a verdict by the confidence intervals: what it cannot see.
ONE_REPETITION_CAVEAT = (
    f"{CI_P}: a side has one repetition, so the verdict is by the rows' own 95% confidence "
    f"intervals ({CI_COUNTER}), which see only each process's samples; between processes of one "
    "binary rows move by more than that (docs/methodology.md, \"Reading a comparison\"): for a "
    "verdict that holds, merge several processes per build (tools/merge-processes, tools/run-matrix)")


def clock_made_it(judged, args, several):
    """The note on faster/slower rows whose cycles changed under --min-effect: the SM clock moved,
    not the work (faster because it ran at a higher clock). None where there is none."""
    rows = [f"{n} ({label})" if several else n for n, label, word, cycles, _ in judged
            if word in (FASTER, SLOWER) and abs(cycles) < args.min_effect * 100]  # NaN: no
    if not rows:
        return None
    named = ", ".join(rows[:NAMED_IN_NOTE]) + (f" and {len(rows) - NAMED_IN_NOTE} more"
                                               if len(rows) > NAMED_IN_NOTE else "")
    return (f"{len(rows)} faster or slower verdict(s) whose cycles (time x SM clock) changed under "
            f"{args.min_effect * 100:g}%: the clock made the difference, not the work (faster "
            f"because it ran at a higher clock, or slower at a lower one): {named}")


# cuBLASLt's algorithm id, which only the family's own words say (gemm's "case" note, "cuBLASLt
# algo 21, autotuned: ..."): the id alone, without the figures around it that differ in any run.
CUBLASLT_ALGO = re.compile(r"cuBLASLt algo -?\d+")


def what_ran(result):
    """What a row's notes say ran: cuBLASLt's algorithm, and the kernels one run launched as
    CUPTI named them (--cubench_kernels=on: a "kernels" note); "" where they say neither."""
    algos = [m.group(0) for n in result.notes if n["kind"] == "case"
             for m in [CUBLASLT_ALGO.search(n["text"])] if m]
    kernels = [n["text"] for n in result.notes if n["kind"] == "kernels" and n.get("named", True)]
    return "; ".join(algos[:1] + kernels)


def what_ran_differs(names, loaded, labels, judged):
    """The note on faster/slower rows whose notes say another kernel or algorithm ran than in
    the base file: the library's own reason for the verdict. None where there is none."""
    base = loaded[0][2]
    words = {(name, label): word for name, label, word, *_ in judged}
    lines = []
    for name in names:
        theirs = what_ran(base[name]) if name in base else ""
        for i, (_, _, res) in enumerate(loaded[1:], 1):
            word = words.get((name, labels[i]))
            if word not in (FASTER, SLOWER) or name not in res:
                continue
            mine = what_ran(res[name])
            if mine and theirs and mine != theirs:
                lines.append(f"- {name}: {word} under {labels[i]}, where {mine}; under {labels[0]}, {theirs}")
    if not lines:
        return None
    return (f"{len(lines)} faster or slower verdict(s) where another kernel or algorithm ran:\n"
            + "\n".join(lines))


def single_process_note(single):
    """Why a verdict between single-process files is weak."""
    return (f"{', '.join(single)}: samples are one process's repetitions, so the U test does not "
            "see the spread between processes, and an A/A (one build against itself) shows how many "
            "verdicts that spread alone flags: for a verdict, merge 4 or more processes per build "
            "(tools/run-matrix, whose default is --processes 4, or tools/merge-processes)")


def column(counter, schema):
    """A counter's column name: with its unit where the schema declares one."""
    u = unit(counter, schema)
    return f"{counter} ({u})" if u and u != counter else counter


def shown_counters(args, loaded, names, schema):
    """The counter columns: --counters as given, each one the compared rows carry (another is an
    error that lists those they carry); by default the main counters of the families in the
    table, then those of LEGACY_SHOWN, each where a compared row carries it."""
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


# --- two-file mode: Google Benchmark's compare.py, fed copies it can print well -------------------

# compare.py prints a time as a whole number of the row's time_unit (0.55 ms as "1"): each row of
# the copies gets the largest unit that keeps its time at 100 or more, three significant digits.
UNITS_LARGEST_FIRST = ("s", "ms", "us", "ns")
REASON_CHARS = 60  # an untimed row's reason, shortened to this in the line that names it


def time_unit_for(us):
    """The largest unit in which a time of us microseconds is at least 100 (else ns)."""
    for name in UNITS_LARGEST_FIRST:
        if us / US_PER_UNIT[name] >= 100:
            return name
    return "ns"


def is_timed(result):
    return result is not None and result.measured()


def time_units(compared):
    """{run name: the unit its rows print in}, from its smallest time in either file: both files'
    rows of a name must share it (compare.py pairs only rows of the first file's unit)."""
    smallest = {}
    for res in compared:
        for n, r in res.items():
            if is_timed(r):
                smallest[n] = min(smallest.get(n, math.inf), min(r.times))
    return {n: time_unit_for(us) for n, us in smallest.items()}


def is_a_time(row):
    """Whether a row's real_time is a time: an iteration's or a time aggregate's (not a cv's, a
    fraction that Google Benchmark marks aggregate_unit "percentage")."""
    if is_iteration(row):
        return True
    return row.get("aggregate_unit", "time") == "time" and row.get("aggregate_name") != "cv"


def in_unit(row, time_unit):
    """The row with its real_time and cpu_time in time_unit."""
    factor = US_PER_UNIT[row.get("time_unit", "ns")] / US_PER_UNIT[time_unit]
    out = dict(row, time_unit=time_unit)
    for field in ("real_time", "cpu_time"):
        if is_number(row.get(field)):
            out[field] = row[field] * factor
    return out


def compare_py_input(path, rules, wanted_names, directory, keep=None, units=None):
    """A copy of path for compare.py: checked, complete rows only (a cut file's), renamed and
    filtered as --rename/--filter say, only the rows of keep (run names, after renaming; None:
    all) and each time in units[its run name]; returns (copy's path, {row name: its unit})."""
    load(path, rules)  # the one-line checks, the rename clash included, before compare.py runs
    data, kept, shown = read(path), [], {}
    schema = schema_of(data["context"], path)
    for row in data["benchmarks"]:
        old = run_name(row)
        new = renamed(old, rules)
        if not wanted_names.search(new) or (keep is not None and new not in keep):
            continue
        timed = outcome(row, schema).status == MEASURED
        if timed and ("cpu_time" not in row or "time_unit" not in row):
            raise InputError(f"{path}: {row['name']} has no cpu_time or time_unit, which compare.py "
                             "needs (--table does not)")
        name = new + row["name"][len(old):] if row["name"].startswith(old) else renamed(row["name"], rules)
        row = dict(row, name=name, run_name=new)
        if units and new in units and is_a_time(row):
            row = in_unit(row, units[new])
            shown[name] = units[new]
        kept.append(row)
    copy = os.path.join(directory, os.path.basename(path))
    with open(copy, "w", encoding="utf-8") as f:
        json.dump(dict(data, benchmarks=kept), f)
    return copy, shown


def short_reason(name, error):
    """An error message, less the row's name it starts with, cut to REASON_CHARS."""
    base = name[:-len("/manual_time")] if name.endswith("/manual_time") else name
    for prefix in (name + ": ", base + ": "):
        if error.startswith(prefix):
            error = error[len(prefix):]
            break
    error = " ".join(error.split())
    return error if len(error) <= REASON_CHARS else error[:REASON_CHARS - 3].rstrip() + "..."


def untimed_rows(compared, shared, files):
    """{run name: how to name it in the note} of the shared rows a file has not timed (an error:
    "inaccurate here, reported, not timed", a failed check; a skip: not run, not supported):
    compare.py would print their placeholder times as a measurement."""
    out = {}
    for n in shared:
        sides = [i for i, res in enumerate(compared) if not is_timed(res[n])]
        if not sides:
            continue
        message = next(compared[i][n].message for i in sides) or "no time"
        where = "" if len(sides) == len(compared) else f" in {os.path.basename(files[sides[0]])}"
        out[n] = f"{n}{where} ({short_reason(n, message)})"
    return out


def untimed_note(untimed):
    named = list(untimed.values())
    more = len(named) - NAMED_IN_NOTE
    return ("not timed, left out: " + ", ".join(named[:NAMED_IN_NOTE])
            + (f" and {more} more" if more > 0 else ""))


def one_repetition_verdicts(compared, shared, untimed, args):
    """({run name: word} by the confidence-interval rule, [run names of one repetition that
    cannot be judged]) for the shared timed rows whose U test cannot run (a side has a single
    repetition): compare.py gives those no verdict at all."""
    words, unjudged = {}, []
    for n in shared:
        if n in untimed:
            continue
        b, r = compared[0][n], compared[1][n]
        if not one_repetition(b, r, args):
            continue
        if has_ci(b) and has_ci(r):
            words[n] = ci_verdict(b, r, args)[1]
        else:
            unjudged.append(n)
    return words, unjudged


ANSI = re.compile(r"\x1b\[[0-9;]*m")
UNIT_WIDTH = 6
# compare.py's last line (Google Benchmark 1.7 on): the geometric means of each file's times, in
# seconds, so printed as 0; kept up to its two changes and given its times in a unit that reads.
GEOMEAN_LINE = re.compile(r"^(OVERALL_GEOMEAN\s+[-+]?[0-9.]+\s+[-+]?[0-9.]+)(\s+[0-9.]+){4}\s*$")


def geometric_means(copy):
    """(real, cpu) geometric means in microseconds of a copy's rows that are not aggregates, as
    compare.py takes them; None where a time is not positive (it then prints no such line)."""
    with open(copy, encoding="utf-8") as f:
        rows = [r for r in json.load(f)["benchmarks"] if r.get("run_type") != "aggregate"]
    means = []
    for field in ("real_time", "cpu_time"):
        times = [float(r[field]) * US_PER_UNIT[r["time_unit"]] for r in rows if is_number(r.get(field))]
        if not times or min(times) <= 0:
            return None
        means.append(math.exp(statistics.fmean(math.log(t) for t in times)))
    return tuple(means)


def geomean_line(plain, means):
    """compare.py's OVERALL_GEOMEAN line with its times in a unit that keeps three digits."""
    match = GEOMEAN_LINE.match(plain)
    if match is None or None in means:
        return None
    (real_a, cpu_a), (real_b, cpu_b) = means
    shown = time_unit_for(min(real_a, real_b))
    times = "".join(f"{t / US_PER_UNIT[shown]:14.0f}" for t in (real_a, real_b, cpu_a, cpu_b))
    return match.group(1) + times + f"{shown:>{UNIT_WIDTH}}"


def with_columns(out, units, words, means):
    """compare.py's lines with a unit column (it prints none) and, where rows were judged by their
    confidence intervals, a verdict column; its geometric-mean line in a unit that reads."""
    extra_head = f"{'Unit':>{UNIT_WIDTH}}" + ("  verdict (CI)" if words else "")
    lines = []
    for line in out.splitlines():
        plain = ANSI.sub("", line)
        first = plain.split()[0] if plain.split() else ""
        if plain.startswith("Benchmark") and "Time Old" in plain:
            line += extra_head
        elif plain.startswith("---") and not plain.strip("-"):
            line += "-" * len(extra_head)
        elif first in units:
            line += f"{units[first]:>{UNIT_WIDTH}}" + (f"  {words[first]}" if first in words else "")
        elif first == "OVERALL_GEOMEAN":
            line = geomean_line(plain, means) or line
        lines.append(line)
    return "\n".join(lines) + ("\n" if out.endswith("\n") else "")


def two_file_notes(untimed, words, unjudged, compared, files, args):
    """The lines under compare.py's output: rows left out, the one-repetition verdicts' count and
    caveat, or why rows of one repetition have no verdict."""
    notes = [untimed_note(untimed)] if untimed else []
    if words:
        notes.append(summary_note(list(words.values()), args, {"ci"}))
        notes.append(ONE_REPETITION_CAVEAT)
    if unjudged:
        lacking = list(dict.fromkeys(os.path.basename(f) for f, res in zip(files, compared)
                                     if any(not has_ci(res[n]) for n in unjudged)))
        notes.append(f"no verdict for {len(unjudged)} row(s) of one repetition (e.g. {unjudged[0]}): "
                     f"the U test needs 2 or more a side, and {' and '.join(lacking)} "
                     f"carr{'y' if len(lacking) > 1 else 'ies'} no "
                     f"{CI_COUNTER} to judge one by (cubench writes it since 9cd2164 of "
                     "2026-12-04); run with --benchmark_repetitions=5, or merge processes per "
                     "build (tools/merge-processes, tools/run-matrix)")
    return notes


def compare_py_options(args):
    options = ["--no-utest"] if args.no_utest else []
    options += ["--alpha", str(args.alpha)] + (["-a"] if args.display_aggregates_only else [])
    # compare.py colours whatever its stdout is (ours reads it through a pipe): it is told not to
    # unless ours is a terminal that wants colour.
    options += [] if cli.colour_wanted() and not args.no_color else ["--no-color"]
    return options + (["-d", args.dump_to_json] if args.dump_to_json else [])


def run_compare_py(args):
    # The inputs first: a bad file is the user's to fix wherever compare.py lives.
    if len(args.files) != 2:
        raise InputError(f"{COMPARE_PY_MODE} takes exactly two files, got {len(args.files)}; "
                         "--table takes two or more")
    wanted_names, rules = name_filter(args), rename_rules(args)
    compared = [{n: r for n, r in load(path, file_rules)[1].items() if wanted_names.search(n)}
                for path, file_rules in zip(args.files, rules)]
    shared = [n for n in compared[0] if n in compared[1]]
    if not shared:
        matching = f" matching --filter '{args.filter}'" if args.filter_given else ""
        raise InputError(f"{args.files[0]} and {args.files[1]} share no benchmark{matching} "
                         "(names must match exactly; --rename can map one naming onto another)")
    if args.dump_to_json:
        cli.check_output_file(args.dump_to_json, "-d")
    untimed = untimed_rows(compared, shared, args.files)
    units = time_units(compared)
    words, unjudged = one_repetition_verdicts(compared, shared, untimed, args)
    script = os.environ.get("GBENCH_COMPARE", "/usr/share/benchmark/compare.py")
    with tempfile.TemporaryDirectory() as tmp:
        copies, shown = [], {}
        for i, (path, file_rules) in enumerate(zip(args.files, rules)):
            os.mkdir(os.path.join(tmp, str(i)))  # one folder each: the files may share a basename
            # Only the rows both files time: compare.py pairs no others, and its geometric mean
            # is then of the same rows in both.
            copy, its_units = compare_py_input(path, file_rules, wanted_names, os.path.join(tmp, str(i)),
                                               set(shared) - set(untimed), units)
            copies.append(copy)
            shown.update(its_units)
        means = [geometric_means(copy) for copy in copies]
        if not os.path.exists(script):
            raise InputError(f"Google Benchmark's compare.py is not at {script} "
                             "(Debian: apt-get install libbenchmark-tools, or set GBENCH_COMPARE)")
        r = subprocess.run([sys.executable, script, *compare_py_options(args), "benchmarks", *copies],
                           capture_output=True, text=True)
    out = r.stdout
    for copy, path in zip(copies, args.files):  # its header names the user's files, not our copies
        out = out.replace(copy, path)
    sys.stdout.write(with_columns(out, shown, words, means))
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["no message"])[-1]
        raise cli.WorkFailed(f"Google Benchmark's compare.py failed (exit {r.returncode}): {last}")
    sys.stderr.write(r.stderr)
    for note in two_file_notes(untimed, words, unjudged, compared, args.files, args):
        print(f"\n{note}")
    return 0


def main(argv):
    args = parse_args(argv)
    if not args.table:
        return run_compare_py(args)
    if len(args.files) < 2:
        raise InputError("--table needs at least two files")
    header, rows, notes = build_table(args.files, args)
    sys.stdout.write(render(header, rows, notes, args.format))
    return 0

