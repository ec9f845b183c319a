// The attention reference (attention_reference.h): one block per row, double precision, plain
// loops. It only has to be right and fast enough for a few rows at full size or every row of a
// small problem.
#include <cmath>

#include "kernels/attention_reference.h"
#include "kernels/elements.cuh"

namespace cubench {
namespace {

constexpr int kThreads = 256;  // also the largest head_dim (one thread per element of a row)
constexpr double kU32 = 5.9604644775390625e-08;  // 2^-24, fp32's unit roundoff

enum class Reduce { sum, max };

// The block's sum or max of x (every thread gets it).
__device__ double block_reduce(double x, Reduce op) {
  __shared__ double partial[kThreads];
  __syncthreads();  // the previous reduction's readers are done with `partial`
  partial[threadIdx.x] = x;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      const double other = partial[threadIdx.x + stride];
      partial[threadIdx.x] =
          op == Reduce::sum ? partial[threadIdx.x] + other : fmax(partial[threadIdx.x], other);
    }
    __syncthreads();
  }
  return partial[0];
}

struct RowIndex {
  long long b, i, h;
};
__device__ RowIndex decode(long long r, const AttentionProblem& p) {
  return {r / (static_cast<long long>(p.seq) * p.heads), (r / p.heads) % p.seq, r % p.heads};
}
// Offset of row (b, i, h) of a BSHD tensor.
__device__ long long offset(const AttentionProblem& p, long long b, long long i, long long h) {
  return ((b * p.seq + i) * p.heads + h) * p.head_dim;
}

