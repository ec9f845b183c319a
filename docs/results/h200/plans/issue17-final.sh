#!/usr/bin/env bash
# Issue 17, last H200 call (after the whole ctest at 41109d5): the code that changed since — the
# sigmoid kernel the probes chose, gemm_peak's sustained finalists — its tests (Kernels.Sigmoid*,
# the every-family tests narrowed to sigmoid and gemm_peak) and rows: our sigmoid beside the copy
# and LibTorch's in one process, gemm_peak bf16 and fp8, and the network's convolutions
# (conv_resnet50, bf16, batch 256) beside the ResNet-50 training step they belong to
# (resnet50_train amp_bf16, channels-last, 224 x 256) in one process.
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> docs/results/h200/plans/issue17-final.sh
set -uo pipefail
start=$(date +%s)
bin=build/cuda-13.0/cubench
tests=build/cuda-13.0/tests/cubench_gpu_tests
bench() {  # name seconds args...: one cubench process into $OUT/name.json
  local name=$1 secs=$2; shift 2
  timeout "$secs" $bin --benchmark_out="$OUT/$name.json" "$@" >"$OUT/$name.txt" 2>&1
  echo "== $name: exit $? at $(( $(date +%s) - start )) s"
  grep -E "manual_time |ERROR|not supported" "$OUT/$name.txt" | cut -c1-200
}
SKIP_CTEST=1 FILTER=none tools/gpu-session.sh || exit 1
timeout 120 $tests --gtest_filter='Kernels.Sigmoid*:Harness.TimerMeasuresEventsAndTheSmClock' >"$OUT/kernels.txt" 2>&1
echo "== kernels tests: exit $?"; grep -E "OK \]|FAILED|PASSED" "$OUT/kernels.txt"
CUBENCH_TEST_VARIANTS='^(sigmoid|gemm_peak)/' timeout 150 $tests --gtest_filter='Fixtures.Every*' >"$OUT/every.txt" 2>&1
echo "== every-family (sigmoid, gemm_peak): exit $?"; grep -E "OK \]|FAILED|PASSED|CAUGHT" "$OUT/every.txt" | cut -c1-160
bench sigmoid 90 --cubench_suite=full --benchmark_filter='^(sigmoid/(vectorized|copy)|torch/sigmoid)/'
bench gemm-peak 150 --cubench_suite=full --benchmark_filter='^gemm_peak/(bf16|fp8)/'
bench resnet50-conv 120 --cubench_suite=full \
  --benchmark_filter='^(conv_resnet50/(fwd|dgrad|wgrad)/bf16|resnet50_train/amp_bf16/channels_last/224/256)/'
echo "total $(( $(date +%s) - start )) s"
cd "$OUT" && tar czf session.tgz --remove-files *.json *.txt *.log 2>/dev/null; ls
