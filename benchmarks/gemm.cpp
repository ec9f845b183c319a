// gemm/<dtype>/<m>/<n>/<k> and gemm_autotune/<dtype>/<m>/<n>/<k>: C = A^T B through cuBLASLt.
//   fp32: FP32 in/out, CUBLAS_COMPUTE_32F_PEDANTIC (no TF32, no reduced-precision shortcuts)
//   tf32: FP32 in/out, CUBLAS_COMPUTE_32F_FAST_TF32
//   fp16, bf16: 16-bit in/out, FP32 accumulation (what PyTorch's torch.mm does)
//   fp8: e4m3 in, bf16 out, FP32 accumulation (sm_89+; cuBLASLt wants the "TN" layout we use)
// gemm takes the heuristic's first algorithm; gemm_autotune times its top 8 during set-up and
// keeps the fastest. Model: 2mnk FLOPs. Check: every element of C, poisoned before the checked
// run, against an fp64 product of the same stored inputs (cuBLAS DGEMM), each within
// gemm_bound() (fixtures/detail/validate.h); the worst element's error over its bound is the
// `max_error_ratio` counter.
#include <cublasLt.h>
#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "fixtures/cubench.h"
#include "kernels/fill.h"
#include "kernels/reference.h"

namespace cubench {
namespace {

constexpr std::size_t kWorkspaceBytes = 32u << 20;  // cuBLAS's recommendation for Hopper
constexpr int kCandidates = 8;

struct Shape {
  int m, n, k;
};

struct LtTypes {
  cudaDataType_t ab, cd;
  cublasComputeType_t compute;
  DType out;
};

LtTypes lt_types(DType t) {
  switch (t) {
    case DType::fp32:
      return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_PEDANTIC, DType::fp32};
    case DType::tf32:
      return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, DType::fp32};
    case DType::fp16:
      return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, DType::fp16};
    case DType::bf16:
      return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, DType::bf16};
    case DType::fp8_e4m3:
      return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, DType::bf16};
    default:
      throw Error("gemm: no cuBLASLt mapping for dtype " + std::string(dtype_name(t)));
  }
}

class Gemm final : public BenchmarkCase {
 public:
  Gemm(DType t, Shape s, bool autotune) : t_(t), s_(s), types_(lt_types(t)), autotune_(autotune) {}

  ~Gemm() override {
    if (pref_) cublasLtMatmulPreferenceDestroy(pref_);
    for (auto* layout : {a_layout_, b_layout_, c_layout_})
      if (layout) cublasLtMatrixLayoutDestroy(layout);
    if (desc_) cublasLtMatmulDescDestroy(desc_);
    if (handle_) cublasLtDestroy(handle_);
  }

  void setup(Env& env) override {
    const DeviceInfo& d = env.info();
    if (t_ == DType::fp8_e4m3 && d.cc_major * 10 + d.cc_minor < 89)
      throw Error("fp8 GEMM needs compute capability 8.9 or newer (Ada, Hopper); this GPU is " +
                  std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor));
    const std::size_t in_bytes = dtype_bytes(t_);
    a_ = env.alloc(std::size_t(s_.k) * s_.m * in_bytes);
    b_ = env.alloc(std::size_t(s_.k) * s_.n * in_bytes);
    c_ = env.alloc(std::size_t(s_.m) * s_.n * dtype_bytes(types_.out));
    workspace_ = env.alloc(kWorkspaceBytes);
    fill_inputs(env);

