// The direct convolution reference (conv_reference.h) as one tiled kernel: each pass is written
// as an implicit GEMM, out[m, j] = sum_d a(m, d) b(j, d), whose a() and b() read the operands
// straight from their NHWC/KRSC storage (zero where a tap falls in the padding or between the
// strides), so no im2col copy and nothing shared with cuDNN's algorithms. A block accumulates a
// 32 x 32 tile of the output over the whole reduction, or over a slice of it (split-K) where the
// output alone would leave the GPU idle (wgrad: K x RSC outputs, each a sum over N*P*Q).
#include <algorithm>

#include "kernels/conv_reference.h"
#include "kernels/elements.cuh"

namespace cubench {
namespace {

constexpr int kTileM = 32, kTileN = 32, kTileK = 16;
constexpr int kThreadsX = 16, kThreadsY = 16, kThreads = kThreadsX * kThreadsY;
static_assert(kTileM * kTileK == 2 * kThreads && kTileN * kTileK == 2 * kThreads,
              "each thread loads two elements of each operand tile");

// Every dimension and index of ResNet-50's layers at batch 256 fits in 31 bits (the largest
// tensor has 256*112*112*64 = 205,520,896 elements): 32-bit index arithmetic, which the tile loads
// spend most of their instructions on.
struct Dims {
  int n, c, h, w, k, r, s, pad, stride, p, q;
};

// Element i as double. __host__ too, like the operand readers below, so that their index
// arithmetic can be checked against a plain loop on a machine without a GPU.
template <typename T>
__host__ __device__ double element(const T* p, std::size_t i) {
  return static_cast<double>(static_cast<float>(p[i]));
}
__host__ __device__ double element(const double* p, std::size_t i) { return p[i]; }

Dims dims_of(const ConvShape& s) {
  return {int(s.n), int(s.c),   int(s.h),      int(s.w),   int(s.k),  int(s.r),
          int(s.s), int(s.pad), int(s.stride), int(s.p()), int(s.q())};
}

// fwd: m = (n,p,q), j = k, d = (r,s,c) with c fastest.
template <typename T>
struct Fwd {
  const T* x;
  const T* w;
  Dims g;
  int rows() const { return g.n * g.p * g.q; }
  int cols() const { return g.k; }
  int depth() const { return g.r * g.s * g.c; }
  static constexpr bool a_depth_fastest = true;  // x is contiguous in c
  static constexpr bool b_depth_fastest = true;  // w[k] is contiguous in (r,s,c)
  __host__ __device__ double a(int m, int d) const {
    const int q = m % g.q, np = m / g.q, p = np % g.p, n = np / g.p;
    const int c = d % g.c, rs = d / g.c, s = rs % g.s, r = rs / g.s;
    const int h = p * g.stride - g.pad + r, wi = q * g.stride - g.pad + s;
    if (h < 0 || h >= g.h || wi < 0 || wi >= g.w) return 0;
    return element(x, ((std::size_t(n) * g.h + h) * g.w + wi) * g.c + c);
  }
  __host__ __device__ double b(int j, int d) const {
    return element(w, std::size_t(j) * (g.r * g.s * g.c) + d);
  }
};

// dgrad: m = (n,h,w), j = c, d = (r,s,k) with k fastest. Input pixel h takes tap r from output
// row p where p*stride - pad + r = h: only when h + pad - r is a non-negative multiple of the
// stride below P*stride.
template <typename T>
struct Dgrad {
  const T* dy;
  const T* w;
  Dims g;
  int rows() const { return g.n * g.h * g.w; }
  int cols() const { return g.c; }
  int depth() const { return g.r * g.s * g.k; }
  static constexpr bool a_depth_fastest = true;   // dy is contiguous in k
  static constexpr bool b_depth_fastest = false;  // w is contiguous in c
  __host__ __device__ double a(int m, int d) const {
    const int wi = m % g.w, nh = m / g.w, h = nh % g.h, n = nh / g.h;
    const int k = d % g.k, rs = d / g.k, s = rs % g.s, r = rs / g.s;
    const int ph = h + g.pad - r, qw = wi + g.pad - s;
    if (ph < 0 || qw < 0 || ph % g.stride != 0 || qw % g.stride != 0) return 0;
    const int p = ph / g.stride, q = qw / g.stride;
    if (p >= g.p || q >= g.q) return 0;
    return element(dy, ((std::size_t(n) * g.p + p) * g.q + q) * g.k + k);
  }
  __host__ __device__ double b(int j, int d) const {
    const int k = d % g.k, rs = d / g.k;  // rs = r*S + s
    return element(w, (std::size_t(k) * g.r * g.s + rs) * g.c + j);
  }
};

// wgrad: m = k, j = (r,s,c) with c fastest, d = (n,p,q).
template <typename T>
struct Wgrad {
  const T* x;
  const T* dy;
  Dims g;
  int rows() const { return g.k; }
  int cols() const { return g.r * g.s * g.c; }
  int depth() const { return g.n * g.p * g.q; }
  static constexpr bool a_depth_fastest = false;  // dy is contiguous in k
  static constexpr bool b_depth_fastest = false;  // x is contiguous in c
  __host__ __device__ double a(int m, int d) const { return element(dy, std::size_t(d) * g.k + m); }
  __host__ __device__ double b(int j, int d) const {
    const int c = j % g.c, rs = j / g.c, s = rs % g.s, r = rs / g.s;
    const int q = d % g.q, np = d / g.q, p = np % g.p, n = np / g.p;
    const int h = p * g.stride - g.pad + r, wi = q * g.stride - g.pad + s;
    if (h < 0 || h >= g.h || wi < 0 || wi >= g.w) return 0;
    return element(x, ((std::size_t(n) * g.h + h) * g.w + wi) * g.c + c);
  }
};

// Element e (of two per thread) of a tile row x depth, read with consecutive threads on the
// operand's contiguous index.
template <bool depth_fastest, int tile>
__host__ __device__ void tile_position(int e, int& row, int& d) {
  if (depth_fastest) {
    d = e % kTileK;
    row = e / kTileK;
  } else {
    row = e % tile;
    d = e / tile;
  }
}

template <typename G>
__global__ void __launch_bounds__(kThreads)
    implicit_gemm_kernel(G g, int rows, int cols, int depth, int depth_per_split, double* ref,
                         double* abs_sum, double* sq_sum) {
  __shared__ double as[kTileK][kTileM + 1], bs[kTileK][kTileN + 1];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kThreadsX + tx;
  const int m0 = blockIdx.x * kTileM, j0 = blockIdx.y * kTileN;
  const int d_begin = blockIdx.z * depth_per_split;
  const int d_end = min(depth, d_begin + depth_per_split);
  double sum[2][2] = {}, sum_abs[2][2] = {}, sum_sq[2][2] = {};
  for (int d0 = d_begin; d0 < d_end; d0 += kTileK) {
    for (int i = 0; i < 2; ++i) {
      const int e = tid + i * kThreads;
      int row, d;
      tile_position<G::a_depth_fastest, kTileM>(e, row, d);
      as[d][row] = m0 + row < rows && d0 + d < d_end ? g.a(m0 + row, d0 + d) : 0.0;
      tile_position<G::b_depth_fastest, kTileN>(e, row, d);
      bs[d][row] = j0 + row < cols && d0 + d < d_end ? g.b(j0 + row, d0 + d) : 0.0;
    }
    __syncthreads();
#pragma unroll
    for (int d = 0; d < kTileK; ++d) {
      const double a[2] = {as[d][ty], as[d][ty + kThreadsY]};
      const double b[2] = {bs[d][tx], bs[d][tx + kThreadsX]};
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          const double product = a[i] * b[j];  // exact: two doubles from <= 24-bit values
          sum[i][j] += product;
          sum_abs[i][j] += fabs(product);
          sum_sq[i][j] = fma(product, product, sum_sq[i][j]);
        }
    }
    __syncthreads();
  }
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      const int m = m0 + ty + i * kThreadsY, col = j0 + tx + j * kThreadsX;
      if (m >= rows || col >= cols) continue;
      const std::size_t at = std::size_t(m) * cols + col;
      if (gridDim.z == 1) {
        ref[at] = sum[i][j];
        abs_sum[at] = sum_abs[i][j];
        sq_sum[at] = sum_sq[i][j];
      } else {  // a slice of the reduction: the slices add up (the outputs start at zero)
        atomicAdd(ref + at, sum[i][j]);
        atomicAdd(abs_sum + at, sum_abs[i][j]);
        atomicAdd(sq_sum + at, sum_sq[i][j]);
      }
    }
}

