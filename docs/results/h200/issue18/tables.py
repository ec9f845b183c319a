#!/usr/bin/env python3
"""Issue 18's tables from the H200 calls' JSON in this folder (no numpy): python3 tables.py >
tables.md. Each cubench row beside PyTorch eager's row of the same model, input and mode (a
CUDA-graph row beside python's eager one: the issue's target is graph >= 1.3x python eager), from
the same call. Medians of 5 repetitions each side (call 16: of 5 processes each side, each
process's median, tools/merge-processes); `x eager` is PyTorch's median time over
cubench's; the peak gap is cubench's peak allocated bytes against torch.cuda.max_memory_allocated
(the issue's bound: 5%). The U-test verdicts are tools/compare's (compare-*.md next to this)."""
import glob
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "../../../../tools"))
import results  # noqa: E402  the tools' reader: it loads a file a killed run cut mid-write
COUNTERS = ("images_per_s", "samples_per_s", "tokens_per_s", "ttft_ms", "token_ms_median",
            "token_ms_p99", "pct_copy_ceiling", "first_forward_ms")


def medians(path):
    """name (no /manual_time) -> the median aggregate row (error rows as they are), with the
    median of the repetitions' counters where the aggregate lacks them (torch_reference.py's)."""
    out, reps = {}, {}
    for b in results.read(path)["benchmarks"]:
        name = b["name"].split("/manual_time")[0]
        if b.get("error_occurred"):
            out[name] = b
        elif b.get("run_type") == "aggregate" and b.get("aggregate_name") == "median":
            out[name] = dict(b)
        elif b.get("run_type") == "iteration":
            reps.setdefault(name, []).append(b)
    for name, rows in reps.items():  # a merged file (tools/merge-processes) has no aggregates
        if name not in out:
            out[name] = sorted(rows, key=ms)[(len(rows) - 1) // 2]
    for name, row in out.items():
        for c in COUNTERS:
            values = sorted(r[c] for r in reps.get(name, []) if c in r)
            if c not in row and values:
                row[c] = values[len(values) // 2]
    return out


def peaks(path):
    """name -> peak_allocated_bytes of its first repetition (a median row may not carry it)."""
    out = {}
    for b in results.read(path)["benchmarks"]:
        if "peak_allocated_bytes" in b:
            out.setdefault(b["name"].split("/manual_time")[0], b["peak_allocated_bytes"])
    return out


def ms(b):
    return b["real_time"] * {"ns": 1e-6, "us": 1e-3, "ms": 1, "s": 1e3}[b.get("time_unit", "us")]


def python_name(name):
    return name.replace("_graph/", "/").replace("/graph/", "/eager/")


def load(files):
    """The medians and the peaks of several files, by row name (a later file's row wins)."""
    rows, peak = {}, {}
    for f in files:
        rows.update(medians(f))
        peak.update(peaks(f))
    return rows, peak


def table(call, cubench_files, python_files):
    (cb, cb_peak), (py, py_peak) = load(cubench_files), load(python_files)
    print(f"\n## {call}: {', '.join(os.path.relpath(f, here) for f in cubench_files + python_files)}\n")
    print("| row | cubench ms | PyTorch eager ms | x eager | counters (cubench / PyTorch) |"
          " peak MB cubench / PyTorch | gap |")
    print("|---|---|---|---|---|---|---|")
    for name, b in cb.items():
        if b.get("error_occurred"):
            print(f"| {name} | error: {b.get('error_message', '')[:120]} | | | | | |")
            continue
        p = py.get(python_name(name))
        cells = [name, f"{ms(b):,.2f}"]
        cells += [f"{ms(p):,.2f}", f"{ms(p) / ms(b):.2f}"] if p and not p.get("error_occurred") else ["", ""]
        counters = []
        for c in COUNTERS:
            if c in b:
                other = p.get(c) if p else None
                counters.append(f"{c} {b[c]:,.4g}" + (f" / {other:,.4g}" if other is not None else ""))
        cells.append("; ".join(counters))
        mine, theirs = cb_peak.get(name), py_peak.get(python_name(name)) if "/graph/" not in name and "_graph/" not in name else None
        if mine and theirs:
            cells += [f"{mine / 1e6:,.1f} / {theirs / 1e6:,.1f}", f"{100 * (mine / theirs - 1):+.1f}%"]
        else:
            cells += [f"{mine / 1e6:,.1f}" if mine else "", ""]
        print("| " + " | ".join(cells) + " |")


# Calls whose cubench rows have their python twins in another call: call 11's llama_decode
# fp16 graph batch 32 (python's eager batch 32 ran in call 10) and call 13's bert_train
# amp_bf16/128/64 (python's in call 12, a minute before, on the same machine).
PYTHON_FROM = {"call11": "call10", "call13": "call12"}


def call_number(path):
    return int(os.path.basename(path)[len("call"):])


def calls():
    """(call, cubench files, python files) for each call folder, in call order."""
    for call in sorted(glob.glob(os.path.join(here, "call*")), key=call_number):
        files = sorted(glob.glob(os.path.join(call, "*.json")))
        merged = [f for f in files if f.endswith("-merged.json")]
        files = merged or files  # a call of processes: its merged files, one sample a process
        python_files = [f for f in files if os.path.basename(f).startswith("pytorch-")]
        if os.path.basename(call) in PYTHON_FROM:
            python_files = sorted(glob.glob(os.path.join(here, PYTHON_FROM[os.path.basename(call)],
                                                         "pytorch-*.json")))
        yield os.path.basename(call), [f for f in files if f not in python_files], python_files


def main():
    print("# Issue 18 on the H200: cubench's model families beside PyTorch eager (python3 tables.py)")
    print("\n" + __doc__.split("\n\n")[0].split("tables.md. ", 1)[1])
    for call, cubench_files, python_files in calls():
        if cubench_files:
            table(call, cubench_files, python_files)


if __name__ == "__main__":
    main()
