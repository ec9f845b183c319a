#!/usr/bin/env bash
# Issue 18, eighth H200 call (right after the seventh, the whole ctest; same commit, build reused):
# LLaMA-7B decode at 1024 + 256 (bf16, then fp16) and ResNet-50 inference in NCHW and at batch
# 64, each beside PyTorch eager from this call, with the clock logged.
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> docs/results/h200/plans/issue18-call7.sh
set -uo pipefail
source docs/results/h200/plans/issue18-lib.sh
SKIP_CTEST=1 FILTER=none tools/gpu-session.sh || exit 1
clocks
trap finish EXIT
one_generation='--cubench_min_samples=2 --cubench_timeout=1'  # a repetition: one generation over 1 s
bench llama-bf16-1024 170 --cubench_suite=full $one_generation \
  --benchmark_filter='^llama_decode/bf16/(eager|graph)/1024/256/(1|8|32)/'
python_ref pytorch-llama-bf16-1024 120 '^llama_decode/bf16/eager/1024/256/(1|8|32)/' --min-samples 1 --warmup 0
infer='^resnet50_infer/(fp32|tf32|fp16|bf16)/(nchw/(eager|graph)/(1|8|64|256)|channels_last/(eager|graph)/64)/'
bench infer 140 --cubench_suite=full --cubench_min_samples=3 --cubench_timeout=1 --benchmark_filter="$infer"
python_ref pytorch-infer 70 "${infer//(eager\|graph)/eager}"