template <typename T>
__global__ void rows_kernel(AttentionProblem p, const T* q, const T* k, const T* v, const T* d_o,
                            const std::int64_t* rows, AttentionRows out) {
  __shared__ double q_row[kThreads], do_row[kThreads], o_row[kThreads], o_allow[kThreads];
  const int D = p.head_dim, S = p.seq, t = threadIdx.x;
  const long long slot = blockIdx.x;
  const long long r = rows ? rows[slot] : slot;
  const RowIndex at = decode(r, p);
  const int n = p.causal ? static_cast<int>(at.i) + 1 : S;  // the keys this query sees
  double* P = out.p + slot * S;
  for (int d = t; d < D; d += kThreads) {
    q_row[d] = load_double(q, r * D + d);
    if (d_o) do_row[d] = load_double(d_o, r * D + d);
  }
  __syncthreads();

  // Scores, their maximum, and the largest scale sum_d |q k| (fp32's error in a score scales
  // with it). Each thread keeps to its own keys j until the reductions.
  double top = -INFINITY, largest_abs = 0;
  for (int j = t; j < S; j += kThreads) {
    if (j >= n) {
      P[j] = 0;
      continue;
    }
    const T* key = k + offset(p, at.b, j, at.h);
    double s = 0, s_abs = 0;
    for (int d = 0; d < D; ++d) {
      const double x = q_row[d] * load_double(key, d);
      s += x;
      s_abs += fabs(x);
    }
    P[j] = s * p.scale;
    top = fmax(top, s * p.scale);
    largest_abs = fmax(largest_abs, s_abs * p.scale);
  }
  top = block_reduce(top, Reduce::max);
  largest_abs = block_reduce(largest_abs, Reduce::max);
  double sum = 0;
  for (int j = t; j < n; j += kThreads) {
    P[j] = exp(P[j] - top);
    sum += P[j];
  }
  sum = block_reduce(sum, Reduce::sum);
  for (int j = t; j < n; j += kThreads) P[j] /= sum;
  __syncthreads();  // P complete for every thread

  // P's relative error in fp32: from the scores (both exponentials' arguments) and from the
  // exponentials, the row's sum and the running rescales (n + 16 roundings). fp32 accumulation
  // of n terms: (n + 2) 2^-24 of their absolute sum.
  const double eps = 2 * (D + 2) * kU32 * largest_abs + (n + 16) * kU32;
  const double gamma = (n + 2) * kU32;
  for (int d = t; d < D; d += kThreads) {
    double o = 0, sq = 0, abs_sum = 0;
    for (int j = 0; j < n; ++j) {
      const double vj = load_double(v + offset(p, at.b, j, at.h), d);
      const double term = P[j] * vj;
      const double rounding = p.u * fabs(term) + p.eta * fabs(vj);  // P rounded to T
      o += term;
      sq += rounding * rounding;
      abs_sum += fabs(term);
    }
    const double allow = p.c_rand * sqrt(sq) + (eps + gamma) * abs_sum + p.eta;
    out.o[slot * D + d] = o;
    out.o_allow[slot * D + d] = allow;
    o_row[d] = o;
    o_allow[d] = allow;
  }
  if (!d_o) return;  // the same for the whole block
  __syncthreads();

  // D = dO . O, and how far the kernel's D (from the stored O, in fp32) may be from it: O's
  // allowance and its rounding to T (2u |O|), and fp32 accumulation.
  double dot = 0, dot_error = 0, dot_abs = 0;
  for (int d = t; d < D; d += kThreads) {
    dot += do_row[d] * o_row[d];
    dot_error += fabs(do_row[d]) * (o_allow[d] + 2 * p.u * fabs(o_row[d]));
    dot_abs += fabs(do_row[d] * o_row[d]);
  }
  const double d_i = block_reduce(dot, Reduce::sum);
  const double err_d = block_reduce(dot_error, Reduce::sum) +
                       (D + 2) * kU32 * block_reduce(dot_abs, Reduce::sum);

  // dS = P (dP - D) and its fp32 error apart from D's (which dQ and dK take separately): P's
  // relative error, and dP's fp32 accumulation over head_dim.
  double* dS = out.ds + slot * S;
  double* A = out.a + slot * S;
  for (int j = t; j < S; j += kThreads) {
    if (j >= n) {
      dS[j] = A[j] = 0;
      continue;
    }
    const T* value = v + offset(p, at.b, j, at.h);
    double dp = 0, dp_abs = 0;
    for (int d = 0; d < D; ++d) {
      const double x = do_row[d] * load_double(value, d);
      dp += x;
      dp_abs += fabs(x);
    }
    dS[j] = P[j] * (dp - d_i);
    A[j] = P[j] * (eps * fabs(dp - d_i) + (D + 2) * kU32 * dp_abs);
  }
  if (t == 0) {
    out.eps[slot] = eps;
    out.err_d[slot] = err_d;
  }
  __syncthreads();

  // dQ = scale sum_j dS K: dS rounded to T, its fp32 error, D's error (the same for every key:
  // err_d |sum_j P K|), fp32 accumulation.
  for (int d = t; d < D; d += kThreads) {
    double dq = 0, sq = 0, from_a = 0, p_k = 0, abs_sum = 0;
    for (int j = 0; j < n; ++j) {
      const double kj = load_double(k + offset(p, at.b, j, at.h), d);
      const double term = dS[j] * kj;
      const double rounding = p.u * fabs(term) + p.eta * fabs(kj);
      dq += term;
      sq += rounding * rounding;
      from_a += A[j] * fabs(kj);
      p_k += P[j] * kj;
      abs_sum += fabs(term);
    }
    out.dq[slot * D + d] = p.scale * dq;
    out.dq_allow[slot * D + d] =
        p.scale * (p.c_rand * sqrt(sq) + from_a + err_d * fabs(p_k) + gamma * abs_sum) + p.eta;
  }
}

