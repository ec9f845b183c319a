#!/usr/bin/env bash
# Issue "A toolkit verdict in minutes": the proof runs on the H200, one device call per STEP
# (a call is at most 600 s; the build directory stays on a warm machine between calls).
#   STEP=core  build everything (LibTorch too), then the default run of the core families (no
#              LibTorch), timed; a run beside a second process computing on the GPU (busy mark),
#              the same with --cubench_busy_gpu=refuse; a run interrupted by SIGINT.
#   STEP=torch the default run with LibTorch (every family), timed.
#   STEP=ctest the whole ctest.
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> STEP=core docs/results/h200/plans/minutes.sh
set -uo pipefail
start=$(date +%s)
core_filter='-^(cpu/|torch/|resnet50|transformer)'
timed() {  # name args...: one cubench run into $OUT/name.json, its wall time and exit status
  local name=$1 t0 code
  shift
  t0=$(date +%s%N)
  build/cuda-13.0/cubench "$@" --benchmark_out="$OUT/$name.json" >"$OUT/$name.txt" 2>"$OUT/$name.err"
  code=$?
  echo "$name: exit $code, wall $(( ($(date +%s%N) - t0) / 1000000 )) ms, $(grep -c '"run_type"' "$OUT/$name.json") rows"
  grep -E "ERROR|error" "$OUT/$name.txt" | cut -c1-200 | head -5
  tail -1 "$OUT/$name.err"
}
case "${STEP:-core}" in
core)
  SKIP_CTEST=1 FILTER=none tools/gpu-session.sh || exit 1
  timed default-core --benchmark_filter="$core_filter"
  # A second process: bf16 GEMMs in torch for 60 s, started before cubench and left running.
  python3 -c "
import time, torch
a = torch.randn(8192, 8192, device='cuda', dtype=torch.bfloat16)
end = time.time() + 60
while time.time() < end:
    (a @ a).sum().item()
" &
  other=$!
  sleep 8
  nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader
  timed busy --benchmark_filter='^gemm/bf16/(1024|4096)/'
  timed busy-refused --benchmark_filter='^gemm/bf16/4096/' --cubench_busy_gpu=refuse
  kill $other; wait $other 2>/dev/null
  # Interrupted: SIGINT 12 s into the sigmoid rows.
  build/cuda-13.0/cubench --benchmark_filter='^sigmoid/' --benchmark_out="$OUT/interrupted.json" \
    >"$OUT/interrupted.txt" 2>"$OUT/interrupted.err" &
  run=$!
  sleep 12
  kill -INT $run
  wait $run
  echo "interrupted: exit $?; $(tail -1 "$OUT/interrupted.err")"
  ;;
torch)
  SKIP_CTEST=1 FILTER=none tools/gpu-session.sh || exit 1
  timed default-torch
  ;;
ctest)
  FILTER=none tools/gpu-session.sh
  cp /tmp/build.log "$OUT/build.log" 2>/dev/null
  (cd build/cuda-13.0 && ctest --rerun-failed --output-on-failure >"$OUT/ctest-output.log" 2>&1)
  ;;
esac
echo "total $(( $(date +%s) - start )) s"
