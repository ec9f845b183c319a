# Runs a few small benchmarks for real, as the default run does (the stopping rule, NVML polled),
# and reads the JSON back: nothing skipped with an error, and each reports the counters its family
# and the harness promise, with values in their plausible range.
set(filter "^(launch/empty|gemm/bf16/1024/1024/1024|sigmoid/vectorized/bf16/10000000/cold|svd/gesvdj/fp32/512)/")
execute_process(COMMAND "${BINARY}" "--benchmark_filter=${filter}"
                        "--benchmark_out=${OUT}" --benchmark_out_format=json
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  include("${CMAKE_CURRENT_LIST_DIR}/gpu_skip.cmake")
  cubench_skip_without_gpu("${out}${err}")
  message(FATAL_ERROR "exit ${code}:\n${out}\n${err}")
endif()
# A run where nothing went wrong prints nothing that reads as an error: its stderr holds only
# cubench's records, each a line: progress ("[2/4] gemm/bf16/...  elapsed 3s, ETA 4s") or one of
# its own warnings ("cubench: warning: ..."), whose text may hold ';' (CMake's list separator,
# which would cut a record in two: kept apart as a placeholder while the lines are split).
string(ASCII 30 semicolon)
string(REPLACE ";" "${semicolon}" records "${err}")
string(REGEX REPLACE "\n$" "" records "${records}")
string(REPLACE "\n" ";" records "${records}")
foreach(record IN LISTS records)
  string(REPLACE "${semicolon}" ";" record "${record}")
  if(NOT record MATCHES "^\\[[0-9]+/[0-9]+\\] [^ ]+  elapsed [0-9hms]+, ETA [0-9hms?]+$"
     AND NOT record MATCHES "^cubench: warning: ")
    message(FATAL_ERROR "stderr holds a record that is neither progress nor a warning: '${record}'")
  endif()
endforeach()
file(READ "${OUT}" json)
string(JSON gpu GET "${json}" context gpu)
string(JSON count LENGTH "${json}" benchmarks)
if(NOT count EQUAL 4)
  message(FATAL_ERROR "expected 4 benchmarks, got ${count}:\n${out}")
endif()
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  string(JSON name GET "${json}" benchmarks ${i} name)
  string(JSON failed ERROR_VARIABLE no_error GET "${json}" benchmarks ${i} error_occurred)
  if(failed)
    string(JSON why GET "${json}" benchmarks ${i} error_message)
    message(FATAL_ERROR "${name}: ${why}")
  endif()
  # counter|lowest|highest: the values a right run gives on any GPU of interest; a unit slip
  # (ms for s, MHz for kHz, a fraction for a percentage) lands outside.
  set(want "first_call_ms|0.001|60000" "setup_s|0|600" "validate_s|0|600" "warmup_s|0|600"
           "sampling_s|0.001|600" "time_ci_pct|0|50" "peak_mem_bytes|0|1e12"
           "fragmentation|0|0.99" "throttled_samples|0|1e9" "samples|2|1e8"
           "nvml_power_W|20|2000" "gpu_util_pct|0|100" "power_capped_pct|0|100"
           "slowdown_pct|0|100")
  # Power: read from the energy counter where the window times it to 2%, and then never over the
  # card's enforced limit by more than 3%; else no power_W and a note says why (energy_meter.h).
  string(JSON label ERROR_VARIABLE no_label GET "${json}" benchmarks ${i} label)
  if(label MATCHES "power not read: ")
    string(JSON power ERROR_VARIABLE no_power GET "${json}" benchmarks ${i} power_W)
    if(NOT no_power)
      message(FATAL_ERROR "${name}: power_W ${power} beside 'power not read' in its label")
    endif()
  else()
    list(APPEND want "power_W|20|2000" "energy_per_run_J|0|1e4")
    string(JSON limit ERROR_VARIABLE no_limit GET "${json}" context gpu_power_limit_W)
    string(JSON power ERROR_VARIABLE no_power GET "${json}" benchmarks ${i} power_W)
    if(NOT no_power AND NOT no_limit AND limit GREATER 0)
      math(EXPR most "${limit} * 103 / 100")
      if(power GREATER most)
        message(FATAL_ERROR "${name}: power_W ${power} over the card's ${limit} W limit")
      endif()
    endif()
  endif()
  # A sample's spread: under half its mean for GPU work; launch/empty's samples are the host's
  # launch loop, whose preemptions spread them further (about 0.56 on an H100 under a whole
  # ctest), so its bound only catches a unit slip; its precision is time_ci_pct's.
  if(name MATCHES "^launch/")
    list(APPEND want "sample_cv|0|5")
  else()
    list(APPEND want "sample_cv|0|0.5")
  endif()
  if(name MATCHES "^gemm")
    # Peak memory is the operation's (Env::outside_peaks): A, B and C in bf16 (3 x 2 MiB) and
    # cuBLASLt's 32 MiB workspace, never the check's four fp64 matrices (32 MiB more).
    list(APPEND want "TFLOPS|1|2000" "pct_peak|0.5|100" "rel_error|0|0.01" "max_error_ratio|0|1"
                     "sm_clock_MHz|200|3000" "used_mem_bytes|6291456|39845888")
  elseif(name MATCHES "^sigmoid")
    list(APPEND want "GBps|10|20000" "pct_copy_ceiling|5|110" "max_rel_error|0|0.01")
  elseif(name MATCHES "^svd")
    list(APPEND want "recon_error|0|0.002" "ortho_error|0|0.002" "sigma_error|0|0.002")
  endif()
  # Other processes: counted per row where NVML lists this one; where it cannot, the context says so.
  string(JSON others ERROR_VARIABLE no_others GET "${json}" benchmarks ${i} other_processes)
  string(JSON at_start ERROR_VARIABLE no_start GET "${json}" context gpu_other_processes_at_start)
  if(no_start OR (no_others AND NOT at_start MATCHES "^unknown"))
    message(FATAL_ERROR "${name}: other_processes '${others}', at start '${at_start}'")
  endif()
  string(JSON label ERROR_VARIABLE no_label GET "${json}" benchmarks ${i} label)
  if(NOT label MATCHES "stopped: ")
    message(FATAL_ERROR "${name}: the label does not say why sampling stopped: '${label}'")
  endif()
  foreach(entry IN LISTS want)
    string(REPLACE "|" ";" entry "${entry}")
    list(GET entry 0 counter)
    list(GET entry 1 lowest)
    list(GET entry 2 highest)
    string(JSON value ERROR_VARIABLE missing GET "${json}" benchmarks ${i} ${counter})
    if(missing)
      message(FATAL_ERROR "${name} has no counter ${counter}")
    endif()
    if(NOT value GREATER_EQUAL lowest OR NOT value LESS_EQUAL highest)
      message(FATAL_ERROR "${name}: ${counter} = ${value}, outside [${lowest}, ${highest}]")
    endif()
  endforeach()
  message(STATUS "${name}: ok on ${gpu}")
endforeach()
