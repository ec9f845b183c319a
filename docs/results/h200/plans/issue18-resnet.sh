#!/usr/bin/env bash
# Issue 18, first H200 call: ResNet-50 inference and the amp_fp16 training step in a CUDA graph
# (the loss scaler on the device). Build; the every-family tests narrowed to the new variants and
# the GPU tests of the device-side scaler; then cubench's rows and PyTorch eager's from one call,
# 5 repetitions each side (tools/compare's U test), all inside one deadline.
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> docs/results/h200/plans/issue18-resnet.sh
set -uo pipefail
start=$(date +%s)
DEADLINE=${DEADLINE:-540}
left() { echo $((DEADLINE - ($(date +%s) - start))); }
bin=build/cuda-13.0/cubench
tests=build/cuda-13.0/tests
bench() {  # name seconds args...: one cubench process into $OUT/name.json
  local name=$1 secs=$2; shift 2
  [ "$(left)" -lt "$secs" ] && secs=$(left)
  [ "$secs" -le 5 ] && { echo "== $name: not run, deadline"; return; }
  timeout "$secs" $bin --benchmark_out="$OUT/$name.json" --benchmark_repetitions=5 \
    --benchmark_report_aggregates_only=false "$@" >"$OUT/$name.txt" 2>&1
  echo "== $name: exit $? at $(( $(date +%s) - start )) s"
  grep -E "manual_time_median|ERROR|not supported" "$OUT/$name.txt" | cut -c1-200
}
python_ref() {  # name seconds filter
  local secs=$2
  [ "$(left)" -lt "$secs" ] && secs=$(left)
  [ "$secs" -le 5 ] && { echo "== $1: not run, deadline"; return; }
  PYTHONUNBUFFERED=1 timeout "$secs" python3 tools/torch_reference.py --filter "$3" \
    --repetitions 5 --out "$OUT/$1.json" >"$OUT/$1.txt" 2>&1
  echo "== $1: exit $? at $(( $(date +%s) - start )) s"; tail -30 "$OUT/$1.txt" | cut -c1-160
}
SKIP_CTEST=1 FILTER=none tools/gpu-session.sh || exit 1
CUBENCH_TEST_VARIANTS='^resnet50_infer/|^resnet50_train_graph/amp_fp16' timeout 150 \
  $tests/cubench_gpu_tests --gtest_filter='Fixtures.Every*' >"$OUT/every.txt" 2>&1
echo "== every-family (resnet50_infer, graph amp_fp16): exit $? at $(( $(date +%s) - start )) s"
grep -E "OK \]|FAILED|PASSED|CAUGHT|Failure|rror" "$OUT/every.txt" | cut -c1-220 | head -60
timeout 60 $tests/cubench_torch_tests --gtest_filter='DeviceLossScaler*:ResNet50Infer*:LossScaler*:ForeachSGD*' >"$OUT/torch-tests.txt" 2>&1
echo "== torch tests: exit $?"; grep -E "OK \]|FAILED|PASSED|SKIPPED|Failure" "$OUT/torch-tests.txt" | cut -c1-200
infer='^resnet50_infer/(fp32|tf32|fp16|bf16)/channels_last/(eager|graph)/(1|8|256)/'
bench infer 200 --cubench_suite=full --benchmark_filter="$infer"
python_ref pytorch-infer 90 '^resnet50_infer/(fp32|tf32|fp16|bf16)/channels_last/eager/(1|8|256)/'
bench train-amp-fp16 120 --cubench_suite=full \
  --benchmark_filter='^resnet50_train(_graph)?/amp_fp16/(nchw|channels_last)/32/256/'
python_ref pytorch-train-amp-fp16 60 '^resnet50_train/amp_fp16/(nchw|channels_last)/32/256/'
echo "total $(( $(date +%s) - start )) s"
cd "$OUT" && tar czf session.tgz --remove-files *.json *.txt *.log 2>/dev/null; ls
