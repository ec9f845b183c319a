"""Peak memory of the operation alone, beside what it must hold: prints a markdown table from a
cubench result file and tools/torch_reference.py's file of the same operations.

    python3 docs/results/h200/peak-memory-table.py CUBENCH.json PYTORCH.json

GEMM C = A^T B (A k x m, B k x n, C m x n): its operands are (mk + kn) x the input's bytes and
mn x the output's (bf16 for fp8 inputs); the row also holds cuBLASLt's 32 MiB workspace. SVD of an n x n matrix: A, U, V (n x n) and
S (n) in the dtype; the row also holds the pristine copy of A each run starts from (n x n) and
cuSOLVER's workspace. LibTorch rows (their allocator's peaks) stand beside
torch.cuda.max_memory_allocated of the same operation in PyTorch."""
import json
import re
import sys

MIB = 1 << 20
ELEMENT = {"fp32": 4, "fp64": 8, "bf16": 2, "fp16": 2, "tf32": 4, "fp8": 1}


def rows(path):
    with open(path) as f:
        data = json.load(f)
    out = {}
    for b in data["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration" or b.get("error_occurred"):
            continue
        out[b["name"].removesuffix("/manual_time")] = b
    return out


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


def main():
    cubench, pytorch = rows(sys.argv[1]), rows(sys.argv[2]) if len(sys.argv) > 2 else {}
    print("| row | peak (MiB; LibTorch's: allocated) | most in use (MiB) | operands (MiB) | peak less operands (MiB) |"
          " PyTorch's max_memory_allocated (MiB) |")
    print("|---|---|---|---|---|---|")
    for name, b in cubench.items():
        torch_row = "peak_allocated_bytes" in b
        peak = b.get("peak_allocated_bytes" if torch_row else "peak_mem_bytes")
        used = None if torch_row else b.get("used_mem_bytes")  # LibTorch's: allocated is used
        if peak is None:
            continue
        need, what = operands(name)
        py = pytorch.get(name, {}).get("peak_allocated_bytes")
        print(f"| {name} | {mib(peak)} | {mib(used) if used is not None else ''} | "
              f"{mib(need) + ' (' + what + ')' if need else ''} | "
              f"{mib(peak - need) if need else ''} | {mib(py) if py else ''} |")


if __name__ == "__main__":
    main()
