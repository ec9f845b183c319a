#pragma once
// Loading and storing each DType's element as float/double on the device, so one templated
// kernel serves every type. Dispatch from a runtime DType is dispatch_dtype().
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "kernels/dtype.h"

namespace cubench {

template <typename T>
__device__ __forceinline__ double load_double(const T* p, std::size_t i) {
  return static_cast<double>(static_cast<float>(p[i]));
}
template <>
__device__ __forceinline__ double load_double<double>(const double* p, std::size_t i) {
  return p[i];
}

template <typename T>
__device__ __forceinline__ T from_float(float v) {
  return T(v);
}
template <>
__device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

template <typename T>
__device__ __forceinline__ float to_float(T v) {
  return static_cast<float>(v);
}

// Calls f(T{}) with T the storage type of t (tf32 is stored as float).
template <typename F>
void dispatch_dtype(DType t, F&& f) {
  switch (t) {
    case DType::fp64:
      f(double{});
      break;
    case DType::fp32:
    case DType::tf32:
      f(float{});
      break;
    case DType::fp16:
      f(__half{});
      break;
    case DType::bf16:
      f(__nv_bfloat16{});
      break;
    case DType::fp8_e4m3:
      f(__nv_fp8_e4m3{});
      break;
  }
}

// Counter-based random numbers (splitmix64): element i of a fill depends only on (seed, i), so
// a check can regenerate any input on any device without copying it. Written here rather than
// taken from cuRAND because cuRAND's host API fills float/double only and we need every DType,
// and its device API needs per-thread state set-up for what is one hash.
__host__ __device__ __forceinline__ std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__host__ __device__ __forceinline__ float uniform_at(std::uint64_t seed, std::uint64_t i, float lo,
                                                     float hi) {
  std::uint64_t h = splitmix64(seed ^ splitmix64(i));
  float u = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);  // 24 bits in [0, 1)
  return lo + (hi - lo) * u;
}

}  // namespace cubench
