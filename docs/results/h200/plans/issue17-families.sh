#!/usr/bin/env bash
# Issue 17, the new families on the H200 (two calls, the second the moment the first returns, so
# the build is still there):
#   STEP=check  build (LibTorch, cuDNN: the wheel's, the frontend headers carried in
#               .carry/cudnn-fe); the every-family GPU tests narrowed (CUBENCH_TEST_VARIANTS) to
#               the new families, and the planted-fault test to the start-up families too (its
#               first GPU run); build.one_toolkit; then cuDNN attention beside LibTorch's and
#               PyTorch's (one call), conv per layer and the network sums, the decode GEMMs
#   STEP=peak   gemm_peak bf16 and fp8 (60 s search each), and our sigmoid against the copy and
#               LibTorch's at every size, dtype and cache, with the block size and cache hints
#               CUBENCH_SIGMOID_BLOCK / CUBENCH_SIGMOID_STREAMING name (a probe's override)
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> STEP=check docs/results/h200/plans/issue17-families.sh
set -uo pipefail
start=$(date +%s)
bin=build/cuda-13.0/cubench
tests=build/cuda-13.0/tests/cubench_gpu_tests
new='^(attention|conv|conv_autotune|conv_resnet50|gemm_decode|gemm_peak|torch/attention|sigmoid)/'
bench() {  # name seconds args...: one cubench process into $OUT/name.json
  local name=$1 secs=$2; shift 2
  timeout "$secs" $bin --benchmark_out="$OUT/$name.json" "$@" >"$OUT/$name.txt" 2>&1
  echo "== $name: exit $? at $(( $(date +%s) - start )) s"
  grep -E "manual_time |ERROR|not supported" "$OUT/$name.txt" | cut -c1-170
}
case "${STEP:-check}" in
check)
  SKIP_CTEST=1 FILTER=none tools/gpu-session.sh || exit 1
  CUBENCH_TEST_VARIANTS="$new" timeout 240 $tests --gtest_filter='Fixtures.EveryFamilyValidatesAtItsSmallestSize' >"$OUT/every-validates.txt" 2>&1
  echo "== validates: exit $? at $(( $(date +%s) - start )) s"
  CUBENCH_TEST_VARIANTS="$new|^startup/" timeout 240 $tests --gtest_filter='Fixtures.EveryFamilysCheckRejectsAPlantedFault' >"$OUT/every-planted.txt" 2>&1
  echo "== planted: exit $? at $(( $(date +%s) - start )) s"
  grep -hE "^\[ (NOT SUPPORTED|REPORTED|NO FAULT) \]|Failure|FAILED|PASSED|^Expected|^  Actual|Value of|Which is" "$OUT"/every-*.txt | cut -c1-250 | head -60
  grep -c "CAUGHT" "$OUT/every-planted.txt"
  (cd build/cuda-13.0 && ctest -R 'build.one_toolkit' --output-on-failure >"$OUT/one-toolkit.txt" 2>&1; echo "one_toolkit exit $?"; tail -3 "$OUT/one-toolkit.txt")
  bench attention 120 --benchmark_filter='^attention/(fwd|fwd_bwd)/bf16/(causal|full)/128/(1024|4096|16384)/'
  bench torch-attention 150 --cubench_suite=full --benchmark_filter='^torch/attention/(flash|cudnn)/(fwd|fwd_bwd)/bf16/causal/128/(1024|4096|16384)/'
  PYTHONUNBUFFERED=1 timeout 150 python3 tools/torch_reference.py \
    --filter '^torch/attention/(flash|cudnn)/(fwd|fwd_bwd)/bf16/causal/128/(1024|4096|16384)/' \
    --out "$OUT/pytorch-attention.json" >"$OUT/pytorch-attention.txt" 2>&1
  echo "== pytorch attention: exit $? at $(( $(date +%s) - start )) s"; tail -4 "$OUT/pytorch-attention.txt"
  bench conv 150 --benchmark_filter='^(conv|conv_autotune|conv_resnet50)/'
  bench gemm-decode 90 --benchmark_filter='^gemm_decode/'
  ;;
peak)
  bench gemm-peak 200 --cubench_suite=full --benchmark_filter='^gemm_peak/(bf16|fp8)/'
  for cfg in "256 1" "1024 1" "256 0" "1024 0"; do
    set -- $cfg
    CUBENCH_SIGMOID_BLOCK=$1 CUBENCH_SIGMOID_STREAMING=$2 bench "sigmoid-block$1-stream$2" 60 \
      --cubench_suite=full --benchmark_filter='^sigmoid/vectorized/'
  done
  bench sigmoid-copy 60 --cubench_suite=full --benchmark_filter='^sigmoid/copy/'
  bench torch-sigmoid 60 --cubench_suite=full --benchmark_filter='^torch/sigmoid/'
  ;;
esac
echo "total $(( $(date +%s) - start )) s"
cd "$OUT" && tar czf session.tgz --remove-files *.json *.txt *.log 2>/dev/null; ls
