#!/usr/bin/env bash
# The CUDA 11.8 build against the 13.0 build of the same commit on the GPU machine, back to back:
# 13.0 (run A), then 11.8, then 13.0 again (run B), the same filter and repetitions each time, so
# A against B is the A/A check and A/B against 11.8 the toolkit comparison. The 11.8 binary is the
# static one (docs/results/static-binary.md), carried xz-compressed in parts to $PARTS
# (cubench.xz.part*, cubench.sha256, libbenchmark.so.1debian; reassembled here and checked against
# its sha256); build/cuda-13.0/cubench is built first if missing.
# DEADLINE (seconds from the start) bounds the three runs together: a run gets what is left.
#   PARTS=/tmp/s118 FILTER='^gemm/' REPS=5 MIN_TIME=0.05 OUT=/tmp/out tools/gpu-toolkits.sh
set -uo pipefail
OUT=${OUT:-$PWD/results}
PARTS=${PARTS:-/tmp/s118}
FILTER=${FILTER:-.}
REPS=${REPS:-5}
MIN_TIME=${MIN_TIME:-0.05}
DEADLINE=${DEADLINE:-3600}
mkdir -p "$OUT"
start=$(date +%s)
if [ ! -x build/cuda-13.0/cubench ]; then
  WITH_TORCH=0 SKIP_CTEST=1 FILTER=none tools/gpu-session.sh || exit 1
fi
old=$PARTS/cubench-11.8
if [ ! -x "$old" ]; then
  # xz, not zstd: the GPU machine has xz but no zstd (seen there on 2026-12-02).
  cat "$PARTS"/cubench.xz.part* | xz -d -c >"$old" || { echo "cannot unpack the 11.8 binary"; exit 1; }
  chmod +x "$old"
fi
(cd "$PARTS" && sed "s|  .*|  $old|" cubench.sha256 | sha256sum -c --quiet) || { echo "11.8 binary: checksum differs"; exit 1; }
export LD_LIBRARY_PATH=$PARTS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}  # Debian's libbenchmark.so.1debian
nvidia-smi dmon -s pc -o T -f "$OUT/dmon.txt" >/dev/null 2>&1 &
dmon=$!
trap 'kill $dmon 2>/dev/null' EXIT
run() {  # name binary
  local left=$((DEADLINE - ($(date +%s) - start)))
  if [ "$left" -le 10 ]; then echo "$1: not run, deadline reached"; return; fi
  echo "== $1 at $(( $(date +%s) - start )) s, $left s left"
  timeout "$left" "$2" --benchmark_filter="$FILTER" --benchmark_repetitions="$REPS" --benchmark_min_time="$MIN_TIME" \
    --benchmark_report_aggregates_only=false --benchmark_out="$OUT/$1.json" \
    --benchmark_out_format=json >"/tmp/$1.txt" 2>&1
  echo "$1 exit $?"; grep -E "ERROR" "/tmp/$1.txt" | cut -c1-200 | sort -u | head -20
}
run cuda-13.0-a build/cuda-13.0/cubench
run cuda-11.8 "$old"
run cuda-13.0-b build/cuda-13.0/cubench
echo "total $(( $(date +%s) - start )) s"
