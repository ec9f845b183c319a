# skipped_tests_say_why.cmake on a made-up run's log (WORK/Testing/Temporary): a line per skipped
# test with the reason as each kind of test says it, nothing for a disabled test or one that ran.
#   -DSCRIPT=<skipped_tests_say_why.cmake> -DWORK=<an empty folder of its own>
set(d "----------------------------------------------------------\n")
function(logged index name output)
  set(entry "${index}/9 Testing: ${name}\n${index}/9 Test: ${name}\nCommand: \"x\"\nDirectory: /x\n"
            "\"${name}\" start time: Dec 07 03:33 UTC\nOutput:\n${d}${output}<end of output>\n"
            "Test time =   0.16 sec\n${d}Test Passed.\n${d}\n")
  string(APPEND log "${entry}")
  set(log "${log}" PARENT_SCOPE)
endfunction()
set(log "Start testing: Dec 07 03:33 UTC\n${d}")
logged(1 "Harness.A" "Note: Google Test filter = Harness.A\n[ RUN      ] Harness.A\n/x/test_gpu.cpp:274: Skipped\nno usable CUDA GPU: no driver\n[  SKIPPED ] Harness.A (0 ms)\n[  SKIPPED ] 1 test, listed below:\n[  SKIPPED ] Harness.A\n")
logged(2 "gpu.run" "CMake Error at /x/gpu_skip.cmake:10 (message):\n  SKIP (no GPU): no driver (no\n  libcuda.so.1); 4 need one.\nCall Stack (most recent call first):\n  /x/check_gpu_run.cmake:10 (cubench_skip_without_gpu)\n\n\n")
logged(3 "build.cubins" "SKIP: no cuobjdump here\n")
logged(4 "tools.deps" "planning...\nno apt here: skipped\n")
logged(5 "ran.fine" "ok\n")
file(REMOVE_RECURSE "${WORK}")  # a failed run's left-overs
file(MAKE_DIRECTORY "${WORK}/Testing/Temporary")
file(WRITE "${WORK}/Testing/Temporary/LastTest.log" "${log}End testing: Dec 07 03:33 UTC\n")
file(WRITE "${WORK}/Testing/Temporary/LastTestsDisabled.log"
     "1:Harness.A\n2:gpu.run\n3:build.cubins\n4:tools.deps\n6:disabled.one\n")
execute_process(COMMAND "${CMAKE_COMMAND}" "-DDIR=${WORK}" -P "${SCRIPT}"
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(CONCAT expected "\nWhy each skipped test did not run:\n"
    "\tHarness.A: no usable CUDA GPU: no driver\n"
    "\tgpu.run: no usable CUDA GPU: no driver (no libcuda.so.1); 4 need one.\n"
    "\tbuild.cubins: no cuobjdump here\n"
    "\ttools.deps: no apt here: skipped\n")
if(NOT code EQUAL 0 OR NOT out STREQUAL expected OR NOT err STREQUAL "")
  message(FATAL_ERROR "exit ${code}; stdout:\n${out}\nexpected:\n${expected}\nstderr:\n${err}")
endif()
# A listing (ctest -N) logs no test: the last run's skipped tests are not said again.
file(WRITE "${WORK}/Testing/Temporary/LastTest.log.tmp" "Start testing: Dec 07 03:34 UTC\n${d}")
execute_process(COMMAND "${CMAKE_COMMAND}" "-DDIR=${WORK}" -P "${SCRIPT}"
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0 OR NOT out STREQUAL "" OR NOT err STREQUAL "")
  message(FATAL_ERROR "a listing: exit ${code}; stdout:\n${out}\nstderr:\n${err}")
endif()
file(REMOVE_RECURSE "${WORK}")
