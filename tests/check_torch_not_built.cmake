# What a build with LibTorch leaves out reaches its run context's not_built with why
# (cmake/TorchNotBuilt.cmake): a LibTorch without CUDA its GPU families, a CUDA LibTorch before 2.5
# torch/attention, a later one nothing; and the version that note names is the one
# torch_compat.h registers torch/attention from (CUBENCH_TORCH_SDPA_BACKENDS).
#   -DSOURCE_DIR=<repository root>
cmake_minimum_required(VERSION 3.25)
include("${SOURCE_DIR}/cmake/OptionalSources.cmake")
include("${SOURCE_DIR}/cmake/TorchNotBuilt.cmake")

set(failures "")
# version | CUDA | what the note must say ("" for no note)
foreach(entry "1.13.0|OFF|^torch=LibTorch 1.13.0 here is CPU only: its GPU families are not built$"
              "2.4.1|ON|^torch=LibTorch 2.4.1 cannot allow one scaled_dot_product_attention backend alone \\(2.5\\+\\): torch/attention is not built$"
              "2.0.0|ON|torch/attention is not built$"
              "2.5.0|ON" "2.6.0|ON" "2.11.0|ON")
  string(REPLACE "|" ";" entry "${entry}")
  list(GET entry 0 version)
  list(GET entry 1 cuda)
  list(LENGTH entry n)
  set(want "")
  if(n GREATER 2)
    list(GET entry 2 want)
  endif()
  set_property(GLOBAL PROPERTY CUBENCH_NOT_BUILT "")
  cubench_note_torch_not_built("${version}" ${cuda})
  get_property(noted GLOBAL PROPERTY CUBENCH_NOT_BUILT)
  if(want STREQUAL "" AND NOT noted STREQUAL "")
    list(APPEND failures "LibTorch ${version} (CUDA ${cuda}): noted '${noted}', expected nothing")
  elseif(NOT want STREQUAL "" AND NOT noted MATCHES "${want}")
    list(APPEND failures "LibTorch ${version} (CUDA ${cuda}): noted '${noted}', expected '${want}'")
  endif()
endforeach()

file(STRINGS "${SOURCE_DIR}/fixtures/libraries/torch/torch_compat.h" gate
     REGEX "TORCH_VERSION_MAJOR == [0-9]+ && TORCH_VERSION_MINOR >= [0-9]+")
if(NOT gate MATCHES "TORCH_VERSION_MAJOR == ([0-9]+) && TORCH_VERSION_MINOR >= ([0-9]+)")
  list(APPEND failures "no CUBENCH_TORCH_SDPA_BACKENDS version gate found in torch_compat.h")
elseif(NOT "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}" VERSION_EQUAL CUBENCH_TORCH_SDPA_BACKENDS_SINCE)
  string(CONCAT mismatch "torch_compat.h registers torch/attention from LibTorch "
                         "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}, TorchNotBuilt.cmake says it is not "
                         "built before ${CUBENCH_TORCH_SDPA_BACKENDS_SINCE}")
  list(APPEND failures "${mismatch}")
endif()

if(failures)
  string(REPLACE ";" "\n" failures "${failures}")
  message(FATAL_ERROR "${failures}")
endif()
