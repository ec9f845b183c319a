#include "kernels/scale.h"

namespace cubench {
namespace {

__global__ void scale_kernel(const float* __restrict__ x, float* __restrict__ y, float a,
                             std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    y[i] = a * x[i];
}

}  // namespace

void scale(const float* x, float* y, float a, std::size_t n, cudaStream_t stream) {
  scale_kernel<<<1024, 256, 0, stream>>>(x, y, a, n);
}

}  // namespace cubench
