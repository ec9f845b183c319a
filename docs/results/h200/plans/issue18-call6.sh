#!/usr/bin/env bash
# Issue 18, sixth H200 call: bert_train's amp_fp16 on the device-side scaler (DeviceLossScaler +
# ForeachAdamW::step_unless, no host sync a step) and LLaMA-7B decode at 128 + 128 after the
# attention restriction, each beside PyTorch eager from this call. Build; the BERT/AdamW torch
# tests (the fused step_unless on the GPU among them) and the every-family tests narrowed to
# bert_train/amp_fp16; bert_train's AMP rows (and amp_bf16 512/64, where call 5 had cubench 10%
# slower) beside python's with the clock logged; llama_decode 128/128, bf16 then fp16, eager and
# graph, batch 1, 8, 32 (a repetition stops after 1 s: one or two generations) beside python's.
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> docs/results/h200/plans/issue18-call6.sh
set -uo pipefail
source docs/results/h200/plans/issue18-lib.sh
SKIP_CTEST=1 FILTER=none tools/gpu-session.sh || exit 1
clocks
trap finish EXIT
timeout 90 $tests/cubench_torch_tests --gtest_filter='Bert*:ForeachAdamW*' >"$OUT/torch-tests.txt" 2>&1
echo "== torch tests: exit $? at $(at)"; grep -E "OK \]|FAILED|PASSED|SKIPPED|Failure" "$OUT/torch-tests.txt" | cut -c1-150
CUBENCH_TEST_VARIANTS='^bert_train/amp_fp16' timeout 60 \
  $tests/cubench_gpu_tests --gtest_filter='Fixtures.Every*' >"$OUT/every.txt" 2>&1
echo "== every-family (bert_train/amp_fp16): exit $? at $(at)"
grep -E "OK \]|FAILED|PASSED|CAUGHT|Failure|rror" "$OUT/every.txt" | cut -c1-150 | head
bert_rows='^bert_train/(amp_fp16/(128|512)/(32|64)|amp_bf16/512/64)/'
bench bert-amp 70 --cubench_suite=full --cubench_min_samples=3 --cubench_timeout=2 --benchmark_filter="$bert_rows"
python_ref pytorch-bert-amp 50 "$bert_rows"
one_generation='--cubench_min_samples=2 --cubench_timeout=1'  # the timeout stops a repetition after its first generation over 1 s
for dtype in bf16 fp16; do
  bench llama-$dtype-128 150 --cubench_suite=full $one_generation \
    --benchmark_filter="^llama_decode/$dtype/(eager|graph)/128/128/(1|8|32)/"
  python_ref pytorch-llama-$dtype-128 90 "^llama_decode/$dtype/eager/128/128/(1|8|32)/" \
    --min-samples 1 --warmup 0
done
