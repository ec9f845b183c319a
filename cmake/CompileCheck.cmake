# The compile check (CUBENCH_COMPILE_ONLY=ON, docs/setup.md): every translation unit the GPU
# machine's build compiles (its cuda-13.0 preset with a CUDA LibTorch), compiled on a machine
# without a GPU, against Debian 13's LibTorch 2.6 with CUDA (libtorch-cuda-dev, built with CUDA
# 12.4: the cuda-12.4 toolkit tools/install-deps unpacks) and Google Benchmark 1.9.1, which has 1.8's
# API (Debian 12 has 1.7.1): LibTorch's CUDA path and benchmark_compat.h's 1.8 branch. Nothing is
# linked: trixie's libraries need glibc 2.38 and libstdc++ 13 (Debian 12 has glibc 2.36 and g++ 12),
# and LibTorch's (481 MB) are not even fetched, only its headers (tools/install-deps
# --compile-check). The build's one target, cubench_objects (in `all`), is every object of every
# target; the targets themselves (archives, executables) are left out of `all`.

# Configured from preset cuda-12.4 in a folder of its own (not a preset of its own: tools/run-matrix
# takes every configure preset for a toolkit to build and run):
#   cmake --preset cuda-12.4 -B build/compile-check -DCUBENCH_COMPILE_ONLY=ON \
#         -DCUBENCH_WITH_TORCH=ON -DCMAKE_CUDA_ARCHITECTURES=90
#   cmake --build build/compile-check
# (one architecture, the GPU machine's: every architecture's device code is the cuda-12.4 build's.)
option(CUBENCH_COMPILE_ONLY "Compile every object, link nothing (the compile check)" OFF)
set(CUBENCH_TORCH_CUDA_ROOT "" CACHE PATH
    "Compile only: LibTorch headers with CUDA (tools/install-deps --compile-check; default /opt/libtorch-cuda-2.6-debian)")
set(CUBENCH_BENCHMARK_ROOT "" CACHE PATH
    "A Google Benchmark prefix to build against instead of the system's (compile-check: /opt/benchmark-1.9-debian)")

