#!/usr/bin/env bash
# Issue "Checks that catch a wrong result", first look on the H200: the whole ctest with LibTorch
# (the planted faults among it), then every gemm/ and sigmoid/ row and the small ResNet-50 steps
# once, for how close each check comes to its bound (max_error_ratio, max_rel_error,
# step_grad_error).
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> docs/results/h200/plans/checks.sh
set -uo pipefail
FILTER=none DEADLINE=${DEADLINE:-330} tools/gpu-session.sh || exit 1
grep -E "CAUGHT|NO FAULT|REPORTED|Failure|Expected|which is|FAILED" "$OUT/ctest.log" | cut -c1-250 | head -60
run() {  # name filter seconds
  timeout "$3" build/cuda-13.0/cubench --benchmark_filter="$2" --benchmark_repetitions=1 \
    --benchmark_min_time=0.001 --benchmark_out="$OUT/$1.json" --benchmark_out_format=json \
    >"/tmp/$1.txt" 2>&1
  echo "$1 exit $?"
}
run checks-core '^(gemm|gemm_autotune|sigmoid)/' 120
run checks-torch '^resnet50_train(_graph)?/.*/(32/256|224/64)/|^torch/' 150
python3 - "$OUT"/checks-*.json <<'PY'
import json, sys
worst = {}
for path in sys.argv[1:]:
    try: d = json.load(open(path))
    except Exception as e: print(path, "unreadable:", e); continue
    for b in d["benchmarks"]:
        if b.get("run_type") != "iteration": continue
        name = b["name"].replace("/manual_time", "")
        if b.get("error_occurred"):
            print("ERROR", name, b.get("error_message", "")[:300]); continue
        fam = "/".join(name.split("/")[:2])
        for c in ("max_error_ratio", "max_rel_error", "step_grad_error"):
            if c in b and b[c] >= worst.get((fam, c), (-1, ""))[0]: worst[(fam, c)] = (b[c], name)
for (fam, c), (v, name) in sorted(worst.items()):
    print(f"{fam:28s} {c:16s} worst {v:.4g} at {name}")
PY
