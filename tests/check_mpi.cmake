# Two MPI ranks on this machine (no GPU needed): rank 0 alone lists the benchmarks, and with a
# CPU family given, rank 0 alone reports and writes the JSON, whose context says "MPI, 2 ranks".
set(mpi ${MPIEXEC} --allow-run-as-root --oversubscribe -np 2)
# The full suite is the same list either way; the default one differs only where a family's
# default set depends on the GPUs a run spans: all-reduce's whole sweep across two ranks.
execute_process(COMMAND "${BINARY}" --benchmark_list_tests --cubench_suite=full
                OUTPUT_VARIABLE single RESULT_VARIABLE code)
execute_process(COMMAND ${mpi} "${BINARY}" --benchmark_list_tests --cubench_suite=full
                OUTPUT_VARIABLE two ERROR_VARIABLE err RESULT_VARIABLE code2)
if(NOT code2 EQUAL 0)
  message(FATAL_ERROR "mpirun exited ${code2}: ${err}")
endif()
if(NOT single STREQUAL two)
  message(FATAL_ERROR "two ranks listed differently from one process:\n${two}")
endif()
execute_process(COMMAND "${BINARY}" --benchmark_list_tests OUTPUT_VARIABLE single_default)
execute_process(COMMAND ${mpi} "${BINARY}" --benchmark_list_tests OUTPUT_VARIABLE two_default)
string(REGEX MATCHALL "\nallreduce/" one_gpu "\n${single_default}")
string(REGEX MATCHALL "\nallreduce/" two_gpus "\n${two_default}")
string(REGEX MATCHALL "\nallreduce/" every "\n${two}")
list(LENGTH one_gpu n1)
list(LENGTH two_gpus n2)
list(LENGTH every n_full)
if(n_full GREATER 0 AND (NOT n2 EQUAL n_full OR NOT n1 LESS n2))
  message(FATAL_ERROR "default all-reduce rows: ${n1} on one GPU, ${n2} across two ranks (full: ${n_full})")
endif()
if(CPU_FILTER)
  file(REMOVE "${OUT}")
  # Google Benchmark's console: a line per row, each ending in its name's "manual_time".
  execute_process(COMMAND ${mpi} "${BINARY}" "--benchmark_filter=${CPU_FILTER}" --cubench_suite=cpu
                          --benchmark_min_time=0.01 --benchmark_format=console
                          "--benchmark_out=${OUT}" --benchmark_out_format=json
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code3)
  if(NOT code3 EQUAL 0)
    message(FATAL_ERROR "mpirun run exited ${code3}: ${err}")
  endif()
  string(REGEX MATCHALL "manual_time " lines "${out}")
  list(LENGTH lines n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "expected one result line from rank 0, got ${n}:\n${out}")
  endif()
  file(READ "${OUT}" json)
  string(JSON world GET "${json}" context world)
  string(JSON count LENGTH "${json}" benchmarks)
  if(NOT world STREQUAL "MPI, 2 ranks" OR NOT count EQUAL 1)
    message(FATAL_ERROR "context world '${world}', ${count} benchmarks")
  endif()
endif()
# With no GPU every rank meets the no-GPU rule; rank 0 alone says so (mpirun adds its own lines
# about the exit status: count ours).
execute_process(COMMAND ${CMAKE_COMMAND} -E env CUDA_VISIBLE_DEVICES=-1
                        ${mpi} "${BINARY}" --benchmark_filter=^launch/empty
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code4)
string(REGEX MATCHALL "cubench: no usable CUDA GPU" said "${out}${err}")
list(LENGTH said n)
if(code4 EQUAL 0 OR NOT n EQUAL 1)
  message(FATAL_ERROR "no GPU under mpirun: exit ${code4}, the no-GPU line ${n} times (want 1):\n${err}")
endif()
# Ranks that disagree (one rank's CUBENCH_DEVICE is bad): every rank leaves with status 2, none
# waits in a collective for a rank that left, and rank 0 says another rank cannot run.
execute_process(COMMAND ${MPIEXEC} --allow-run-as-root --oversubscribe
                        -np 1 "${BINARY}" --benchmark_filter=^launch/empty :
                        -np 1 ${CMAKE_COMMAND} -E env CUBENCH_DEVICE=x "${BINARY}"
                        --benchmark_filter=^launch/empty
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code5 TIMEOUT 60)
string(REGEX MATCHALL "cubench: " said "${out}${err}")  # the lines hold ';': count prefixes
list(LENGTH said n)
if(NOT code5 EQUAL 2 OR NOT n EQUAL 1 OR NOT err MATCHES "cubench: another rank cannot run \\(status 2\\)")
  message(FATAL_ERROR "one rank's bad CUBENCH_DEVICE under mpirun: exit ${code5}, ${n} line(s) from cubench:\n${err}")
endif()
