#include "kernels/elements.cuh"
#include "kernels/sigmoid.h"

namespace cubench {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocksPerSm = 32;  // grid cap; 8 blocks of 256 are resident per SM at once
constexpr int kUnroll = 4;           // 16-byte vectors loaded before any is used

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

template <typename T>
__global__ void sigmoid_vectorized(const T* x, T* y, std::size_t n) {
  constexpr int kPerVec = 16 / sizeof(T);
  union Vec {
    uint4 raw;
    T v[kPerVec];
  };
  const std::size_t vectors = n / kPerVec;
  const uint4* xv = reinterpret_cast<const uint4*>(x);
  uint4* yv = reinterpret_cast<uint4*>(y);
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < vectors; i += kUnroll * stride) {
    Vec in[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) in[u].raw = xv[i + u * stride];  // loads first, then math
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      Vec out;
#pragma unroll
      for (int e = 0; e < kPerVec; ++e) out.v[e] = from_float<T>(sigmoidf(to_float(in[u].v[e])));
      yv[i + u * stride] = out.raw;
    }
  }
  for (; i < vectors; i += stride) {
    Vec in, out;
    in.raw = xv[i];
#pragma unroll
    for (int e = 0; e < kPerVec; ++e) out.v[e] = from_float<T>(sigmoidf(to_float(in.v[e])));
    yv[i] = out.raw;
  }
  // The tail that does not fill a vector.
  std::size_t t = vectors * kPerVec + blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (t < n) y[t] = from_float<T>(sigmoidf(to_float(x[t])));
}

}  // namespace

std::string_view sigmoid_variant_name(SigmoidVariant v) {
  return v == SigmoidVariant::naive ? "naive" : "vectorized";
}

bool launch_sigmoid(SigmoidVariant variant, DType t, const void* x, void* y, std::size_t n,
                    int sm_count, cudaStream_t stream) {
  if (t != DType::fp32 && t != DType::fp16 && t != DType::bf16) return false;
  if (n == 0) return true;
  auto launch = [&](auto tag) {
    using T = decltype(tag);
    const T* in = static_cast<const T*>(x);
    T* out = static_cast<T*>(y);
    if (variant == SigmoidVariant::naive) {
      sigmoid_naive<T><<<(n + kThreads - 1) / kThreads, kThreads, 0, stream>>>(in, out, n);
    } else {
      // Enough blocks that each thread's first pass loads kUnroll vectors (all the loads in flight
      // a small array needs), capped for large arrays, which the grid-stride loop covers.
      std::size_t vectors = n / (16 / sizeof(T));
      std::size_t wanted = (vectors + kThreads * kUnroll - 1) / (kThreads * kUnroll);
      std::size_t grid = std::max<std::size_t>(
          1, std::min<std::size_t>(std::size_t(sm_count) * kMaxBlocksPerSm, wanted));
      sigmoid_vectorized<T><<<grid, kThreads, 0, stream>>>(in, out, n);
    }
  };
  if (t == DType::fp32) launch(float{});
  if (t == DType::fp16) launch(__half{});
  if (t == DType::bf16) launch(__nv_bfloat16{});
  return true;
}

}  // namespace cubench
