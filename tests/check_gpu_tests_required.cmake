# CUBENCH_GPU_TESTS=required turns a GPU test's skip into a failure, for Google Test's tests
# (gpu_test.h, family_check.h) and the scripts' (gpu_skip.cmake); unset, they skip; another value
# is refused. The GPU is hidden (CUDA_VISIBLE_DEVICES=-1), so this runs alike with and without one.
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

# A family's check test likewise (family_check.h).
set(family ${GPU_TESTS} --gtest_filter=Check/EveryGpuFamily.AcceptsARunAndRejectsAPlantedFault/sigmoid)
expect("a family's check, required" fail "CUBENCH_GPU_TESTS=required, but no usable CUDA GPU: "
       ${hidden} CUBENCH_GPU_TESTS=required ${family})
expect("a family's check, unset" 0
       "\\[ SKIPPED \\] Check/EveryGpuFamily.AcceptsARunAndRejectsAPlantedFault/sigmoid"
       ${hidden} --unset=CUBENCH_GPU_TESTS ${family})

# The coverage test needs no GPU. Where this build left GPU families out (the context's not_built:
# a library missing, LibTorch CPU only) it skips naming them, and under required fails in the same
# words instead of letting those families vanish; a build with every family passes it either way.
set(coverage ${GPU_TESTS} --gtest_filter=Contract.EveryGpuFamilyHasACheckTest)
set(left_out "this build left out the GPU families of these libraries: ")
execute_process(COMMAND ${hidden} --unset=CUBENCH_GPU_TESTS ${coverage}
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if("${out}${err}" MATCHES "${left_out}")
  expect("coverage, unset, families left out" 0
         "${left_out}.*\\[ SKIPPED \\] Contract.EveryGpuFamilyHasACheckTest"
         ${hidden} --unset=CUBENCH_GPU_TESTS ${coverage})
  expect("coverage, required, families left out" fail "CUBENCH_GPU_TESTS=required, but ${left_out}"
         ${hidden} CUBENCH_GPU_TESTS=required ${coverage})
else()
  expect("coverage, unset, every family built" 0 "\\[ PASSED \\] 1 test"
         ${hidden} --unset=CUBENCH_GPU_TESTS ${coverage})
  expect("coverage, required, every family built" 0 "\\[ PASSED \\] 1 test"
         ${hidden} CUBENCH_GPU_TESTS=required ${coverage})
endif()

set(script ${CMAKE_COMMAND} -DBINARY=${BINARY} -DOUT=${OUT} -P ${CMAKE_CURRENT_LIST_DIR}/check_gpu_run.cmake)
expect("script, required" fail "CUBENCH_GPU_TESTS=required, but the binary found no GPU to use: "
       ${hidden} CUBENCH_GPU_TESTS=required ${script})
expect("script, unset" fail "SKIP \\(no GPU\\): " ${hidden} --unset=CUBENCH_GPU_TESTS ${script})
