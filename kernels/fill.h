#pragma once
// Fresh random inputs on the device, for every DType.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/dtype.h"

namespace cubench {

// dst[i] = round_to_t(uniform(seed, i) in [lo, hi)). Element i depends only on (seed, i).
void fill_uniform(DType t, void* dst, std::size_t n, std::uint64_t seed, float lo, float hi,
                  cudaStream_t stream);

}  // namespace cubench
