#!/usr/bin/env bash
# Issue 18, third session, call 11: where bert_train's seq-512 time goes. Call 9 ruled out the
# model's ops (a python replica of cubench's module ran as fast as transformers', 97.06 against
# 97.13 ms at amp_bf16/512/64) and the cuBLAS (cubench on python's wheel cuBLAS, also 13.1.0:
# 109.5 ms either way). Here: (1) the replica under what differs in cubench's process (a
# non-default stream; TF32 allowed in the AMP rows); (2) ncu's kernel durations over the same
# window of launches in cubench's process and in the replica's (`steps` mode), clocks left alone;
# (3) the llama_decode row call 10's deadline cut (fp16 graph 1024+256 batch 32).
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> docs/results/h200/plans/issue18-call11.sh
set -uo pipefail
source docs/results/h200/plans/issue18-lib.sh
SKIP_CTEST=1 FILTER=none tools/gpu-session.sh || exit 1
clocks
trap finish EXIT
probe=docs/results/h200/plans/issue18-bert-probe.py
timeout 90 python3 $probe amp_bf16 512 64 conditions >"$OUT/bert-conditions.txt" 2>&1
echo "== conditions: exit $? at $(at)"; grep replica "$OUT/bert-conditions.txt"
# One metric (the kernel's duration) in one pass; 1500 launches after the first 6000 (cubench:
# past its check and first steps; the replica: past 2 of its 3 + 30 steps).
ncu_args='--metrics gpu__time_duration.sum --clock-control none --cache-control none
  --launch-skip 6000 --launch-count 1500 --print-summary per-kernel --print-units base'
timeout 150 ncu $ncu_args $bin --cubench_suite=full --benchmark_filter='^bert_train/amp_bf16/512/64/' \
  --cubench_min_samples=3 --cubench_timeout=2 --benchmark_repetitions=1 >"$OUT/ncu-cubench.txt" 2>&1
echo "== ncu cubench: exit $? at $(at)"; grep -cE "^ +[a-zA-Z_].*\(" "$OUT/ncu-cubench.txt"; tail -3 "$OUT/ncu-cubench.txt" | cut -c1-200
timeout 120 ncu $ncu_args python3 $probe amp_bf16 512 64 steps >"$OUT/ncu-replica.txt" 2>&1
echo "== ncu replica: exit $? at $(at)"; tail -3 "$OUT/ncu-replica.txt" | cut -c1-200
bench llama-fp16-1024-graph-32 100 --cubench_suite=full --cubench_min_samples=2 --cubench_timeout=1 \
  --benchmark_filter='^llama_decode/fp16/graph/1024/256/32/'
