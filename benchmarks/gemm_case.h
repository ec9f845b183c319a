#pragma once
// The GEMM families' cuBLASLt case (Gemm): C = A^T B, A stored k x m and B k x n (column-major,
// the "TN" layout), C m x n.
//   fp32: FP32 in/out, CUBLAS_COMPUTE_32F_PEDANTIC (no TF32, no reduced-precision shortcuts)
//   tf32: FP32 in/out, CUBLAS_COMPUTE_32F_FAST_TF32
//   fp16, bf16: 16-bit in/out, FP32 accumulation (what PyTorch's torch.mm does)
//   fp8: e4m3 in, bf16 out, FP32 accumulation (sm_89+; cuBLASLt wants the "TN" layout we use)
// Gemm itself is the gemm family's case, the heuristic's first algorithm; each other GEMM family
// derives its case from it and overrides the hooks where it differs: gemm_autotune and
// gemm_decode in gemm.cpp, gemm_peak in gemm_peak.cpp.
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

// The GEMM families, named once: their registrations and their messages take the names here.
enum class GemmFamily { gemm, autotune, decode, peak };
constexpr EnumName<GemmFamily> kGemmFamilies[] = {{GemmFamily::gemm, "gemm"},
                                                  {GemmFamily::autotune, "gemm_autotune"},
                                                  {GemmFamily::decode, "gemm_decode"},
                                                  {GemmFamily::peak, "gemm_peak"}};

// What a configuration needs of the GPU (Family::needs): its math's tensor cores, and the device
// memory of A, B and C at shape `s`, cuBLASLt's workspace and the check's fp64 copies of all three
// (check_every_element).
GpuNeeds gemm_needs(DType t, Shape s);

struct LtTypes {
  cudaDataType_t ab, cd;
  cublasComputeType_t compute;
  DType out;
};

class Gemm : public BenchmarkCase {
 public:
  // s: C's m x n and the inner k.
  Gemm(DType t, Shape s) : Gemm(GemmFamily::gemm, t, s) {}
  ~Gemm() override;

  void setup(Env& env) final;
  void run(Env& env) final { matmul(env.stream(), algo_); }
  void poison_result(Env& env) final;
  void validate(Env& env) final { check_every_element(env); }
  std::string plant_fault(Env& env) final;
  std::string fault_check() const final;
  Work work() const override;
  std::string label() const override;
  std::map<std::string, double> counters(double) const override;

 protected:
  Gemm(GemmFamily family, DType t, Shape s);

  // How many algorithms heuristic() asks cuBLASLt for (gemm_autotune times them all, and
  // gemm_peak's search times them for each shape).
  static constexpr int kCandidates = 8;

  // The hooks a family overrides where it differs from gemm's.
  // The shape the buffers hold (a search's largest, for a case that searches its shape).
  virtual Shape room() const { return s_; }
  // Sets algo_ (and the shape, for a case that searches it), once the buffers are filled and the
  // descriptors made: gemm's is the heuristic's first for s_.
  virtual void choose_algorithm(Env& env);
  // The configuration in its family's terms (for messages).
  virtual std::string describe() const;

  // For the hooks.
  // The heuristic's algorithms for s_, with s_ the layouts' shape, and candidates_ their count;
  // NotSupported where there is none.
  std::vector<cublasLtMatmulHeuristicResult_t> heuristic_for_case_shape();
  std::string family_and_dtype() const;  // "gemm_decode bf16"
  std::string algo_name() const;         // "cuBLASLt algo <id>"
  void use_shape(Shape s);
  std::vector<cublasLtMatmulHeuristicResult_t> heuristic();
  void matmul(cudaStream_t stream, const cublasLtMatmulAlgo_t& algo);

  DType t_;
  Shape s_;
  LtTypes types_;
  cublasLtMatmulAlgo_t algo_{};
  int candidates_ = 0;

 private:
  void check_every_element(Env& env);
  void allocate_and_fill(Env& env, Shape room);
  void create_descriptors();
  void destroy_layouts();
  static int algo_id(const cublasLtMatmulAlgo_t& algo);

  GemmFamily family_;
  DeviceBuffer a_, b_, c_, workspace_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr, c_layout_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  double rel_error_ = 0, max_error_ratio_ = 0;
};

// The check's counters, every GEMM family's.
Family& with_error_counters(Family& f);

}  // namespace cubench::gemm
