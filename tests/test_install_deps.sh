#!/usr/bin/env bash
# ctest: tools/install-deps never installs a driver library (nor anything but cudnn-frontend's
# headers from trixie without --cuda-12.4). It checks what the script WOULD
# install on a fresh Debian 12 (apt's plan against an empty dpkg status, with main, contrib and
# non-free visible), not what this machine holds: for the default set and every option, apt's plan
# and the download lists of the Debian toolkits (11.8 from bookworm, 12.4 from trixie) must be
# non-empty, hold the packages the option is for, and hold no libcuda*/libnvidia-* package.
# Controls show the check can fail: Debian's nvidia-cuda-toolkit through apt's resolver pulls
# libcuda1, and libcuda1 added to a toolkit's download list: the script must refuse both.
# CUBENCH_CUDA118_ROOT or CUBENCH_CUDA124_ROOT naming a folder the script did not make is refused,
# and left as it was; so are the two naming the same folder (or one inside the other), and
# CUBENCH_CUDNN_FRONTEND_ROOT naming a toolkit's. --compile-check (and --all) also unpacks trixie's
# libtorch-cuda-dev (LibTorch 2.6's headers, never its libraries) and libbenchmark-dev 1.9.1, each
# into a folder of its own (CUBENCH_TORCH_CUDA_ROOT, CUBENCH_BENCHMARK_ROOT: the same rules), and
# implies --cuda-12.4.
# Exit 0 passed, 1 failed, 77 skipped (no apt, or Debian's archive out of reach), saying why.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
script=$here/../tools/install-deps
skip() { echo "SKIP: $*"; exit 77; }
bad() { echo "FAIL: $*" | tee -a "$tmp/failures"; }

command -v apt-get >/dev/null 2>&1 && command -v dpkg >/dev/null 2>&1 ||
  skip "no apt-get/dpkg here: install-deps is for Debian"
[ -r /usr/share/keyrings/debian-archive-keyring.gpg ] || skip "no Debian archive keyring here"

