"""The seed article's Transformer memory table (peak memory of nn.Transformer by batch), from
cubench's transformer_fwd rows and tools/torch_reference.py's of the same model:

    python3 docs/results/h100/transformer-memory-table.py CUBENCH.json PYTORCH.json

One row per mode and batch; per column the peak the caching allocator handed out
(peak_allocated_bytes, what torch.cuda.max_memory_allocated reports), in MiB: cubench with the
C++ module's own attention (which keeps batch x heads x 512^2 scores), cubench with
scaled_dot_product_attention, and PyTorch's nn.Transformer (python's layers call
scaled_dot_product_attention: it has no other). A configuration that was not run or failed says
why in a word. The files are read through tools/cubench_tools/results.py: a skipped row is "not
run", never a peak. Exit status 2 on bad input."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tools"))
from cubench_tools import cli, input_error, results, row_outcome  # noqa: E402

MIB = 1 << 20


def load(path):
    """{configuration: its largest peak_allocated_bytes over the repetitions, or "error"}: a row
    skipped (not run, not supported) is left out, so its cell says "not run"."""
    out = {}
    for run_name, r in results.load(path)[1].items():
        name = run_name.removesuffix("/manual_time")
        if r.measured():
            peaks = r.counters.get("peak_allocated_bytes")
            if peaks:
                out[name] = max(peaks)
        elif r.status not in row_outcome.SKIPS:
            out[name] = "error"
    return out


def cell(rows, name):
    value = rows.get(name)
    if value is None:
        return "not run"
    return value if isinstance(value, str) else f"{value / MIB:,.0f}"


def main(argv):
    if len(argv) != 2:
        raise input_error.InputError("usage: transformer-memory-table.py CUBENCH.json PYTORCH.json")
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
    sys.exit(cli.run("transformer-memory-table", main))
