#!/usr/bin/env bash
# Issue 18, third session, call 12: bert_train after the fix call 11's ncu pointed to (Linear
# modules through ATen's linear: the bias in cuBLASLt's epilogue, no broadcast add a layer, as
# Python's nn.Linear). Build; the every-family tests narrowed to bert_train and transformer_fwd
# (both changed) and their torch tests; bert_train's rows at 512 and 128 beside python's; then,
# as time allows, transformer_fwd's sdpa rows at batch 32.
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> DEADLINE=<s> docs/results/h200/plans/issue18-call12.sh
set -uo pipefail
source docs/results/h200/plans/issue18-lib.sh
SKIP_CTEST=1 FILTER=none tools/gpu-session.sh || exit 1
clocks
trap finish EXIT
CUBENCH_TEST_VARIANTS='^(bert_train|transformer_fwd)/' timeout 120 \
  $tests/cubench_gpu_tests --gtest_filter='Fixtures.Every*' >"$OUT/every.txt" 2>&1
echo "== every-family (bert_train, transformer_fwd): exit $? at $(at)"
grep -E "OK \]|FAILED|PASSED|CAUGHT|Failure" "$OUT/every.txt" | cut -c1-200 | head -20
timeout 60 $tests/cubench_torch_tests --gtest_filter='Bert*:Transformer*:ForeachAdamW*' >"$OUT/torch-tests.txt" 2>&1
echo "== torch tests: exit $? at $(at)"; grep -E "FAILED|PASSED|Failure" "$OUT/torch-tests.txt" | cut -c1-150
fast='--cubench_min_samples=3 --cubench_timeout=2'
bench bert-512 90 --cubench_suite=full $fast --benchmark_filter='^bert_train/[a-z0-9_]+/512/'
python_ref pytorch-bert-512 90 '^bert_train/[a-z0-9_]+/512/'
bench bert-128 60 --cubench_suite=full $fast --benchmark_filter='^bert_train/[a-z0-9_]+/128/'
python_ref pytorch-bert-128 70 '^bert_train/[a-z0-9_]+/128/'
bench transformer-sdpa-32 60 --cubench_suite=full $fast --benchmark_filter='^transformer_fwd/(inference|train)/sdpa/32/'
python_ref pytorch-transformer-sdpa-32 60 '^transformer_fwd/(inference|train)/sdpa/32/'
