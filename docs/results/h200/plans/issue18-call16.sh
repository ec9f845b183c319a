#!/usr/bin/env bash
# Issue 18, fourth session: call 14 flagged one eager row "slower" (resnet50_infer
# fp16/channels_last/64, +2.2%, one process's 5 repetitions a side), where call 9 had it the same.
# The A/A passed with a process as the unit, so this asks that rule: five processes a side of the
# channels-last batch-64 eager rows (all four precisions), cubench and PyTorch eager alternating so
# that clock drift falls on both; tools/merge-processes then makes one sample per process.
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> DEADLINE=<s> docs/results/h200/plans/issue18-call16.sh
set -uo pipefail
source docs/results/h200/plans/issue18-lib.sh
SKIP_CTEST=1 FILTER=none tools/gpu-session.sh || exit 1
clocks
trap finish EXIT
rows='^resnet50_infer/(fp32|tf32|fp16|bf16)/channels_last/eager/64/'
for p in 1 2 3 4 5; do
  bench cl64-p$p 60 --cubench_suite=full --cubench_min_samples=3 --cubench_timeout=1 --benchmark_filter="$rows"
  python_ref pytorch-cl64-p$p 60 "$rows"
done
