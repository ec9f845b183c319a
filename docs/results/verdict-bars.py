"""How often the verdict rule (tools/cubench_tools/verdicts.py) calls noise a change, and how often
it still sees a real one, on every committed A/A and toolkit comparison of real processes.

    tools/pyrun ../docs/results/verdict-bars.py [--check] [--rows]

Per GPU (docs/results/h100, docs/results/h200), the merged four-process files hold one row per
process. Split back into one-process files, they give:
  - the one-process A/A: the 8 processes of one build (two merged files) compared pairwise, 28
    pairs: every row called faster or slower is the rule calling noise a change;
  - the one-process real differences: each of CUDA 11.8's 4 processes against each of 13.0's 4
    (16 pairs), on the rows whose medians over the processes differ by 20% or more: the share
    called, in the right direction;
and, merged as they are, the four-process A/A and 11.8 against 13.0. The H100's two one-process
files of tests/data (one-process-a.json, -b.json: two default runs of one build) are a one-process
A/A as well. A Markdown table on stdout; the bars: at most 1 row in 80 called in each A/A (one at
least: 1 of 79 passes), and 9 in 10 of the real differences called. With --check, exit status 1
where any row of the table misses its bar; --rows lists every A/A row the rule called.
"""
import itertools
import json
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tools"))
from cubench_tools import results, verdicts  # noqa: E402

AA_MAX_SHARE = 1 / 80
REAL_MIN_SHARE = 0.9
REAL_CHANGE = 0.20
# Per GPU: (the two merged files of one build, the merged 11.8 and 13.0 files), in docs/results.
GPUS = {
    "H100": (("h100/toolkits/verdict-cuda-13.0.json", "h100/toolkits/verdict-cuda-13.0-aa.json"),
             ("h100/toolkits/verdict-cuda-11.8.json", "h100/toolkits/verdict-cuda-13.0.json")),
    "H200": (("h200/aa/cuda-13.0-a.json", "h200/aa/cuda-13.0-b.json"),
             ("h200/toolkits/cuda-11.8.json", "h200/toolkits/cuda-13.0.json")),
}
ONE_PROCESS_AA = ("tests/data/one-process-a.json", "tests/data/one-process-b.json")  # H100


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
    stem = os.path.basename(os.path.dirname(path)) + "-" + os.path.basename(path)[:-5]
    for index, rows in sorted(by_process.items()):
        out = os.path.join(directory, f"{stem}-process{index + 1}.json")
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


class Line:
    """One comparison of the table: what it is, how many pairs of files and rows, how many called,
    and whether that meets its bar."""

    def __init__(self, gpu, what, pairs, judged, called, aa):
        self.gpu, self.what, self.pairs, self.judged, self.called, self.aa = gpu, what, pairs, judged, called, aa

    @property
    def met(self):
        if self.aa:
            return self.called <= aa_allowed(self.judged)
        return self.called >= REAL_MIN_SHARE * self.judged

    def cells(self):
        share = f"{self.called} of {self.judged} ({100 * self.called / self.judged:.3g}%)" if self.judged else "none"
        bar = "at most 1 in 80" if self.aa else "9 in 10 at least"
        right = "" if self.aa else " in the right direction"
        return [self.gpu, self.what, str(self.pairs), str(self.judged), share + right, bar,
                "yes" if self.met else "**no**"]


