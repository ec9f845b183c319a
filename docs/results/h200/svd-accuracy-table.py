"""Table of svd/ accuracy over seeds from cubench JSON: the figures of a passing row's counters,
or of a failed row's error message (benchmarks/svd.cpp writes all of them in both). The files are
read through tools/cubench_tools/results.py: a row skipped (not run, not supported) ran no seed
and is left out.
usage: svd-accuracy-table.py svd-seed-*.json (the files in svd-accuracy.tgz)"""
import os
import re
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tools"))
from cubench_tools import cli, input_error, results, row_outcome  # noqa: E402

FIGURES = re.compile(r"reconstruction ([-\d.e+naif]+), orthogonality ([-\d.e+naif]+), "
                     r"singular values ([-\d.e+naif]+) against")
COUNTERS = ("recon_error", "ortho_error", "sigma_error")


def main(argv):
    if not argv:
        raise input_error.InputError("want svd-seed-*.json (the files in svd-accuracy.tgz)")
    rows = defaultdict(list)  # name -> [(seed, recon, ortho, sigma, passed)]
    for path in argv:
        context, loaded = results.load(path)
        seed = context.get("input_seed", "?")
        for run_name, r in loaded.items():
            name = run_name.replace("/manual_time", "")
            if r.measured():
                missing = [c for c in COUNTERS if c not in r.counters]
                if missing:
                    raise input_error.InputError(f"{path}: {run_name} has no {', '.join(missing)}")
                for figures in zip(*(r.counters[c] for c in COUNTERS)):  # one per repetition
                    rows[name].append((seed, *figures, True))
            elif r.status not in row_outcome.SKIPS:
                m = FIGURES.search(r.message or "")
                figures = tuple(float(x) for x in m.groups()) if m else (float("nan"),) * 3
                rows[name].append((seed, *figures, False))

    print("| benchmark | seeds | passed | reconstruction max | orthogonality max | "
          "singular values max | failures (seed: reconstruction) |")
    print("|---|---|---|---|---|---|---|")
    for name in sorted(rows, key=lambda n: (n.split("/")[1], n.split("/")[2], int(n.split("/")[3]))):
        r = rows[name]
        worst = [max(x[i] for x in r) for i in (1, 2, 3)]
        fails = ", ".join(f"{x[0]}: {x[1]:.3g}" for x in r if not x[4])
        print(f"| {name} | {len(r)} | {sum(x[4] for x in r)} | {worst[0]:.3g} | {worst[1]:.3g} | "
              f"{worst[2]:.3g} | {fails} |")
    return 0


if __name__ == "__main__":
    sys.exit(cli.run("svd-accuracy-table", main))
