#!/usr/bin/env bash
# Issue 18, second H200 call: LLaMA-7B greedy generation (llama_decode) beside transformers'
# LlamaForCausalLM in PyTorch eager from the same call, and ResNet-50 inference at batch 256 again
# after the bottleneck's downsample moved last (call 1's peaks were 6.8% above PyTorch's there).
# Build; the every-family tests narrowed to llama_decode; cubench's rows (5 repetitions of at
# least 3 generations, each stopped after 3 s) and python's (5 repetitions of 3 generations).
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> docs/results/h200/plans/issue18-llama.sh
set -uo pipefail
start=$(date +%s)
DEADLINE=${DEADLINE:-560}
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
  grep -E "manual_time_median|ERROR|not supported" "$OUT/$name.txt" | cut -c1-260
}
python_ref() {  # name seconds filter
  local secs=$2
  [ "$(left)" -lt "$secs" ] && secs=$(left)
  [ "$secs" -le 5 ] && { echo "== $1: not run, deadline"; return; }
  PYTHONUNBUFFERED=1 timeout "$secs" python3 tools/torch_reference.py --filter "$3" \
    --repetitions 5 --min-time 0 --out "$OUT/$1.json" >"$OUT/$1.txt" 2>&1
  echo "== $1: exit $? at $(( $(date +%s) - start )) s"; tail -12 "$OUT/$1.txt" | cut -c1-200
}
SKIP_CTEST=1 FILTER=none tools/gpu-session.sh || exit 1
CUBENCH_TEST_VARIANTS='^llama_decode/' timeout 120 \
  $tests/cubench_gpu_tests --gtest_filter='Fixtures.Every*' >"$OUT/every.txt" 2>&1
echo "== every-family (llama_decode): exit $? at $(( $(date +%s) - start )) s"
grep -E "OK \]|FAILED|PASSED|CAUGHT|Failure|rror" "$OUT/every.txt" | cut -c1-260 | head -30
fast='--cubench_min_samples=3 --cubench_timeout=3'
bench llama 220 --cubench_suite=full $fast \
  --benchmark_filter='^llama_decode/(bf16/(eager|graph)/128/128/(1|8|32)|bf16/(eager|graph)/1024/256/1|fp16/graph/128/128/1)/'
python_ref pytorch-llama 150 '^llama_decode/bf16/eager/128/128/(1|8|32)/'
bench infer-256 60 --cubench_suite=full --benchmark_filter='^resnet50_infer/(tf32|fp16|bf16)/channels_last/eager/256/'
python_ref pytorch-infer-256 40 '^resnet50_infer/(tf32|fp16|bf16)/channels_last/eager/256/'
python_ref pytorch-llama-long 60 '^llama_decode/bf16/eager/1024/256/1/'
echo "total $(( $(date +%s) - start )) s"
cd "$OUT" && tar czf session.tgz --remove-files *.json *.txt *.log 2>/dev/null; ls
