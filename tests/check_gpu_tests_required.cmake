# CUBENCH_GPU_TESTS=required turns a GPU test's skip into a failure, for Google Test's tests
# (gpu_test.h) and the scripts' (gpu_skip.cmake); unset, they skip; another value is refused. The
# GPU is hidden (CUDA_VISIBLE_DEVICES=-1), so this runs alike with and without one.
set(hidden ${CMAKE_COMMAND} -E env CUDA_VISIBLE_DEVICES=-1)
function(expect what code_wanted regex)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if((code_wanted STREQUAL "0" AND NOT code EQUAL 0) OR (code_wanted STREQUAL "fail" AND code EQUAL 0))
    message(FATAL_ERROR "${what}: exit ${code}, wanted ${code_wanted}:\n${out}\n${err}")
  endif()
  # CMake wraps a message's lines where its version chooses (4.x after "use:"): words, not lines.
  string(REGEX REPLACE "[ \t\r\n]+" " " words "${out}${err}")
  if(NOT words MATCHES "${regex}")
    message(FATAL_ERROR "${what}: output does not match '${regex}':\n${out}\n${err}")
  endif()
endfunction()

set(gtest ${GPU_TESTS} --gtest_filter=Kernels.FillIsRandomInRangeAndFreshPerSeed)
expect("Google Test, required" fail "CUBENCH_GPU_TESTS=required, but no usable CUDA GPU: "
       ${hidden} CUBENCH_GPU_TESTS=required ${gtest})
expect("Google Test, unset" 0 "\\[ SKIPPED \\] Kernels.FillIsRandomInRangeAndFreshPerSeed"
       ${hidden} --unset=CUBENCH_GPU_TESTS ${gtest})
expect("Google Test, a bad value" fail "CUBENCH_GPU_TESTS takes required or auto, got 'yes'"
       ${hidden} CUBENCH_GPU_TESTS=yes ${gtest})

set(script ${CMAKE_COMMAND} -DBINARY=${BINARY} -DOUT=${OUT} -P ${CMAKE_CURRENT_LIST_DIR}/check_gpu_run.cmake)
expect("script, required" fail "CUBENCH_GPU_TESTS=required, but the binary found no GPU to use: "
       ${hidden} CUBENCH_GPU_TESTS=required ${script})
expect("script, unset" fail "SKIP \\(no GPU\\): " ${hidden} --unset=CUBENCH_GPU_TESTS ${script})
