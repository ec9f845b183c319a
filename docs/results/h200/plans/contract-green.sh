#!/usr/bin/env bash
# Issue "One contract": the whole ctest of the cuda-13.0 build configured with LibTorch (as
# tools/gpu-session.sh configures it; the planted faults' lines shown), then, from the same build,
# docs/adding-a-benchmark.md's walk-through family (built by ctest as cubench_example_scale) run
# twice on the GPU, and tools/compare and tools/plot on its two files: the family's table and its
# generic chart from the schema alone.
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> docs/results/h200/plans/contract-green.sh
set -uo pipefail
DEADLINE=${DEADLINE:-540} FILTER=none tools/gpu-session.sh || exit 1
cp build/cuda-13.0/Testing/Temporary/LastTest.log "$OUT/ctest-output.log"
grep -E "^\[ (CAUGHT|NO FAULT|REPORTED) \]" "$OUT/ctest.log" | cut -c1-100 | sort | uniq -c | sort -rn | head -5
grep -cE "^\[ CAUGHT \]" "$OUT/ctest-output.log"
for run in a b; do
  build/cuda-13.0/tests/cubench_example_scale --benchmark_repetitions=5 --benchmark_min_time=0.05 \
    --benchmark_report_aggregates_only=false --benchmark_out="$OUT/scale-$run.json" \
    --benchmark_out_format=json >/tmp/scale-$run.txt 2>&1
  echo "scale $run exit $?"; grep -E "_median" /tmp/scale-$run.txt | cut -c1-160
done
tools/compare --table "$OUT/scale-a.json" "$OUT/scale-b.json" | tee "$OUT/scale-table.md" | head -8
tools/plot --out-dir "$OUT" "$OUT/scale-a.json" "$OUT/scale-b.json"; ls "$OUT"
