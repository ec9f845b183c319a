# What a build with LibTorch leaves out of its LibTorch families, and why, noted for the run
# context's not_built (cubench_note_not_built, OptionalSources.cmake; key "torch"), so a result
# file, and a comparison with a build that has them, says why those rows are missing:
# - a LibTorch without CUDA (Debian's 1.13): every GPU family (the cpu/ ones are built);
# - a CUDA LibTorch before CUBENCH_TORCH_SDPA_BACKENDS_SINCE: torch/attention, which allows one of
#   scaled_dot_product_attention's backends at a time, as LibTorch lets C++ do only from 2.5
#   (torch_compat.h's CUBENCH_TORCH_SDPA_BACKENDS, which benchmarks/attention.torch.cpp registers
#   the family under; build.torch_families_not_built_say_why holds the two versions together).
set(CUBENCH_TORCH_SDPA_BACKENDS_SINCE 2.5)

function(cubench_note_torch_not_built version cuda)
  if(NOT cuda)
    cubench_note_not_built(torch "LibTorch ${version} here is CPU only: its GPU families are not built")
  elseif(version VERSION_LESS CUBENCH_TORCH_SDPA_BACKENDS_SINCE)
    string(CONCAT why "LibTorch ${version} cannot allow one scaled_dot_product_attention backend "
                      "alone (${CUBENCH_TORCH_SDPA_BACKENDS_SINCE}+): torch/attention is not built")
    message(STATUS "cubench: torch/attention left out: ${why}")
    cubench_note_not_built(torch "${why}")
  endif()
endfunction()