tmp=$(mktemp -d) && chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/failures"
# The package lists install-deps keeps (CI's run just refreshed them); else fetch them once (a few
# MB, seconds) into a folder of this test's own, which the dry runs below then read.
state=${CUBENCH_APT_STATE:-/var/lib/cubench/apt}
if ! ls "$state"/bookworm/lists/*_Packages* >/dev/null 2>&1; then
  state=$tmp/state
  out=$(CUBENCH_APT_STATE=$state CUBENCH_APT_STATE_WRITABLE=1 "$script" --dry-run --from-scratch 2>&1)
  if grep -q "apt-get update of .* failed" <<<"$out"; then
    echo "$out" | tail -5; skip "cannot fetch Debian 12's package lists (no network to the archive?)"
  fi
fi
# Trixie's lists (--cuda-12.4) likewise, beside bookworm's where those are not this test's own.
if ! ls "$state"/trixie/lists/*_Packages* >/dev/null 2>&1; then
  if [ "$state" != "$tmp/state" ]; then mkdir -p "$tmp/state" && ln -s "$state/bookworm" "$tmp/state/bookworm"; fi
  state=$tmp/state
  out=$(CUBENCH_APT_STATE=$state CUBENCH_APT_STATE_WRITABLE=1 "$script" --dry-run --from-scratch --cuda-12.4 2>&1)
  if grep -q "apt-get update of .* failed" <<<"$out"; then
    echo "$out" | tail -5; skip "cannot fetch Debian 13's package lists (no network to the archive?)"
  fi
fi
export CUBENCH_APT_STATE=$state

# CUBENCH_CUDA118_ROOT and CUBENCH_CUDA124_ROOT: a folder install-deps did not make (no
# .cubench-debian-packages), a file, a relative path or / is refused, one line and exit 2, before
# anything is planned, and is left as it was; a trailing slash or .. is normalised away (checked
# below, with the plans).
mkdir -p "$tmp/not-ours" "$tmp/ours" && echo keep >"$tmp/not-ours/keep" && echo keep >"$tmp/a-file"
: >"$tmp/ours/.cubench-debian-packages"
# refused WHAT ENV...: install-deps --dry-run --cuda-11.8 --cuda-12.4 (or REFUSED_FLAGS) under ENV must say one line
# (matching the refusal) and exit 2.
refused() {
  local what=$1 rc=0; shift
  # shellcheck disable=SC2086  # REFUSED_FLAGS: the options whose folders are planned (default the toolkits')
  env "$@" "$script" --dry-run ${REFUSED_FLAGS:---cuda-11.8 --cuda-12.4} >"$tmp/root.out" 2>"$tmp/root.err" || rc=$?
  if [ "$rc" != 2 ] || [ "$(wc -l <"$tmp/root.err")" != 1 ] || [ -s "$tmp/root.out" ] ||
     ! grep -qE "refusing to replace|not an absolute path|names /|overlap" "$tmp/root.err"; then
    bad "$what: want one line of refusal and exit 2, got exit $rc: $(cat "$tmp/root.out" "$tmp/root.err")"
  fi
}
for var in CUBENCH_CUDA118_ROOT CUBENCH_CUDA124_ROOT; do
  for root in "$tmp/not-ours" "$tmp/not-ours/" "$tmp/ours/../not-ours" "$tmp/a-file" not-ours /; do
    refused "$var=$root" "$var=$root"
  done
done
refused "the same folder for both" CUBENCH_CUDA118_ROOT="$tmp/ours" CUBENCH_CUDA124_ROOT="$tmp/ours/"
refused "12.4 inside 11.8" CUBENCH_CUDA118_ROOT="$tmp/new" CUBENCH_CUDA124_ROOT="$tmp/new/12.4"
refused "11.8 inside 12.4" CUBENCH_CUDA118_ROOT="$tmp/ours/11.8" CUBENCH_CUDA124_ROOT="$tmp/ours"
refused "cudnn-frontend in 11.8's folder" CUBENCH_CUDA118_ROOT="$tmp/ours" CUBENCH_CUDNN_FRONTEND_ROOT="$tmp/ours/"
refused "12.4 inside cudnn-frontend's folder" CUBENCH_CUDA124_ROOT="$tmp/new/12.4" CUBENCH_CUDNN_FRONTEND_ROOT="$tmp/new"
# --compile-check's two folders: the same rules, and neither in another's folder.
refused_check() { REFUSED_FLAGS="--compile-check" refused "$@"; }
for var in CUBENCH_TORCH_CUDA_ROOT CUBENCH_BENCHMARK_ROOT; do
  for root in "$tmp/not-ours" "$tmp/a-file" not-ours /; do
    refused_check "$var=$root" "$var=$root"
  done
done
refused_check "LibTorch and Google Benchmark in one folder" CUBENCH_TORCH_CUDA_ROOT="$tmp/ours" CUBENCH_BENCHMARK_ROOT="$tmp/ours/"
refused_check "Google Benchmark inside 12.4's folder" CUBENCH_CUDA124_ROOT="$tmp/new" CUBENCH_BENCHMARK_ROOT="$tmp/new/gbench"
refused_check "LibTorch around cudnn-frontend's folder" CUBENCH_TORCH_CUDA_ROOT="$tmp/new" CUBENCH_CUDNN_FRONTEND_ROOT="$tmp/new/fe"
[ "$(cat "$tmp/not-ours/keep" "$tmp/a-file")" = "keep
keep" ] || bad "a refused CUBENCH_CUDA118_ROOT or CUBENCH_CUDA124_ROOT was changed"
echo "CUBENCH_CUDA118_ROOT, CUBENCH_CUDA124_ROOT, CUBENCH_TORCH_CUDA_ROOT, CUBENCH_BENCHMARK_ROOT: a folder not made by install-deps, a file, a relative path, / and overlapping folders refused"

# Searches read here-strings, not `echo | grep -q`: under pipefail grep's early exit can fail the
# echo with SIGPIPE (a plan of 500 names is written in several pieces), which read as "missing".

# Independent of the script's own pattern: any libcuda<digit|-|.>, libnvidia-*.
driver_re='^(libcuda([0-9.-]|$)|libnvidia-)'

# downloads LOG VERSION: the package names of that toolkit's download list in install-deps' LOG.
downloads() {
  sed -n "s/^install-deps: CUDA $2: would download [0-9]* packages\? ([0-9]* MB, [a-z]*) into [^:]*: *//p" "$1" |
    tr ' ' '\n' | sed 's/=.*//' | grep -v '^$'
}

