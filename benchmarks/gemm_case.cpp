// The Gemm case's cuBLASLt machinery (gemm_case.h): descriptors, layouts, the heuristic's
// algorithms, the product itself, and the fp64 check every GEMM family runs. What a family does
// its own way is with its registration: gemm_autotune's timing of the algorithms and gemm_decode's
// bytes in gemm.cpp, gemm_peak's search in gemm_peak.cpp.
#include "benchmarks/gemm_case.h"

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kernels/fill.h"
#include "kernels/reference.h"

namespace cubench::gemm {
namespace {

constexpr std::size_t kWorkspaceBytes = 32u << 20;  // cuBLAS's recommendation for Hopper

// The name of the one check (check_every_element), which every planted fault must meet.
constexpr const char* kElementCheck = "C against an fp64 product";
constexpr const char* kFp32MathCheck = "fp32 math: C's relative L2 error against an fp64 product";

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

}  // namespace

GpuNeeds gemm_needs(DType t, Shape s) {
  const std::uint64_t m = s.m, n = s.n, k = s.k;
  const std::uint64_t operands =
      (m * k + k * n) * dtype_bytes(t) + m * n * dtype_bytes(lt_types(t).out);
  // A, B, the reference and the allowance's two sums, in fp64.
  const std::uint64_t check = 8 * (m * k + k * n + 3 * m * n);
  return tensor_core_needs(t, operands + kWorkspaceBytes + check);
}

Gemm::Gemm(GemmFamily family, DType t, Shape s)
    : t_(t), s_(s), types_(lt_types(t)), family_(family) {}

Gemm::~Gemm() {
  if (pref_) cublasLtMatmulPreferenceDestroy(pref_);
  destroy_layouts();
  if (desc_) cublasLtMatmulDescDestroy(desc_);
  if (handle_) cublasLtDestroy(handle_);
}

void Gemm::setup(Env& env) {
  const DeviceInfo& d = env.info();
  if (t_ == DType::fp8_e4m3 && d.cc_major * 10 + d.cc_minor < 89)
    throw Error("fp8 GEMM needs compute capability 8.9 or newer (Ada, Hopper); this GPU is " +
                std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor));
  // A case that searches its shape allocates once, for the largest its search can reach (room());
  // every shape it times uses the front of each buffer, packed (leading dimensions its own k and
  // m).
  allocate_and_fill(env, room());
  create_descriptors();
  choose_algorithm(env);
}

// NaN in every float format: an element the checked run does not write shows.
void Gemm::poison_result(Env& env) {
  CUBENCH_CUDA(cudaMemsetAsync(c_.get(), 0xff, c_.bytes(), env.stream()));
}

// One element of C 10% off: a random one of C's first 256 among those at least their median in
// magnitude (a typical element, not the largest: gemm_bound is built so that 10% of a typical
// element clears it at every k the families time, and tests/test_gemm_bound.cpp shows it).
std::string Gemm::plant_fault(Env& env) {
  cudaStream_t s = env.stream();
  const std::size_t look = std::min<std::size_t>(256, std::size_t(s_.m) * s_.n);
  DeviceBuffer head = env.alloc(look * sizeof(double));
  convert_to_double(types_.out, c_.get(), head.as<double>(), look, s);
  CUBENCH_CUDA_LAUNCHED();
  std::vector<double> values(look);
  CUBENCH_CUDA(
      cudaMemcpyAsync(values.data(), head.get(), look * sizeof(double), cudaMemcpyDeviceToHost, s));
  CUBENCH_CUDA(cudaStreamSynchronize(s));
  std::vector<double> magnitudes;
  for (double v : values) magnitudes.push_back(std::fabs(v));
  std::nth_element(magnitudes.begin(), magnitudes.begin() + std::ptrdiff_t(look / 2),
                   magnitudes.end());
  const double median = magnitudes[look / 2];
  std::vector<std::size_t> typical;
  for (std::size_t i = 0; i < look; ++i)
    if (std::fabs(values[i]) >= median) typical.push_back(i);
  const std::size_t at = typical[std::size_t(env.fresh_seed() % typical.size())];
  perturb_element(types_.out, c_.get(), at, 1.1, 0, s);
  CUBENCH_CUDA_LAUNCHED();
  return "C[" + std::to_string(at) + "] = " + std::to_string(values[at]) +
         " (at least the median magnitude of C's first 256, " + std::to_string(median) +
         ") made 10% larger";
}

