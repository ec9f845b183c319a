#include <type_traits>

#include "kernels/elements.cuh"
#include "kernels/reference.h"

namespace cubench {
namespace {

template <typename T>
__global__ void to_double_kernel(const T* src, double* dst, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    dst[i] = load_double(src, i);
}

template <typename T>
__global__ void nonfinite_kernel(const T* p, std::size_t n, unsigned long long* count) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    local += isfinite(load_double(p, i)) ? 0 : 1;
  if (local) atomicAdd(count, local);
}

__global__ void diagonal_kernel(double* a, int n, std::int64_t lda, double value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[std::size_t(i) * lda + i] += value;
}

// Positive doubles order like their bit patterns, so an integer atomicMax keeps the largest.
__device__ void atomic_max_positive(double* target, double value) {
  atomicMax(reinterpret_cast<unsigned long long*>(target),
            static_cast<unsigned long long>(__double_as_longlong(value)));
}

template <typename T>
__global__ void allreduce_error_kernel(const T* out, std::size_t n, std::uint64_t seed, int ranks,
                                       float lo, float hi, double* max_error) {
  double worst = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    double ref = 0, scale = 0;
    for (int r = 0; r < ranks; ++r) {
      double x = to_float(from_float<T>(uniform_at(seed + r, i, lo, hi)));  // as stored
      ref += x;
      scale += fabs(x);
    }
    double got = load_double(out, i);
    double err = isfinite(got) ? fabs(got - ref) / fmax(scale, 1e-30) : 1e300;
    worst = fmax(worst, err);
  }
  if (worst > 0) atomic_max_positive(max_error, worst);
}

template <typename T>
__global__ void perturb_kernel(T* p, std::size_t i, double factor, double offset) {
  const double value = load_double(p, i) * factor + offset;
  if constexpr (std::is_same_v<T, double>)
    p[i] = value;
  else
    p[i] = from_float<T>(static_cast<float>(value));
}

__global__ void absolute_kernel(double* x, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    x[i] = fabs(x[i]);
}

__global__ void square_kernel(double* x, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    x[i] = x[i] * x[i];
}

__global__ void allowance_kernel(double* sum, const double* squares, std::size_t n, double rms_coef,
                                 double sum_coef) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    sum[i] = rms_coef * sqrt(squares[i]) + sum_coef * sum[i];
}

template <typename T>
__global__ void sigmoid_reference_kernel(const T* x, double* ref, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    ref[i] = 1.0 / (1.0 + exp(-load_double(x, i)));
}

template <typename T>
__global__ void check_elements_kernel(const T* got, const double* ref, const double* scale,
                                      std::size_t n, double rel_tol, double scale_tol,
                                      ElementCheck* result) {
  double worst = 0, sq_error = 0, sq_ref = 0;
  unsigned long long over = 0, first_over = ~0ull, nonfinite = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const double r = ref[i], g = load_double(got, i);
    if (!isfinite(g)) {
      if (isfinite(r)) {
        ++nonfinite;
        first_over = min(first_over, static_cast<unsigned long long>(i));
      }
      continue;
    }
    const double error = fabs(g - r);
    const double bound = rel_tol * fabs(r) + (scale ? scale_tol * scale[i] : 0.0);
    const double ratio = error == 0 ? 0 : bound > 0 ? error / bound : INFINITY;
    if (ratio > 1) {
      ++over;
      first_over = min(first_over, static_cast<unsigned long long>(i));
    }
    worst = fmax(worst, ratio);
    sq_error += error * error;
    sq_ref += r * r;
  }
  if (worst > 0) atomic_max_positive(&result->max_ratio, worst);
  atomicAdd(&result->sum_sq_error, sq_error);
  atomicAdd(&result->sum_sq_ref, sq_ref);
  if (over) atomicAdd(&result->over, over);
  if (nonfinite) atomicAdd(&result->nonfinite, nonfinite);
  if (first_over != ~0ull) atomicMin(&result->first_over, first_over);
}

}  // namespace

void perturb_element(DType t, void* p, std::size_t i, double factor, double offset,
                     cudaStream_t stream) {
  dispatch_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    perturb_kernel<T><<<1, 1, 0, stream>>>(static_cast<T*>(p), i, factor, offset);
  });
}

void absolute_in_place(double* x, std::size_t n, cudaStream_t stream) {
  absolute_kernel<<<4096, 256, 0, stream>>>(x, n);
}

void square_in_place(double* x, std::size_t n, cudaStream_t stream) {
  square_kernel<<<4096, 256, 0, stream>>>(x, n);
}

void gemm_allowance(double* sum, const double* squares, std::size_t n, double rms_coef,
                    double sum_coef, cudaStream_t stream) {
  allowance_kernel<<<4096, 256, 0, stream>>>(sum, squares, n, rms_coef, sum_coef);
}

void sigmoid_reference(DType t, const void* x, double* ref, std::size_t n, cudaStream_t stream) {
  dispatch_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    sigmoid_reference_kernel<T><<<4096, 256, 0, stream>>>(static_cast<const T*>(x), ref, n);
  });
}

void check_elements(DType t, const void* got, const double* ref, const double* scale, std::size_t n,
                    double rel_tol, double scale_tol, ElementCheck* result, cudaStream_t stream) {
  dispatch_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    check_elements_kernel<T><<<4096, 256, 0, stream>>>(static_cast<const T*>(got), ref, scale, n,
                                                       rel_tol, scale_tol, result);
  });
}

void convert_to_double(DType t, const void* src, double* dst, std::size_t n, cudaStream_t stream) {
  dispatch_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    to_double_kernel<T><<<4096, 256, 0, stream>>>(static_cast<const T*>(src), dst, n);
  });
}

void count_nonfinite(DType t, const void* p, std::size_t n, unsigned long long* count,
                     cudaStream_t stream) {
  dispatch_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    nonfinite_kernel<T><<<4096, 256, 0, stream>>>(static_cast<const T*>(p), n, count);
  });
}

void add_to_diagonal(double* a, int n, std::int64_t lda, double value, cudaStream_t stream) {
  diagonal_kernel<<<(n + 255) / 256, 256, 0, stream>>>(a, n, lda, value);
}

void allreduce_max_error(DType t, const void* out, std::size_t n, std::uint64_t seed, int ranks,
                         float lo, float hi, double* max_error, cudaStream_t stream) {
  dispatch_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    allreduce_error_kernel<T>
        <<<4096, 256, 0, stream>>>(static_cast<const T*>(out), n, seed, ranks, lo, hi, max_error);
  });
}

}  // namespace cubench
