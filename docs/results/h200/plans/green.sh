#!/usr/bin/env bash
# Issues "Green on the H200" and "Checks that catch a wrong result": the whole ctest of the
# cuda-13.0 build configured with LibTorch (as tools/gpu-session.sh configures it; the planted
# faults' lines shown), then, from the same build, the gesvdp fp32 rows (the "inaccurate here"
# rule), cubench's usage errors for GPU options beyond the machine, and --help.
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> docs/results/h200/plans/green.sh
set -uo pipefail
DEADLINE=${DEADLINE:-540} FILTER=none tools/gpu-session.sh || exit 1
grep -E "^\[ (CAUGHT|NO FAULT|REPORTED) \]" "$OUT/ctest.log" | cut -c1-200
bin=build/cuda-13.0/cubench
$bin --benchmark_filter='^svd/gesvdp/fp32/' --benchmark_repetitions=1 --benchmark_min_time=0.001 \
  --benchmark_out="$OUT/gesvdp-fp32.json" --benchmark_out_format=json >/tmp/gesvdp.txt 2>&1
echo "gesvdp fp32 exit $?"; grep -oE "svd/gesvdp/fp32/[0-9]+[^ ]* .{0,150}" /tmp/gesvdp.txt | cut -c1-180
{
  for args in --cubench_gpus=4 --cubench_device=1 --cubench_device=-1 --cubench_typo=1; do
    echo "\$ cubench --benchmark_filter=^launch/empty $args"
    $bin --benchmark_filter=^launch/empty "$args" 2>&1 >/dev/null
    echo "exit $?"
  done
  echo "\$ cubench --help | tail -4"; $bin --help | tail -4; echo "exit ${PIPESTATUS[0]}"
} | tee "$OUT/usage.txt"
