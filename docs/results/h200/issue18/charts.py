#!/usr/bin/env python3
"""Issue 18's charts, one PNG a call, from the same JSON and pairing as tables.py (matplotlib:
Debian's, so /usr/bin/python3 charts.py writes charts/callN.png). Two panels a call, the issue's
two targets: left, PyTorch eager's median time over cubench's for each row (above 1 is cubench
faster; the line at 1.3 is the bar for a CUDA-graph row where the step is launch-bound), graph
rows in their own colour; right, cubench's peak allocated bytes against
torch.cuda.max_memory_allocated in % (eager rows: python has no graph rows), the ±5% bound drawn.

Written here rather than in tools/plot because the charts are of a pairing only this issue makes
(a cubench row beside its python twin, graph beside eager): tools/plot draws each file's own
counters, one line a file."""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import tables  # noqa: E402  the pairing: which files of a call are python's, the medians, the peaks


def is_graph(name):
    return "/graph/" in name or "_graph/" in name


def pairs(cubench_files, python_files):
    """(row, x python eager or None, peak gap % or None) for every cubench row with a python twin."""
    (cb, cb_peak), (py, py_peak) = tables.load(cubench_files), tables.load(python_files)
    out = []
    for name, b in cb.items():
        p = py.get(tables.python_name(name))
        if b.get("error_occurred") or not p or p.get("error_occurred"):
            continue
        mine, theirs = cb_peak.get(name), py_peak.get(tables.python_name(name))
        gap = 100 * (mine / theirs - 1) if mine and theirs and not is_graph(name) else None
        out.append((name, tables.ms(p) / tables.ms(b), gap))
    return out


def chart(call, rows, path):
    names = [r[0] for r in rows]
    height = 1.2 + 0.22 * len(rows)
    fig, (speed, peak) = plt.subplots(1, 2, figsize=(13, height), sharey=True,
                                      gridspec_kw={"width_ratios": [3, 2]})
    y = range(len(rows))
    speed.barh(y, [r[1] for r in rows], color=["tab:orange" if is_graph(n) else "tab:blue" for n in names])
    speed.axvline(1.0, color="black", linewidth=1)
    speed.axvline(1.3, color="tab:orange", linestyle="--", linewidth=1)
    speed.set_yticks(list(y), names, fontsize=7)
    speed.invert_yaxis()
    speed.set_xlabel("PyTorch eager time / cubench time (blue: eager row, orange: CUDA graph)")
    gaps = [(i, r[2]) for i, r in enumerate(rows) if r[2] is not None]
    peak.barh([i for i, _ in gaps], [g for _, g in gaps], color="tab:green")
    for bound in (-5, 5):
        peak.axvline(bound, color="tab:red", linestyle="--", linewidth=1)
    peak.axvline(0, color="black", linewidth=1)
    for i, g in gaps:  # the figure too: a gap of 0.0% draws no bar
        peak.text(g, i, f" {g:+.1f}%", va="center", fontsize=6)
    peak.set_xlim(min([-6] + [g - 1 for _, g in gaps]), max([6] + [g + 1 for _, g in gaps]))
    peak.set_xlabel("peak allocated, cubench against PyTorch (%; bound ±5)")
    for ax in (speed, peak):
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle(f"issue 18, {call}: cubench beside PyTorch eager on the H200", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    out_dir = os.path.join(here, "charts")
    os.makedirs(out_dir, exist_ok=True)
    for call, cubench_files, python_files in tables.calls():
        rows = pairs(cubench_files, python_files)
        if rows:
            path = os.path.join(out_dir, call + ".png")
            chart(call, rows, path)
            print(os.path.relpath(path, here))

if __name__ == "__main__":
    main()
