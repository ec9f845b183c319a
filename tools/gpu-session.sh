#!/usr/bin/env bash
# One call on the GPU machine, by default the whole proof of a commit inside one 10-minute run:
# configure and build with the cuda-13.0 preset (LibTorch from the python torch where it imports,
# WITH_TORCH=0 leaves it out; cuDNN from its python wheel), run the whole ctest (its wall time and
# the 10 slowest tests said), then the plan, each run into its own JSON, all inside DEADLINE.
# Everything lands under $OUT (default ./results); with PACK=1 the JSON and logs are packed into
# $OUT/session.tgz (one file to bring back, where few files travel back from the machine).
#   CUBENCH_GIT_REVISION=<commit> OUT=/tmp/out tools/gpu-session.sh
# Without PLAN the plan is the README's default run (`cubench`, no flags). A plan line:
#   default NAME                        the default run: NAME.json, its stderr in NAME.stderr.txt
#   default-bare NAME                   the same with the build without LibTorch and cuDNN (BARE=1)
#   default-second NAME FILTER          the default run of SECOND_TREE's build, the benchmarks
#                                       FILTER selects (before and after a change, row by row)
#   cubench NAME REPETITIONS MIN_TIME FILTER   --benchmark_filter, Google Benchmark's loop
#   torch NAME REPETITIONS MIN_TIME FILTER     tools/torch_reference.py --filter (its compiled
#                                       rows under torch.compile's default mode)
#   torch-max-autotune NAME REPETITIONS MIN_TIME FILTER   the same, compiled rows in max-autotune
#   ctest NAME                          the whole ctest again: NAME.log, its wall time said
#   checks-largest NAME [REGEX]         every family's check test (ctest -R ^Check/, or those
#                                       REGEX names among them) with each variant at its largest
#                                       default size (full-suite size where the default has none:
#                                       CUBENCH_TEST_SIZE=largest, tests/smallest_cases.h), one
#                                       test at a time, every fault of each
#   needs NAME                          what every configuration of the full suite declares it
#                                       needs (--cubench_list=needs): NAME.txt, tab-separated
#   adaptive NAME FLAGS...              `cubench FLAGS` as the default run samples (the stopping
#                                       rule), e.g. --cubench_suite=full --benchmark_filter=...,
#                                       or --cubench_memory_limit=24GiB (the default run as on a
#                                       24 GB GPU); its wall time said
#   processes NAME COUNT FILTER         COUNT processes of each build (this tree's, and with
#                                       SECOND_TREE that tree's), taking turns, the first of each
#                                       turn alternating: NAME-this.process-I.json and
#                                       NAME-second.process-I.json (FIRST_PROCESS numbers the first
#                                       turn, default 1): an A/A across a change, merged and
#                                       compared afterwards with tools/merge-processes and
#                                       tools/compare --table
# ('#' starts a comment). The main build's architectures (configure's line) and its cubins land
# in $OUT/device-code.txt. DEADLINE: seconds from the start (default 590); a run gets what is left,
# and one cut short keeps its finished rows (cubench closes its JSON on SIGTERM, marked
# "interrupted"): the plan's order says what matters most.
# AOTI=1 makes the default run's AOTInductor packages (tools/aoti-export, into build/cuda-13.0/aoti,
# where the build's compiled rows look) while the build runs: AOTI_PACKAGES names others (space
# separated); its log is $OUT/aoti-export.log, each package's record (times, memory, constants)
# $OUT/aoti/NAME.json (AOTI_KEEP=1: NAME.pt2 too); the compiled rows are left out, saying so,
# where it made none.
# BARE=1 also builds build/cuda-13.0-bare (-DCUBENCH_WITH_TORCH=OFF -DCUBENCH_WITH_CUDNN=OFF),
# beside the main build. SECOND_TREE=<dir> (a source tree carried in, e.g. `git archive` of the
# commit before a change) is built as the main build is (without its tests), into build/second;
# SECOND_REVISION names its commit in its results' context. SKIP_CTEST=1 leaves ctest out; CTEST_ARGS are added to its command line;
# FROM=NAME / UNTIL=NAME run the plan from its line NAME / up to (not including) its line NAME;
# CTEST_RESERVE seconds of the deadline are kept from ctest for the plan (default 0).
# (the device copy of the tree has no .git: CUBENCH_GIT_REVISION puts the commit in the context)
# The GPU tests must run here: CUBENCH_GPU_TESTS=required makes any of them that would skip for
# want of a GPU fail instead (tests/gpu_test.h, tests/gpu_skip.cmake).
set -uo pipefail
export CUBENCH_GPU_TESTS=${CUBENCH_GPU_TESTS:-required}
OUT=${OUT:-$PWD/results}
mkdir -p "$OUT"
DEADLINE=${DEADLINE:-590}
start=$(date +%s)
now() { echo $(($(date +%s) - start)); }
left() { echo $((DEADLINE - $(now))); }
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

