#!/usr/bin/env bash
# ctest build.one_toolkit: a build takes its CUDA from one toolkit. The toolkit's own libraries that
# cubench links (cudart, cuBLAS, cuBLASLt, cuSOLVER) resolve inside the build's toolkit folder (ldd,
# which follows the binaries' RPATH and the libraries' own needs); no library at all comes from
# another toolkit's folder (13.0's NCCL or cuDNN for an 11.8 or 12.4 build); other CUDA libraries
# may lie outside every toolkit folder (the system's NCCL and cuDNN, the CUDA libraries LibTorch's
# python wheel brings, as on the GPU machine, which the check lists but accepts); no include path
# of compile_commands.json lies in another toolkit's folder. With --static: no CUDA library is
# loaded at all. A toolkit folder holds bin/nvcc and include/cuda_runtime.h
# (cmake/CudaToolkitOf.cmake). A control shows the check can fail: taking a made-up toolkit folder
# for the build's, the same binaries must fail it.
#   check_one_toolkit.sh [--static] NVCC COMPILE_COMMANDS BINARY...
# Exit 0 passed, 1 failed, 2 bad usage, 77 skipped (no ldd).
set -uo pipefail
me=build.one_toolkit
static=0
if [ "${1:-}" = --static ]; then static=1; shift; fi
if [ $# -lt 3 ]; then echo "$me: usage: check_one_toolkit.sh [--static] NVCC COMPILE_COMMANDS BINARY..." >&2; exit 2; fi
nvcc=$1 commands=$2; shift 2
command -v ldd >/dev/null 2>&1 || { echo "SKIP: no ldd here"; exit 77; }
[ -x "$nvcc" ] || { echo "$me: no nvcc at $nvcc" >&2; exit 2; }
[ -r "$commands" ] || { echo "$me: cannot read $commands" >&2; exit 2; }
for b in "$@"; do [ -x "$b" ] || { echo "$me: no binary $b" >&2; exit 2; }; done

# toolkit_of PATH: sets tk to the toolkit folder PATH lies in (resolved), or to nothing. Folders'
# answers are remembered: the binaries load the same few folders' libraries.
declare -A known
toolkit_of() {
  local start=${1%/*} d=${1%/*}
  tk=""
  [ "${1#/}" != "$1" ] || return 0  # a relative path (an include path in the build tree)
  if [ -n "${known[$start]+x}" ]; then tk=${known[$start]}; return; fi
  while [ -n "$d" ]; do
    if [ -e "$d/bin/nvcc" ] && [ -e "$d/include/cuda_runtime.h" ]; then tk=$(realpath "$d"); break; fi
    d=${d%/*}
  done
  known[$start]=$tk
}
# CUDA's libraries (and the driver's, were one linked): libcudart, libcublas, libnvJitLink, ...
cuda_re='^lib(cuda|cublas|cusolver|cusparse|cufft|curand|cudnn|cupti|cufile|npp|nv|nccl)'
# The toolkit's libraries cubench links itself: these must be the build's toolkit's.
core_re='^lib(cudart|cublas|cublasLt|cusolver)\.so'

# check ROOT: the failures (one a line) of the binaries and include paths against toolkit ROOT;
# sets ncuda (CUDA libraries seen) and nincludes.
check() {
  local root=$1 b name arrow path rest where
  ncuda=0 nincludes=0
  for b in "${binaries[@]}"; do
    while read -r name arrow path rest; do
      [ "$arrow" = "=>" ] || continue
      if [ "$path" = not ]; then
        [[ "$name" =~ $cuda_re ]] && echo "$(basename "$b"): $name not found"
        continue
      fi
      toolkit_of "$path"; where=$tk
      if [[ "$name" =~ $cuda_re ]]; then
        ncuda=$((ncuda + 1))
        if [ "$static" = 1 ]; then
          echo "$(basename "$b"): $name => $path (a static build loads no CUDA library)"
        elif [ "$where" = "$root" ]; then
          :
        elif [ -n "$where" ] || [[ "$name" =~ $core_re ]]; then
          echo "$(basename "$b"): $name => $path, not in $root"
        else
          echo "$(basename "$b"): $name => $path" >>"$tmp/outside"
        fi
      elif [ -n "$where" ] && [ "$where" != "$root" ]; then
        echo "$(basename "$b"): $name => $path, in the toolkit at $where"
      fi
    done < <(ldd "$b" 2>/dev/null)
  done
  while read -r path; do
    nincludes=$((nincludes + 1))
    toolkit_of "$path/x"; where=$tk
    [ -z "$where" ] || [ "$where" = "$root" ] || echo "include path $path: in the toolkit at $where"
  done < <(grep -oE -- '-(I|isystem) ?[^ "\\]+' "$commands" | sed -E 's/^-(I|isystem) ?//' | sort -u)
}

binaries=("$@")
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
toolkit_of "$(realpath -m "$(dirname "$nvcc")")/nvcc"; root=$tk
[ -n "$root" ] || { echo "$me: $nvcc is in no toolkit folder (bin/nvcc beside include/cuda_runtime.h)" >&2; exit 2; }
check "$root" >"$tmp/failures"
if [ "$static" = 0 ] && [ "$ncuda" = 0 ]; then echo "no CUDA library loaded at all: a shared build loads cudart" >>"$tmp/failures"; fi
if [ -s "$tmp/failures" ]; then
  echo "FAIL: the build's toolkit is $root:"; sort -u "$tmp/failures" | head -40; exit 1
fi
if [ "$static" = 1 ]; then
  echo "no CUDA library loaded by ${#binaries[@]} binaries (static); $nincludes include paths, none in another toolkit"
else
  outside=$(sort -u "$tmp/outside" 2>/dev/null | grep -c .)
  echo "$ncuda CUDA libraries loaded by ${#binaries[@]} binaries: cubench's own from $root, none from another toolkit ($outside outside every toolkit folder); $nincludes include paths, none in another toolkit"
  [ "$outside" = 0 ] || sort -u "$tmp/outside" | sed 's/^/  outside every toolkit: /' | head -20
fi

# The control: a made-up toolkit folder taken for the build's must fail the same binaries.
mkdir -p "$tmp/fake/bin" "$tmp/fake/include" && : >"$tmp/fake/bin/nvcc" && : >"$tmp/fake/include/cuda_runtime.h"
control=$(check "$(realpath "$tmp/fake")" 2>/dev/null | grep -c .)
if [ "$static" = 0 ] && [ "$control" = 0 ]; then
  echo "FAIL: control: with $tmp/fake taken for the toolkit, the check found nothing wrong"; exit 1
fi
[ "$static" = 1 ] || echo "control: with a made-up toolkit folder taken for the build's, $control findings"
echo "PASS"
