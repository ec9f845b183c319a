#include "kernels/elements.cuh"
#include "kernels/fill.h"

namespace cubench {
namespace {
template <typename T>
__global__ void fill_kernel(T* dst, std::size_t n, std::uint64_t seed, float lo, float hi) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    dst[i] = from_float<T>(uniform_at(seed, i, lo, hi));
}
}  // namespace

void fill_uniform(DType t, void* dst, std::size_t n, std::uint64_t seed, float lo, float hi,
                  cudaStream_t stream) {
  dispatch_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    fill_kernel<T><<<4096, 256, 0, stream>>>(static_cast<T*>(dst), n, seed, lo, hi);
  });
}

}  // namespace cubench
