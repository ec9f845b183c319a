#!/usr/bin/env bash
# One call on the GPU machine: configure and build with the cuda-13.0 preset, run ctest, then the
# benchmarks selected by $FILTER (default: the core suite) with $REPS repetitions, and the PyTorch
# reference for $TORCH_FILTER. Everything lands under $OUT (default ./results).
#   FILTER='^gemm' REPS=5 OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> tools/gpu-session.sh
# (the device copy of the tree has no .git: CUBENCH_GIT_REVISION puts the commit in the context)
set -uo pipefail
OUT=${OUT:-$PWD/results}
mkdir -p "$OUT"
FILTER=${FILTER:-.}
REPS=${REPS:-5}
MIN_TIME=${MIN_TIME:-0.2}
root=/usr/local/cuda-13.0
[ -x "$root/bin/nvcc" ] || root=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
echo "toolkit: $root; $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader)"
start=$(date +%s)
nvidia-smi dmon -s pc -o T -f "$OUT/dmon.txt" >/dev/null 2>&1 &
dmon=$!
trap 'kill $dmon 2>/dev/null' EXIT
# Logs of a good build stay in /tmp: only 8 files come back from a device call.
cmake --preset cuda-13.0 -DCUDAToolkit_ROOT="$root" >/tmp/configure.log 2>&1 || { tail -30 /tmp/configure.log; exit 1; }
cmake --build --preset cuda-13.0 -j "$(nproc)" >/tmp/build.log 2>&1 || { grep -B2 -A8 error /tmp/build.log | head -60; exit 1; }
echo "built in $(( $(date +%s) - start )) s"
if [ "${SKIP_CTEST:-0}" != 1 ]; then
  ctest --preset cuda-13.0 >"$OUT/ctest.log" 2>&1; echo "ctest exit $?"; tail -15 "$OUT/ctest.log"
fi
if [ "$FILTER" != none ]; then
  build/cuda-13.0/cubench --benchmark_filter="$FILTER" --benchmark_repetitions="$REPS" \
    --benchmark_min_time="$MIN_TIME" --benchmark_report_aggregates_only=false \
    --benchmark_out="$OUT/${NAME:-cubench}.json" --benchmark_out_format=json >/tmp/cubench.txt 2>&1
  echo "cubench exit $?"
  grep -E "_median|ERROR" /tmp/cubench.txt | cut -c1-160 | tail -${SHOW:-40}
fi
if [ -n "${TORCH_FILTER:-}" ]; then
  echo "torch after cubench; the same GPU, same call"
  PYTHONUNBUFFERED=1 python3 tools/torch_reference.py --filter "$TORCH_FILTER" --repetitions "$REPS" \
    --out "$OUT/torch.json" 2>"$OUT/torch.txt"; echo "torch exit $?"; tail -30 "$OUT/torch.txt"
fi
echo "total $(( $(date +%s) - start )) s"
