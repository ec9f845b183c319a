# LibTorch's CUDA path is compiled against the API levels torch_compat.h claims for it
# (CUBENCH_TORCH_CUDA_API_LEVELS: 2.6, Debian 13's, in the compile check; 2.11, the GPU machine's):
# a build with a CUDA LibTorch (VERSION, its Torch_VERSION) must be one of them, so each claimed
# level is the one a build compiles against, and a LibTorch the header makes no claim for is
# noticed (claim it there, with what its compat branches need, or build against a claimed one).
cmake_minimum_required(VERSION 3.25)  # if(IN_LIST)
file(STRINGS "${HEADER}" claim REGEX "^#define CUBENCH_TORCH_CUDA_API_LEVELS ")
if(NOT claim MATCHES "\"([0-9. ]+)\"")
  message(FATAL_ERROR "no CUBENCH_TORCH_CUDA_API_LEVELS \"<major.minor> ...\" in ${HEADER}")
endif()
set(claimed "${CMAKE_MATCH_1}")
string(REPLACE " " ";" levels "${claimed}")
string(REGEX MATCH "^[0-9]+\\.[0-9]+" level "${VERSION}")
if(NOT level IN_LIST levels)
  message(FATAL_ERROR "this build's CUDA LibTorch is ${VERSION}; torch_compat.h claims the CUDA "
                      "path for ${claimed} only")
endif()
message(STATUS "CUDA LibTorch ${VERSION}: level ${level}, one of those claimed (${claimed})")
