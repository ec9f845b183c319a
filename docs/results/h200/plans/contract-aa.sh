#!/usr/bin/env bash
# Issue "One contract": no measurement changes. The 81 rows of the passing A/A
# (docs/results/h200/processes/: GEMM fp32/tf32/fp16/bf16, sigmoid, gesvd/gesvdj 512-2048,
# launch) from two builds, processes as the unit, interleaved: the commit that resolved "Green on
# the H200" (db9d1ec, its sources carried to .carry/base by `git archive db9d1ec CMakeLists.txt
# CMakePresets.json cmake benchmarks fixtures kernels tests tools`) and this tree. Both built
# without LibTorch (the rows need none); five processes each, one repetition of every row, as
# aa-processes.sh ran them; the order within a pair alternates (base first in odd pairs).
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> docs/results/h200/plans/contract-aa.sh
set -uo pipefail
FILTER='^gemm/(fp32|tf32|fp16|bf16)/|^sigmoid/|^svd/(gesvd|gesvdj)/(fp32|fp64)/(512|1024|2048)/|^launch/'
PROCESSES=${PROCESSES:-5}
start=$(date +%s)
WITH_TORCH=0 SKIP_CTEST=1 BUILD_TARGET=cubench FILTER=none tools/gpu-session.sh || exit 1
root=/usr/local/cuda-13.0
(cd .carry/base && export CUBENCH_GIT_REVISION=db9d1ec && cmake --preset cuda-13.0 -DCUDAToolkit_ROOT=$root \
   >/tmp/base-configure.log 2>&1 && cmake --build --preset cuda-13.0 -j "$(nproc)" --target cubench \
   >/tmp/base-build.log 2>&1) || { tail -30 /tmp/base-configure.log /tmp/base-build.log; exit 1; }
echo "both built at $(( $(date +%s) - start )) s"
mkdir -p /tmp/aa
run() {  # name binary
  "$2" --benchmark_filter="$FILTER" --benchmark_repetitions=1 --benchmark_min_time=0.05 \
    --benchmark_out="/tmp/aa/$1.json" --benchmark_out_format=json >"/tmp/aa/$1.txt" 2>&1
  echo "$1 exit $? at $(( $(date +%s) - start )) s, $(grep -c '"run_type": "iteration"' /tmp/aa/$1.json) rows"
}
for i in $(seq 1 "$PROCESSES"); do
  if [ $((i % 2)) = 1 ]; then
    run base.process-$i .carry/base/build/cuda-13.0/cubench; run contract.process-$i build/cuda-13.0/cubench
  else
    run contract.process-$i build/cuda-13.0/cubench; run base.process-$i .carry/base/build/cuda-13.0/cubench
  fi
done
grep -h "ERROR\|error_message" /tmp/aa/*.txt | sort -u | head
(cd /tmp/aa && tar czf "$OUT/aa.tgz" ./*.json)
echo "total $(( $(date +%s) - start )) s"