template <typename G>
cudaError_t launch(const G& g, double* ref, double* abs_sum, double* sq_sum, cudaStream_t stream) {
  const int rows = g.rows(), cols = g.cols(), depth = g.depth();
  const long tiles = long((rows + kTileM - 1) / kTileM) * ((cols + kTileN - 1) / kTileN);
  // Enough blocks to fill an H200 several times over, each slice still 32 tile steps or more.
  constexpr long kWantedBlocks = 4096;
  const long most_splits = std::max(1L, long(depth) / (32 * kTileK));
  const long splits = std::min(most_splits, std::max(1L, (kWantedBlocks + tiles - 1) / tiles));
  int per_split = int((depth + splits - 1) / splits);
  per_split = (per_split + kTileK - 1) / kTileK * kTileK;
  const int used_splits = (depth + per_split - 1) / per_split;
  if (used_splits > 1) {  // the slices add into zeroed outputs
    const std::size_t bytes = std::size_t(rows) * cols * sizeof(double);
    for (double* out : {ref, abs_sum, sq_sum}) {
      const cudaError_t status = cudaMemsetAsync(out, 0, bytes, stream);
      if (status != cudaSuccess) return status;
    }
  }
  const dim3 grid((rows + kTileM - 1) / kTileM, (cols + kTileN - 1) / kTileN, used_splits);
  implicit_gemm_kernel<<<grid, dim3(kThreadsX, kThreadsY), 0, stream>>>(
      g, rows, cols, depth, per_split, ref, abs_sum, sq_sum);
  return cudaGetLastError();
}