std::string Gemm::fault_check() const { return kElementCheck; }

void Gemm::choose_algorithm(Env&) { algo_ = heuristic_for_case_shape().front().algo; }

std::vector<cublasLtMatmulHeuristicResult_t> Gemm::heuristic_for_case_shape() {
  use_shape(s_);
  std::vector<cublasLtMatmulHeuristicResult_t> found = heuristic();
  if (found.empty()) throw NotSupported("cuBLASLt offers no algorithm for " + describe());
  candidates_ = static_cast<int>(found.size());
  return found;
}

// Every element of C against C = A^T B in fp64 (cuBLAS's DGEMM on the same stored inputs,
// converted exactly), within gemm_bound() of it.
void Gemm::check_every_element(Env& env) {
  cudaStream_t s = env.stream();
  const std::size_t a_elems = std::size_t(s_.k) * s_.m, b_elems = std::size_t(s_.k) * s_.n;
  const std::size_t c_elems = std::size_t(s_.m) * s_.n;
  DeviceBuffer a = env.alloc(a_elems * 8), b = env.alloc(b_elems * 8);
  DeviceBuffer ref = env.alloc(c_elems * 8), scale = env.alloc(c_elems * 8),
               squares = env.alloc(c_elems * 8);
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
    dgemm(scale);  // sum_k |a||b| per element
    square_in_place(a.as<double>(), a_elems, s);
    square_in_place(b.as<double>(), b_elems, s);
    CUBENCH_CUDA_LAUNCHED();
    dgemm(squares);  // sum_k (ab)^2 per element
    // Each element's allowance beside rel |c| (validate.h: gemm_bound), into `scale`.
    const GemmBound bound = gemm_bound(t_, s_.k);
    gemm_allowance(scale.as<double>(), squares.as<double>(), c_elems, bound.rms, bound.sum, s);
    CUBENCH_CUDA_LAUNCHED();
    CUBENCH_CUDA(cudaStreamSynchronize(s));
  } catch (...) {
    cublasDestroy(blas);
    throw;
  }
  cublasDestroy(blas);
  const ElementCheck checked = require_elements_within(
      describe(), env, types_.out, c_.get(), ref.as<double>(), scale.as<double>(), c_elems,
      gemm_bound(t_, s_.k).rel, 1, kElementCheck);
  max_error_ratio_ = checked.max_ratio;
  rel_error_ = checked.sum_sq_ref > 0 ? std::sqrt(checked.sum_sq_error / checked.sum_sq_ref) : 0;
  // fp32 asked for, fp32 computed: TF32 math would pass the element bound (validate.h).
  if (t_ == DType::fp32)
    require_at_most(describe() + ": relative L2 error", rel_error_, fp32_math_control(s_.k),
                    kFp32MathCheck);
}

Work Gemm::work() const { return {model::gemm_flops(s_.m, s_.n, s_.k), t_, 0}; }

std::string Gemm::label() const {
  return algo_name() + ", heuristic's first of " + std::to_string(candidates_);
}

std::map<std::string, double> Gemm::counters(double) const {
  return {{"rel_error", rel_error_}, {"max_error_ratio", max_error_ratio_}};
}

std::string Gemm::describe() const {
  return family_and_dtype() + " " + std::to_string(s_.m) + "x" + std::to_string(s_.n) + "x" +
         std::to_string(s_.k);
}

std::string Gemm::family_and_dtype() const {
  return std::string(name_of(family_, kGemmFamilies)) + " " + std::string(dtype_name(t_));
}

std::string Gemm::algo_name() const { return "cuBLASLt algo " + std::to_string(algo_id(algo_)); }

// Buffers for C = A^T B at `room` (A k x m, B k x n, C m x n), A and B filled whole.
void Gemm::allocate_and_fill(Env& env, Shape room) {
  const std::size_t a_elems = std::size_t(room.k) * room.m, b_elems = std::size_t(room.k) * room.n;
  a_ = env.alloc(a_elems * dtype_bytes(t_));
  b_ = env.alloc(b_elems * dtype_bytes(t_));
  c_ = env.alloc(std::size_t(room.m) * room.n * dtype_bytes(types_.out));
  workspace_ = env.alloc(kWorkspaceBytes);
  fill_uniform(t_, a_.get(), a_elems, env.fresh_seed(), -1.f, 1.f, env.stream());
  fill_uniform(t_, b_.get(), b_elems, env.fresh_seed(), -1.f, 1.f, env.stream());
  CUBENCH_CUDA_LAUNCHED();
}

