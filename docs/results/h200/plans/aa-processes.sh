#!/usr/bin/env bash
# A/A with a process as the unit, on the toolkit comparison's 81 rows: build and the Harness
# tests (tools/gpu-session.sh), then tools/run-matrix with ten processes of one repetition each.
# tools/merge-processes splits them into two five-process runs afterwards (docs/results/h200/README.md).
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> docs/results/h200/plans/aa-processes.sh
set -uo pipefail
FILTER='^gemm/(fp32|tf32|fp16|bf16)/|^sigmoid/|^svd/(gesvd|gesvdj)/(fp32|fp64)/(512|1024|2048)/|^launch/'
WITH_TORCH=0 CTEST_ARGS="-R Harness" FILTER=none tools/gpu-session.sh || exit 1
timeout "${MATRIX_SECONDS:-420}" python3 tools/run_matrix.py --presets cuda-13.0 --repetitions 1 \
  --processes 10 --min-time 0.05 --filter "$FILTER" --out-dir /tmp/matrix 2>"$OUT/matrix.log"
echo "run-matrix exit $?"; grep -E "process [0-9]+/10: 81/81|failed|exited" "$OUT/matrix.log" | cut -c1-160
(cd /tmp/matrix && tar czf "$OUT/matrix.tgz" ./*.json)
