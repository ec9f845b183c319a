#pragma once
// y = a x over n floats: the example family's kernel (docs/adding-a-benchmark.md).
#include <cuda_runtime.h>

#include <cstddef>

namespace cubench {

void scale(const float* x, float* y, float a, std::size_t n, cudaStream_t stream);

}  // namespace cubench
