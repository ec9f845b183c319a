# ctest build.find_nccl_passes_over: cmake/FindNCCL.cmake, configured (find_nccl/) beside this
# build's toolkit with made-up NCCLs (a header and a small libnccl.so built here) in NCCL_ROOT:
#   other:   in a folder that looks like another CUDA toolkit (bin/nvcc, include/cuda_runtime.h):
#            passed over, saying whose it is (how 13.0's NCCL is kept from an 11.8 or 12.4 build)
#   broken:  a library that does not link (it needs a function nothing defines; trixie's NCCL
#            2.22 needs glibc 2.38's): passed over, saying so
#   mine:    one that links, in no toolkit's folder: taken (the control: the checks can pass)
# cmake -DSOURCE_DIR=tests -DWORK=dir -DCUDA_ROOT=toolkit -DCXX=compiler -P check_find_nccl.cmake
foreach(var SOURCE_DIR WORK CUDA_ROOT CXX)
  if(NOT ${var})
    message(FATAL_ERROR "check_find_nccl.cmake: -D${var}= is missing")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK}")
string(CONCAT header "#define NCCL_MAJOR 9\n#define NCCL_MINOR 8\n#define NCCL_PATCH 7\n"
           "typedef enum { ncclSuccess = 0 } ncclResult_t;\n"
           "#ifdef __cplusplus\nextern \"C\"\n#endif\nncclResult_t ncclGetVersion(int* version);\n")
set(good "extern \"C\" int ncclGetVersion(int* v) { *v = 90807; return 0; }\n")
string(CONCAT bad "extern \"C\" void cubench_nowhere_defined();\n"
        "extern \"C\" int ncclGetVersion(int* v) { cubench_nowhere_defined(); *v = 0; return 0; }\n")
foreach(case other broken mine)
  file(WRITE "${WORK}/${case}/include/nccl.h" "${header}")
  if(case STREQUAL "broken")
    file(WRITE "${WORK}/${case}/stub.cpp" "${bad}")
  else()
    file(WRITE "${WORK}/${case}/stub.cpp" "${good}")
  endif()
  file(MAKE_DIRECTORY "${WORK}/${case}/lib")
  execute_process(COMMAND "${CXX}" -shared -fPIC "${WORK}/${case}/stub.cpp" -o "${WORK}/${case}/lib/libnccl.so"
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "check_find_nccl.cmake: cannot build ${WORK}/${case}/lib/libnccl.so")
  endif()
endforeach()
file(WRITE "${WORK}/other/bin/nvcc" "")
file(WRITE "${WORK}/other/include/cuda_runtime.h" "")
file(REAL_PATH "${WORK}/other" other_real)

set(failed "")
foreach(case other broken mine)
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}/find_nccl" -B "${WORK}/build-${case}"
            "-DCMAKE_CXX_COMPILER=${CXX}" "-DCUDAToolkit_ROOT=${CUDA_ROOT}" "-DNCCL_ROOT=${WORK}/${case}"
    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  string(REGEX MATCH "RESULT [^\n]*" result "${out}")
  if(case STREQUAL "other")
    set(want "RESULT found=FALSE library=${WORK}/other/lib/libnccl.so not_used=NCCL 9.8.7 at ${WORK}/other/lib/libnccl.so belongs to the CUDA toolkit at ${other_real}, not to this build's \\(")
  elseif(case STREQUAL "broken")
    set(want "RESULT found=FALSE library=${WORK}/broken/lib/libnccl.so not_used=NCCL 9.8.7 at ${WORK}/broken/lib/libnccl.so does not link here: .*cubench_nowhere_defined")
  else()
    set(want "RESULT found=TRUE library=${WORK}/mine/lib/libnccl.so not_used=$")
  endif()
  if(NOT rc EQUAL 0 OR NOT result MATCHES "^${want}")
    list(APPEND failed "${case}")
    message("FAIL: ${case}: want '${want}'\n  got (exit ${rc}): '${result}'\n${err}")
  else()
    message("${case}: ${result}")
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "FindNCCL: ${failed} not as expected")
endif()
message("PASS: another toolkit's NCCL and one that does not link passed over, saying why; a good one taken")
