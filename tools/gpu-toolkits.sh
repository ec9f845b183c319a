#!/usr/bin/env bash
# Builds of several CUDA toolkits of one commit on the GPU machine, a process at a time, taking
# turns: what tools/run-matrix does where the toolkits are installed, for a machine that has only
# CUDA 13.0's. 13.0 is built here (build/cuda-13.0, without LibTorch, if missing); 11.8 and 12.4
# are static binaries (docs/results/static-binary.md) carried xz-compressed in parts, which gather
# in $PARTS/s118 and $PARTS/s124 (each: cubench.xz.part*, cubench.sha256 in the last part, 11.8's
# with libbenchmark.so.1debian), joined and checked against the sha256 once. A call carries at
# most 64 MiB: CARRY=<dir> copies one part's folder into $PARTS and stops (calls made back to
# back, while the machine is warm: /tmp outlives a call only then).
#   PROCESS=I: process I of every toolkit, the order rotating with I (so no toolkit is always
#   first after an idle GPU: balanced when the processes are a multiple of the toolkits, with
#   AA=1 counted as one more), each into $OUT/cuda-<t>.process-I.json, stderr beside it. The
#   default run's families that every toolkit builds (FILTER), with --cubench_kernels=on; with
#   PEAK=1 also gemm_peak bf16 and fp8 (--cubench_suite=full, SEARCH seconds) into
#   cuda-<t>.peak-I.json; with AA=1 a second 13.0 process as well, cuda-13.0-aa.process-I.json,
#   for the A/A beside the comparison (the same binary against itself, by the same protocol).
#   FULL_FILTER=<regex>: also the full suite's rows it selects (every start-up stage under each
#   CUDA_MODULE_LOADING: '^startup/cuda/'), into cuda-<t>.full-I.json; leave them out of FILTER.
#   FLAGS: more cubench flags for every process (the sampling of a time-boxed verdict, e.g.
#   --cubench_timeout=2).
#   Merge and compare here afterwards:
#     tools/merge-processes cuda-11.8.json cuda-11.8.process-*.json  (each toolkit), then
#     tools/compare --table cuda-11.8.json cuda-12.4.json cuda-13.0.json
#   CARRY=.carry/s118a OUT=/tmp/out tools/gpu-toolkits.sh
#   PROCESS=1 PEAK=1 OUT=/tmp/out tools/gpu-toolkits.sh
# DEADLINE (seconds from the start, default 590) bounds the runs; one cut short keeps its rows.
set -uo pipefail
OUT=${OUT:-$PWD/results}
PARTS=${PARTS:-/tmp/parts}
TOOLKITS=${TOOLKITS:-11.8 12.4 13.0}
FILTER=${FILTER:-^(gemm|gemm_autotune|gemm_decode|svd|sigmoid|launch|startup)/}
SEARCH=${SEARCH:-10}
DEADLINE=${DEADLINE:-590}
mkdir -p "$OUT" "$PARTS"
start=$(date +%s)
left() { echo $((DEADLINE - ($(date +%s) - start))); }

if [ -n "${CARRY:-}" ]; then
  dest=$PARTS/$(basename "$CARRY" | sed 's/[a-z]$//')  # .carry/s118a -> $PARTS/s118
  mkdir -p "$dest" && cp "$CARRY"/* "$dest"/ && ls -l "$dest"
  exit 0
fi

binary() {  # toolkit -> the path of its binary, unpacked and checked on first use
  local t=$1
  if [ "$t" = 13.0 ]; then echo build/cuda-13.0/cubench; return; fi
  local dir=$PARTS/s${t/./} bin=$PARTS/s${t/./}/cubench-$t
  if [ ! -x "$bin" ]; then
    [ -f "$dir/cubench.sha256" ] ||
      { echo "CUDA $t: parts missing in $dir ($(ls "$dir" 2>/dev/null | tr '\n' ' ')): carried, and the machine kept warm?" >&2; return 1; }
    cat "$dir"/cubench.xz.part* | xz -d -c >"$bin" && chmod +x "$bin" ||
      { echo "CUDA $t: cannot unpack" >&2; return 1; }
  fi
  (cd "$dir" && sed "s|  .*|  $bin|" cubench.sha256 | sha256sum -c --quiet) ||
    { echo "CUDA $t: checksum differs (a part missing?)" >&2; rm -f "$bin"; return 1; }
  echo "$bin"
}

if [ ! -x build/cuda-13.0/cubench ]; then
  WITH_TORCH=0 SKIP_CTEST=1 PLAN=/dev/null tools/gpu-session.sh || exit 1
fi
for t in $TOOLKITS; do
  [ -d "$PARTS/s${t/./}" ] || continue
  export LD_LIBRARY_PATH=$PARTS/s${t/./}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}  # libbenchmark.so.1debian
done
# One CUPTI for every build (the static ones find none by themselves): what it costs, if anything,
# falls on each toolkit alike. A row whose label says "kernels not named" shows where it did not.
cupti=$(sed -n "s/^CUDA_cupti_LIBRARY:FILEPATH=//p" build/cuda-13.0/CMakeCache.txt 2>/dev/null)
[ -n "$cupti" ] && [ -f "$cupti" ] && export CUBENCH_CUPTI=${CUBENCH_CUPTI:-$cupti}
echo "CUPTI: ${CUBENCH_CUPTI:-none found}"
nvidia-smi dmon -s pc -o T -f "$OUT/dmon-${PROCESS:-carry}.txt" >/dev/null 2>&1 &
dmon=$!
trap 'kill $dmon 2>/dev/null' EXIT

run() {  # name binary args...: one process into $OUT/name.json
  local name=$1 bin=$2 budget
  shift 2
  budget=$(left)
  if [ "$budget" -le 10 ]; then echo "$name: not run, deadline reached"; return; fi
  local t0=$(date +%s)
  timeout "$budget" "$bin" "$@" --benchmark_out="$OUT/$name.json" --benchmark_out_format=json \
    >"$OUT/$name.stdout.txt" 2>"$OUT/$name.stderr.txt"
  echo "$name: exit $?, $(( $(date +%s) - t0 )) s"
}

i=${PROCESS:?PROCESS=I (1, 2, ...) or CARRY=<part folder>}
read -r -a order <<<"$TOOLKITS"
[ "${AA:-0}" = 1 ] && order+=(13.0-aa)  # the A/A's second 13.0 process takes its turn too
n=${#order[@]}
for ((j = 0; j < n; ++j)); do
  t=${order[$(( (j + i - 1) % n ))]}
  bin=$(binary "${t%-aa}") || continue
  # shellcheck disable=SC2086  # FLAGS is a list of flags
  run "cuda-$t.process-$i" "$bin" --benchmark_filter="$FILTER" --cubench_kernels=on ${FLAGS:-}
  if [ -n "${FULL_FILTER:-}" ]; then
    # shellcheck disable=SC2086
    run "cuda-$t.full-$i" "$bin" --benchmark_filter="$FULL_FILTER" --cubench_suite=full \
      --cubench_kernels=on ${FLAGS:-}
  fi
  if [ "${PEAK:-0}" = 1 ] && [ "$t" = "${t%-aa}" ]; then
    run "cuda-$t.peak-$i" "$bin" --benchmark_filter='^gemm_peak/(bf16|fp8)/' \
      --cubench_suite=full --cubench_search_seconds="$SEARCH" --cubench_kernels=on
  fi
done
echo "total $(( $(date +%s) - start )) s"
