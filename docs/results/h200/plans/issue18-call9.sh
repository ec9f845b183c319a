#!/usr/bin/env bash
# Issue 18, for the third session's first call (written at the end of the second, not run yet):
# why bert_train is slower than PyTorch at seq 512 (issue18-bert-probe.py: transformers against a
# python replica of cubench's module, kernel tables, the cuBLAS each side loads), bert_train's
# seq-512 rows again beside python's, and resnet50_infer NCHW and batch 64 beside python's (call 8
# ran 11 of those 40 cubench rows and no python rows). Build; probe; rows; clocks logged.
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> docs/results/h200/plans/issue18-call9.sh
set -uo pipefail
source docs/results/h200/plans/issue18-lib.sh
SKIP_CTEST=1 FILTER=none tools/gpu-session.sh || exit 1
clocks
trap finish EXIT
ldd $bin | grep -E "cublas|cudnn|libtorch_cuda" >"$OUT/cubench-libs.txt"
echo "== cubench's libraries:"; cat "$OUT/cubench-libs.txt"
timeout 120 python3 docs/results/h200/plans/issue18-bert-probe.py amp_bf16 512 64 >"$OUT/bert-probe.txt" 2>&1
echo "== bert probe: exit $? at $(at)"; grep -vE "^ *$|Warning" "$OUT/bert-probe.txt" | cut -c1-160 | head -60
fast='--cubench_min_samples=3 --cubench_timeout=2'
bench bert-512 120 --cubench_suite=full $fast --benchmark_filter='^bert_train/[a-z0-9_]+/512/'
python_ref pytorch-bert-512 110 '^bert_train/[a-z0-9_]+/512/'
infer='^resnet50_infer/(fp32|tf32|fp16|bf16)/(nchw/(eager|graph)/(1|8|64|256)|channels_last/(eager|graph)/64)/'
bench infer 150 --cubench_suite=full --cubench_min_samples=3 --cubench_timeout=1 --benchmark_filter="$infer"
python_ref pytorch-infer 80 "${infer//(eager\|graph)/eager}"