    CUBENCH_CUBLAS(cublasLtCreate(&handle_));
    CUBENCH_CUBLAS(cublasLtMatmulDescCreate(&desc_, types_.compute, CUDA_R_32F));
    cublasOperation_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
    CUBENCH_CUBLAS(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a,
                                                  sizeof trans_a));
    CUBENCH_CUBLAS(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b,
                                                  sizeof trans_b));
    CUBENCH_CUBLAS(cublasLtMatrixLayoutCreate(&a_layout_, types_.ab, s_.k, s_.m, s_.k));
    CUBENCH_CUBLAS(cublasLtMatrixLayoutCreate(&b_layout_, types_.ab, s_.k, s_.n, s_.k));
    CUBENCH_CUBLAS(cublasLtMatrixLayoutCreate(&c_layout_, types_.cd, s_.m, s_.n, s_.m));
    CUBENCH_CUBLAS(cublasLtMatmulPreferenceCreate(&pref_));
    std::size_t workspace = kWorkspaceBytes;
    CUBENCH_CUBLAS(cublasLtMatmulPreferenceSetAttribute(
        pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace));

    std::vector<cublasLtMatmulHeuristicResult_t> found(kCandidates);
    int returned = 0;
    CUBENCH_CUBLAS(cublasLtMatmulAlgoGetHeuristic(handle_, desc_, a_layout_, b_layout_, c_layout_,
                                                  c_layout_, pref_, kCandidates, found.data(),
                                                  &returned));
    if (returned == 0) throw Error("cuBLASLt offers no algorithm for " + describe());
    found.resize(returned);
    chosen_ = 0;
    if (autotune_) autotune(env, found);
    algo_ = found[chosen_].algo;
    candidates_ = returned;
    // NaN in every float format: an element the first (checked) run does not write shows.
    CUBENCH_CUDA(cudaMemsetAsync(c_.get(), 0xff, c_.bytes(), env.stream()));
  }

  void run(Env& env) override { matmul(env.stream(), algo_); }

  void validate(Env& env) override { check_every_element(env); }

  // One element of C 10% off: the largest in magnitude of C's first 256 (a typical size, where
  // a relative error shows against the bound).
  std::string plant_fault(Env& env) override {
    cudaStream_t s = env.stream();
    const std::size_t look = std::min<std::size_t>(256, std::size_t(s_.m) * s_.n);
    DeviceBuffer head = env.alloc(look * sizeof(double));
    convert_to_double(types_.out, c_.get(), head.as<double>(), look, s);
    CUBENCH_CUDA_LAUNCHED();
    std::vector<double> values(look);
    CUBENCH_CUDA(cudaMemcpyAsync(values.data(), head.get(), look * sizeof(double),
                                 cudaMemcpyDeviceToHost, s));
    CUBENCH_CUDA(cudaStreamSynchronize(s));
    std::size_t at = 0;
    for (std::size_t i = 1; i < look; ++i)
      if (std::fabs(values[i]) > std::fabs(values[at])) at = i;
    perturb_element(types_.out, c_.get(), at, 1.1, 0, s);
    CUBENCH_CUDA_LAUNCHED();
    return "C[" + std::to_string(at) + "] = " + std::to_string(values[at]) + " made 10% larger";
  }

  // Every element of C against C = A^T B in fp64 (cuBLAS's DGEMM on the same stored inputs,
  // converted exactly), within gemm_bound() of it.
  void check_every_element(Env& env) {
    cudaStream_t s = env.stream();
    const std::size_t a_elems = std::size_t(s_.k) * s_.m, b_elems = std::size_t(s_.k) * s_.n;
    const std::size_t c_elems = std::size_t(s_.m) * s_.n;
    DeviceBuffer a = env.alloc(a_elems * 8), b = env.alloc(b_elems * 8);
    DeviceBuffer ref = env.alloc(c_elems * 8), scale = env.alloc(c_elems * 8);
    convert_to_double(t_, a_.get(), a.as<double>(), a_elems, s);
    convert_to_double(t_, b_.get(), b.as<double>(), b_elems, s);
    CUBENCH_CUDA_LAUNCHED();
    cublasHandle_t blas = nullptr;
    CUBENCH_CUBLAS(cublasCreate(&blas));
    try {
      CUBENCH_CUBLAS(cublasSetStream(blas, s));
      const double one = 1, zero = 0;
      auto dgemm = [&](DeviceBuffer& out) {
        CUBENCH_CUBLAS(cublasDgemm(blas, CUBLAS_OP_T, CUBLAS_OP_N, s_.m, s_.n, s_.k, &one,
                                   a.as<double>(), s_.k, b.as<double>(), s_.k, &zero,
                                   out.as<double>(), s_.m));
      };
      dgemm(ref);
      absolute_in_place(a.as<double>(), a_elems, s);
      absolute_in_place(b.as<double>(), b_elems, s);
      CUBENCH_CUDA_LAUNCHED();
      dgemm(scale);  // sum_k |a||b| per element: what accumulation errors scale with
      CUBENCH_CUDA(cudaStreamSynchronize(s));
    } catch (...) {
      cublasDestroy(blas);
      throw;
    }
    cublasDestroy(blas);
    const GemmBound bound = gemm_bound(t_, s_.k);
    const ElementCheck checked =
        require_elements_within(describe(), env, types_.out, c_.get(), ref.as<double>(),
                                scale.as<double>(), c_elems, bound.rel, bound.scale);
    max_error_ratio_ = checked.max_ratio;
    rel_error_ = checked.sum_sq_ref > 0 ? std::sqrt(checked.sum_sq_error / checked.sum_sq_ref) : 0;
  }

  Work work() const override { return {model::gemm_flops(s_.m, s_.n, s_.k), t_, 0}; }

  std::string label() const override {
    std::string l = "cuBLASLt algo " + std::to_string(algo_id(algo_));
    if (autotune_)
      l += ", autotuned: candidate " + std::to_string(chosen_ + 1) + " of " +
           std::to_string(candidates_);
    else
      l += ", heuristic's first of " + std::to_string(candidates_);
    if (autotune_ && chosen_ > 0) {
      char gain[64];
      std::snprintf(gain, sizeof gain, " (%.1f%% faster than the first)", (speedup_ - 1) * 100);
      l += gain;
    }
    return l;
  }

  std::map<std::string, double> counters(double) const override {
    return {{"rel_error", rel_error_}, {"max_error_ratio", max_error_ratio_}};
  }

 private:
  std::string describe() const {
    return "gemm " + std::string(dtype_name(t_)) + " " + std::to_string(s_.m) + "x" +
           std::to_string(s_.n) + "x" + std::to_string(s_.k);
  }

  void fill_inputs(Env& env) {
    fill_uniform(t_, a_.get(), std::size_t(s_.k) * s_.m, env.fresh_seed(), -1.f, 1.f, env.stream());
    fill_uniform(t_, b_.get(), std::size_t(s_.k) * s_.n, env.fresh_seed(), -1.f, 1.f, env.stream());
    CUBENCH_CUDA_LAUNCHED();
  }

  void matmul(cudaStream_t stream, const cublasLtMatmulAlgo_t& algo) {
    const float alpha = 1.f, beta = 0.f;
    CUBENCH_CUBLAS(cublasLtMatmul(handle_, desc_, &alpha, a_.get(), a_layout_, b_.get(), b_layout_,
                                  &beta, c_.get(), c_layout_, c_.get(), c_layout_, &algo,
                                  workspace_.get(), kWorkspaceBytes, stream));
  }

  // Times each candidate (3 warm-up runs, then the median of 10) and keeps the fastest. Part of
  // set-up, so autotuning never lands in a sample.
  void autotune(Env& env, const std::vector<cublasLtMatmulHeuristicResult_t>& found) {
    double best = 0, first = 0;
    for (std::size_t i = 0; i < found.size(); ++i) {
      double t = 0;
      try {
        t = median_seconds_on_stream(
            env.stream(), [&] { matmul(env.stream(), found[i].algo); }, 3, 10);
      } catch (const Error&) {
        continue;  // a candidate the heuristic offered but that will not run here
      }
      if (i == 0) first = t;
      if (best == 0 || t < best) {
        best = t;
        chosen_ = static_cast<int>(i);
      }
    }
    speedup_ = best > 0 && first > 0 ? first / best : 1;
  }

  static int algo_id(const cublasLtMatmulAlgo_t& algo) {
    int id = -1;
    std::size_t written = 0;
    cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &written);
    return id;
  }

  DType t_;
  Shape s_;
  LtTypes types_;
  bool autotune_;
  DeviceBuffer a_, b_, c_, workspace_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr, c_layout_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  int chosen_ = 0, candidates_ = 0;
  double speedup_ = 1;
  double rel_error_ = 0, max_error_ratio_ = 0;
};

