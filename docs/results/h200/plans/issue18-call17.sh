#!/usr/bin/env bash
# Issue 18, fourth session: the last llama_decode bf16 1024+256 rows whose python twin ran in
# another call — cubench's eager batch 32 (call 8; python's in call 10) and graph batch 8 (call
# 10; python's in call 8) — beside PyTorch eager's batch 8 and 32, all in one call.
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> DEADLINE=<s> docs/results/h200/plans/issue18-call17.sh
set -uo pipefail
source docs/results/h200/plans/issue18-lib.sh
SKIP_CTEST=1 FILTER=none tools/gpu-session.sh || exit 1
clocks
trap finish EXIT
one_generation='--cubench_min_samples=2 --cubench_timeout=1'
bench llama-bf16-1024 130 --cubench_suite=full $one_generation \
  --benchmark_filter='^llama_decode/bf16/(eager/1024/256/32|graph/1024/256/8)/'
python_ref pytorch-llama-bf16-1024 130 '^llama_decode/bf16/eager/1024/256/(8|32)/' --min-samples 1 --warmup 0
