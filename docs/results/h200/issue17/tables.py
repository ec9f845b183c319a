#!/usr/bin/env python3
"""Issue 17's tables from the JSON of the H200 calls in this folder (no numpy; python3 tables.py
> tables.md). Medians: cubench rows are one process each (its adaptive samples); PyTorch rows are
torch_reference.py's 5 repetitions' median."""
import json
import os
import re

here = os.path.dirname(os.path.abspath(__file__))


def rows(path):
    """name (without /manual_time) -> the row (PyTorch files: the median aggregate)."""
    out = {}
    for b in json.load(open(os.path.join(here, path)))["benchmarks"]:
        name = b["name"]
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") != "median":
                continue
            name = name[: -len("_median")]
        elif "torch_reference" in json.dumps(b.get("label", "")):
            pass
        out.setdefault(name.replace("/manual_time", ""), b)
    return out


def us(b):
    scale = {"ns": 1e-3, "us": 1, "ms": 1e3, "s": 1e6}[b.get("time_unit", "us")]
    return b["real_time"] * scale


def fmt(x, digits=1):
    return f"{x:,.{digits}f}"


def attention():
    direct = rows("call2/attention.json")
    lt = rows("call2/torch-attention.json")
    py = rows("call2/pytorch-attention.json")
    print("## Attention, bf16, head dim 128, 16384 tokens per batch, width 2048 (call 2)\n")
    print("Time in us and TFLOP/s (forward 4·b·h·s²·d, half for causal; fwd_bwd 3.5x). cuDNN direct"
          " is cubench's `attention/` (cudnn-frontend graphs); LibTorch and PyTorch run"
          " scaled_dot_product_attention with one backend allowed.\n")
    print("| pass | mask | seq | cuDNN direct | LibTorch cudnn | PyTorch cudnn | LibTorch flash |"
          " PyTorch flash |")
    print("|---|---|---|---|---|---|---|---|")
    for name, b in direct.items():
        _, pas, dt, mask, d, seq = name.split("/")
        cells = [f"{fmt(us(b))} us, {fmt(b['TFLOPS'], 0)}"]
        for src, backend in ((lt, "cudnn"), (py, "cudnn"), (lt, "flash"), (py, "flash")):
            o = src.get(f"torch/attention/{backend}/{pas}/{dt}/{mask}/{d}/{seq}")
            cells.append(f"{fmt(us(o))} us, {fmt(o['TFLOPS'], 0)}" if o else "")
        print(f"| {pas} | {mask} | {seq} | " + " | ".join(cells) + " |")
    print()


def conv():
    c = rows("call2/conv.json")
    print("## Convolution, ResNet-50's layers, batch 256, NHWC (call 2)\n")
    print("| row | layer | time us | TFLOP/s | max_error_ratio | plan |")
    print("|---|---|---|---|---|---|")
    for name, b in c.items():
        label = b["label"].split("; stopped")[0]
        layer = label.split(",")[0] if not name.startswith("conv_resnet50") else "the network"
        plan = label[len(layer) + 2:] if layer != "the network" else label
        print(f"| {name} | {layer} | {fmt(us(b))} | {fmt(b['TFLOPS'])} | {b['max_error_ratio']:.3f} |"
              f" {plan} |")
    print()
    r = rows("call5/resnet50-conv.json")
    step = r["resnet50_train/amp_bf16/channels_last/224/256"]
    convs = {p: r[f"conv_resnet50/{p}/bf16"] for p in ("fwd", "dgrad", "wgrad")}
    total = sum(us(b) for b in convs.values())
    print("### The network's convolutions against the training step (call 5, one process)\n")
    print("| row | time ms |")
    print("|---|---|")
    for p, b in convs.items():
        print(f"| conv_resnet50/{p}/bf16 | {fmt(us(b) / 1e3, 2)} |")
    print(f"| sum of the three | {fmt(total / 1e3, 2)} |")
    print(f"| resnet50_train/amp_bf16/channels_last/224/256 (one step) | {fmt(us(step) / 1e3, 2)} |")
    print(f"\nThe convolutions cuDNN runs with the heuristic's first plans take {fmt(total / 1e3, 1)} ms,"
          f" {100 * total / us(step):.0f}% of the LibTorch step's {fmt(us(step) / 1e3, 1)} ms.\n")


def decode():
    d = rows("call2/gemm-decode.json")
    print("## Decode GEMMs, LLaMA-7B weights, L2 flushed before each sample (call 2)\n")
    print("| row | time us | GB/s | % of copy ceiling | TFLOP/s | SM MHz |")
    print("|---|---|---|---|---|---|")
    for name, b in d.items():
        print(f"| {name} | {fmt(us(b))} | {fmt(b['GBps'], 0)} | {b['pct_copy_ceiling']:.1f} |"
              f" {fmt(b['TFLOPS'], 2)} | {b['sm_clock_MHz']:.0f} |")
    print()


def peak():
    anchors = {"bf16": 794.5, "fp8": 1453}
    print("## gemm_peak against mamf-finder's anchors\n")
    print("| call | dtype | TFLOP/s | anchor | % of anchor | best m x n x k | SM MHz | power-capped"
          " polls % | search |")
    print("|---|---|---|---|---|---|---|---|---|")
    for call in ("call3", "call5"):
        for name, b in rows(f"{call}/gemm-peak.json").items():
            dt = name.split("/")[1]
            search = re.sub(r"^best [0-9 x]+, ", "", b["label"].split("; stopped")[0])
            print(f"| {call} | {dt} | {fmt(b['TFLOPS'])} | {anchors[dt]} |"
                  f" {100 * b['TFLOPS'] / anchors[dt]:.1f} | {b['best_m']:.0f} x {b['best_n']:.0f} x"
                  f" {b['best_k']:.0f} | {b['sm_clock_MHz']:.0f} | {b['power_capped_pct']:.0f} |"
                  f" {search} |")
    print()


def sigmoid():
    s = rows("call5/sigmoid.json")
    print("## Our sigmoid against the copy and LibTorch's sigmoid (call 5, one process)\n")
    print("torch/sigmoid samples without an L2 flush (hot), so ours is set against it in the hot"
          " rows only.\n")
    print("| dtype | n | cache | ours us | copy us | ours / copy rate % | torch/sigmoid us (hot) |"
          " ours (hot) against torch |")
    print("|---|---|---|---|---|---|---|---|")
    for name, b in s.items():
        if not name.startswith("sigmoid/vectorized/"):
            continue
        _, _, dt, n, cache = name.split("/")
        copy = s[f"sigmoid/copy/{dt}/{n}/{cache}"]
        torch = s[f"torch/sigmoid/{dt}/{n}"]
        print(f"| {dt} | {n} | {cache} | {fmt(us(b), 2)} | {fmt(us(copy), 2)} |"
              f" {100 * us(copy) / us(b):.1f} | {fmt(us(torch), 2)} |"
              + (f" {100 * (us(b) / us(torch) - 1):+.1f}% |" if cache == "hot" else " |"))
    print()


if __name__ == "__main__":
    print("# Issue 17: tables from the H200 calls (made by tables.py from the JSON here)\n")
    attention()
    conv()
    decode()
    peak()
    sigmoid()
