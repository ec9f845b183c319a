# Finds cuDNN 9 (header cudnn.h, library libcudnn) and cudnn-frontend (header only,
# cudnn_frontend.h, with the nlohmann/json.hpp it includes), which the cuDNN families are written
# against (files named *.cudnn.cpp: attention, convolution). cuDNN ships no CMake config.
# Looks in CUDNN_ROOT, then beside the build's CUDA toolkit, then the system folders; the frontend
# in CUDNN_FRONTEND_ROOT, $CUBENCH_CUDNN_FRONTEND_ROOT, then tools/install-deps' folder
# (/opt/cudnn-frontend-debian, Debian 13's libcudnn-frontend-dev), then the system folders.
# Defines CUDNN_FOUND, CUDNN_VERSION, CUDNN_FRONTEND_VERSION and the imported target CUDNN::cudnn
# (library, both include folders); where something was found but is not used, CUDNN_NOT_USED says
# why in one line.
#
# A cuDNN in another CUDA toolkit's folder is passed over (CudaToolkitOf.cmake): 13.0's cuDNN is
# built for CUDA 13, and an 11.8 or 12.4 build must not load it.
include("${CMAKE_CURRENT_LIST_DIR}/CudaToolkitOf.cmake")

find_path(CUDNN_INCLUDE_DIR cudnn_version.h
  HINTS ${CUDNN_ROOT} $ENV{CUDNN_ROOT} ${CUDAToolkit_INCLUDE_DIRS}
  PATH_SUFFIXES include)
# NAMES_PER_DIR: a folder's libcudnn.so.9 (pip wheels ship no libcudnn.so) before a later folder's
# libcudnn.so.
find_library(CUDNN_LIBRARY NAMES cudnn libcudnn.so.9 NAMES_PER_DIR
  HINTS ${CUDNN_ROOT} $ENV{CUDNN_ROOT} ${CUDAToolkit_LIBRARY_DIR}
  PATH_SUFFIXES lib lib64)
find_path(CUDNN_FRONTEND_INCLUDE_DIR cudnn_frontend.h
  HINTS ${CUDNN_FRONTEND_ROOT} $ENV{CUBENCH_CUDNN_FRONTEND_ROOT} /opt/cudnn-frontend-debian
  PATH_SUFFIXES include)
find_path(CUDNN_JSON_INCLUDE_DIR nlohmann/json.hpp
  HINTS ${CUDNN_FRONTEND_ROOT} $ENV{CUBENCH_CUDNN_FRONTEND_ROOT} /opt/cudnn-frontend-debian
  PATH_SUFFIXES include)

function(_cubench_header_version header names out)
  set(version "")
  if(EXISTS "${header}")
    foreach(name IN LISTS names)
      file(STRINGS "${header}" line REGEX "^#define ${name} +[0-9]+")
      string(REGEX REPLACE ".* ([0-9]+)$" "\\1" number "${line}")
      list(APPEND version "${number}")
    endforeach()
    list(JOIN version "." version)
  endif()
  set(${out} "${version}" PARENT_SCOPE)
endfunction()
_cubench_header_version("${CUDNN_INCLUDE_DIR}/cudnn_version.h"
                        "CUDNN_MAJOR;CUDNN_MINOR;CUDNN_PATCHLEVEL" CUDNN_VERSION)
_cubench_header_version("${CUDNN_FRONTEND_INCLUDE_DIR}/cudnn_frontend_version.h"
  "CUDNN_FRONTEND_MAJOR_VERSION;CUDNN_FRONTEND_MINOR_VERSION;CUDNN_FRONTEND_PATCH_VERSION"
  CUDNN_FRONTEND_VERSION)

set(CUDNN_NOT_USED "")
set(_cudnn_usable FALSE)
if(CUDNN_INCLUDE_DIR AND CUDNN_LIBRARY)
  set(_cudnn_usable TRUE)
  cubench_in_other_toolkit(CUDNN_NOT_USED "cuDNN ${CUDNN_VERSION}" "${CUDNN_LIBRARY}" "${CUDNN_INCLUDE_DIR}")
  if(CUDNN_NOT_USED)
    set(_cudnn_usable FALSE)
  endif()
  if(_cudnn_usable AND CUDNN_VERSION VERSION_LESS 9)
    set(_cudnn_usable FALSE)
    set(CUDNN_NOT_USED "cuDNN ${CUDNN_VERSION} at ${CUDNN_LIBRARY} is older than 9")
  endif()
  if(_cudnn_usable AND NOT (CUDNN_FRONTEND_INCLUDE_DIR AND CUDNN_JSON_INCLUDE_DIR))
    set(_cudnn_usable FALSE)
    string(CONCAT CUDNN_NOT_USED "cuDNN ${CUDNN_VERSION} found, but not cudnn-frontend and "
                  "nlohmann/json.hpp (tools/install-deps unpacks them; or set CUDNN_FRONTEND_ROOT)")
  endif()
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CUDNN
  REQUIRED_VARS CUDNN_LIBRARY CUDNN_INCLUDE_DIR CUDNN_FRONTEND_INCLUDE_DIR CUDNN_JSON_INCLUDE_DIR
                _cudnn_usable
  VERSION_VAR CUDNN_VERSION)
if(CUDNN_FOUND AND NOT TARGET CUDNN::cudnn)
  add_library(CUDNN::cudnn UNKNOWN IMPORTED)
  set_target_properties(CUDNN::cudnn PROPERTIES
    IMPORTED_LOCATION "${CUDNN_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES
      "${CUDNN_INCLUDE_DIR};${CUDNN_FRONTEND_INCLUDE_DIR};${CUDNN_JSON_INCLUDE_DIR}")
endif()
mark_as_advanced(CUDNN_INCLUDE_DIR CUDNN_LIBRARY CUDNN_FRONTEND_INCLUDE_DIR CUDNN_JSON_INCLUDE_DIR)
