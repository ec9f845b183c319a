# The core families' names, every configuration of the full suite, stay exactly as committed in
# tests/data/core-names-full.txt: results are matched across builds and toolkits by name, so a
# refactor that renames one row breaks every comparison with files made before it. A deliberate
# change of names updates the file in the same commit.
execute_process(COMMAND "${BINARY}" --benchmark_list_tests --cubench_suite=full
                        "--benchmark_filter=^(gemm|gemm_autotune|gemm_decode|gemm_peak|svd|sigmoid|launch|startup/cuda)/"
                RESULT_VARIABLE code OUTPUT_VARIABLE listed ERROR_VARIABLE err)
file(READ "${EXPECTED}" expected)
if(NOT code EQUAL 0 OR NOT listed STREQUAL expected)
  file(WRITE "${OUT}" "${listed}")
  message(FATAL_ERROR "the core names differ from ${EXPECTED} (exit ${code}); the listing is in ${OUT}: diff them\n${err}")
endif()
string(REGEX MATCHALL "\n" lines "${listed}")
list(LENGTH lines n)
message(STATUS "${n} core names as committed")
