#include "kernels/elements.cuh"
#include "kernels/sigmoid.h"

#include <algorithm>

namespace cubench {
namespace {

constexpr int kThreads = 256;

// Fast intrinsics: __expf is a few ulp (2 + 1.16|x|) and __fdividef 2 ulp, inside fp32's 1e-5
// tolerance, and together two MUFU operations per element, which keeps even the 8-elements-per-
// vector 16-bit types memory-bound (an IEEE division made fp16 compute-bound: 73% of the copy
// ceiling against 90%+). For x < -88, __expf gives inf and __fdividef(1, inf) gives 0: the
// correct saturation.
__device__ __forceinline__ float sigmoidf(float x) { return __fdividef(1.0f, 1.0f + __expf(-x)); }

template <typename T>
__global__ void sigmoid_naive(const T* x, T* y, std::size_t n) {
  std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = from_float<T>(sigmoidf(to_float(x[i])));
}

// One pass, one 16-byte vector per thread, blocks of 256, the grid covering the array once, plain
// loads and stores. On an H200, fp32 at 256Mi, against the device-to-device copy's 505 us: a
// grid-stride kernel (grid capped at 32 blocks per SM, 4 vectors in flight per thread) 540 us; one
// pass with 1, 2, 4 and 8 vectors per thread 517-522, 543-554, 546-559 and 539-551 us (streaming
// hints on); at one vector, blocks of 1024 525-545 us; the same without the streaming hints
// (__ldcs/__stcs) 502 us, the copy's rate; fp16 and bf16 likewise (253 us against the copy's 256).
// Why the hints cost 3% here is not known.
template <typename T>
__global__ void __launch_bounds__(kThreads) sigmoid_vectorized(const T* x, T* y, std::size_t n) {
  constexpr int kPerVec = 16 / sizeof(T);
  union Vec {
    uint4 raw;
    T v[kPerVec];
  };
  const std::size_t vectors = n / kPerVec;
  const std::size_t i = blockIdx.x * std::size_t(kThreads) + threadIdx.x;
  if (i < vectors) {
    Vec in, out;
    in.raw = reinterpret_cast<const uint4*>(x)[i];
#pragma unroll
    for (int e = 0; e < kPerVec; ++e) out.v[e] = from_float<T>(sigmoidf(to_float(in.v[e])));
    reinterpret_cast<uint4*>(y)[i] = out.raw;
  }
  // The tail that does not fill a vector: the first threads of block 0.
  if (blockIdx.x == 0 && threadIdx.x < n - vectors * kPerVec) {
    const std::size_t t = vectors * kPerVec + threadIdx.x;
    y[t] = from_float<T>(sigmoidf(to_float(x[t])));
  }
}

}  // namespace

bool launch_sigmoid(SigmoidVariant variant, DType t, const void* x, void* y, std::size_t n,
                    cudaStream_t stream) {
  if (t != DType::fp32 && t != DType::fp16 && t != DType::bf16) return false;
  if (n == 0) return true;
  auto launch = [&](auto tag) {
    using T = decltype(tag);
    const T* in = static_cast<const T*>(x);
    T* out = static_cast<T*>(y);
    if (variant == SigmoidVariant::naive) {
      sigmoid_naive<T><<<(n + kThreads - 1) / kThreads, kThreads, 0, stream>>>(in, out, n);
    } else {
      const std::size_t vectors = n / (16 / sizeof(T));
      const std::size_t grid = std::max<std::size_t>(1, (vectors + kThreads - 1) / kThreads);
      sigmoid_vectorized<T><<<grid, kThreads, 0, stream>>>(in, out, n);
    }
  };
  if (t == DType::fp32) launch(float{});
  if (t == DType::fp16) launch(__half{});
  if (t == DType::bf16) launch(__nv_bfloat16{});
  return true;
}

}  // namespace cubench
