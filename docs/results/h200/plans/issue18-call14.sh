#!/usr/bin/env bash
# Issue 18, for the next session's first call (written at the end of the third, not run yet):
# resnet50_infer's peak memory after 8132d6e (the bottleneck one layer a statement, as
# torchvision's), beside PyTorch's, where the peak sat one 64 x 56 x 56 activation above it —
# eager rows at batch 64 and 256, both layouts, all four precisions (the peak is compared for
# eager rows only: python has no graph rows). Then the whole ctest, in a call of its own.
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> DEADLINE=<s> docs/results/h200/plans/issue18-call14.sh
set -uo pipefail
source docs/results/h200/plans/issue18-lib.sh
SKIP_CTEST=1 FILTER=none tools/gpu-session.sh || exit 1
clocks
trap finish EXIT
rows='^resnet50_infer/(fp32|tf32|fp16|bf16)/(nchw|channels_last)/eager/(64|256)/'
bench infer-peaks 150 --cubench_suite=full --cubench_min_samples=3 --cubench_timeout=1 --benchmark_filter="$rows"
python_ref pytorch-infer-peaks 100 "$rows"