void Gemm::create_descriptors() {
  CUBENCH_CUBLAS(cublasLtCreate(&handle_));
  CUBENCH_CUBLAS(cublasLtMatmulDescCreate(&desc_, types_.compute, CUDA_R_32F));
  cublasOperation_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
  CUBENCH_CUBLAS(
      cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof trans_a));
  CUBENCH_CUBLAS(
      cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof trans_b));
  CUBENCH_CUBLAS(cublasLtMatmulPreferenceCreate(&pref_));
  std::size_t workspace = kWorkspaceBytes;
  CUBENCH_CUBLAS(cublasLtMatmulPreferenceSetAttribute(
      pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace));
}

// The matrix layouts for shape s, packed in the front of the buffers; s becomes the case's.
void Gemm::use_shape(Shape s) {
  destroy_layouts();
  s_ = s;
  CUBENCH_CUBLAS(cublasLtMatrixLayoutCreate(&a_layout_, types_.ab, s_.k, s_.m, s_.k));
  CUBENCH_CUBLAS(cublasLtMatrixLayoutCreate(&b_layout_, types_.ab, s_.k, s_.n, s_.k));
  CUBENCH_CUBLAS(cublasLtMatrixLayoutCreate(&c_layout_, types_.cd, s_.m, s_.n, s_.m));
}

void Gemm::destroy_layouts() {
  for (cublasLtMatrixLayout_t* layout : {&a_layout_, &b_layout_, &c_layout_})
    if (*layout) {
      cublasLtMatrixLayoutDestroy(*layout);
      *layout = nullptr;
    }
}

// The heuristic's top kCandidates for the current shape, best first; none where cuBLASLt has
// nothing for it (it answers NOT_SUPPORTED, or with no algorithm).
std::vector<cublasLtMatmulHeuristicResult_t> Gemm::heuristic() {
  std::vector<cublasLtMatmulHeuristicResult_t> found(kCandidates);
  int returned = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(handle_, desc_, a_layout_, b_layout_, c_layout_, c_layout_,
                                     pref_, kCandidates, found.data(), &returned);
  if (status == CUBLAS_STATUS_NOT_SUPPORTED) return {};
  check_cublas(status, "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__);
  found.resize(std::clamp(returned, 0, kCandidates));
  // Only a result whose state is SUCCESS holds an algorithm (cuBLASLt's documentation).
  found.erase(std::remove_if(found.begin(), found.end(),
                             [](const cublasLtMatmulHeuristicResult_t& r) {
                               return r.state != CUBLAS_STATUS_SUCCESS;
                             }),
              found.end());
  return found;
}

void Gemm::matmul(cudaStream_t stream, const cublasLtMatmulAlgo_t& algo) {
  const float alpha = 1.f, beta = 0.f;
  const cublasStatus_t status = cublasLtMatmul(
      handle_, desc_, &alpha, a_.get(), a_layout_, b_.get(), b_layout_, &beta, c_.get(), c_layout_,
      c_.get(), c_layout_, &algo, workspace_.get(), kWorkspaceBytes, stream);
  if (status == CUBLAS_STATUS_NOT_SUPPORTED)
    throw NotSupported("cuBLASLt's algorithm " + std::to_string(algo_id(algo)) + " does not run " +
                       describe());
  check_cublas(status, "cublasLtMatmul", __FILE__, __LINE__);
}

int Gemm::algo_id(const cublasLtMatmulAlgo_t& algo) {
  int id = -1;
  std::size_t written = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &written);
  return id;
}

// The check's counters, every GEMM family's.
Family& with_error_counters(Family& f) {
  return f.counter({"rel_error", "", Better::lower, "RMS error of C against the fp64 product"})
      .counter({"max_error_ratio", "", Better::lower,
                "worst element's error over its bound (gemm_bound: rel |c| + rms ||ab|| + sum "
                "sum|ab|); above 1 fails the check"});
}

}  // namespace cubench::gemm
