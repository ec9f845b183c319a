#pragma once
// The GEMM families' one cuBLASLt case class (Gemm), shared by gemm.cpp (gemm, gemm_autotune,
// gemm_decode) and gemm_peak.cpp (gemm_peak): C = A^T B, A stored k x m and B k x n
// (column-major, the "TN" layout), C m x n.
//   fp32: FP32 in/out, CUBLAS_COMPUTE_32F_PEDANTIC (no TF32, no reduced-precision shortcuts)
//   tf32: FP32 in/out, CUBLAS_COMPUTE_32F_FAST_TF32
//   fp16, bf16: 16-bit in/out, FP32 accumulation (what PyTorch's torch.mm does)
//   fp8: e4m3 in, bf16 out, FP32 accumulation (sm_89+; cuBLASLt wants the "TN" layout we use)
//
// Check (all): every element of C, poisoned before the checked run, against an fp64 product of
// the same stored inputs (cuBLAS DGEMM), each within gemm_bound()
// (fixtures/check/validate.h); the worst element's error over its bound is the
// `max_error_ratio` counter. Where cuBLASLt has no algorithm for a configuration (fp8 at some
// shapes), the row says so: NotSupported.
#include <cublasLt.h>

#include <map>
#include <string>
#include <vector>

#include "benchmarks/gemm_shape_search.h"
#include "fixtures/cubench.h"

namespace cubench::gemm {

using Shape = GemmShape;

// What a Gemm case is for: how it picks its algorithm (and shape), and what its work counts.
enum class Role {
  gemm,      // the heuristic's first algorithm
  autotune,  // the fastest of the heuristic's top 8, timed in set-up
  decode,    // the heuristic's first; bandwidth-bound, so its bytes count too
  peak,      // the fastest (shape, algorithm) a time-boxed search finds in set-up
};

// The family a role serves, by name (for messages).
const char* role_family(Role r);

// What a configuration needs of the GPU (Family::needs): its math's tensor cores, and the device
// memory of A, B and C at shape `s`, cuBLASLt's workspace and the check's fp64 copies of all three
// (check_every_element).
GpuNeeds gemm_needs(DType t, Shape s);

struct LtTypes {
  cudaDataType_t ab, cd;
  cublasComputeType_t compute;
  DType out;
};

class Gemm final : public BenchmarkCase {
 public:
  // s: C's m x n and the inner k (gemm_decode passes {N, tokens, K}; gemm_peak's search sets it).
  Gemm(DType t, Shape s, Role role);
  ~Gemm() override;

  void setup(Env& env) override;
  void run(Env& env) override { matmul(env.stream(), algo_); }
  void validate(Env& env) override { check_every_element(env); }
  std::string plant_fault(Env& env) override;
  std::string fault_check() const override;
  Work work() const override;
  std::string label() const override;
  std::map<std::string, double> counters(double) const override;

 private:
  // How many algorithms heuristic() asks cuBLASLt for: gemm_autotune times them all, and
  // gemm_peak's search times them for each shape.
  static constexpr int kCandidates = 8;

  void check_every_element(Env& env);
  std::string describe() const;
  void allocate_and_fill(Env& env, Shape room);
  void create_descriptors();
  void use_shape(Shape s);
  void destroy_layouts();
  std::vector<cublasLtMatmulHeuristicResult_t> heuristic();
  void matmul(cudaStream_t stream, const cublasLtMatmulAlgo_t& algo);
  void autotune(Env& env, const std::vector<cublasLtMatmulHeuristicResult_t>& found);
  static int algo_id(const cublasLtMatmulAlgo_t& algo);

  // gemm_peak's own (gemm_peak.cpp): its search and mamf-finder-style figures, and how its row
  // shows them.
  void search(Env& env);
  double achievable_rate(Env& env, const cublasLtMatmulAlgo_t& algo);
  void sustain(Env& env);
  std::string peak_label(const std::string& algo_name) const;
  void add_peak_counters(std::map<std::string, double>& c) const;

  DType t_;
  Shape s_;
  LtTypes types_;
  Role role_;
  DeviceBuffer a_, b_, c_, workspace_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr, c_layout_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  int chosen_ = 0, candidates_ = 0;
  double speedup_ = 1;
  double rel_error_ = 0, max_error_ratio_ = 0;
  int shapes_searched_ = 0, algorithms_timed_ = 0;  // gemm_peak's search
  int finalists_sustained_ = 0;
  double achievable_rate_ = 0, sustained_rate_ = 0, sustained_drop_pct_ = 0;  // FLOP/s, %
  double search_seconds_ = 0;
};

// The check's counters, every GEMM family's.
Family& with_error_counters(Family& f);

}  // namespace cubench::gemm
