#pragma once
// Reference computations and checks on the device, in double precision, independent of the
// libraries under test: they read the same inputs and say what the answer should be.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/dtype.h"

namespace cubench {

void convert_to_double(DType t, const void* src, double* dst, std::size_t n, cudaStream_t stream);

// p[i] = p[i] * factor + offset (one element, stored as t): a planted fault for the checks' own
// tests (BenchmarkCase::plant_fault).
void perturb_element(DType t, void* p, std::size_t i, double factor, double offset,
                     cudaStream_t stream);

// x[i] = |x[i]| for i < n.
void absolute_in_place(double* x, std::size_t n, cudaStream_t stream);
// x[i] = x[i]^2 for i < n.
void square_in_place(double* x, std::size_t n, cudaStream_t stream);
// sum[i] = rms_coef sqrt(squares[i]) + sum_coef sum[i] for i < n: a GEMM element's allowance
// (validate.h: GemmBound) from sum_k |a||b| (sum) and sum_k (ab)^2 (squares).
void gemm_allowance(double* sum, const double* squares, std::size_t n, double rms_coef,
                    double sum_coef, cudaStream_t stream);

// ref[i] = 1 / (1 + exp(-x[i])) in double, x stored as `t`.
void sigmoid_reference(DType t, const void* x, double* ref, std::size_t n, cudaStream_t stream);

// Every element of a result against its double-precision reference. Element i may be off by
// bound_i = rel_tol * |ref[i]| + scale_tol * scale[i] (scale: a device array, or null for 0):
// ratio_i = |got[i] - ref[i]| / bound_i, and the check passes when every ratio is at most 1 and
// nothing is NaN/inf where the reference is finite.
struct ElementCheck {
  double max_ratio = 0;                   // the worst element's error over its bound
  double sum_sq_error = 0;                // sum (got - ref)^2, for the relative L2 error
  double sum_sq_ref = 0;                  // sum ref^2
  unsigned long long over = 0;            // elements beyond their bound
  unsigned long long first_over = ~0ull;  // the smallest such index
  unsigned long long nonfinite = 0;       // NaN/inf where the reference is finite
};

// `result` is a device pointer to an ElementCheck initialised with ElementCheck{}.
void check_elements(DType t, const void* got, const double* ref, const double* scale, std::size_t n,
                    double rel_tol, double scale_tol, ElementCheck* result, cudaStream_t stream);

// *count += number of NaN/inf elements (count is a device pointer).
void count_nonfinite(DType t, const void* p, std::size_t n, unsigned long long* count,
                     cudaStream_t stream);

// A(i,i) += value for i < n (column-major, leading dimension lda).
void add_to_diagonal(double* a, int n, std::int64_t lda, double value, cudaStream_t stream);

// Checks an all-reduce sum: input r was fill_uniform(t, ..., seed + r, lo, hi). Regenerates the
// inputs, sums them in double, and raises *max_error (device pointer, initialised to 0) to the
// largest |out - ref| / sum_r |input_r|; non-finite results count as error 1e300.
void allreduce_max_error(DType t, const void* out, std::size_t n, std::uint64_t seed, int ranks,
                         float lo, float hi, double* max_error, cudaStream_t stream);

}  // namespace cubench
