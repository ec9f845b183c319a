#pragma once
// A direct 2-D convolution in double precision on the device, independent of cuDNN: the reference
// the conv families check every element against. NHWC activations, KRSC filters, square padding
// and stride, no dilation, cross-correlation (what cuDNN and PyTorch call convolution).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/dtype.h"

namespace cubench {

struct ConvShape {
  std::int64_t n, c, h, w;  // input  x: n x h x w x c
  std::int64_t k, r, s;     // filter w: k x r x s x c
  std::int64_t pad, stride;
  std::int64_t p() const { return (h + 2 * pad - r) / stride + 1; }  // output y: n x p x q x k
  std::int64_t q() const { return (w + 2 * pad - s) / stride + 1; }
};

enum class ConvPass { fwd, dgrad, wgrad };

// The pass's two operands, stored as the benchmark's dtype; the pass's own output is not read.
//   fwd:   y[n,p,q,k]  = sum_{r,s,c} x[n, p*stride-pad+r, q*stride-pad+s, c] w[k,r,s,c]
//   dgrad: dx[n,h,w,c] = sum_{k,r,s} dy[n,p,q,k] w[k,r,s,c], over the (p,q) with
//                        p*stride-pad+r = h and q*stride-pad+s = w
//   wgrad: dw[k,r,s,c] = sum_{n,p,q} dy[n,p,q,k] x[n, p*stride-pad+r, q*stride-pad+s, c]
struct ConvOperands {
  const void* x = nullptr;
  const void* w = nullptr;
  const void* dy = nullptr;
};

// Elements of the pass's output, and how many products each is a sum of (before the padding
// and the stride leave some out): C*R*S, K*R*S and N*P*Q.
std::int64_t conv_output_elements(ConvPass pass, const ConvShape& s);
std::int64_t conv_terms(ConvPass pass, const ConvShape& s);

// ref[i] = the output element i (in the output's own layout: y and dx NHWC, dw KRSC), with
// abs_sum[i] = sum |a b| and sq_sum[i] = sum (a b)^2 over its products, all in double from the
// operands converted exactly: what a rounding-error bound scales with (the worst case with
// sum |a b|, a sum of independent rounding errors with sqrt(sum (a b)^2)). Device arrays of
// conv_output_elements(), every element of which is written. Returns the status of its launches
// (cudaSuccess once they are queued).
cudaError_t conv_reference(ConvPass pass, DType t, const ConvShape& s, const ConvOperands& in,
                           double* ref, double* abs_sum, double* sq_sum, cudaStream_t stream);

// abs_sum[i] += norm_weight * sqrt(sq_sum[i]) for i < n: one scale array for the check
// (kernels/reference.h: check_elements) where a bound has both terms.
cudaError_t add_weighted_norm(double* abs_sum, const double* sq_sum, std::size_t n,
                              double norm_weight, cudaStream_t stream);

}  // namespace cubench