# unpacked LOG WHAT: the package names of what's download list (libtorch-cuda, benchmark) in LOG.
unpacked() {
  sed -n "s/^install-deps: $2: would download [0-9]* packages\? ([0-9]* MB, trixie) into [^:]*: *//p" "$1" |
    tr ' ' '\n' | sed 's/=.*//' | grep -v '^$'
}

# check NAME EXPECTED_IN_PLAN EXPECTED_11.8_DOWNLOAD EXPECTED_12.4_DOWNLOAD FLAGS...
# (--compile-check, alone or in --all: also LibTorch 2.6's headers and Google Benchmark 1.9.1)
check() {
  local name=$1 want_plan=$2; local -A want_dl=([11.8]=$3 [12.4]=$4); shift 4
  local log=$tmp/$name.log rc=0
  "$script" --dry-run --from-scratch "$@" >"$log" 2>&1 || rc=$?
  if [ "$rc" != 0 ]; then bad "$name: install-deps $* exited $rc"; tail -5 "$log"; return; fi
  local plan dl
  plan=$(sed -n 's/^install-deps: apt would install [0-9]* packages\?: *//p' "$log" | tr ' ' '\n' | grep -v '^$')
  [ "$(echo "$plan" | grep -c .)" -gt 50 ] || bad "$name: apt's plan is (nearly) empty: not a from-scratch plan"
  local p v said=""
  for p in $want_plan; do grep -qx "$p" <<<"$plan" || bad "$name: $p missing from apt's plan"; done
  local drivers; drivers=$(echo "$plan" | grep -E "$driver_re")
  [ -z "$drivers" ] || bad "$name: driver libraries in apt's plan: $(echo $drivers)"
  for v in 11.8 12.4; do
    dl=$(downloads "$log" "$v")
    if [ -n "${want_dl[$v]}" ]; then
      [ -n "$dl" ] || bad "$name: no CUDA $v download list"
      for p in ${want_dl[$v]}; do grep -qx "$p" <<<"$dl" || bad "$name: $p missing from the CUDA $v download list"; done
      drivers=$(echo "$dl" | grep -E "$driver_re")
      [ -z "$drivers" ] || bad "$name: driver libraries in the CUDA $v download list: $(echo $drivers)"
      said+=", $(echo "$dl" | grep -c .) to download for CUDA $v"
    elif [ -n "$dl" ]; then
      bad "$name: downloads CUDA $v packages without --cuda-$v"
    fi
  done
  # cudnn-frontend's headers (trixie's libcudnn-frontend-dev), with every option.
  dl=$(sed -n "s/^install-deps: cudnn-frontend: would download [0-9]* packages\? ([0-9]* MB, trixie) into [^:]*: *//p" "$log" |
       tr ' ' '\n' | sed 's/=.*//' | grep -v '^$')
  [ "$dl" = libcudnn-frontend-dev ] || bad "$name: the cudnn-frontend download list is '$(echo $dl)', not libcudnn-frontend-dev"
  # --compile-check's: the headers package alone (no libtorch-cuda-2.6: it never links here), and
  # Google Benchmark's two.
  local torch_dl bench_dl want_torch="" want_bench=""
  torch_dl=$(unpacked "$log" libtorch-cuda); bench_dl=$(unpacked "$log" benchmark)
  case " $* " in *" --compile-check "*|*" --all "*)
    want_torch=libtorch-cuda-dev; want_bench="libbenchmark-dev libbenchmark1.9.1" ;; esac
  [ "$(echo $torch_dl)" = "$want_torch" ] || bad "$name: the libtorch-cuda download list is '$(echo $torch_dl)', not '$want_torch'"
  [ "$(echo $bench_dl)" = "$want_bench" ] || bad "$name: the benchmark download list is '$(echo $bench_dl)', not '$want_bench'"
  [ -z "$want_torch" ] || said+=", LibTorch 2.6's headers and Google Benchmark 1.9.1"
  echo "$name: $(echo "$plan" | grep -c .) packages planned from nothing$said, no driver library"
}