def gpu_lines(gpu, aa_files, real_files, directory):
    """The four comparisons of one GPU, and the A/A rows called (name, verdict, base, other)."""
    aa_paths = [os.path.join(HERE, f) for f in aa_files]
    old_path, new_path = (os.path.join(HERE, f) for f in real_files)
    same = loaded(split(aa_paths[0], directory) + split(aa_paths[1], directory))
    aa = judge_pairs(itertools.combinations(same, 2))
    aa_called = [x for x in aa if x[1].called]
    old, new = loaded(split(old_path, directory)), loaded(split(new_path, directory))

    def median_of(files, name):
        return statistics.median(f[name].median_time() for f, _ in files if name in f and f[name].measured())

    shared = [n for n in old[0][0] if n in new[0][0] and old[0][0][n].measured() and new[0][0][n].measured()]
    real_rows = {n: median_of(new, n) / median_of(old, n) - 1 for n in shared}
    real_rows = {n: c for n, c in real_rows.items() if abs(c) >= REAL_CHANGE}

    def right(n, v):
        return v.word == (verdicts.SLOWER if real_rows[n] > 0 else verdicts.FASTER)

    real = [(n, v) for n, v, *_ in judge_pairs(itertools.product(old, new)) if n in real_rows]
    merged = [results.load(p)[1] for p in aa_paths + [old_path, new_path]]
    four_aa = [verdicts.judge(a, b, 4, 4) for _, a, b in measured_pairs(merged[0], merged[1])]
    four_real = [(n, verdicts.judge(a, b, 4, 4)) for n, a, b in measured_pairs(merged[2], merged[3])
                 if n in real_rows]
    lines = [
        Line(gpu, "A/A, one process a side: 8 processes of CUDA 13.0", 28, len(aa), len(aa_called), True),
        Line(gpu, f"11.8 against 13.0, one process a side, rows 20%+ apart ({len(real_rows)} rows)", 16,
             len(real), sum(right(n, v) for n, v in real), False),
        Line(gpu, "A/A, four processes a side", 1, len(four_aa), sum(v.called for v in four_aa), True),
        Line(gpu, "11.8 against 13.0, four processes a side, rows 20%+ apart", 1, len(four_real),
             sum(right(n, v) for n, v in four_real), False),
    ]
    return lines, aa_called


def table():
    """(every Line, every A/A row called) over the committed files."""
    lines, called = [], []
    with tempfile.TemporaryDirectory() as d:
        for gpu, (aa_files, real_files) in GPUS.items():
            more, rows = gpu_lines(gpu, aa_files, real_files, d)
            lines += more
            called += rows
    a, b = (results.load(os.path.join(ROOT, f))[1] for f in ONE_PROCESS_AA)
    pair = [(n, verdicts.judge(ra, rb), ONE_PROCESS_AA[0], ONE_PROCESS_AA[1]) for n, ra, rb in measured_pairs(a, b)]
    lines.append(Line("H100", "A/A, one process a side: tests/data/one-process-a against -b", 1, len(pair),
                      sum(v.called for _, v, *_ in pair), True))
    called += [x for x in pair if x[1].called]
    return lines, called


def main(argv):
    check, list_rows = "--check" in argv, "--rows" in argv
    unknown = [a for a in argv if a not in ("--check", "--rows")]
    if unknown:
        print(f"verdict-bars: unknown argument {unknown[0]}", file=sys.stderr)
        return 2
    lines, called = table()
    print("| GPU | comparison | pairs of files | rows judged | called faster or slower | the bar | met |")
    print("|---|---|---:|---:|---:|---|---|")
    for line in lines:
        print("| " + " | ".join(line.cells()) + " |")
    aa = [line for line in lines if line.aa]
    total_called, total = sum(l.called for l in aa), sum(l.judged for l in aa)
    print(f"\nEvery A/A together: {total_called} of {total} rows called ({100 * total_called / total:.2g}%).")
    print(f"Rule: {verdicts.rule_text(verdicts.ONE_PROCESS)} (one process); "
          f"{verdicts.rule_text(verdicts.UTEST)} (four).")
    if list_rows:
        print()
        for n, v, pa, pb in called:
            print(f"- {n}: {v.word} {v.change * 100:+.1f}% ({os.path.basename(pa)} -> {os.path.basename(pb)})")
    if check and not all(line.met for line in lines):
        print("verdict-bars: the rule misses a bar (see the table)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