// One block per key row (b, j, h), a thread per element: dK = scale sum_i dS Q and dV = sum_i P
// dO over the queries i that see key j, from the rows pass's P, dS and errors.
template <typename T>
__global__ void columns_kernel(AttentionProblem p, const T* q, const T* d_o, AttentionRows rows,
                               double* dk, double* dk_allow, double* dv, double* dv_allow) {
  const int D = p.head_dim, S = p.seq;
  const long long r = blockIdx.x;
  const RowIndex at = decode(r, p);
  const long long j = at.i;
  const double gamma = (S + 2) * kU32;
  for (int d = threadIdx.x; d < D; d += kThreads) {
    double k_sum = 0, k_sq = 0, k_from_a = 0, k_abs = 0;
    double v_sum = 0, v_sq = 0, v_from_eps = 0, v_abs = 0;
    for (long long i = p.causal ? j : 0; i < S; ++i) {
      const long long row = offset(p, at.b, i, at.h) / D;  // its slot in the rows pass
      const double P = rows.p[row * S + j], dS = rows.ds[row * S + j];
      const double qi = load_double(q, row * D + d), doi = load_double(d_o, row * D + d);
      const double k_term = dS * qi, v_term = P * doi;
      const double k_round = p.u * fabs(k_term) + p.eta * fabs(qi);
      const double v_round = p.u * fabs(v_term) + p.eta * fabs(doi);
      k_sum += k_term;
      k_sq += k_round * k_round;
      k_from_a += (rows.a[row * S + j] + P * rows.err_d[row]) * fabs(qi);
      k_abs += fabs(k_term);
      v_sum += v_term;
      v_sq += v_round * v_round;
      v_from_eps += rows.eps[row] * fabs(v_term);
      v_abs += fabs(v_term);
    }
    dk[r * D + d] = p.scale * k_sum;
    dk_allow[r * D + d] = p.scale * (p.c_rand * sqrt(k_sq) + k_from_a + gamma * k_abs) + p.eta;
    dv[r * D + d] = v_sum;
    dv_allow[r * D + d] = p.c_rand * sqrt(v_sq) + v_from_eps + gamma * v_abs + p.eta;
  }
}

template <typename T>
__global__ void gather_rows_kernel(const T* x, const std::int64_t* rows, int head_dim,
                                   double* out) {
  for (int d = threadIdx.x; d < head_dim; d += blockDim.x)
    out[blockIdx.x * static_cast<long long>(head_dim) + d] =
        load_double(x, rows[blockIdx.x] * head_dim + d);
}

}  // namespace

void attention_reference_rows(const AttentionProblem& p, const void* q, const void* k,
                              const void* v, const void* d_o, const std::int64_t* rows, int count,
                              const AttentionRows& out, cudaStream_t stream) {
  if (count <= 0 || p.head_dim > kThreads) return;
  dispatch_dtype(p.t, [&](auto tag) {
    using T = decltype(tag);
    rows_kernel<T><<<count, kThreads, 0, stream>>>(p, static_cast<const T*>(q),
                                                   static_cast<const T*>(k),
                                                   static_cast<const T*>(v),
                                                   static_cast<const T*>(d_o), rows, out);
  });
}

void attention_reference_columns(const AttentionProblem& p, const void* q, const void* d_o,
                                 const AttentionRows& rows, double* dk, double* dk_allow,
                                 double* dv, double* dv_allow, cudaStream_t stream) {
  const long long count = static_cast<long long>(p.batch) * p.seq * p.heads;
  if (count <= 0 || p.head_dim > kThreads) return;
  dispatch_dtype(p.t, [&](auto tag) {
    using T = decltype(tag);
    columns_kernel<T><<<static_cast<unsigned>(count), kThreads, 0, stream>>>(
        p, static_cast<const T*>(q), static_cast<const T*>(d_o), rows, dk, dk_allow, dv,
        dv_allow);
  });
}

void gather_rows_as_double(DType t, const void* x, const std::int64_t* rows, int count,
                           int head_dim, double* out, cudaStream_t stream) {
  if (count <= 0) return;
  dispatch_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    gather_rows_kernel<T><<<count, 128, 0, stream>>>(static_cast<const T*>(x), rows, head_dim,
                                                      out);
  });
}

}  // namespace cubench
