# Runs BINARY with ARGS into OUT, then holds OUT against REFERENCE, a file an earlier build wrote
# of the same rows (check_result_file_shape.py: the same members and values, times aside; with
# VALUES, every value but what the run's time, host and revision decide).
#   -DBINARY=<cubench> -DARGS=<flags> -DOUT=<json> -DREFERENCE=<json> -DPYRUN=<tools/pyrun>
#   [-DLOOP=1: Google Benchmark's own loop, whose iteration counts are times too]
#   [-DVALUES=1: every value compared, not the shape alone]
separate_arguments(args UNIX_COMMAND "${ARGS}")
execute_process(COMMAND "${BINARY}" ${args} "--benchmark_out=${OUT}"
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "exit ${code}:\n${out}\n${err}")
endif()
set(mode)
if(LOOP)
  set(mode --loop)
elseif(VALUES)
  set(mode --values)
endif()
execute_process(COMMAND "${PYRUN}" ../tests/check_result_file_shape.py "${REFERENCE}" "${OUT}" ${mode}
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT code EQUAL 0)
  message(FATAL_ERROR "check_result_file_shape.py: exit ${code}")
endif()
