#!/usr/bin/env bash
# Issue 18, for the third session's first call (written at the end of the second, not run yet):
# why bert_train is slower than PyTorch at seq 512 (issue18-bert-probe.py: transformers against a
# python replica of cubench's module, kernel tables, the cuBLAS each side loads), bert_train's
# seq-512 rows again beside python's, and resnet50_infer NCHW and batch 64 beside python's (call 8
# ran 11 of those 40 cubench rows and no python rows). Build; probe; cubench's amp_bf16/512/64 on
# python's cuBLAS; rows; clocks logged.
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> docs/results/h200/plans/issue18-call9.sh
set -uo pipefail
source docs/results/h200/plans/issue18-lib.sh
SKIP_CTEST=1 FILTER=none tools/gpu-session.sh || exit 1
clocks
trap finish EXIT
ldd $bin | grep -E "cublas|cudnn|libtorch_cuda" >"$OUT/cubench-libs.txt"
echo "== cubench's libraries:"; cat "$OUT/cubench-libs.txt"
python3 -m pip list 2>/dev/null | grep -iE "^(torch|nvidia-cu|transformers) " >"$OUT/python-libs.txt"
echo "== python's packages:"; cat "$OUT/python-libs.txt"
timeout 90 python3 docs/results/h200/plans/issue18-bert-probe.py amp_bf16 512 64 >"$OUT/bert-probe.txt" 2>&1
echo "== bert probe: exit $? at $(at)"; grep -vE "^ *$|Warning" "$OUT/bert-probe.txt" | cut -c1-160 | head -60
fast='--cubench_min_samples=3 --cubench_timeout=2'
# The library suspect tested directly: cubench's largest-gap row on the cuBLAS python's torch
# loads (its wheel's, found in a python process's maps after one matmul), preloaded so LibTorch
# and cubench both bind libcublas.so.13/libcublasLt.so.13 to it; the row's context says which.
wheel_cublas=$(python3 -c "
import torch
a = torch.ones(64, 64, device='cuda'); (a @ a).sum().item()
print(':'.join(sorted({l.split()[-1] for l in open('/proc/self/maps') if 'libcublas' in l})))")
echo "== python's cuBLAS: $wheel_cublas" | tee "$OUT/wheel-cublas.txt"
[ -n "$wheel_cublas" ] && LD_PRELOAD="$wheel_cublas" bench bert-512-wheel-cublas 50 --cubench_suite=full \
  $fast --benchmark_filter='^bert_train/amp_bf16/512/64/'
bench bert-512 120 --cubench_suite=full $fast --benchmark_filter='^bert_train/[a-z0-9_]+/512/'
python_ref pytorch-bert-512 110 '^bert_train/[a-z0-9_]+/512/'
infer='^resnet50_infer/(fp32|tf32|fp16|bf16)/(nchw/(eager|graph)/(1|8|64|256)|channels_last/(eager|graph)/64)/'
bench infer 150 --cubench_suite=full --cubench_min_samples=3 --cubench_timeout=1 --benchmark_filter="$infer"
python_ref pytorch-infer 80 "${infer//(eager\|graph)/eager}"