torch_args=()
if [ "${WITH_TORCH:-1}" != 0 ] &&
   torch_dir=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)' 2>/dev/null); then
  # TorchConfig's CMake code predates CMake 4's policy floor; its arch list would otherwise add
  # every architecture torch was built for to the CUDA flags.
  torch_args=(-DCUBENCH_WITH_TORCH=ON "-DTorch_DIR=$torch_dir/Torch" -DTORCH_CUDA_ARCH_LIST=9.0
              -DCMAKE_POLICY_VERSION_MINIMUM=3.5)
fi
# cudnn-frontend's headers (and nlohmann/json.hpp) travel in .carry/cudnn-fe (the GPU machine has
# no Debian archive). cuDNN: the python wheel's (nvidia-cudnn-cu13) where there is one, the one
# LibTorch loads anyway (its RPATH would otherwise mix the system's headers with the wheel's
# library); else the toolkit's or the system's.
cudnn_args=()
[ -d .carry/cudnn-fe/include ] && export CUBENCH_CUDNN_FRONTEND_ROOT=$PWD/.carry/cudnn-fe
if cudnn_dir=$(python3 -c 'import nvidia.cudnn;print(list(nvidia.cudnn.__path__)[0])' 2>/dev/null) &&
   [ -f "$cudnn_dir/include/cudnn_version.h" ]; then
  cudnn_args=("-DCUDNN_ROOT=$cudnn_dir")
fi

# Logs of a good build stay in /tmp: only what fails is worth bringing back.
build() {  # name, configure arguments... (SOURCE=<dir>: another source tree than this one)
  local name=$1; shift
  (cd "${SOURCE:-.}" && cmake --preset cuda-13.0 -DCUDAToolkit_ROOT="$root" "$@") \
    >"/tmp/configure-$name.log" 2>&1 ||
    { tail -40 "/tmp/configure-$name.log"; return 1; }
  grep -E "^-- cubench" "/tmp/configure-$name.log" | sed "s/^/[$name] /"
  local dir; dir=$(sed -n 's/^-- Build files have been written to: //p' "/tmp/configure-$name.log")
  cmake --build "$dir" -j "$jobs" >"/tmp/build-$name.log" 2>&1 ||
    { grep -B2 -A12 -E "error|Error" "/tmp/build-$name.log" | head -80; return 1; }
}
# The builds run side by side and share the cores.
jobs=$(($(nproc) / (1 + ${BARE:-0} + $([ -n "${SECOND_TREE:-}" ] && echo 1 || echo 0))))
pids=()
aoti_pid=
if [ "${AOTI:-0}" = 1 ]; then
  packages=()
  for p in ${AOTI_PACKAGES:-}; do packages+=(--package "$p"); done
  tools/aoti-export --out build/cuda-13.0/aoti "${packages[@]}" >"$OUT/aoti-export.log" 2>&1 &
  aoti_pid=$!
fi
build main "${torch_args[@]}" "${cudnn_args[@]}" & pids+=($!)
if [ "${BARE:-0}" = 1 ]; then
  build bare -B build/cuda-13.0-bare -DCUBENCH_WITH_TORCH=OFF -DCUBENCH_WITH_CUDNN=OFF & pids+=($!)
fi
if [ -n "${SECOND_TREE:-}" ]; then
  CUBENCH_GIT_REVISION=${SECOND_REVISION:-unknown} SOURCE=$SECOND_TREE build second -B "$PWD/build/second" -DBUILD_TESTING=OFF "${torch_args[@]}" \
    "${cudnn_args[@]}" &
  pids+=($!)
fi
for p in "${pids[@]}"; do
  wait "$p" || { kill "${pids[@]}" 2>/dev/null; wait; exit 1; }