void register_gemm() {
  const DType dtypes[] = {DType::fp32, DType::tf32, DType::fp16, DType::bf16, DType::fp8_e4m3};
  // Square sizes, then Transformer-shaped (8192 tokens, hidden 4096, LLaMA-7B): fused QKV, MLP
  // up, MLP down.
  const std::vector<std::int64_t> m = {1024, 2048, 4096, 8192, 16384, 8192, 8192, 8192};
  const std::vector<std::int64_t> n = {1024, 2048, 4096, 8192, 16384, 12288, 11008, 4096};
  const std::vector<std::int64_t> k = {1024, 2048, 4096, 8192, 16384, 4096, 4096, 11008};
  for (bool autotune : {false, true})
    Family(autotune ? "gemm_autotune" : "gemm",
           autotune ? "C = A^T B through cuBLASLt, the fastest of the heuristic's top 8"
                    : "C = A^T B through cuBLASLt, the heuristic's first algorithm")
        .axis(dtype_axis({dtypes, dtypes + 5}))
        .axis(int_axis("m", m))
        .axis(int_axis("n", n))
        .axis(int_axis("k", k))
        .zip({"m", "n", "k"})
        .counter({"rel_error", "", Better::lower, "RMS error of C against the fp64 product"})
        .counter({"max_error_ratio", "", Better::lower,
                  "worst element's error over its bound (gemm_bound); above 1 fails the check"})
        .main_counter("TFLOPS")
        .size_axis("m")
        // Default run: the square curve at 1024, 2048, 4096 and 16384 (8192 lies on the plateau
        // 4096 already shows) and one LLaMA shape; fp32 without 16384^3 (0.17 s a run, and
        // flat from 4096). Autotuning, which times 8 algorithms per configuration: bf16 and fp8
        // at 1024 (where the heuristic's pick differs most) and 4096.
        .default_suite([autotune](const Point& p) {
          const std::int64_t m = p.get_int("m"), n = p.get_int("n"), k = p.get_int("k");
          const bool square = m == n && n == k;
          if (autotune)
            return square && (m == 1024 || m == 4096) &&
                   (p.get_dtype() == DType::bf16 || p.get_dtype() == DType::fp8_e4m3);
          if (!square) return n == 11008;
          return m != 8192 && !(m == 16384 && p.get_dtype() == DType::fp32);
        })
        .sampling(Sampling::launches_only())
        .size([](const Point& p) {
          return model::gemm_flops(p.get_int("m"), p.get_int("n"), p.get_int("k"));
        })
        .make([autotune](const Point& p) {
          Shape s{int(p.get_int("m")), int(p.get_int("n")), int(p.get_int("k"))};
          return std::make_unique<Gemm>(p.get_dtype(), s, autotune);
        })
        .add();
}
CUBENCH_REGISTER(register_gemm);

}  // namespace
}  // namespace cubench
