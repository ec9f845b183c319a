# Which GPU architectures the build makes code for, chosen before project() enables CUDA (whose
# own default is one architecture, the compiler's, and whose code then fails on every other GPU):
# - -DCMAKE_CUDA_ARCHITECTURES (or the CUDAARCHS variable) given: that, as given;
# - a GPU that configure sees (nvidia-smi lists one) and that this nvcc can build for (7.5 up, and
#   in its --list-gpu-arch): `native`, code for that GPU alone, the fastest build for the machine
#   that runs it (a GPU newer than the toolkit, or one older than 7.5, gets the list below);
# - else: every architecture from 7.5 up that the toolkit's nvcc lists (--list-gpu-arch), as
#   machine code, and the newest also as PTX, which the driver compiles for a GPU newer than the
#   toolkit. 7.5 (Turing) is the oldest cubench supports; CUDA 13 lists nothing older.
# The choice is not cached: each configure chooses again (a GPU may have come or gone), unless the
# user gave one. It says what it chose and why in one line.

# The oldest architecture cubench builds for: compute capability 7.5.
set(CUBENCH_OLDEST_CUDA_ARCHITECTURE 75)

# The numbered architectures of `nvcc --list-gpu-arch` output (compute_75 ...), from 7.5 up, in
# ascending order. Arch-specific variants (compute_90a, compute_100f) are left out: their code
# runs on that one architecture only.
function(cubench_architectures_listed_by_nvcc listing out_var)
  string(REGEX MATCHALL "compute_[0-9]+[^0-9a-z]" found "${listing}\n")
  set(numbers "")
  foreach(item IN LISTS found)
    string(REGEX REPLACE "compute_([0-9]+).*" "\\1" number "${item}")
    if(number GREATER_EQUAL CUBENCH_OLDEST_CUDA_ARCHITECTURE)
      list(APPEND numbers "${number}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES numbers)
  list(SORT numbers COMPARE NATURAL)
  set(${out_var} "${numbers}" PARENT_SCOPE)
endfunction()

# The choice itself, from what the machine said (so a test can drive it without a GPU or nvcc):
#   nvcc_listing: `nvcc --list-gpu-arch`'s output; gpus: nvidia-smi's "name, compute_cap" lines
#   ("" where none). Sets <prefix>_ARCHITECTURES (CMAKE_CUDA_ARCHITECTURES' value), <prefix>_REAL
#   (the numbers machine code is expected for; "" for native until CMake has detected it),
#   <prefix>_PTX (the number PTX is expected for, or "") and <prefix>_WHY (the words).
function(cubench_choose_cuda_architectures nvcc_listing gpus prefix)
  string(STRIP "${gpus}" gpus)
  cubench_architectures_listed_by_nvcc("${nvcc_listing}" numbers)
  set(not_native "")
  if(gpus)
    string(REGEX REPLACE ", *([0-9.]+)" " (compute capability \\1)" seen "${gpus}")
    string(REPLACE "\n" ", " seen "${seen}")
    # native only where this nvcc can build for every GPU seen: else its code would not run there.
    string(REGEX MATCHALL ", *[0-9]+\\.[0-9]+" caps "${gpus}")
    foreach(cap IN LISTS caps)
      string(REGEX REPLACE "[^0-9]" "" number "${cap}")
      list(FIND numbers "${number}" at)  # (not IN_LIST: script mode runs without its policy)
      if(at EQUAL -1)
        list(JOIN numbers " " listed)
        set(not_native "configure sees ${seen}, which this nvcc cannot build for (it lists \
${listed}), so ")
      endif()
    endforeach()
    if(NOT not_native)
      set(${prefix}_ARCHITECTURES native PARENT_SCOPE)
      set(${prefix}_REAL "" PARENT_SCOPE)
      set(${prefix}_PTX "" PARENT_SCOPE)
      set(${prefix}_WHY "configure sees ${seen} (nvidia-smi): code for that GPU alone" PARENT_SCOPE)
      return()
    endif()
  endif()
  if(NOT numbers)
    set(${prefix}_ARCHITECTURES "" PARENT_SCOPE)
    set(${prefix}_WHY "nvcc --list-gpu-arch names no architecture from 7.5 up" PARENT_SCOPE)
    return()
  endif()
  list(GET numbers -1 newest)
  set(architectures "")
  foreach(number IN LISTS numbers)
    if(number STREQUAL newest)
      list(APPEND architectures "${number}")  # machine code and PTX
    else()
      list(APPEND architectures "${number}-real")
    endif()
  endforeach()
  set(${prefix}_ARCHITECTURES "${architectures}" PARENT_SCOPE)
  set(${prefix}_REAL "${numbers}" PARENT_SCOPE)
  set(${prefix}_PTX "${newest}" PARENT_SCOPE)
  if(not_native)
    set(why "${not_native}every architecture from 7.5 up that it lists")
  else()
    set(why "no GPU seen here (nvidia-smi), so every architecture from 7.5 up that this nvcc lists")
  endif()
  set(${prefix}_WHY "${why}, and PTX for ${newest}, which a newer GPU runs" PARENT_SCOPE)
endfunction()

# Sets CMAKE_CUDA_ARCHITECTURES (a normal variable, unless the user gave it) and
# CUBENCH_CUDA_ARCHITECTURES_WHY; CUBENCH_CUDA_REAL_ARCHITECTURES and CUBENCH_CUDA_PTX_ARCHITECTURE
# say what the binaries must hold (tests/check_cubins.cmake), filled in for native after project().
macro(cubench_set_cuda_architectures nvcc)
  if(DEFINED CMAKE_CUDA_ARCHITECTURES OR DEFINED ENV{CUDAARCHS})
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "$ENV{CUDAARCHS}")
      set(CUBENCH_CUDA_ARCHITECTURES_WHY "given in CUDAARCHS")
    else()
      set(CUBENCH_CUDA_ARCHITECTURES_WHY "given: -DCMAKE_CUDA_ARCHITECTURES")
    endif()
    set(CUBENCH_CUDA_REAL_ARCHITECTURES "")
    set(CUBENCH_CUDA_PTX_ARCHITECTURE "")
    if(NOT CMAKE_CUDA_ARCHITECTURES MATCHES "^(native|all|all-major|OFF)$")
      foreach(_cubench_arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
        string(REGEX MATCH "^[0-9]+a?" _cubench_number "${_cubench_arch}")
        if(NOT _cubench_arch MATCHES "-virtual$")
          list(APPEND CUBENCH_CUDA_REAL_ARCHITECTURES "${_cubench_number}")
        endif()
        if(NOT _cubench_arch MATCHES "-real$")
          set(CUBENCH_CUDA_PTX_ARCHITECTURE "${_cubench_number}")
        endif()
      endforeach()
    endif()
    set(CMAKE_CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}")
  else()
    set(_cubench_gpus "")
    find_program(CUBENCH_NVIDIA_SMI nvidia-smi)
    if(CUBENCH_NVIDIA_SMI)
      execute_process(
        COMMAND "${CUBENCH_NVIDIA_SMI}" --query-gpu=name,compute_cap --format=csv,noheader
        OUTPUT_VARIABLE _cubench_gpus ERROR_QUIET RESULT_VARIABLE _cubench_smi_failed
        TIMEOUT 20)
      if(_cubench_smi_failed)
        set(_cubench_gpus "")
      endif()
    endif()
    execute_process(COMMAND "${nvcc}" --list-gpu-arch OUTPUT_VARIABLE _cubench_listing
                    ERROR_VARIABLE _cubench_listing_error RESULT_VARIABLE _cubench_nvcc_failed)
    if(_cubench_nvcc_failed)
      message(FATAL_ERROR "cubench: `${nvcc} --list-gpu-arch` failed (${_cubench_listing_error}); "
                          "name the architectures with -DCMAKE_CUDA_ARCHITECTURES")
    endif()
    cubench_choose_cuda_architectures("${_cubench_listing}" "${_cubench_gpus}" _cubench_chosen)
    if(NOT _cubench_chosen_ARCHITECTURES)
      message(FATAL_ERROR "cubench: ${_cubench_chosen_WHY}; name the architectures with "
                          "-DCMAKE_CUDA_ARCHITECTURES")
    endif()
    set(CMAKE_CUDA_ARCHITECTURES "${_cubench_chosen_ARCHITECTURES}")
    set(CUBENCH_CUDA_ARCHITECTURES_WHY "${_cubench_chosen_WHY}")
    set(CUBENCH_CUDA_REAL_ARCHITECTURES "${_cubench_chosen_REAL}")
    set(CUBENCH_CUDA_PTX_ARCHITECTURE "${_cubench_chosen_PTX}")
  endif()
endmacro()

# After project(): native's architectures as CMake detected them (CMAKE_CUDA_ARCHITECTURES_NATIVE,
# "90-real"), and the one line.
macro(cubench_say_cuda_architectures)
  if(CMAKE_CUDA_ARCHITECTURES STREQUAL "native" AND DEFINED CMAKE_CUDA_ARCHITECTURES_NATIVE)
    set(CUBENCH_CUDA_REAL_ARCHITECTURES "")
    foreach(_cubench_arch IN LISTS CMAKE_CUDA_ARCHITECTURES_NATIVE)
      string(REGEX MATCH "^[0-9]+a?" _cubench_number "${_cubench_arch}")
      list(APPEND CUBENCH_CUDA_REAL_ARCHITECTURES "${_cubench_number}")
    endforeach()
    list(REMOVE_DUPLICATES CUBENCH_CUDA_REAL_ARCHITECTURES)
    list(JOIN CUBENCH_CUDA_REAL_ARCHITECTURES " " _cubench_native)
    set(CUBENCH_CUDA_ARCHITECTURES_WHY "${CUBENCH_CUDA_ARCHITECTURES_WHY} (${_cubench_native})")
  endif()
  # What the run context says (build_info.h): native's resolved architectures too.
  set(CUBENCH_CUDA_ARCHITECTURES_BUILT "${CMAKE_CUDA_ARCHITECTURES}")
  if(CMAKE_CUDA_ARCHITECTURES STREQUAL "native" AND CUBENCH_CUDA_REAL_ARCHITECTURES)
    set(CUBENCH_CUDA_ARCHITECTURES_BUILT "native (${_cubench_native})")
  endif()
  message(STATUS "cubench: CUDA architectures ${CMAKE_CUDA_ARCHITECTURES}: "
                 "${CUBENCH_CUDA_ARCHITECTURES_WHY}; -DCMAKE_CUDA_ARCHITECTURES=... overrides")
endmacro()
