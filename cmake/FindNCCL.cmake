# Finds NCCL (header nccl.h, library libnccl). NCCL ships no CMake config, so this small module
# looks next to the CUDA toolkit first, then in the system folders (Debian, Ubuntu's libnccl-dev).
# Defines NCCL_FOUND, NCCL_VERSION and the imported target NCCL::nccl; where an NCCL was found but
# is not used, NCCL_NOT_USED says why in one line.
#
# Two checks before an NCCL is taken:
# - It must not lie in another CUDA toolkit's folder (CudaToolkitOf.cmake): an 11.8 or 12.4 build
#   must not take /usr/local/cuda-13.0's NCCL (NCCL_ROOT or CMAKE_PREFIX_PATH naming it, say).
# - A program calling ncclGetVersion must link: trixie's NCCL 2.22 (Debian 13, beside its CUDA
#   12.4) imports __isoc23_* functions of glibc 2.38, which Debian 12 (glibc 2.36) lacks.
include("${CMAKE_CURRENT_LIST_DIR}/CudaToolkitOf.cmake")

find_path(NCCL_INCLUDE_DIR nccl.h
  HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_INCLUDE_DIRS}
  PATH_SUFFIXES include)
find_library(NCCL_LIBRARY nccl
  HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_DIR}
  PATH_SUFFIXES lib lib64)
set(NCCL_VERSION "")
if(NCCL_INCLUDE_DIR AND EXISTS "${NCCL_INCLUDE_DIR}/nccl.h")
  file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" _nccl_ver REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) +[0-9]+")
  string(REGEX REPLACE ".*NCCL_MAJOR +([0-9]+).*" "\\1" _maj "${_nccl_ver}")
  string(REGEX REPLACE ".*NCCL_MINOR +([0-9]+).*" "\\1" _min "${_nccl_ver}")
  string(REGEX REPLACE ".*NCCL_PATCH +([0-9]+).*" "\\1" _pat "${_nccl_ver}")
  set(NCCL_VERSION "${_maj}.${_min}.${_pat}")
endif()

set(NCCL_NOT_USED "")
set(NCCL_USABLE FALSE)
if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
  set(NCCL_USABLE TRUE)
  # 1. Another toolkit's NCCL.
  cubench_in_other_toolkit(NCCL_NOT_USED "NCCL ${NCCL_VERSION}" "${NCCL_LIBRARY}" "${NCCL_INCLUDE_DIR}")
  if(NCCL_NOT_USED)
    set(NCCL_USABLE FALSE)
  endif()
  # 2. It links (checked once per library and header; the answer is cached).
  set(_nccl_key "${NCCL_LIBRARY};${NCCL_INCLUDE_DIR};${CUDAToolkit_LIBRARY_DIR}")
  if(NCCL_USABLE AND NOT "${_nccl_key}" STREQUAL "${CUBENCH_NCCL_LINK_CHECKED}")
    if(NOT NCCL_FIND_QUIETLY)
      message(CHECK_START "Checking that NCCL ${NCCL_VERSION} links")
    endif()
    try_compile(_nccl_links
      SOURCE_FROM_CONTENT nccl_links.cpp
        "#include <nccl.h>\nint main() { int v = 0; return ncclGetVersion(&v) == ncclSuccess ? 0 : 1; }\n"
      CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${NCCL_INCLUDE_DIR};${CUDAToolkit_INCLUDE_DIRS}"
      LINK_LIBRARIES "${NCCL_LIBRARY}" CUDA::cudart
      OUTPUT_VARIABLE _nccl_out)
    set(_nccl_why "")
    if(NOT _nccl_links)
      # Undefined symbols of a newer glibc: say which glibc and what this system has.
      string(REGEX MATCHALL "undefined reference to `[A-Za-z0-9_]+@GLIBC_[0-9.]+'" _nccl_undef "${_nccl_out}")
      if(_nccl_undef)
        set(_nccl_need "0")
        set(_nccl_syms "")
        foreach(_u IN LISTS _nccl_undef)
          string(REGEX MATCH "`([A-Za-z0-9_]+)@GLIBC_([0-9.]+)'" _u "${_u}")
          list(APPEND _nccl_syms "${CMAKE_MATCH_1}")
          if(CMAKE_MATCH_2 VERSION_GREATER _nccl_need)
            set(_nccl_need "${CMAKE_MATCH_2}")
          endif()
        endforeach()
        list(REMOVE_DUPLICATES _nccl_syms)
        list(LENGTH _nccl_syms _n)
        list(GET _nccl_syms 0 _first)
        execute_process(COMMAND getconf GNU_LIBC_VERSION OUTPUT_VARIABLE _nccl_libc
                        OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
        string(REPLACE "glibc " "" _nccl_libc "${_nccl_libc}")
        set(_nccl_why "it needs glibc ${_nccl_need} (${_n} functions such as ${_first}), this system has ${_nccl_libc}")
      else()
        # Else the first line that says what went wrong.
        string(REGEX MATCH "[^\n]*(undefined reference|error|cannot find)[^\n]*" _nccl_why "${_nccl_out}")
        string(STRIP "${_nccl_why}" _nccl_why)
      endif()
      set(_nccl_why "NCCL ${NCCL_VERSION} at ${NCCL_LIBRARY} does not link here: ${_nccl_why}")
    endif()
    set(CUBENCH_NCCL_LINK_CHECKED "${_nccl_key}" CACHE INTERNAL "")
    set(CUBENCH_NCCL_LINK_ERROR "${_nccl_why}" CACHE INTERNAL "")
    if(NOT NCCL_FIND_QUIETLY)
      if(_nccl_why)
        message(CHECK_FAIL "no")
      else()
        message(CHECK_PASS "yes")
      endif()
    endif()
  endif()
  # The compile check links nothing: an NCCL that does not link here (trixie's) still compiles
  # the all-reduce families.
  if(NCCL_USABLE AND CUBENCH_NCCL_LINK_ERROR AND CUBENCH_COMPILE_ONLY)
    message(STATUS "cubench: NCCL ${NCCL_VERSION} does not link here (${CUBENCH_NCCL_LINK_ERROR}): "
                   "taken for the compile check, which links nothing")
  elseif(NCCL_USABLE AND CUBENCH_NCCL_LINK_ERROR)
    set(NCCL_USABLE FALSE)
    set(NCCL_NOT_USED "${CUBENCH_NCCL_LINK_ERROR}")
  endif()
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(NCCL
  REQUIRED_VARS NCCL_LIBRARY NCCL_INCLUDE_DIR NCCL_USABLE
  VERSION_VAR NCCL_VERSION
  REASON_FAILURE_MESSAGE "${NCCL_NOT_USED}")
if(NCCL_FOUND AND NOT TARGET NCCL::nccl)
  add_library(NCCL::nccl UNKNOWN IMPORTED)
  set_target_properties(NCCL::nccl PROPERTIES
    IMPORTED_LOCATION "${NCCL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
endif()
mark_as_advanced(NCCL_INCLUDE_DIR NCCL_LIBRARY)
