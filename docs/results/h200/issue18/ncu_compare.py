#!/usr/bin/env python3
"""Call 11's kernel-by-kernel table (python3 ncu_compare.py): ncu's per-kernel summaries of the
same launch window in cubench's bert_train amp_bf16/512/64 process and in the python replica's
(call11/ncu-cubench.txt, ncu-replica.txt), one row a kernel name and grid, each side's count and
mean duration. Kernels one side runs and the other does not are the difference: in call 11,
cubench's broadcast adds (elementwise_kernel<128, 4, ... CUDAFunctor_add ...>) and its GEMMs
without the bias epilogue (..._TNT where the replica has ..._bias_TNT)."""
import os
import re

here = os.path.dirname(os.path.abspath(__file__))
KERNEL = re.compile(r"  (\S.*?) \((\d+), (\d+), (\d+)\)x\(\d+, \d+, \d+\), Device \d+, CC [\d.]+, "
                    r"Invocations (\d+)")
DURATION = re.compile(r"\s+gpu__time_duration.sum\s+ns\s+[\d,.]+\s+[\d,.]+\s+([\d,.]+)")


def summary(path):
    """(name, grid) -> [launches, total ns] from an ncu --print-summary per-kernel log."""
    out, key, launches = {}, None, 0
    with open(path, errors="replace") as f:
        for line in f:
            m = KERNEL.match(line)
            if m:
                key, launches = (m.group(1)[:90], ",".join(m.group(2, 3, 4))), int(m.group(5))
                continue
            m = DURATION.match(line)
            if m and key:
                row = out.setdefault(key, [0, 0.0])
                row[0] += launches
                row[1] += launches * float(m.group(1).replace(",", ""))
                key = None
    return out


def main():
    cubench = summary(os.path.join(here, "call11/ncu-cubench.txt"))
    replica = summary(os.path.join(here, "call11/ncu-replica.txt"))
    for name, side in (("cubench", cubench), ("replica", replica)):
        print(f"{name}: {sum(v[0] for v in side.values())} launches, "
              f"{sum(v[1] for v in side.values()) / 1e6:.2f} ms")
    print(f"\n{'kernel':90} {'grid':12} {'cubench n':>9} {'mean us':>9} {'replica n':>9} {'mean us':>9}")
    both = sorted(set(cubench) | set(replica),
                  key=lambda k: -(cubench.get(k, [0, 0])[1] + replica.get(k, [0, 0])[1]))
    for key in both:
        a, b = cubench.get(key, [0, 0.0]), replica.get(key, [0, 0.0])
        mean = lambda r: r[1] / r[0] / 1e3 if r[0] else 0.0  # noqa: E731
        print(f"{key[0]:90} {key[1]:12} {a[0]:9d} {mean(a):9.1f} {b[0]:9d} {mean(b):9.1f}")


if __name__ == "__main__":
    main()
