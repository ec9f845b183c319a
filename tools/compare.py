"""Compare cubench result files.

  tools/compare a.json b.json [compare.py options]
      Google Benchmark's own compare.py (benchmarks mode, U-test on), found at $GBENCH_COMPARE or
      /usr/share/benchmark/compare.py.
  tools/compare --table base.json other.json [more.json ...] [--format md|csv]
      The N-way table compare.py lacks: one row per benchmark, per file its median time and
      counters, the change of the time against the first file, and a verdict: `faster`/`slower`
      only when a Mann-Whitney U test over the repetitions gives p < --alpha AND the change is at
      least --min-effect; otherwise `same`. `!` marks rows whose SM clocks differ by more than 5%
      between files, and the header says when files ran on different GPUs.

Malformed input (not JSON, not Google Benchmark output, nothing in common, fewer than two
repetitions for the U test) gets one line on stderr and exit status 2.
"""
import argparse
import csv
import io
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results import InputError, label_of, load  # noqa: E402

DEFAULT_ALPHA = 0.05
# Below this a difference is `same` however small its p-value: the A/A runs on the H200
# (docs/results/h200/aa.md) flagged real but immaterial shifts under it.
DEFAULT_MIN_EFFECT = 0.02
SHOWN_COUNTERS = ("TFLOPS", "GBps", "busbw_GBps", "images_per_s", "peak_mem_bytes", "fragmentation")


