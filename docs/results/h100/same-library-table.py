"""Every cubench row that calls the same library as a PyTorch op, set against PyTorch's, in time and
in cycles: is each row at least what the same library gives PyTorch, at the same clock?

    tools/pyrun ../docs/results/h100/same-library-table.py CUBENCH.json PYTORCH.json

CUBENCH.json: cubench's rows of attention (cuDNN's SDPA), conv and conv_autotune (cuDNN), gemm
(cuBLASLt) and gemm_decode (cuBLASLt), and its LibTorch torch/attention/cudnn rows; PYTORCH.json:
tools/torch_reference.py's rows of the same names (torch/attention/cudnn: SDPA restricted to
SDPBackend.CUDNN_ATTENTION; conv: F.conv2d under cudnn.benchmark; gemm: torch.mm; gemm_decode:
F.linear). A pair is:
  attention/<rest>           against torch/attention/cudnn/<rest>
  torch/attention/cudnn/...  (cubench's LibTorch row) against the same name
  conv/<rest>, conv_autotune/<rest>  against conv/<rest> (PyTorch autotunes: conv_autotune is the
                             like for like; conv is the heuristic's first plan, its distance shown)
  gemm/<rest>, gemm_decode/<rest>    against the same name
A Markdown table on stdout: each side's median time, PyTorch's over cubench's (1.00 and above:
cubench at least as fast), each side's SM clock over its samples, the ratio in cycles (time x
clock: the clock taken out), and the share of each side's polls that found the software power cap
holding the clock. A row under 0.97 in cycles is marked: cubench asked the library for less, or
asked it differently, and the family's page says what. Exit status 2 on a file that is not a
result file."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tools"))
from cubench_tools import cli, input_error, results, rows  # noqa: E402

BAR = 0.97


def peer_of(name):
    """The PyTorch row a cubench row is set against, or None."""
    if name.startswith("attention/"):
        return "torch/attention/cudnn/" + name[len("attention/"):]
    if name.startswith("conv_autotune/"):
        return "conv/" + name[len("conv_autotune/"):]
    if name.startswith(("conv/", "gemm/", "gemm_decode/", "torch/attention/cudnn/")):
        return name
    return None


def fmt_ratio(x):
    return "" if x != x else f"{x:.2f}"


def main(argv):
    if len(argv) != 2:
        raise input_error.InputError("want CUBENCH.json PYTORCH.json")
    _, ours = results.load(argv[0])
    _, theirs = results.load(argv[1])
    print("| row | cubench | PyTorch | PyTorch / cubench, time | SM clock, cubench / PyTorch | "
          "PyTorch / cubench, cycles | power-capped, cubench / PyTorch |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    under, compared = [], 0
    for name, r in ours.items():
        peer = peer_of(name)
        t = theirs.get(peer) if peer else None
        if t is None or not r.measured() or not t.measured():
            continue
        compared += 1
        time_ratio = t.median_time() / r.median_time()
        cycles_ratio = t.mcycles() / r.mcycles()
        clocks = f"{r.median('sm_clock_MHz'):.0f} / {t.median('sm_clock_MHz'):.0f} MHz"
        capped = f"{r.median('power_capped_pct'):.0f}% / {t.median('power_capped_pct'):.0f}%"
        mark = " **under 0.97**" if cycles_ratio < BAR else ""
        if cycles_ratio < BAR:
            under.append(name)
        short = name[:-len("/manual_time")] if name.endswith("/manual_time") else name
        print(f"| `{short}` | {rows.time_text(r.median_time())} | {rows.time_text(t.median_time())} | "
              f"{fmt_ratio(time_ratio)} | {clocks} | {fmt_ratio(cycles_ratio)}{mark} | {capped} |")
    if not compared:
        raise input_error.InputError(f"no row of {argv[0]} has its PyTorch peer in {argv[1]}")
    print(f"\n{compared} rows set against PyTorch's; {len(under)} under {BAR} in cycles"
          + (f": {', '.join(under)}" if under else "") + ".")
    return 0


if __name__ == "__main__":
    sys.exit(cli.run("same-library-table", main))
