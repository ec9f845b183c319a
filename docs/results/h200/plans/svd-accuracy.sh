#!/usr/bin/env bash
# cuSOLVER's SVD accuracy on the H200, for the checks' rule (issue "Green on the H200"): every
# svd/ case at 512-4096 with --cubench_seed 1-3, and gesvdp (the one in question) with seeds 1-8.
# Each row carries reconstruction, orthogonality and the singular values' error against fp64
# gesvd, as counters when it passes and in its error message when it does not
# (docs/results/h200/plans/svd_accuracy_table.py reads both).
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> docs/results/h200/plans/svd-accuracy.sh
set -uo pipefail
WITH_TORCH=0 SKIP_CTEST=1 BUILD_TARGET=cubench FILTER=none tools/gpu-session.sh || exit 1
mkdir -p /tmp/svd
for seed in 1 2 3 4 5 6 7 8; do
  filter='^svd/gesvdp/'
  [ "$seed" -le 3 ] && filter='^svd/'
  start=$(date +%s)
  timeout 120 build/cuda-13.0/cubench --benchmark_filter="$filter" --cubench_seed="$seed" \
    --benchmark_min_time=0.001 --benchmark_repetitions=1 \
    --benchmark_out="/tmp/svd/svd-seed-$seed.json" --benchmark_out_format=json \
    >"/tmp/svd/svd-seed-$seed.txt" 2>&1
  echo "seed $seed ($filter) exit $? in $(( $(date +%s) - start )) s"
done
python3 docs/results/h200/plans/svd_accuracy_table.py /tmp/svd/svd-seed-*.json | tee "$OUT/svd-accuracy.md"
(cd /tmp/svd && tar czf "$OUT/svd-accuracy.tgz" ./*)
