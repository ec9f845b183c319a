#pragma once
// Scaled-dot-product attention recomputed in double precision from the stored inputs, row by row,
// independent of cuDNN, with how far each element of a flash-attention result may be from it.
//
// Layout: Q, K, V, O, dO, dQ, dK, dV are BSHD (batch, seq, heads, head_dim; head_dim
// contiguous), so "row r" is element (b, i, h, :) at offset r * head_dim, r = (b * seq + i) *
// heads + h. Math: S = scale Q K^T (key j > query i masked out when causal), P = softmax(S),
// O = P V; backward: dV = P^T dO, dP = dO V^T, D = rowsum(dO o O), dS = P o (dP - D),
// dQ = scale dS K, dK = scale dS^T Q.
//
// The allowance of an element (on top of rel_tol |ref|, the output's rounding) models how flash
// attention computes it: S, dP and the sums in fp32 (worst case: (terms + 2) 2^-24 times the sum
// of |terms|, and P's relative error from S's and the exponentials'); P and dS rounded to the
// input type before their matrix products (each term off by at most u |term| + eta |factor|, the
// errors independent, so c_rand times their root-sum-square: c_rand = 6 is about 10 standard
// deviations, and above the worst case for up to 36 terms); D from the rounded O (its error
// from O's allowance); and eta for the output's own rounding where it is subnormal (fp16).
// docs/attention.md derives it.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/dtype.h"

namespace cubench {

struct AttentionProblem {
  int batch = 0, heads = 0, seq = 0, head_dim = 0;  // head_dim <= 256
  bool causal = false;
  double scale = 0;   // attn_scale
  DType t{};          // storage type of Q, K, V, dO
  double u = 0;       // unit roundoff of t (P and dS are rounded to it)
  double eta = 0;     // half t's smallest subnormal: the absolute error of rounding tiny values
  double c_rand = 6;  // multiple of the rounding errors' root-sum-square allowed
};

// Outputs of attention_reference_rows, each count x head_dim (row k of the list at k * head_dim),
// and its scratch, each count x seq: device arrays the caller allocates. dq and dq_allow are
// written only with dO.
struct AttentionRows {
  double *o = nullptr, *o_allow = nullptr;
  double *dq = nullptr, *dq_allow = nullptr;
  double *p = nullptr, *ds = nullptr, *a = nullptr;  // P, dS, dS's fp32 error, per (row, key)
  double *eps = nullptr, *err_d = nullptr;           // per row: P's relative error, D's error
};

// For `count` rows (rows: device array of BSHD row indices; null: every row, in order), the
// reference O (and, with d_o, dQ) and their allowances. d_o null: forward only.
void attention_reference_rows(const AttentionProblem& p, const void* q, const void* k,
                              const void* v, const void* d_o, const std::int64_t* rows, int count,
                              const AttentionRows& out, cudaStream_t stream);

// Every row of dK and dV (BSHD order) and their allowances, after attention_reference_rows ran
// over every row (rows null, count = batch * seq * heads) with d_o.
void attention_reference_columns(const AttentionProblem& p, const void* q, const void* d_o,
                                 const AttentionRows& rows, double* dk, double* dk_allow,
                                 double* dv, double* dv_allow, cudaStream_t stream);

// out[k * head_dim + d] = x[rows[k] * head_dim + d] as double: the checked rows of a BSHD result.
void gather_rows_as_double(DType t, const void* x, const std::int64_t* rows, int count,
                           int head_dim, double* out, cudaStream_t stream);

}  // namespace cubench
