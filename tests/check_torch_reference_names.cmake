# tools/torch_reference.py's rows are named as cubench's, so the tools set them side by side
# (docs/results/h100/same-library-table.py): every one of its gemm, gemm_decode and conv names
# that PREFIXES select is a name of cubench's full suite.
execute_process(COMMAND "${BINARY}" --benchmark_list_tests --cubench_suite=full RESULT_VARIABLE code
                OUTPUT_VARIABLE listing ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "--benchmark_list_tests exited ${code}: ${err}")
endif()
execute_process(COMMAND "${PYRUN}" torch_reference.py --list --out /dev/null --filter "${PREFIXES}"
                RESULT_VARIABLE code OUTPUT_VARIABLE names ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "torch_reference.py --list exited ${code}: ${err}")
endif()
string(REGEX REPLACE "\n$" "" names "${names}")
string(REPLACE "\n" ";" names "${names}")
list(LENGTH names count)
if(count LESS 10)
  message(FATAL_ERROR "torch_reference.py lists only ${count} names for ${PREFIXES}")
endif()
foreach(name IN LISTS names)
  string(FIND "\n${listing}" "\n${name}\n" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "torch_reference.py's ${name} is not a name cubench lists")
  endif()
endforeach()
message(STATUS "${count} torch_reference.py names, each one of cubench's")