def parse_args(argv):
    p = argparse.ArgumentParser(prog="tools/compare", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+", help="result JSON files (Google Benchmark format)")
    p.add_argument("--table", action="store_true", help="N-way table instead of compare.py")
    p.add_argument("--format", choices=("md", "csv"), default="md")
    p.add_argument("--filter", default=".", help="regex on benchmark names")
    p.add_argument("--alpha", type=float, default=DEFAULT_ALPHA)
    p.add_argument("--min-effect", type=float, default=DEFAULT_MIN_EFFECT,
                   help="smallest relative change called a change (default %(default)s)")
    p.add_argument("--rename", action="append", default=[], metavar="REGEX=REPLACEMENT",
                   help="rewrite names before matching (e.g. 'sigmoid/torch/=sigmoid/vectorized/')")
    p.add_argument("--rename-in", action="append", default=[], metavar="N:REGEX=REPLACEMENT",
                   help="as --rename, in the Nth file only (1-based): e.g. '1:_graph/=/' sets a "
                        "graph variant against the other file's eager rows")
    p.add_argument("--counters", default=",".join(SHOWN_COUNTERS),
                   help="comma-separated counters to show (default: those present of %(default)s)")
    p.add_argument("--no-utest", action="store_true", help="no significance test")
    args, extra = p.parse_known_args(argv)
    args.extra = extra
    return args


def utest(a, b):
    from scipy.stats import mannwhitneyu
    return float(mannwhitneyu(a, b, alternative="two-sided").pvalue)


def verdict(base, other, args):
    """(change in %, p-value or None, 'faster'|'slower'|'same')."""
    change = other.median_time() / base.median_time() - 1.0
    if args.no_utest:
        return change * 100, None, "slower" if change > args.min_effect else "faster" if change < -args.min_effect else "same"
    p = utest(base.times, other.times)
    if p < args.alpha and abs(change) >= args.min_effect:
        return change * 100, p, "slower" if change > 0 else "faster"
    return change * 100, p, "same"


def fmt(x):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    if abs(x) >= 1e6:
        return f"{x:.4g}"
    return f"{x:.4g}" if abs(x) < 1000 else f"{x:.0f}"


def build_table(files, args):
    def rule(r, option):
        if "=" not in r:
            raise InputError(f"{option} wants REGEX=REPLACEMENT, got '{r}'")
        return tuple(r.split("=", 1))
    rename = [[rule(r, "--rename") for r in args.rename] for _ in files]
    for r in args.rename_in:
        index, _, rest = r.partition(":")
        if not index.isdigit() or not 1 <= int(index) <= len(files):
            raise InputError(f"--rename-in wants N:REGEX=REPLACEMENT with N a file's place "
                             f"(1 to {len(files)}), got '{r}'")
        rename[int(index) - 1].append(rule(rest, "--rename-in"))
    loaded = [(path,) + load(path, rules) for path, rules in zip(files, rename)]
    try:
        name_filter = re.compile(args.filter)
    except re.error as e:
        raise InputError(f"--filter is not a valid regex: {e}")
    base_path, base_ctx, base = loaded[0]
    names = [n for n in base if name_filter.search(n) and any(n in r for _, _, r in loaded[1:])]
    if not names:
        raise InputError(f"no benchmark of {base_path} is in the other files (names must match "
                         "exactly; --rename can map one naming onto another)")
    gpus = {ctx.get("gpu", "?") for _, ctx, _ in loaded}
    header = ["benchmark"]
    labels = [label_of(p, c) for p, c, _ in loaded]
    if len(set(labels)) < len(labels):  # the same stack twice (an A/A run): name the files too
        labels = [f"{lab} [{os.path.basename(p)}]" for lab, (p, _, _) in zip(labels, loaded)]
    wanted = [c for c in args.counters.split(",") if c]
    counters = [c for c in wanted if any(c in r[n].counters for _, _, r in loaded for n in names if n in r)]
    for i, lab in enumerate(labels):
        header.append(f"{lab}: time us")
        header += [f"{lab}: {c}" for c in counters]
        if i > 0:
            header += [f"{lab}: change %", f"{lab}: p", f"{lab}: verdict"]
    rows = []
    for n in names:
        row, b = [n], base[n]
        for i, (path, _, res) in enumerate(loaded):
            r = res.get(n)
            if r is None or r.error or not r.times:
                row += [r.error if r is not None and r.error else "missing"] + [""] * len(counters)
                if i > 0:
                    row += ["", "", ""]
                continue
            row.append(fmt(r.median_time()))
            row += [fmt(r.median(c)) for c in counters]
            if i > 0:
                if b.error or not b.times:
                    row += ["", "", ""]
                    continue
                if not args.no_utest and (len(b.times) < 2 or len(r.times) < 2):
                    raise InputError(f"{n}: the U test needs at least 2 repetitions in each file "
                                     f"({len(b.times)} in {base_path}, {len(r.times)} in {path}); "
                                     "run with --benchmark_repetitions=5, or pass --no-utest")
                change, p, word = verdict(b, r, args)
                clock_b, clock_r = b.median("sm_clock_MHz"), r.median("sm_clock_MHz")
                if not math.isnan(clock_b) and not math.isnan(clock_r) and abs(clock_r / clock_b - 1) > 0.05:
                    word += " !"
                row += [f"{change:+.1f}", "" if p is None else f"{p:.3g}", word]
        rows.append(row)
    notes = []
    if len(gpus) > 1:
        notes.append(f"files ran on different GPUs: {', '.join(sorted(gpus))}")
    single = [os.path.basename(p) for p, ctx, _ in loaded if not ctx.get("processes")]
    if single and not args.no_utest:
        notes.append(f"{', '.join(single)}: samples are one process's repetitions, so the U test "
                     "does not see the spread between processes (an A/A of such files on the H200 "
                     "flagged 7 of 81 rows; of files merged from 5 processes, none): for a verdict, "
                     "tools/run-matrix --processes 5 or tools/merge-processes")
    return header, rows, notes


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


def run_compare_py(args):
    # The inputs first: a bad file is the user's to fix wherever compare.py lives.
    if len(args.files) != 2:
        raise InputError("compare.py compares two files; use --table for more")
    for f in args.files:
        load(f)  # our one-line errors, before compare.py's tracebacks
    script = os.environ.get("GBENCH_COMPARE", "/usr/share/benchmark/compare.py")
    if not os.path.exists(script):
        raise InputError(f"Google Benchmark's compare.py is not at {script} "
                         "(Debian: apt-get install libbenchmark-tools, or set GBENCH_COMPARE)")
    return subprocess.call([sys.executable, script, "benchmarks", *args.files, *args.extra])


def main(argv):
    args = parse_args(argv)
    try:
        if not args.table:
            return run_compare_py(args)
        if args.extra:
            raise InputError(f"unknown options for --table: {' '.join(args.extra)}")
        if len(args.files) < 2:
            raise InputError("--table needs at least two files")
        header, rows, notes = build_table(args.files, args)
        sys.stdout.write(render(header, rows, notes, args.format))
        return 0
    except InputError as e:
        print(f"tools/compare: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