done
echo "built in $(now) s"
if [ -n "$aoti_pid" ]; then
  wait "$aoti_pid"
  echo "aoti-export: exit $?, done at $(now) s"
  cat "$OUT/aoti-export.log" | cut -c1-300
  mkdir -p "$OUT/aoti" && cp build/cuda-13.0/aoti/*.json "$OUT/aoti/" 2>/dev/null
  # AOTI_KEEP=1: the packages themselves come back too (to carry into a later call's build).
  [ "${AOTI_KEEP:-0}" = 1 ] && cp build/cuda-13.0/aoti/*.pt2 "$OUT/aoti/" 2>/dev/null
fi
# What the main build holds for which GPU: configure's choice of architectures (its one line) and
# the binary's cubins and PTX as cuobjdump lists them.
{
  grep -E "^-- cubench: CUDA architectures" /tmp/configure-main.log
  cuobjdump=$(command -v cuobjdump || echo "$root/bin/cuobjdump")
  "$cuobjdump" --list-elf build/cuda-13.0/cubench && "$cuobjdump" --list-ptx build/cuda-13.0/cubench
} >"$OUT/device-code.txt" 2>&1
head -1 "$OUT/device-code.txt"

ctest_budget=$(($(left) - ${CTEST_RESERVE:-0}))
if [ "${SKIP_CTEST:-0}" = 1 ]; then
  :
elif [ "$ctest_budget" -le 10 ]; then
  echo "ctest: not run, deadline reached"
else
  ctest_start=$(date +%s)
  # shellcheck disable=SC2086  # CTEST_ARGS is a list of arguments
  timeout "$ctest_budget" ctest --preset cuda-13.0 ${CTEST_ARGS:-} >"$OUT/ctest.log" 2>&1
  code=$?
  echo "ctest: exit $code, wall $(($(date +%s) - ctest_start)) s (at $(now) s)"
  grep -E "tests passed|tests failed|\*\*\*Failed|\*\*\*Timeout|Not Run" "$OUT/ctest.log" | tail -15
  echo "the 10 slowest tests:"
  sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) .* ([0-9.]+) sec$/\2 \1/p' "$OUT/ctest.log" |
    sort -rn | head -10
  cp build/cuda-13.0/Testing/Temporary/LastTest.log "$OUT/ctest-output.log" 2>/dev/null
fi

# The README's default run with a build's binary; its stderr apart, its wall time said.
default_run() {  # name binary [filter]
  local name=$1 binary=$2 filter=${3:-} budget run_start
  budget=$(left)
  if [ "$budget" -le 10 ]; then echo "$name: not run, deadline reached"; return; fi
  echo "== $name ($binary, default run) at $(now) s, $budget s left"
  run_start=$(date +%s)
  timeout "$budget" "$binary" ${filter:+"--benchmark_filter=$filter"} \
    --benchmark_out="$OUT/$name.json" >"$OUT/$name.txt" 2>"$OUT/$name.stderr.txt"
  local code=$? rows
  rows=$(grep -c '"run_name"' "$OUT/$name.json" 2>/dev/null)
  echo "$name: exit $code, wall $(($(date +%s) - run_start)) s, ${rows:-0} rows"
  tools/where-the-time-went "$OUT/$name.json" >"$OUT/$name.time.txt" 2>&1 &&
    head -"${SHOW:-25}" "$OUT/$name.time.txt"
}

# The whole ctest once more (a plan line: its steadiness across runs is part of a proof).
ctest_again() {  # name [ctest arguments...]
  local name=$1 budget run_start code
  shift
  budget=$(left)
  if [ "$budget" -le 10 ]; then echo "$name: not run, deadline reached"; return; fi
  run_start=$(date +%s)
  timeout "$budget" ctest --preset cuda-13.0 ${CTEST_ARGS:-} "$@" >"$OUT/$name.log" 2>&1
  code=$?
  echo "$name: exit $code, wall $(($(date +%s) - run_start)) s (at $(now) s)"
  grep -E "tests passed|tests failed|\*\*\*Failed|\*\*\*Timeout|Not Run" "$OUT/$name.log" | tail -15
}

# COUNT processes of this tree's build and the second's, taking turns (the A/A across a change).
# A turn starts only if what is left fits it (two of the longest process so far, and a margin), so
# no build is left with a process the other lacks.
processes() {  # name count filter
  local name=$1 count=$2 filter=$3 i side first second longest=0
  if [ -z "${SECOND_TREE:-}" ] || [[ ! $count =~ ^[1-9][0-9]*$ ]] || [ -z "$filter" ]; then
    echo "processes $name: needs SECOND_TREE, a count and a filter (got '$count' '$filter')"
    return
  fi
  for ((i = ${FIRST_PROCESS:-1}; i < ${FIRST_PROCESS:-1} + count; ++i)); do
    if ((i % 2)); then first=this second=second; else first=second second=this; fi
    if [ "$(left)" -le $((2 * longest + 30)) ]; then
      echo "$name: turn $i not started, $(left) s left"
      return
    fi
    for side in $first $second; do
      local binary=build/cuda-13.0/cubench budget
      [ "$side" = second ] && binary=build/second/cubench
      budget=$(left)
      local run_start; run_start=$(date +%s)
      timeout "$budget" "$binary" --benchmark_filter="$filter" \
        --benchmark_out="$OUT/$name-$side.process-$i.json" >/dev/null \
        2>"$OUT/$name-$side.process-$i.stderr.txt"
      echo "$name-$side.process-$i: exit $?, wall $(($(date +%s) - run_start)) s" \
        "(at $(now) s)"
      (($(date +%s) - run_start > longest)) && longest=$(($(date +%s) - run_start))
    done
  done
}

run_line() {  # kind name reps min_time filter
  local kind=$1 name=$2 reps=$3 min_time=$4 filter=$5 budget
  case "$kind" in
    default) default_run "$name" build/cuda-13.0/cubench; return ;;
    default-bare) default_run "$name" build/cuda-13.0-bare/cubench; return ;;
    default-second) default_run "$name" build/second/cubench "$reps"; return ;;
    processes) processes "$name" "$reps" "$min_time${filter:+ $filter}"; return ;;
    ctest) ctest_again "$name"; return ;;
    checks-largest)  # every family's check and planted fault at its largest default size, one
      # test at a time: side by side, the largest configurations share (and run out of) the GPU
      CUBENCH_TEST_SIZE=largest ctest_again "$name" -R "^Check/${reps:+.*(${reps})}" -j 1 -V
      grep -E "^[0-9]+: \[ (CAUGHT|SECONDS|LEFT OUT|FIGURES) \]" "$OUT/$name.log" | cut -c1-300 |
        tail -"${SHOW:-40}"
      return ;;
    needs)
      build/cuda-13.0/cubench --cubench_list=needs --cubench_suite=full >"$OUT/$name.txt" 2>&1
      echo "$name: exit $?, $(($(wc -l <"$OUT/$name.txt") - 1)) configurations"
      return ;;
    adaptive)
      budget=$(left)
      if [ "$budget" -le 10 ]; then echo "$name: not run, deadline reached"; return; fi
      echo "== $name (adaptive) at $(now) s, $budget s left"
      local -a flags  # the line's flags, word by word (read -a: no glob of a filter's '*')
      read -ra flags <<<"$reps $min_time $filter"
      local run_start; run_start=$(date +%s)
      timeout "$budget" build/cuda-13.0/cubench "${flags[@]}" \
        --benchmark_out="$OUT/$name.json" >"$OUT/$name.txt" 2>"$OUT/$name.stderr.txt"
      echo "$name exit $?, wall $(($(date +%s) - run_start)) s"
      tail -"${SHOW:-20}" "$OUT/$name.txt" | cut -c1-170
      return ;;
  esac
  budget=$(left)
  if [ "$budget" -le 10 ]; then echo "$name: not run, deadline reached"; return; fi
  echo "== $name ($kind, $reps reps) at $(now) s, $budget s left"
  if [ "$kind" = torch ] || [ "$kind" = torch-max-autotune ]; then
    local mode=default
    [ "$kind" = torch-max-autotune ] && mode=max-autotune
    PYTHONUNBUFFERED=1 timeout "$budget" python3 tools/torch_reference.py --filter "$filter" \
      --compile-mode "$mode" --repetitions "$reps" --min-time "$min_time" \
      --out "$OUT/$name.json" 2>"$OUT/$name.txt"
    echo "$name exit $?"; tail -"${SHOW:-30}" "$OUT/$name.txt"
  else
    timeout "$budget" build/cuda-13.0/cubench --benchmark_filter="$filter" \
      --benchmark_repetitions="$reps" --benchmark_min_time="$min_time" \
      --benchmark_report_aggregates_only=false --benchmark_out="$OUT/$name.json" \
      --benchmark_out_format=json >"$OUT/$name.txt" 2>&1
    echo "$name exit $?"
    grep -E "_median|ERROR" "$OUT/$name.txt" | cut -c1-170 | tail -"${SHOW:-40}"
  fi
}

plan=${PLAN:-}
if [ -z "$plan" ]; then
  plan=/tmp/default.plan
  echo "default default-run" >"$plan"
fi
# FROM=NAME starts the plan at its line named NAME, UNTIL=NAME stops it before that line: a plan
# longer than one call runs as two calls back to back on one warm machine.
started=${FROM:+no}
while read -r kind name reps min_time filter; do
  case "$kind" in '' | '#'*) continue ;; esac
  [ "${started:-yes}" = no ] && [ "$name" = "${FROM:-}" ] && started=yes
  [ "${started:-yes}" = no ] && continue
  [ -n "${UNTIL:-}" ] && [ "$name" = "$UNTIL" ] && break
  run_line "$kind" "$name" "${reps:-}" "${min_time:-}" "${filter:-}" </dev/null
done <"$plan"
echo "total $(now) s"
