#!/usr/bin/env bash
# Issue "A toolkit verdict in minutes": CUDA 11.8 against 13.0 over the core default set,
# processes as the unit (4 each, interleaved), plus the whole ctest at the commit. The 11.8 binary
# is the static one (docs/results/static-binary.md), xz-compressed in three parts of at most
# 42 MiB, one carried per call (a call carries 64 MiB with the tree, which is 17 MB now):
# .carry/s118a, s118c, s118b, copied to /tmp/s118, which survives while the machine is warm.
#   STEP=ctest  (carry .carry/s118a) build with LibTorch, the whole ctest
#   STEP=torch  (carry .carry/s118a) build with LibTorch; the README's default run (LibTorch
#               families too, no flag), timed
#   STEP=stash  (carry .carry/s118c) nothing but keeping the part
#   STEP=runs1  (carry .carry/s118b) unpack the 11.8 binary; processes 1 and 2 of each build
#   STEP=runs2  processes 3 and 4 of each build
# Each step is one device call of at most 600 s, made the moment the previous one returns.
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> STEP=ctest docs/results/h200/plans/toolkits-minutes.sh
set -uo pipefail
start=$(date +%s)
PARTS=/tmp/s118
mkdir -p "$PARTS"
for part in .carry/s118a .carry/s118b .carry/s118c; do [ -d "$part" ] && cp "$part"/* "$PARTS"/; done
core_filter='-^(cpu/|torch/|resnet50|transformer)'
run() {  # name binary: one process of the core default run
  local t0=$(date +%s)
  "$2" --benchmark_filter="$core_filter" --benchmark_out="$OUT/$1.json" >/dev/null 2>"$OUT/$1.err"
  echo "$1: exit $?, $(( $(date +%s) - t0 )) s"
}
unpack() {
  old=$PARTS/cubench-11.8
  if [ ! -x "$old" ]; then
    [ "$(ls "$PARTS"/cubench.xz.part* | wc -l)" = 3 ] ||
      { echo "the 11.8 binary's parts: $(ls "$PARTS") (the machine went cold between calls?)"; exit 1; }
    cat "$PARTS"/cubench.xz.part* | xz -d -c >"$old" || { echo "cannot unpack the 11.8 binary"; exit 1; }
    chmod +x "$old"
  fi
  (cd "$PARTS" && sed "s|  .*|  $old|" cubench.sha256 | sha256sum -c --quiet) ||
    { echo "11.8 binary: checksum differs"; exit 1; }
  export LD_LIBRARY_PATH=$PARTS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}
pair() {  # i: process i of each build, the order alternating with i
  if [ $(( $1 % 2 )) = 1 ]; then
    run cuda-13.0.process-$1 build/cuda-13.0/cubench; run cuda-11.8.process-$1 "$old"
  else
    run cuda-11.8.process-$1 "$old"; run cuda-13.0.process-$1 build/cuda-13.0/cubench
  fi
}
case "${STEP:-ctest}" in
ctest)
  FILTER=none tools/gpu-session.sh
  ;;
runs1)
  unpack
  [ -x build/cuda-13.0/cubench ] || { WITH_TORCH=0 SKIP_CTEST=1 FILTER=none BUILD_TARGET=cubench tools/gpu-session.sh || exit 1; }
  pair 1; pair 2
  ;;
runs2)
  unpack
  pair 3; pair 4
  ;;
stash) ;;
torch)
  [ -x build/cuda-13.0/cubench ] || { SKIP_CTEST=1 FILTER=none BUILD_TARGET=cubench tools/gpu-session.sh || exit 1; }
  t0=$(date +%s)
  build/cuda-13.0/cubench --benchmark_out="$OUT/default-torch.json" >"$OUT/default-torch.txt" 2>"$OUT/default-torch.err"
  echo "default-torch: exit $?, $(( $(date +%s) - t0 )) s, $(grep -c '"run_type"' "$OUT/default-torch.json") rows"
  ;;
esac
(cd "$OUT" && shopt -s nullglob && files=(*.json *.err *.log *.txt) && [ ${#files[@]} -gt 0 ] &&
  tar czf "step-${STEP:-ctest}.tgz" "${files[@]}")
echo "total $(( $(date +%s) - start )) s"
