// gemm/<dtype>/<m>/<n>/<k> and gemm_autotune/<dtype>/<m>/<n>/<k>: C = A^T B through cuBLASLt.
//   fp32: FP32 in/out, CUBLAS_COMPUTE_32F_PEDANTIC (no TF32, no reduced-precision shortcuts)
//   tf32: FP32 in/out, CUBLAS_COMPUTE_32F_FAST_TF32
//   fp16, bf16: 16-bit in/out, FP32 accumulation (what PyTorch's torch.mm does)
//   fp8: e4m3 in, bf16 out, FP32 accumulation (sm_89+; cuBLASLt wants the "TN" layout we use)
// gemm takes the heuristic's first algorithm; gemm_autotune times its top 8 during set-up and
// keeps the fastest. Model: 2mnk FLOPs. Check: 1024 sampled entries of C (and its corners)
// against a double-precision dot product on the device, relative L2 error within the dtype's
// tolerance, and no NaN/inf anywhere in C after it was poisoned.
#include <cublasLt.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "fixtures/check.h"
#include "fixtures/models.h"
#include "fixtures/registry.h"
#include "fixtures/stats.h"
#include "fixtures/validate.h"
#include "kernels/fill.h"
#include "kernels/reference.h"

namespace cubench {
namespace {

constexpr std::size_t kWorkspaceBytes = 32u << 20;  // cuBLAS's recommendation for Hopper
constexpr int kCandidates = 8;
constexpr int kCheckedEntries = 1024;

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

  void setup(GpuEnv& env) override {
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
  }

  void run(GpuEnv& env) override { matmul(env.stream(), algo_); }

  void validate(GpuEnv& env) override {
    cudaStream_t s = env.stream();
    CUBENCH_CUDA(cudaMemsetAsync(c_.get(), 0xff, c_.bytes(), s));  // NaN in every float format
    run(env);
    std::vector<int> rows, cols;
    sample_positions(env.fresh_seed(), rows, cols);
    const int count = static_cast<int>(rows.size());
    DeviceBuffer d_rows = env.alloc(count * sizeof(int)), d_cols = env.alloc(count * sizeof(int));
    DeviceBuffer d_ref = env.alloc(count * sizeof(double)),
                 d_scale = env.alloc(count * sizeof(double));
    DeviceBuffer d_got = env.alloc(count * sizeof(double));
    DeviceBuffer d_bad = env.alloc(sizeof(unsigned long long));
    CUBENCH_CUDA(
        cudaMemcpyAsync(d_rows.get(), rows.data(), count * sizeof(int), cudaMemcpyHostToDevice, s));
    CUBENCH_CUDA(
        cudaMemcpyAsync(d_cols.get(), cols.data(), count * sizeof(int), cudaMemcpyHostToDevice, s));
    CUBENCH_CUDA(cudaMemsetAsync(d_bad.get(), 0, sizeof(unsigned long long), s));
    reference_gemm_tn(t_, a_.get(), b_.get(), s_.k, d_rows.as<int>(), d_cols.as<int>(), count,
                      d_ref.as<double>(), d_scale.as<double>(), s);
    gather_as_double(types_.out, c_.get(), s_.m, d_rows.as<int>(), d_cols.as<int>(), count,
                     d_got.as<double>(), s);
    count_nonfinite(types_.out, c_.get(), std::size_t(s_.m) * s_.n, d_bad.as<unsigned long long>(),
                    s);
    CUBENCH_CUDA_LAUNCHED();
    std::vector<double> ref(count), got(count);
    unsigned long long bad = 0;
    CUBENCH_CUDA(cudaMemcpyAsync(ref.data(), d_ref.get(), count * sizeof(double),
                                 cudaMemcpyDeviceToHost, s));
    CUBENCH_CUDA(cudaMemcpyAsync(got.data(), d_got.get(), count * sizeof(double),
                                 cudaMemcpyDeviceToHost, s));
    CUBENCH_CUDA(cudaMemcpyAsync(&bad, d_bad.get(), sizeof bad, cudaMemcpyDeviceToHost, s));
    CUBENCH_CUDA(cudaStreamSynchronize(s));
    if (bad > 0)
      throw ValidationError(describe() + ": " + std::to_string(bad) +
                            " entries of C are NaN/inf or were never written");
    error_ = compare(got, ref);
    require_within(describe(), error_, Norm::relative_l2, dtype_tolerance(t_));
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
    return {{"rel_error", error_.rel_l2}};
  }