__global__ void add_weighted_norm_kernel(double* abs_sum, const double* sq_sum, std::size_t n,
                                         double norm_weight) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    abs_sum[i] += norm_weight * sqrt(sq_sum[i]);
}

}  // namespace

cudaError_t add_weighted_norm(double* abs_sum, const double* sq_sum, std::size_t n,
                              double norm_weight, cudaStream_t stream) {
  add_weighted_norm_kernel<<<4096, 256, 0, stream>>>(abs_sum, sq_sum, n, norm_weight);
  return cudaGetLastError();
}

std::int64_t conv_output_elements(ConvPass pass, const ConvShape& s) {
  switch (pass) {
    case ConvPass::fwd:
      return s.n * s.p() * s.q() * s.k;
    case ConvPass::dgrad:
      return s.n * s.h * s.w * s.c;
    case ConvPass::wgrad:
      return s.k * s.r * s.s * s.c;
  }
  return 0;
}

std::int64_t conv_terms(ConvPass pass, const ConvShape& s) {
  switch (pass) {
    case ConvPass::fwd:
      return s.c * s.r * s.s;
    case ConvPass::dgrad:
      return s.k * s.r * s.s;
    case ConvPass::wgrad:
      return s.n * s.p() * s.q();
  }
  return 0;
}

cudaError_t conv_reference(ConvPass pass, DType t, const ConvShape& s, const ConvOperands& in,
                           double* ref, double* abs_sum, double* sq_sum, cudaStream_t stream) {
  const Dims g = dims_of(s);
  cudaError_t status = cudaErrorInvalidValue;
  dispatch_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    switch (pass) {
      case ConvPass::fwd:
        status = launch(Fwd<T>{static_cast<const T*>(in.x), static_cast<const T*>(in.w), g}, ref,
                        abs_sum, sq_sum, stream);
        break;
      case ConvPass::dgrad:
        status = launch(Dgrad<T>{static_cast<const T*>(in.dy), static_cast<const T*>(in.w), g}, ref,
                        abs_sum, sq_sum, stream);
        break;
      case ConvPass::wgrad:
        status = launch(Wgrad<T>{static_cast<const T*>(in.x), static_cast<const T*>(in.dy), g}, ref,
                        abs_sum, sq_sum, stream);
        break;
    }
  });
  return status;
}

}  // namespace cubench
