#pragma once
// Our sigmoid kernels, y = 1 / (1 + exp(-x)), computed in float for every storage type:
// - naive: one element per thread, one launch-sized grid (the seed articles' kernel);
// - vectorized: one 16-byte vector per thread, blocks of 256, one pass (the grid covers the
//   array once; no grid-stride loop): the copy's rate on the H200.
#include <cuda_runtime.h>

#include <cstddef>
#include <string_view>

#include "kernels/dtype.h"

namespace cubench {

enum class SigmoidVariant { naive, vectorized };

// x and y must be 16-byte aligned for the vectorized variant (every pool allocation is); fp32,
// fp16 and bf16 only. Returns false (launching nothing) for an unsupported dtype.
bool launch_sigmoid(SigmoidVariant variant, DType t, const void* x, void* y, std::size_t n,
                    cudaStream_t stream);

}  // namespace cubench