base="cmake ninja-build g++ git libbenchmark-dev libgtest-dev libbenchmark-tools python3-numpy python3-scipy python3-matplotlib nlohmann-json3-dev"
cuda118_dl="nvidia-cuda-toolkit nvidia-cuda-dev libcudart11.0 libcublas11 libcublaslt11 libcusolver11"
cuda124_dl="nvidia-cuda-toolkit nvidia-cuda-dev libcudart12 libcublas12 libcublaslt12 libcusolver11 libcusparse12 libnvjitlink12 libnccl-dev"
check default "$base" "" "" &
check cuda-11.8 "$base clang-14" "$cuda118_dl" "" --cuda-11.8 &
wait
check cuda-12.4 "$base" "" "$cuda124_dl" --cuda-12.4 &
check torch "$base libtorch-dev" "" "" --torch &
wait
check mpi "$base libopenmpi-dev openmpi-bin" "" "" --mpi &
check compile-check "$base" "" "$cuda124_dl" --compile-check &
check all "$base clang-14 libtorch-dev libopenmpi-dev openmpi-bin" "$cuda118_dl" "$cuda124_dl" --all &
wait

# A folder of install-deps' own, named with a trailing slash and a '..': accepted, and named plainly.
( for v in 11.8 12.4; do
    rc=0 var=CUBENCH_CUDA${v/./}_ROOT suite=bookworm
    [ "$v" = 11.8 ] || suite=trixie
    env "$var=$tmp/not-ours/../ours/" "$script" --dry-run --from-scratch --cuda-$v >"$tmp/ours.log" 2>&1 || rc=$?
    if [ "$rc" = 0 ] && grep -q "^install-deps: CUDA $v: would download [0-9]* packages\? ([0-9]* MB, $suite) into $tmp/ours: " "$tmp/ours.log"; then
      echo "$var=$tmp/not-ours/../ours/: accepted as $tmp/ours"
    else
      bad "$var=$tmp/not-ours/../ours/: exit $rc, not planned into $tmp/ours"; tail -3 "$tmp/ours.log"
    fi
  done ) &

# The controls: the route CI used to take (nvidia-cuda-toolkit through apt's resolver), and the
# driver's libcuda1 in each Debian toolkit's download list.
( for v in 11.8 12.4; do
    rc=0
    CUBENCH_TOOLKIT_DEBS_ADD=libcuda1 "$script" --dry-run --from-scratch --cuda-$v >"$tmp/control-$v.log" 2>&1 || rc=$?
    if [ "$rc" = 1 ] && grep -q "refusing: the CUDA $v download list holds driver libraries: libcuda1$" "$tmp/control-$v.log" &&
       grep -qx nvidia-cuda-toolkit <<<"$(downloads "$tmp/control-$v.log" "$v")"; then
      echo "control: libcuda1 in the CUDA $v download list: refused"
    else
      bad "control: install-deps did not refuse libcuda1 in the CUDA $v download list (exit $rc)"; tail -3 "$tmp/control-$v.log"
    fi
  done ) &
rc=0
CUBENCH_DEPS_ADD=nvidia-cuda-toolkit "$script" --dry-run --from-scratch >"$tmp/control.log" 2>&1 || rc=$?
wait
if [ "$rc" = 1 ] && grep -q "refusing: apt's plan holds driver libraries: .*libcuda1" "$tmp/control.log"; then
  echo "control: nvidia-cuda-toolkit through apt pulls$(sed -n "s/.*apt's plan holds driver libraries:\(.*\) -- nothing.*/\1/p" "$tmp/control.log"): refused"
else
  bad "control: install-deps did not refuse nvidia-cuda-toolkit's libcuda1 (exit $rc)"; tail -5 "$tmp/control.log"
fi
[ -s "$tmp/failures" ] && exit 1
echo "PASS: no driver library planned or downloaded, for the default and every option (both Debian toolkits)"
