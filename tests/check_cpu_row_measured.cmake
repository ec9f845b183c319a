# Runs the rows of BINARY that FILTER selects in the CPU suite, as a run times them (the stopping
# rule, bounded by ARGS), into OUT, and reads the JSON back: at least one row, each of them
# measured (its "cubench" object's status: validated, then timed) with a time.
#   -DBINARY=<cubench> -DFILTER=<regex> -DOUT=<json> [-DARGS=<more flags>]
separate_arguments(args UNIX_COMMAND "${ARGS}")
execute_process(COMMAND "${BINARY}" "--benchmark_filter=${FILTER}" --cubench_suite=cpu ${args}
                        "--benchmark_out=${OUT}" --benchmark_out_format=json
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "exit ${code}:\n${out}\n${err}")
endif()
file(READ "${OUT}" json)
string(JSON count LENGTH "${json}" benchmarks)
if(count EQUAL 0)
  message(FATAL_ERROR "no row for ${FILTER}:\n${out}")
endif()
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  string(JSON name GET "${json}" benchmarks ${i} name)
  string(JSON status GET "${json}" benchmarks ${i} cubench status)
  string(JSON reason GET "${json}" benchmarks ${i} cubench reason)
  string(JSON time GET "${json}" benchmarks ${i} real_time)
  if(NOT status STREQUAL "measured")
    message(FATAL_ERROR "${name}: ${status}: ${reason}")
  endif()
  if(NOT time GREATER 0)
    message(FATAL_ERROR "${name}: measured with a time of ${time}")
  endif()
  message(STATUS "${name}: measured, ${time}")
endforeach()