# The glibc this machine has ("2.36"), for the one line that says why nothing links.
function(cubench_glibc_version out)
  execute_process(COMMAND getconf GNU_LIBC_VERSION OUTPUT_VARIABLE v ERROR_QUIET
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  string(REPLACE "glibc " "" v "${v}")
  set(${out} "${v}" PARENT_SCOPE)
endfunction()

# Google Benchmark from CUBENCH_BENCHMARK_ROOT (its own CMake config, relocatable: Debian's
# benchmarkTargets.cmake names files relative to itself), else the system's. Before project()'s
# find_package(benchmark) would take Debian 12's 1.7.1.
macro(cubench_find_benchmark)
  if(CUBENCH_COMPILE_ONLY AND NOT CUBENCH_BENCHMARK_ROOT)
    if(DEFINED ENV{CUBENCH_BENCHMARK_ROOT} AND NOT "$ENV{CUBENCH_BENCHMARK_ROOT}" STREQUAL "")
      set(CUBENCH_BENCHMARK_ROOT "$ENV{CUBENCH_BENCHMARK_ROOT}" CACHE PATH "" FORCE)  # install-deps'
    else()
      set(CUBENCH_BENCHMARK_ROOT /opt/benchmark-1.9-debian CACHE PATH "" FORCE)
    endif()
  endif()
  if(CUBENCH_BENCHMARK_ROOT)
    find_package(benchmark PATHS "${CUBENCH_BENCHMARK_ROOT}" NO_DEFAULT_PATH)
    if(NOT benchmark_FOUND)
      message(FATAL_ERROR "cubench: no Google Benchmark in CUBENCH_BENCHMARK_ROOT="
                          "${CUBENCH_BENCHMARK_ROOT} (tools/install-deps --compile-check unpacks "
                          "Debian 13's 1.9.1 into /opt/benchmark-1.9-debian)")
    endif()
    message(STATUS "cubench: Google Benchmark ${benchmark_VERSION} from ${CUBENCH_BENCHMARK_ROOT}")
  else()
    find_package(benchmark REQUIRED)
  endif()
endmacro()

# LibTorch with CUDA from its headers alone (CUBENCH_TORCH_CUDA_ROOT/include), for the compile
# check. Debian's TorchConfig.cmake is not used: its find_library calls look in
# <prefix>/lib, not in Debian's lib/x86_64-linux-gnu, and then take the system's LibTorch (Debian
# 12's 1.13 libtorch.so beside 2.6's headers: tried); and its Caffe2 targets refuse to load without
# the 481 MB of libraries, which do not link here anyway. What TorchConfig would add for a
# compile is set here: the two include folders, its TORCH_CXX_FLAGS (-D_GLIBCXX_USE_CXX11_ABI=1)
# and the definitions its torch_cpu and torch_cuda targets carry (Caffe2Targets.cmake). The CUDA
# headers are the toolkit's (cubench_harness links CUDA::cudart). Sets what
# cubench_optional_package would: CUBENCH_HAVE_TORCH, Torch_VERSION, TORCH_LIBRARIES, and
# CUBENCH_TORCH_CUDA.
macro(cubench_torch_headers_only)
  if(NOT CUBENCH_TORCH_CUDA_ROOT)
    if(DEFINED ENV{CUBENCH_TORCH_CUDA_ROOT} AND NOT "$ENV{CUBENCH_TORCH_CUDA_ROOT}" STREQUAL "")
      set(CUBENCH_TORCH_CUDA_ROOT "$ENV{CUBENCH_TORCH_CUDA_ROOT}" CACHE PATH "" FORCE)  # install-deps'
    else()
      set(CUBENCH_TORCH_CUDA_ROOT /opt/libtorch-cuda-2.6-debian CACHE PATH "" FORCE)
    endif()
  endif()
  set(_cubench_tv "${CUBENCH_TORCH_CUDA_ROOT}/include/torch/csrc/api/include/torch/version.h")
  if(NOT EXISTS "${_cubench_tv}" OR NOT EXISTS "${CUBENCH_TORCH_CUDA_ROOT}/include/c10/cuda/CUDAStream.h")
    message(FATAL_ERROR "cubench: no LibTorch headers with CUDA at CUBENCH_TORCH_CUDA_ROOT="
                        "${CUBENCH_TORCH_CUDA_ROOT} (tools/install-deps --compile-check unpacks "
                        "Debian 13's libtorch-cuda-dev 2.6 into /opt/libtorch-cuda-2.6-debian)")
  endif()
  file(STRINGS "${_cubench_tv}" _cubench_tv REGEX "#define TORCH_VERSION_(MAJOR|MINOR|PATCH) ")
  string(REGEX REPLACE ".*MAJOR ([0-9]+).*MINOR ([0-9]+).*PATCH ([0-9]+).*" "\\1.\\2.\\3"
         Torch_VERSION "${_cubench_tv}")
  if(NOT TARGET cubench::torch_headers)
    add_library(cubench::torch_headers INTERFACE IMPORTED)
    set_target_properties(cubench::torch_headers PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES
        "${CUBENCH_TORCH_CUDA_ROOT}/include;${CUBENCH_TORCH_CUDA_ROOT}/include/torch/csrc/api/include"
      INTERFACE_COMPILE_DEFINITIONS
        "_GLIBCXX_USE_CXX11_ABI=1;USE_DISTRIBUTED;USE_C10D_GLOO;USE_RPC;USE_TENSORPIPE;USE_C10D_NCCL")
  endif()
  set(TORCH_LIBRARIES cubench::torch_headers)
  set(CUBENCH_HAVE_TORCH ON)
  set(CUBENCH_TORCH_CUDA ON)
  unset(_cubench_tv)
endmacro()

# The one line: what this build is, and why nothing links.
function(cubench_say_compile_only)
  cubench_glibc_version(libc)
  set(what "Google Benchmark ${benchmark_VERSION}")
  if(CUBENCH_HAVE_TORCH)
    string(PREPEND what "LibTorch ${Torch_VERSION} with CUDA (headers from ${CUBENCH_TORCH_CUDA_ROOT}), ")
  endif()
  message(STATUS "cubench: compile only: every object is compiled, nothing linked (cmake --build: "
                 "target cubench_objects) against ${what}: Debian 13's libraries need glibc 2.38 "
                 "and libstdc++ 13, this system has glibc ${libc}")
endfunction()

# Every target of this directory and those below it.
function(cubench_targets_below dir out)
  get_property(found DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    cubench_targets_below("${sub}" more)
    list(APPEND found ${more})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# cubench_objects: every object of every compiled target (a target's $<TARGET_OBJECTS> builds its
# compile steps alone, with what they wait on: generated headers), in `all`; the targets
# themselves (archives, executables, their device links and POST_BUILD steps) out of it.
function(cubench_add_objects_target)
  cubench_targets_below("${PROJECT_SOURCE_DIR}" targets)
  set(objects "")
  set(count 0)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY)$")
      set_property(TARGET ${target} PROPERTY EXCLUDE_FROM_ALL TRUE)
      list(APPEND objects "$<TARGET_OBJECTS:${target}>")
      math(EXPR count "${count} + 1")
    endif()
  endforeach()
  add_custom_target(cubench_objects ALL DEPENDS ${objects}
    COMMENT "cubench: every object of ${count} targets compiled (compile only: nothing linked)")
endfunction()
