"""The seed article's Transformer memory table (peak memory of nn.Transformer by batch), from
cubench's transformer_fwd rows and tools/torch_reference.py's of the same model:

    python3 docs/results/h100/transformer-memory-table.py CUBENCH.json PYTORCH.json

One row per mode and batch; per column the peak the caching allocator handed out
(peak_allocated_bytes, what torch.cuda.max_memory_allocated reports), in MiB: cubench with the
C++ module's own attention (which keeps batch x heads x 512^2 scores), cubench with
scaled_dot_product_attention, and PyTorch's nn.Transformer (python's layers call
scaled_dot_product_attention: it has no other). A configuration that was not run or failed says
why in a word. Exit status 2 on bad input."""
import json
import sys

MIB = 1 << 20


def load(path):
    try:
        with open(path) as f:
            benchmarks = json.load(f)["benchmarks"]
    except OSError as e:
        sys.exit(f"transformer-memory-table: cannot read {path}: {e.strerror}")
    except (ValueError, KeyError, TypeError):
        sys.exit(f"transformer-memory-table: {path} is not a Google Benchmark JSON file")
    out = {}
    for b in benchmarks:
        if b.get("run_type", "iteration") != "iteration":
            continue
        name = b["name"].removesuffix("/manual_time")
        if b.get("error_occurred"):
            out.setdefault(name, "error")
        elif "peak_allocated_bytes" in b:
            out[name] = max(b["peak_allocated_bytes"], out.get(name, 0) if out.get(name) != "error" else 0)
    return out


def cell(rows, name):
    value = rows.get(name)
    if value is None:
        return "not run"
    return value if isinstance(value, str) else f"{value / MIB:,.0f}"


def main(argv):
    if len(argv) != 2:
        print("usage: transformer-memory-table.py CUBENCH.json PYTORCH.json", file=sys.stderr)
        return 2
    cubench, pytorch = load(argv[0]), load(argv[1])
    print("| mode | batch | cubench, module's attention (MiB) | cubench, SDPA (MiB) | PyTorch nn.Transformer (MiB) |")
    print("|---|---:|---:|---:|---:|")
    for mode in ("inference", "train"):
        for batch in (32, 64, 128, 256):
            tail = f"{mode}/{{}}/{batch}"
            print(f"| {mode} | {batch} | {cell(cubench, 'transformer_fwd/' + tail.format('module'))} | "
                  f"{cell(cubench, 'transformer_fwd/' + tail.format('sdpa'))} | "
                  f"{cell(pytorch, 'transformer_fwd/' + tail.format('sdpa'))} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
