#!/usr/bin/env bash
# Issue "CUDA 12.4": CUDA 11.8, 12.4 and 13.0 builds of one commit over the core default set
# (startup/ included), processes as the unit, interleaved, plus the whole ctest at that commit.
# 13.0 is built on the H200; 11.8 and 12.4 are the static builds of the same commit
# (docs/results/static-binary.md), each xz-compressed and split into parts of at most 40 MiB
# (a call carries 64 MiB with the tree, 20 MB now): .carry/s118a..c (3 parts) and
# .carry/s124a..d (4), the last part of each with its cubench.sha256 (and .carry/s118c with
# libbenchmark.so.1debian): 7 calls carry them (ctest, then 6 stashes, then the runs). Each call
# carries one part; parts gather in /tmp/parts, which survives while the machine is warm (it is
# released 30 s after a call: make each call the moment the previous one returns).
#   STEP=ctest  build with LibTorch, the whole ctest (carry the first part)
#   STEP=stash  keep the part carried (one call per further part)
#   STEP=runs I unpack both static builds (once), then process I of each build, the order of the
#               three rotating with I (13.0 11.8 12.4 / 11.8 12.4 13.0 / 12.4 13.0 11.8 / ...)
# About 100 s a process: one STEP=runs call per I (4 calls, ~300 s each). The 30 device minutes
# of a session hold the ctest, the stashes and about three triples; the rest in the next session
# (carrying the parts again).
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> STEP=ctest docs/results/h200/plans/toolkits-three.sh
set -uo pipefail
start=$(date +%s)
PARTS=/tmp/parts
mkdir -p "$PARTS"/s118 "$PARTS"/s124
for part in .carry/s118* .carry/s124*; do
  [ -d "$part" ] || continue
  case "$part" in *s118*) cp "$part"/* "$PARTS"/s118/ ;; *) cp "$part"/* "$PARTS"/s124/ ;; esac
done
core_filter='-^(cpu/|torch/|resnet50|transformer)'
run() {  # name binary: one process of the core default run
  local t0=$(date +%s)
  "$2" --benchmark_filter="$core_filter" --benchmark_out="$OUT/$1.json" >/dev/null 2>"$OUT/$1.err"
  echo "$1: exit $?, $(( $(date +%s) - t0 )) s"
}
unpack() {  # toolkit: $PARTS/<s118|s124>/cubench-<toolkit>, checked against its sha256
  local dir=$PARTS/s${1/./} bin=$PARTS/s${1/./}/cubench-$1
  if [ ! -x "$bin" ]; then
    [ -f "$dir/cubench.sha256" ] ||
      { echo "CUDA $1: parts missing ($(ls "$dir" | tr '\n' ' ')): the machine went cold?"; exit 1; }
    cat "$dir"/cubench.xz.part* | xz -d -c >"$bin" || { echo "CUDA $1: cannot unpack"; exit 1; }
    chmod +x "$bin"
  fi
  (cd "$dir" && sed "s|  .*|  $bin|" cubench.sha256 | sha256sum -c --quiet) ||
    { echo "CUDA $1: checksum differs (a part missing?)"; rm -f "$bin"; exit 1; }
}
case "${STEP:-ctest}" in
ctest)
  FILTER=none tools/gpu-session.sh
  ;;
stash) ls -l "$PARTS"/* ;;
runs)
  i=${I:?STEP=runs needs I=1..4}
  unpack 11.8
  unpack 12.4
  export LD_LIBRARY_PATH=$PARTS/s118${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}  # libbenchmark.so.1debian
  [ -x build/cuda-13.0/cubench ] ||
    { WITH_TORCH=0 SKIP_CTEST=1 FILTER=none BUILD_TARGET=cubench tools/gpu-session.sh || exit 1; }
  declare -A bin=([13.0]=build/cuda-13.0/cubench [11.8]=$PARTS/s118/cubench-11.8
                  [12.4]=$PARTS/s124/cubench-12.4)
  orders=("13.0 11.8 12.4" "11.8 12.4 13.0" "12.4 13.0 11.8" "13.0 12.4 11.8")
  for t in ${orders[$(( (i - 1) % 4 ))]}; do run "cuda-$t.process-$i" "${bin[$t]}"; done
  ;;
esac
(cd "$OUT" && shopt -s nullglob && files=(*.json *.err *.log *.txt) && [ ${#files[@]} -gt 0 ] &&
  tar czf "step-${STEP:-ctest}${I:-}.tgz" "${files[@]}")
echo "total $(( $(date +%s) - start )) s"
