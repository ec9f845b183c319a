# Runs BINARY with ARGS into OUT, then holds OUT against REFERENCE, a file an earlier build wrote
# of the same rows (CHECK, default check_result_file_shape.py: the same members and values, times
# aside; check_result_file_same.py: every value but what the run's time and machine decide).
#   -DBINARY=<cubench> -DARGS=<flags> -DOUT=<json> -DREFERENCE=<json> -DPYRUN=<tools/pyrun>
#   [-DLOOP=1: Google Benchmark's own loop, whose iteration counts are times too]
#   [-DCHECK=<a script in tests/>]
separate_arguments(args UNIX_COMMAND "${ARGS}")
execute_process(COMMAND "${BINARY}" ${args} "--benchmark_out=${OUT}"
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "exit ${code}:\n${out}\n${err}")
endif()
set(loop)
if(LOOP)
  set(loop --loop)
endif()
if(NOT CHECK)
  set(CHECK check_result_file_shape.py)
endif()
execute_process(COMMAND "${PYRUN}" ../tests/${CHECK} "${REFERENCE}" "${OUT}" ${loop}
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT code EQUAL 0)
  message(FATAL_ERROR "${CHECK}: exit ${code}")
endif()
