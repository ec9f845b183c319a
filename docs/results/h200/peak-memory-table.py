"""Peak memory of the operation alone, beside what it must hold: prints a markdown table from a
cubench result file and tools/torch_reference.py's file of the same operations.

    python3 docs/results/h200/peak-memory-table.py CUBENCH.json PYTORCH.json

GEMM C = A^T B (A k x m, B k x n, C m x n): its operands are (mk + kn) x the input's bytes and
mn x the output's (bf16 for fp8 inputs); the row also holds cuBLASLt's 32 MiB workspace. SVD of an n x n matrix: A, U, V (n x n) and
S (n) in the dtype; the row also holds the pristine copy of A each run starts from (n x n) and
cuSOLVER's workspace. LibTorch rows (their allocator's peaks) stand beside
torch.cuda.max_memory_allocated of the same operation in PyTorch. The files are read through
tools/cubench_tools/results.py: a row skipped or failed has no peak here. Exit status 2 on bad
input."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tools"))
from cubench_tools import cli, input_error, results  # noqa: E402

MIB = 1 << 20
ELEMENT = {"fp32": 4, "fp64": 8, "bf16": 2, "fp16": 2, "tf32": 4, "fp8": 1}


def rows(path):
    """{configuration: its Result} of the rows measured (a skipped or failed row has no peak)."""
    return {name.removesuffix("/manual_time"): r for name, r in results.load(path)[1].items()
            if r.measured()}


def counter(r, name):
    """The counter's value in the row's last repetition (as the table has always taken it), or
    None."""
    values = r.counters.get(name) if r is not None else None
    return values[-1] if values else None


def mib(x):
    return f"{x / MIB:,.1f}"


def operands(name):
    m = re.match(r"gemm/(\w+)/(\d+)/(\d+)/(\d+)$", name)
    if m:
        dtype, (mm, n, k) = m.group(1), map(int, m.groups()[1:])
        out = 2 if dtype == "fp8" else ELEMENT[dtype]
        return (mm * k + k * n) * ELEMENT[dtype] + mm * n * out, "A, B, C"
    m = re.match(r"svd/\w+/(\w+)/(\d+)$", name)
    if m:
        e, n = ELEMENT[m.group(1)], int(m.group(2))
        return (3 * n * n + n) * e, "A, U, S, V"
    return None, ""


def main(argv):
    if len(argv) not in (1, 2):
        raise input_error.InputError("want CUBENCH.json [PYTORCH.json]")
    cubench, pytorch = rows(argv[0]), rows(argv[1]) if len(argv) > 1 else {}
    print("| row | peak (MiB; LibTorch's: allocated) | most in use (MiB) | operands (MiB) | peak less operands (MiB) |"
          " PyTorch's max_memory_allocated (MiB) |")
    print("|---|---|---|---|---|---|")
    for name, r in cubench.items():
        torch_row = "peak_allocated_bytes" in r.counters
        peak = counter(r, "peak_allocated_bytes" if torch_row else "peak_mem_bytes")
        used = None if torch_row else counter(r, "used_mem_bytes")  # LibTorch's: allocated is used
        if peak is None:
            continue
        need, what = operands(name)
        py = counter(pytorch.get(name), "peak_allocated_bytes")
        print(f"| {name} | {mib(peak)} | {mib(used) if used is not None else ''} | "
              f"{mib(need) + ' (' + what + ')' if need else ''} | "
              f"{mib(peak - need) if need else ''} | {mib(py) if py else ''} |")


if __name__ == "__main__":
    sys.exit(cli.run("peak-memory-table", main))
