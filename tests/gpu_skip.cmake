# For a GPU test's script: where the binary said it has no usable GPU, the test is skipped, saying
# why ("SKIP (no GPU): ...", the test's SKIP_REGULAR_EXPRESSION), unless CUBENCH_GPU_TESTS=required
# (the GPU machine's runs): then it fails, so a run where no GPU test ran cannot read green.
function(cubench_skip_without_gpu output)
  if(output MATCHES "no usable CUDA GPU: ([^\n]*)")
    set(why "${CMAKE_MATCH_1}")
    if("$ENV{CUBENCH_GPU_TESTS}" STREQUAL "required")
      message(FATAL_ERROR "CUBENCH_GPU_TESTS=required, but the binary found no GPU to use: ${why}")
    endif()
    message(FATAL_ERROR "SKIP (no GPU): ${why}")
  endif()
endfunction()
