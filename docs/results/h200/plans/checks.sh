#!/usr/bin/env bash
# Issue "Checks that catch a wrong result", first look on the H200: the GPU tests (the planted
# faults among them, no LibTorch), then every gemm/ and sigmoid/ row once, for how close each
# element-wise check comes to its bound (max_error_ratio, max_rel_error) at every size.
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> docs/results/h200/plans/checks.sh
set -uo pipefail
WITH_TORCH=0 FILTER=none CTEST_ARGS="-R Fixtures|Harness|Kernels|gpu\.|cli\." DEADLINE=300 \
  tools/gpu-session.sh || exit 1
grep -E "CAUGHT|NO FAULT|REPORTED" "$OUT/ctest.log" | cut -c1-230
timeout 240 build/cuda-13.0/cubench --benchmark_filter='^(gemm|gemm_autotune|sigmoid)/' \
  --benchmark_repetitions=1 --benchmark_min_time=0.001 \
  --benchmark_out="$OUT/checks.json" --benchmark_out_format=json >/tmp/checks.txt 2>&1
echo "sweep exit $?"
python3 - "$OUT/checks.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
worst = {}
for b in d["benchmarks"]:
    if b.get("run_type") != "iteration": continue
    name = b["name"].replace("/manual_time", "")
    if b.get("error_occurred"):
        print("ERROR", name, b.get("error_message", "")[:300]); continue
    fam = "/".join(name.split("/")[:2])
    for c in ("max_error_ratio", "max_rel_error"):
        if c in b:
            key = (fam, c)
            if b[c] > worst.get(key, (0, ""))[0]: worst[key] = (b[c], name)
for (fam, c), (v, name) in sorted(worst.items()):
    print(f"{fam:24s} {c:16s} worst {v:.4g} at {name}")
PY
