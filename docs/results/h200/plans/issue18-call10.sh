#!/usr/bin/env bash
# Issue 18, for the third session (written at the end of the second, not run yet): the
# llama_decode rows call 8's deadline cut — fp16 1024+256 (eager and graph, batch 1, 8, 32) and
# bf16 1024+256 graph at batch 8 and 32 — beside PyTorch eager's (fp16 1024+256 at 1, 8, 32 and
# bf16 at 32). A repetition: one generation over 1 s (or two).
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> docs/results/h200/plans/issue18-call10.sh
set -uo pipefail
source docs/results/h200/plans/issue18-lib.sh
SKIP_CTEST=1 FILTER=none tools/gpu-session.sh || exit 1
clocks
trap finish EXIT
one_generation='--cubench_min_samples=2 --cubench_timeout=1'
bench llama-fp16-1024 220 --cubench_suite=full $one_generation \
  --benchmark_filter='^llama_decode/fp16/(eager|graph)/1024/256/(1|8|32)/'
python_ref pytorch-llama-fp16-1024 150 '^llama_decode/fp16/eager/1024/256/(1|8|32)/' --min-samples 1 --warmup 0
bench llama-bf16-1024-graph 90 --cubench_suite=full $one_generation \
  --benchmark_filter='^llama_decode/bf16/graph/1024/256/(8|32)/'
python_ref pytorch-llama-bf16-1024-32 70 '^llama_decode/bf16/eager/1024/256/32/' --min-samples 1 --warmup 0
