#!/usr/bin/env bash
# One call on the GPU machine: configure and build with the cuda-13.0 preset (with LibTorch from
# the python torch when it imports; WITH_TORCH=0 leaves it out), run ctest, then the runs a plan
# file lists, each into its own JSON, all inside one deadline. Everything lands under $OUT
# (default ./results); with PACK=1 the JSON and logs are packed into $OUT/session.tgz (a device
# call brings back at most 8 files).
#   PLAN=docs/results/h200/plans/torch.plan DEADLINE=570 CUBENCH_GIT_REVISION=<commit> \
#     OUT=/tmp/out tools/gpu-session.sh
# A plan line: `cubench|torch NAME REPETITIONS MIN_TIME FILTER` (FILTER is a regex: cubench's
# --benchmark_filter or tools/torch_reference.py's --filter); '#' starts a comment.
# DEADLINE: seconds from the start; a run gets what is left (a run cut short leaves a JSON
# without its closing brackets, which the tools reject: the plan's order says what matters most).
# BUILD_TARGET=cubench builds the benchmarks alone (the tests wait for a call that runs ctest).
# Without PLAN: FILTER/REPS/MIN_TIME/NAME and TORCH_FILTER make a one-line plan, as before.
# (the device copy of the tree has no .git: CUBENCH_GIT_REVISION puts the commit in the context)
set -uo pipefail
OUT=${OUT:-$PWD/results}
mkdir -p "$OUT"
DEADLINE=${DEADLINE:-3600}
start=$(date +%s)
left() { echo $((DEADLINE - ($(date +%s) - start))); }
root=/usr/local/cuda-13.0
[ -x "$root/bin/nvcc" ] || root=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
echo "toolkit: $root; $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader)"
nvidia-smi dmon -s pc -o T -f "$OUT/dmon.txt" >/dev/null 2>&1 &
dmon=$!
pack() {
  kill $dmon 2>/dev/null
  if [ "${PACK:-0}" = 1 ]; then
    (cd "$OUT" && shopt -s nullglob && files=(*.json *.log *.txt) &&
      tar czf session.tgz --remove-files "${files[@]}")
  fi
}
trap pack EXIT

# Logs of a good build stay in /tmp: only 8 files come back from a device call.
torch_args=()
if [ "${WITH_TORCH:-1}" != 0 ] &&
   torch_dir=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)' 2>/dev/null); then
  # TorchConfig's CMake code predates CMake 4's policy floor; its arch list would otherwise add
  # every architecture torch was built for to the CUDA flags.
  torch_args=(-DCUBENCH_WITH_TORCH=ON "-DTorch_DIR=$torch_dir/Torch" -DTORCH_CUDA_ARCH_LIST=9.0
              -DCMAKE_POLICY_VERSION_MINIMUM=3.5)
fi
# cudnn-frontend's headers (and nlohmann/json.hpp) travel in .carry/cudnn-fe (the GPU machine has
# no Debian archive). cuDNN: the python wheel's (nvidia-cudnn-cu13, 9.19 on 2026-12-04) where
# there is one, the one LibTorch loads anyway (its RPATH would otherwise mix the system's 9.14
# headers with the wheel's library); else the toolkit's or the system's.
cudnn_args=()
[ -d .carry/cudnn-fe/include ] && export CUBENCH_CUDNN_FRONTEND_ROOT=$PWD/.carry/cudnn-fe
if cudnn_dir=$(python3 -c 'import nvidia.cudnn;print(list(nvidia.cudnn.__path__)[0])' 2>/dev/null) &&
   [ -f "$cudnn_dir/include/cudnn_version.h" ]; then
  cudnn_args=("-DCUDNN_ROOT=$cudnn_dir")
fi
cmake --preset cuda-13.0 -DCUDAToolkit_ROOT="$root" "${torch_args[@]}" "${cudnn_args[@]}" >/tmp/configure.log 2>&1 ||
  { tail -40 /tmp/configure.log; exit 1; }
grep -E "^-- cubench" /tmp/configure.log
cmake --build --preset cuda-13.0 -j "$(nproc)" ${BUILD_TARGET:+--target "$BUILD_TARGET"} >/tmp/build.log 2>&1 ||
  { grep -B2 -A12 -E "error|Error" /tmp/build.log | head -80; exit 1; }
echo "built in $(( $(date +%s) - start )) s"
if [ "${SKIP_CTEST:-0}" != 1 ]; then
  timeout "$(left)" ctest --preset cuda-13.0 ${CTEST_ARGS:-} >"$OUT/ctest.log" 2>&1
  echo "ctest exit $? at $(( $(date +%s) - start )) s"
  grep -E "Failed|\*\*\*|Not Run|tests passed" "$OUT/ctest.log" | tail -15
fi

run_line() {  # kind name reps min_time filter
  local kind=$1 name=$2 reps=$3 min_time=$4 filter=$5 budget
  budget=$(left)
  if [ "$budget" -le 10 ]; then echo "$name: not run, deadline reached"; return; fi
  echo "== $name ($kind, $reps reps) at $(( $(date +%s) - start )) s, $budget s left"
  if [ "$kind" = torch ]; then
    PYTHONUNBUFFERED=1 timeout "$budget" python3 tools/torch_reference.py --filter "$filter" \
      --repetitions "$reps" --min-time "$min_time" --out "$OUT/$name.json" 2>"$OUT/$name.txt"
    echo "$name exit $?"; tail -${SHOW:-30} "$OUT/$name.txt"
  else
    timeout "$budget" build/cuda-13.0/cubench --benchmark_filter="$filter" \
      --benchmark_repetitions="$reps" --benchmark_min_time="$min_time" \
      --benchmark_report_aggregates_only=false --benchmark_out="$OUT/$name.json" \
      --benchmark_out_format=json >"$OUT/$name.txt" 2>&1
    echo "$name exit $?"
    grep -E "_median|ERROR" "$OUT/$name.txt" | cut -c1-170 | tail -${SHOW:-40}
  fi
}

if [ -n "${PLAN:-}" ]; then
  while read -r kind name reps min_time filter; do
    case "$kind" in ''|'#'*) continue ;; esac
    run_line "$kind" "$name" "$reps" "$min_time" "$filter" </dev/null
  done <"$PLAN"
else
  [ "${FILTER:-.}" != none ] && run_line cubench "${NAME:-cubench}" "${REPS:-5}" "${MIN_TIME:-0.2}" "${FILTER:-.}"
  [ -n "${TORCH_FILTER:-}" ] && run_line torch torch "${REPS:-5}" "${MIN_TIME:-0.2}" "$TORCH_FILTER"
fi
echo "total $(( $(date +%s) - start )) s"
