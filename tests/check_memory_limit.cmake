# --cubench_memory_limit on a real GPU: the GPU behaves as one of that size. Three rows:
#   gemm/fp16/16384^3 needs about 11.6 GiB (its check's fp64 copies included), more than the 3 GiB
#     limit: not run, said once on stderr and in the context's not_run, never timed;
#   gemm/fp16/8192^3 needs 2.9 GiB: under the limit, but the CUDA context already takes some of it
#     (1.6 GB on an H100), so at its turn it does not fit: its row is a skip, "not run: needs ...
#     free of 3 GiB";
#   launch/empty needs nothing: measured.
# The run exits 0, with no out-of-memory row.
set(filter "^(launch/empty|gemm/fp16/(8192/8192/8192|16384/16384/16384))/")
execute_process(COMMAND "${BINARY}" "--benchmark_filter=${filter}" --cubench_suite=full
                        --cubench_memory_limit=3GiB --cubench_timeout=0.5
                        "--benchmark_out=${OUT}" --benchmark_out_format=json
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  include("${CMAKE_CURRENT_LIST_DIR}/gpu_skip.cmake")
  cubench_skip_without_gpu("${out}${err}")
  message(FATAL_ERROR "exit ${code}:\n${out}\n${err}")
endif()
if(NOT err MATCHES "cubench: gemm: 1 configuration not run on [^:]+: they need more device memory than this GPU has \\(3\\.0 GiB under --cubench_memory_limit\\)")
  message(FATAL_ERROR "stderr does not say the 16384^3 GEMM was not run:\n${err}")
endif()
file(READ "${OUT}" json)
string(JSON not_run GET "${json}" context not_run)
if(NOT not_run MATCHES "\"family\": \"gemm\".*\"gemm/fp16/16384/16384/16384\"")
  message(FATAL_ERROR "the context's not_run does not name the 16384^3 GEMM: ${not_run}")
endif()
string(JSON count LENGTH "${json}" benchmarks)
if(NOT count EQUAL 2)
  message(FATAL_ERROR "expected 2 rows (launch/empty, the 8192^3 GEMM), got ${count}:\n${out}")
endif()
set(seen "")
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  string(JSON name GET "${json}" benchmarks ${i} name)
  # A row that did not run says why in error_message, or, a skip (not run at its turn), in
  # skip_message; its cubench object says which (docs/result-file.md).
  string(JSON message ERROR_VARIABLE none GET "${json}" benchmarks ${i} error_message)
  string(JSON skip ERROR_VARIABLE none GET "${json}" benchmarks ${i} skip_message)
  string(JSON status ERROR_VARIABLE none GET "${json}" benchmarks ${i} cubench status)
  string(JSON reason ERROR_VARIABLE none GET "${json}" benchmarks ${i} cubench reason)
  if(name MATCHES "^launch/empty" AND (message OR skip OR NOT status STREQUAL "measured"))
    message(FATAL_ERROR "${name} was not measured (${status}): ${message}${skip}")
  endif()
  if(name MATCHES "^gemm/fp16/8192")
    if(NOT skip MATCHES "not run: needs 2\\.[0-9] GiB of device memory; [0-9.]+ [GM]iB free of 3\\.0 GiB \\(--cubench_memory_limit\\)"
       OR NOT status STREQUAL "not_run" OR NOT reason MATCHES "^needs 2\\.[0-9] GiB" OR message)
      message(FATAL_ERROR "${name}: expected a skip, not run at its turn, got status '${status}', "
                          "skip_message '${skip}', error_message '${message}'")
    endif()
  endif()
  if(message MATCHES "out of memory")
    message(FATAL_ERROR "${name} ran out of memory instead of being left out: ${message}")
  endif()
  list(APPEND seen "${name}")
endforeach()
message("under a 3 GiB limit: ${seen}; not run: ${not_run}")
