"""Table of svd/ accuracy over seeds from cubench JSON: the figures of a passing row's counters,
or of a failed row's error message (benchmarks/svd.cpp writes all of them in both).
usage: svd-accuracy-table.py svd-seed-*.json (the files in svd-accuracy.tgz)"""
import json
import re
import sys
from collections import defaultdict

FIGURES = re.compile(r"reconstruction ([-\d.e+naif]+), orthogonality ([-\d.e+naif]+), "
                     r"singular values ([-\d.e+naif]+) against")

rows = defaultdict(list)  # name -> [(seed, recon, ortho, sigma, passed)]
for path in sys.argv[1:]:
    data = json.load(open(path))
    seed = data["context"].get("input_seed", "?")
    for b in data["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        name = b["run_name"].replace("/manual_time", "")
        if b.get("error_occurred"):
            m = FIGURES.search(b.get("error_message", ""))
            figures = tuple(float(x) for x in m.groups()) if m else (float("nan"),) * 3
            rows[name].append((seed, *figures, False))
        else:
            rows[name].append((seed, b["recon_error"], b["ortho_error"], b["sigma_error"], True))

print("| benchmark | seeds | passed | reconstruction max | orthogonality max | "
      "singular values max | failures (seed: reconstruction) |")
print("|---|---|---|---|---|---|---|")
for name in sorted(rows, key=lambda n: (n.split("/")[1], n.split("/")[2], int(n.split("/")[3]))):
    r = rows[name]
    worst = [max(x[i] for x in r) for i in (1, 2, 3)]
    fails = ", ".join(f"{x[0]}: {x[1]:.3g}" for x in r if not x[4])
    print(f"| {name} | {len(r)} | {sum(x[4] for x in r)} | {worst[0]:.3g} | {worst[1]:.3g} | "
          f"{worst[2]:.3g} | {fails} |")
