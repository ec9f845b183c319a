"""How often the verdict rule (tools/cubench_tools/verdicts.py) calls noise a change, and how often
it still sees a real one, on real processes of the H100's committed runs.

    tools/pyrun ../docs/results/h100/one-process-verdicts.py [--check] [--rows]

The merged four-process files of docs/results/h100/toolkits/ hold one row per process. Split back
into one-process files, they give:
  - the one-process A/A: the 8 processes of CUDA 13.0 (verdict-cuda-13.0.json and
    verdict-cuda-13.0-aa.json, one build) compared pairwise, 28 pairs: every row called faster or
    slower is the rule calling noise a change;
  - the one-process real differences: each of 11.8's 4 processes against each of 13.0's 4 (16
    pairs), on the rows whose medians over the processes differ by 20% or more: the share called,
    in the right direction;
and, merged as they are, the four-process A/A (13.0 against 13.0-aa) and 11.8 against 13.0.
A Markdown table on stdout. With --check, exit status 1 where the one-process A/A calls more than
1 row in 80 (one at least: 1 of 79 passes) or the real differences are called in fewer than 9 of 10 (the bar the rule is held to);
--rows lists every A/A row the rule called.
"""
import itertools
import json
import os
import statistics
import sys
import tempfile

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tools")
sys.path.insert(0, TOOLS)
from cubench_tools import results, verdicts  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLKITS = os.path.join(HERE, "toolkits")
AA_MAX_SHARE = 1 / 80
REAL_MIN_SHARE = 0.9
REAL_CHANGE = 0.20


def aa_allowed(rows):
    """How many rows an A/A may call at 1 in 80: one at least (79 rows: the four-process bar)."""
    return max(1, round(rows * AA_MAX_SHARE))


def split(path, directory):
    """One result file per process of a merged file (its rows by repetition_index), written into
    directory; their paths."""
    data = results.read(path)
    by_process = {}
    for row in filter(results.is_iteration, data["benchmarks"]):
        by_process.setdefault(row.get("repetition_index", 0), []).append(
            dict(row, repetitions=1, repetition_index=0))
    context = {k: v for k, v in data["context"].items() if k not in ("processes", "process_dates")}
    paths = []
    for index, rows in sorted(by_process.items()):
        out = os.path.join(directory, f"{os.path.basename(path)[:-5]}-process{index + 1}.json")
        with open(out, "w", encoding="utf-8") as f:
            json.dump({"context": context, "benchmarks": rows}, f)
        paths.append(out)
    return paths


def loaded(paths):
    return [(results.load(p)[1], p) for p in paths]


def measured_pairs(a, b):
    return [(n, a[n], b[n]) for n in a if n in b and a[n].measured() and b[n].measured()]


def judge_pairs(pairs_of_files, processes=1):
    """[(name, verdict, base path, other path)] over every row of every pair of files."""
    out = []
    for (a, pa), (b, pb) in pairs_of_files:
        for n, ra, rb in measured_pairs(a, b):
            out.append((n, verdicts.judge(ra, rb, processes, processes), pa, pb))
    return out


def main(argv):
    check, list_rows = "--check" in argv, "--rows" in argv
    unknown = [a for a in argv if a not in ("--check", "--rows")]
    if unknown:
        print(f"one-process-verdicts: unknown argument {unknown[0]}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as d:
        new = loaded(split(os.path.join(TOOLKITS, "verdict-cuda-13.0.json"), d))
        new_aa = loaded(split(os.path.join(TOOLKITS, "verdict-cuda-13.0-aa.json"), d))
        old = loaded(split(os.path.join(TOOLKITS, "verdict-cuda-11.8.json"), d))
    aa = judge_pairs(itertools.combinations(new + new_aa, 2))
    aa_called = [x for x in aa if x[1].called]

    def median_of(files, name):
        return statistics.median(f[name].median_time() for f, _ in files if name in f and f[name].measured())

    shared = [n for n in old[0][0] if n in new[0][0] and old[0][0][n].measured() and new[0][0][n].measured()]
    real_rows = {n: median_of(new, n) / median_of(old, n) - 1 for n in shared}
    real_rows = {n: c for n, c in real_rows.items() if abs(c) >= REAL_CHANGE}
    real = [(n, v) for n, v, *_ in judge_pairs(itertools.product(old, new)) if n in real_rows]
    real_called = [(n, v) for n, v in real
                   if v.word == (verdicts.SLOWER if real_rows[n] > 0 else verdicts.FASTER)]

    merged = {name: results.load(os.path.join(TOOLKITS, name))[1]
              for name in ("verdict-cuda-11.8.json", "verdict-cuda-13.0.json", "verdict-cuda-13.0-aa.json")}
    four_aa = [verdicts.judge(a, b, 4, 4) for _, a, b in
               measured_pairs(merged["verdict-cuda-13.0.json"], merged["verdict-cuda-13.0-aa.json"])]
    four_real = {n: verdicts.judge(a, b, 4, 4) for n, a, b in
                 measured_pairs(merged["verdict-cuda-11.8.json"], merged["verdict-cuda-13.0.json"])}
    four_real_called = sum(v.word == (verdicts.SLOWER if real_rows[n] > 0 else verdicts.FASTER)
                           for n, v in four_real.items() if n in real_rows)

    def share(k, n):
        return f"{k} of {n} ({100 * k / n:.3g}%)" if n else "none"

    print("| comparison | pairs of files | rows judged | called faster or slower | the bar |")
    print("|---|---:|---:|---:|---|")
    print(f"| A/A, one process a side: 8 processes of CUDA 13.0 | 28 | {len(aa)} | "
          f"{share(len(aa_called), len(aa))} | at most 1 in 80 |")
    print(f"| 11.8 against 13.0, one process a side, rows 20%+ apart ({len(real_rows)} rows) | 16 | "
          f"{len(real)} | {share(len(real_called), len(real))} in the right direction | 9 in 10 at least |")
    print(f"| A/A, four processes a side | 1 | {len(four_aa)} | "
          f"{share(sum(v.called for v in four_aa), len(four_aa))} | at most 1 in 80 |")
    print(f"| 11.8 against 13.0, four processes a side, rows 20%+ apart | 1 | {len(real_rows)} | "
          f"{share(four_real_called, len(real_rows))} in the right direction | 9 in 10 at least |")
    print()
    print(f"Rule: {verdicts.rule_text(verdicts.ONE_PROCESS)} (one process); "
          f"{verdicts.rule_text(verdicts.UTEST)} (four). Files: docs/results/h100/toolkits/verdict-*.json "
          "(one H100 80GB HBM3, four processes per build taking turns).")
    if list_rows:
        print()
        for n, v, pa, pb in aa_called:
            print(f"- {n}: {v.word} {v.change * 100:+.1f}% ({os.path.basename(pa)} -> {os.path.basename(pb)})")
    failed = (len(aa_called) > aa_allowed(len(aa)) or len(real_called) < REAL_MIN_SHARE * len(real)
              or sum(v.called for v in four_aa) > aa_allowed(len(four_aa)))
    if check and failed:
        print("one-process-verdicts: the rule misses its bar (see the table)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
