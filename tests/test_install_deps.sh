#!/usr/bin/env bash
# ctest: tools/install-deps never installs a driver library. It checks what the script WOULD
# install on a fresh Debian 12 (apt's plan against an empty dpkg status, with main, contrib and
# non-free visible), not what this machine holds: for the default set and every option, apt's plan
# and the CUDA 11.8 download list must be non-empty, hold the packages the option is for, and hold
# no libcuda*/libnvidia-* package. A control shows the check can fail: Debian's nvidia-cuda-toolkit
# through apt's resolver pulls libcuda1, and the script must refuse it.
# CUBENCH_CUDA118_ROOT naming a folder the script did not make is refused, and left as it was.
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
  if echo "$out" | grep -q "apt-get update of .* failed"; then
    echo "$out" | tail -5; skip "cannot fetch Debian 12's package lists (no network to the archive?)"
  fi
fi
export CUBENCH_APT_STATE=$state

# CUBENCH_CUDA118_ROOT: a folder install-deps did not make (no .cubench-debian-packages), a file,
# a relative path or / is refused, one line and exit 2, before anything is planned, and is left as
# it was; a trailing slash or .. is normalised away (checked below, with the plans).
mkdir -p "$tmp/not-ours" "$tmp/ours" && echo keep >"$tmp/not-ours/keep" && echo keep >"$tmp/a-file"
: >"$tmp/ours/.cubench-debian-packages"
for root in "$tmp/not-ours" "$tmp/not-ours/" "$tmp/ours/../not-ours" "$tmp/a-file" not-ours /; do
  rc=0
  CUBENCH_CUDA118_ROOT=$root "$script" --dry-run --cuda-11.8 >"$tmp/root.out" 2>"$tmp/root.err" || rc=$?
  if [ "$rc" != 2 ] || [ "$(wc -l <"$tmp/root.err")" != 1 ] || [ -s "$tmp/root.out" ] ||
     ! grep -qE "refusing to replace|not an absolute path|names /" "$tmp/root.err"; then
    bad "CUBENCH_CUDA118_ROOT=$root: want one line of refusal and exit 2, got exit $rc: $(cat "$tmp/root.out" "$tmp/root.err")"
  fi
done
[ "$(cat "$tmp/not-ours/keep" "$tmp/a-file")" = "keep
keep" ] || bad "a refused CUBENCH_CUDA118_ROOT was changed"
echo "CUBENCH_CUDA118_ROOT: a folder not made by install-deps, a file, a relative path and / refused"

# Independent of the script's own pattern: any libcuda<digit|-|.>, libnvidia-*.
driver_re='^(libcuda([0-9.-]|$)|libnvidia-)'

# check NAME EXPECTED_IN_PLAN EXPECTED_IN_DOWNLOAD FLAGS...
check() {
  local name=$1 want_plan=$2 want_dl=$3; shift 3
  local log=$tmp/$name.log rc=0
  "$script" --dry-run --from-scratch "$@" >"$log" 2>&1 || rc=$?
  if [ "$rc" != 0 ]; then bad "$name: install-deps $* exited $rc"; tail -5 "$log"; return; fi
  local plan dl
  plan=$(sed -n 's/^install-deps: apt would install [0-9]* packages: *//p' "$log" | tr ' ' '\n' | grep -v '^$')
  [ "$(echo "$plan" | grep -c .)" -gt 50 ] || bad "$name: apt's plan is (nearly) empty: not a from-scratch plan"
  local p
  for p in $want_plan; do echo "$plan" | grep -qx "$p" || bad "$name: $p missing from apt's plan"; done
  local drivers; drivers=$(echo "$plan" | grep -E "$driver_re")
  [ -z "$drivers" ] || bad "$name: driver libraries in apt's plan: $(echo $drivers)"
  dl=$(sed -n 's/^install-deps: CUDA 11.8: would download [0-9]* packages ([0-9]* MB) into [^:]*: *//p' "$log" |
       tr ' ' '\n' | sed 's/=.*//' | grep -v '^$')
  if [ -n "$want_dl" ]; then
    for p in $want_dl; do echo "$dl" | grep -qx "$p" || bad "$name: $p missing from the CUDA 11.8 download list"; done
    drivers=$(echo "$dl" | grep -E "$driver_re")
    [ -z "$drivers" ] || bad "$name: driver libraries in the CUDA 11.8 download list: $(echo $drivers)"
  elif [ -n "$dl" ]; then
    bad "$name: downloads CUDA 11.8 packages without --cuda-11.8"
  fi
  echo "$name: $(echo "$plan" | grep -c .) packages planned from nothing$( [ -n "$dl" ] && echo ", $(echo "$dl" | grep -c .) to download for CUDA 11.8"), no driver library"
}

base="cmake ninja-build g++ git libbenchmark-dev libgtest-dev libbenchmark-tools python3-numpy python3-scipy python3-matplotlib"
cuda_dl="nvidia-cuda-toolkit nvidia-cuda-dev libcudart11.0 libcublas11 libcublaslt11 libcusolver11"
check default "$base" "" &
check cuda-11.8 "$base clang-14" "$cuda_dl" --cuda-11.8 &
wait
check torch "$base libtorch-dev" "" --torch &
check mpi "$base libopenmpi-dev openmpi-bin" "" --mpi &
wait
check all "$base clang-14 libtorch-dev libopenmpi-dev openmpi-bin" "$cuda_dl" --all &

# A folder of install-deps' own, named with a trailing slash and a '..': accepted, and named plainly.
( rc=0
  CUBENCH_CUDA118_ROOT=$tmp/not-ours/../ours/ "$script" --dry-run --from-scratch --cuda-11.8 >"$tmp/ours.log" 2>&1 || rc=$?
  if [ "$rc" = 0 ] && grep -q "^install-deps: CUDA 11.8: would download [0-9]* packages ([0-9]* MB) into $tmp/ours: " "$tmp/ours.log"; then
    echo "CUBENCH_CUDA118_ROOT=$tmp/not-ours/../ours/: accepted as $tmp/ours"
  else
    bad "CUBENCH_CUDA118_ROOT=$tmp/not-ours/../ours/: exit $rc, not planned into $tmp/ours"; tail -3 "$tmp/ours.log"
  fi ) &

# The control: the route CI used to take (nvidia-cuda-toolkit through apt's resolver).
rc=0
CUBENCH_DEPS_ADD=nvidia-cuda-toolkit "$script" --dry-run --from-scratch >"$tmp/control.log" 2>&1 || rc=$?
wait
if [ "$rc" = 1 ] && grep -q "refusing: apt's plan holds driver libraries: .*libcuda1" "$tmp/control.log"; then
  echo "control: nvidia-cuda-toolkit through apt pulls$(sed -n "s/.*apt's plan holds driver libraries:\(.*\) -- nothing.*/\1/p" "$tmp/control.log"): refused"
else
  bad "control: install-deps did not refuse nvidia-cuda-toolkit's libcuda1 (exit $rc)"; tail -5 "$tmp/control.log"
fi
[ -s "$tmp/failures" ] && exit 1
echo "PASS: no driver library planned or downloaded, for the default and every option"