 private:
  std::string describe() const {
    return "gemm " + std::string(dtype_name(t_)) + " " + std::to_string(s_.m) + "x" +
           std::to_string(s_.n) + "x" + std::to_string(s_.k);
  }

  void fill_inputs(GpuEnv& env) {
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
  void autotune(GpuEnv& env, const std::vector<cublasLtMatmulHeuristicResult_t>& found) {
    cudaEvent_t start, stop;
    CUBENCH_CUDA(cudaEventCreate(&start));
    CUBENCH_CUDA(cudaEventCreate(&stop));
    double best = 0, first = 0;
    for (std::size_t i = 0; i < found.size(); ++i) {
      std::vector<double> times;
      try {
        for (int r = 0; r < 13; ++r) {
          CUBENCH_CUDA(cudaEventRecord(start, env.stream()));
          matmul(env.stream(), found[i].algo);
          CUBENCH_CUDA(cudaEventRecord(stop, env.stream()));
          CUBENCH_CUDA(cudaEventSynchronize(stop));
          float ms = 0;
          CUBENCH_CUDA(cudaEventElapsedTime(&ms, start, stop));
          if (r >= 3) times.push_back(ms);
        }
      } catch (const Error&) {
        continue;  // a candidate the heuristic offered but that will not run here
      }
      double t = median(times);
      if (i == 0) first = t;
      if (best == 0 || t < best) {
        best = t;
        chosen_ = static_cast<int>(i);
      }
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    speedup_ = best > 0 && first > 0 ? first / best : 1;
  }

  static int algo_id(const cublasLtMatmulAlgo_t& algo) {
    int id = -1;
    std::size_t written = 0;
    cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &written);
    return id;
  }

  void sample_positions(std::uint64_t seed, std::vector<int>& rows, std::vector<int>& cols) const {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> row(0, s_.m - 1), col(0, s_.n - 1);
    rows = {0, s_.m - 1, 0, s_.m - 1};
    cols = {0, 0, s_.n - 1, s_.n - 1};
    while (static_cast<int>(rows.size()) < kCheckedEntries) {
      rows.push_back(row(rng));
      cols.push_back(col(rng));
    }
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
  ErrorStats error_;
};

void register_gemm() {
  const DType dtypes[] = {DType::fp32, DType::tf32, DType::fp16, DType::bf16, DType::fp8_e4m3};
  std::vector<Shape> shapes;
  for (int n : {1024, 2048, 4096, 8192, 16384}) shapes.push_back({n, n, n});
  // Transformer-shaped (8192 tokens, hidden 4096, LLaMA-7B): fused QKV, MLP up, MLP down.
  shapes.push_back({8192, 12288, 4096});
  shapes.push_back({8192, 11008, 4096});
  shapes.push_back({8192, 4096, 11008});
  for (bool autotune : {false, true})
    for (DType t : dtypes)
      for (Shape s : shapes) {
        Spec spec;
        spec.name = std::string(autotune ? "gemm_autotune/" : "gemm/") +
                    std::string(dtype_name(t)) + "/" + std::to_string(s.m) + "/" +
                    std::to_string(s.n) + "/" + std::to_string(s.k);
        spec.make = [=] { return std::make_unique<Gemm>(t, s, autotune); };
        spec.size = model::gemm_flops(s.m, s.n, s.k);
        spec.queue_behind_blocking_kernel = true;  // run() only launches
        register_case(spec);
      }
}
CUBENCH_REGISTER(register_gemm);

}  // namespace
}  // namespace cubench
