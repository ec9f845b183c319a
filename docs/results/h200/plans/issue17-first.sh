#!/usr/bin/env bash
# Issue 17, first H200 call: where cuDNN lives there; build with LibTorch and cuDNN (the
# cudnn-frontend headers carried in .carry/cudnn-fe); ctest without the tools.* tests (CPU-only,
# run at the final commit) — the first GPU run of the startup families; the one-pass sigmoid with
# 1, 2, 4 and 8 vectors per thread (CUBENCH_SIGMOID_PER_THREAD, an override that existed only in
# this call's working tree) against the copy and LibTorch's sigmoid at 256Mi; the startup rows.
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit>+probe docs/results/h200/plans/issue17-first.sh
set -uo pipefail
start=$(date +%s)
{
  echo "== cuDNN here:"; find / -xdev \( -name cudnn_version.h -o -name 'libcudnn.so*' \) 2>/dev/null | grep -v carry | head
  ls -d /usr/include/nlohmann 2>&1
  python3 -c 'import torch;print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version())'
} 2>&1 | tee "$OUT/probe.txt"
CTEST_ARGS='-E ^tools\.' DEADLINE=400 FILTER=none tools/gpu-session.sh
bin=build/cuda-13.0/cubench
[ -x "$bin" ] || exit 1
for per in 1 2 4 8; do
  CUBENCH_SIGMOID_PER_THREAD=$per timeout 60 $bin --cubench_suite=full \
    --benchmark_filter='^sigmoid/(vectorized|copy)/(fp32|bf16)/268435456/' \
    --benchmark_out="$OUT/sigmoid-per$per.json" >"$OUT/sigmoid-per$per.txt" 2>&1
  echo "per=$per exit $?"; grep -E "manual_time " "$OUT/sigmoid-per$per.txt" | cut -c1-150
done
timeout 60 $bin --cubench_suite=full --benchmark_filter='^torch/sigmoid/(fp32|bf16)/268435456/' \
  --benchmark_out="$OUT/torch-sigmoid.json" >"$OUT/torch-sigmoid.txt" 2>&1
echo "torch exit $?"; grep -E "manual_time " "$OUT/torch-sigmoid.txt" | cut -c1-150
timeout 120 $bin --benchmark_filter='^startup/' --benchmark_out="$OUT/startup.json" >"$OUT/startup.txt" 2>&1
echo "startup exit $?"; grep -E "manual_time|ERROR" "$OUT/startup.txt" | cut -c1-200
echo "total $(( $(date +%s) - start )) s"
cd "$OUT" && tar czf session.tgz --remove-files *.json *.txt *.log 2>/dev/null; ls
