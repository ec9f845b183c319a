#!/usr/bin/env bash
# Issue 18, fifth H200 call (the second session's first): bert_train's first build against
# LibTorch 2.11 and its first run on a GPU. Build; the every-family tests narrowed to bert_train
# (each precision's smallest configuration validated, its planted fault caught); the BERT and
# AdamW torch tests; then every bert_train row beside transformers' BertForMaskedLM in PyTorch
# eager, seq 128 first, 5 repetitions each side (tools/compare's U test), inside one deadline.
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> docs/results/h200/plans/issue18-bert.sh
set -uo pipefail
start=$(date +%s)
DEADLINE=${DEADLINE:-585}
left() { echo $((DEADLINE - ($(date +%s) - start))); }
bin=build/cuda-13.0/cubench
tests=build/cuda-13.0/tests
bench() {  # name seconds args...: one cubench process into $OUT/name.json
  local name=$1 secs=$2; shift 2
  [ "$(left)" -lt "$secs" ] && secs=$(left)
  [ "$secs" -le 5 ] && { echo "== $name: not run, deadline"; return; }
  timeout "$secs" $bin --benchmark_out="$OUT/$name.json" --benchmark_repetitions=5 \
    --benchmark_report_aggregates_only=false "$@" >"$OUT/$name.txt" 2>&1
  echo "== $name: exit $? at $(( $(date +%s) - start )) s"
  grep -E "manual_time_median|ERROR|not supported" "$OUT/$name.txt" | cut -c1-200
}
python_ref() {  # name seconds filter
  local secs=$2
  [ "$(left)" -lt "$secs" ] && secs=$(left)
  [ "$secs" -le 5 ] && { echo "== $1: not run, deadline"; return; }
  PYTHONUNBUFFERED=1 timeout "$secs" python3 tools/torch_reference.py --filter "$3" \
    --repetitions 5 --min-time 0 --out "$OUT/$1.json" >"$OUT/$1.txt" 2>&1
  echo "== $1: exit $? at $(( $(date +%s) - start )) s"; tail -10 "$OUT/$1.txt" | cut -c1-200
}
SKIP_CTEST=1 FILTER=none tools/gpu-session.sh || exit 1
CUBENCH_TEST_VARIANTS='^bert_train/' timeout 120 \
  $tests/cubench_gpu_tests --gtest_filter='Fixtures.Every*' >"$OUT/every.txt" 2>&1
echo "== every-family (bert_train): exit $? at $(( $(date +%s) - start )) s"
grep -E "OK \]|FAILED|PASSED|CAUGHT|Failure|rror" "$OUT/every.txt" | cut -c1-220 | head -30
timeout 60 $tests/cubench_torch_tests --gtest_filter='Bert*:ForeachAdamW*' >"$OUT/torch-tests.txt" 2>&1
echo "== torch tests: exit $?"; grep -E "OK \]|FAILED|PASSED|SKIPPED|Failure" "$OUT/torch-tests.txt" | cut -c1-200
fast='--cubench_min_samples=3 --cubench_timeout=2'
bench bert-128 110 --cubench_suite=full $fast --benchmark_filter='^bert_train/[a-z0-9_]+/128/'
python_ref pytorch-bert-128 90 '^bert_train/[a-z0-9_]+/128/'
bench bert-512 120 --cubench_suite=full $fast --benchmark_filter='^bert_train/[a-z0-9_]+/512/'
python_ref pytorch-bert-512 110 '^bert_train/[a-z0-9_]+/512/'
echo "total $(( $(date +%s) - start )) s"
cd "$OUT" && tar czf session.tgz --remove-files *.json *.txt *.log 2>/dev/null; ls
