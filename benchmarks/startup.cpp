// startup/cuda/<stage>/<loading>: what a job pays before its first useful kernel, once per
// process, so each sample is a fresh process (child_process.h): this executable started again,
// timing its own stages on CLOCK_MONOTONIC.
//   context                from main() to cudaFree(0) returning: runtime initialisation and the
//                          primary context (under EAGER module loading, every module of the
//                          binary too: our kernels and, in a static build, cuBLAS's)
//   first_kernel           from main() to our first kernel's completion (context, its module)
//   cublas_handle          cublasCreate, the context already made
//   cublas_first_gemm      the first cublasGemmEx (bf16 in, fp32 out, 256^3) to its completion,
//                          handle already made: heuristics and its kernels' modules
//   cublaslt_first_matmul  cublasLtCreate, descriptors, the heuristic query and the first
//                          cublasLtMatmul (the same GEMM) to its completion
// <loading>: CUDA_MODULE_LOADING in the child: `default` (unset: LAZY since CUDA 12.2, EAGER
// before), `lazy`, `eager`. The spawn-to-main() time (exec, the dynamic loader, static
// initialisers: the binary's, not the toolkit's) is a counter, not the sample.
// Check: every sample's child succeeds; once per configuration (and for the planted fault) the
// child also copies its result back and compares it with what it must be (the first kernel's
// sequence is known in closed form; the GEMMs take small integers, whose products and sums fp32
// holds exactly, against a host GEMM) and reports the mismatches, which must be zero.
#include <cublasLt.h>
#include <cublas_v2.h>

#include <cstdint>
#include <cstring>
#include <optional>

#include "fixtures/cubench.h"
#include "kernels/sequence.h"

namespace cubench {
namespace {

constexpr const char* kChildEntry = "startup/cuda";
constexpr int kSequenceLength = 1 << 20;
constexpr int kSequenceStep = 3;
constexpr int kGemmN = 256;  // small: the first call's costs are the point, not the math

const std::vector<std::string> kStages = {"context", "first_kernel", "cublas_handle",
                                          "cublas_first_gemm", "cublaslt_first_matmul"};

// --- The child ----------------------------------------------------------------------------------

// Device buffers of the child, freed on every path out (the child exits right after).
struct DeviceMemory {
  void* p = nullptr;
  explicit DeviceMemory(std::size_t bytes) { CUBENCH_CUDA(cudaMalloc(&p, bytes)); }
  ~DeviceMemory() { cudaFree(p); }
};

// bf16's bits of a float that bf16 holds exactly (the small integers here): its upper half.
std::uint16_t bf16_bits(float f) {
  std::uint32_t u = 0;
  std::memcpy(&u, &f, sizeof u);
  return static_cast<std::uint16_t>(u >> 16);
}

// Inputs in {-2..2}: a k = 256 dot product stays an integer below 2^24, exact in fp32.
float a_value(int i) { return static_cast<float>((i * 7) % 5 - 2); }
float b_value(int i) { return static_cast<float>((i * 3) % 5 - 2); }

// The GEMM both cuBLAS stages time: C (fp32) = A (bf16) * B (bf16), column-major, n x n x n.
struct Gemm {
  DeviceMemory a{sizeof(std::uint16_t) * kGemmN * kGemmN};
  DeviceMemory b{sizeof(std::uint16_t) * kGemmN * kGemmN};
  DeviceMemory c{sizeof(float) * kGemmN * kGemmN};
  Gemm() {
    std::vector<std::uint16_t> ha(kGemmN * kGemmN), hb(kGemmN * kGemmN);
    for (int i = 0; i < kGemmN * kGemmN; ++i) {
      ha[i] = bf16_bits(a_value(i));
      hb[i] = bf16_bits(b_value(i));
    }
    CUBENCH_CUDA(cudaMemcpy(a.p, ha.data(), ha.size() * 2, cudaMemcpyHostToDevice));
    CUBENCH_CUDA(cudaMemcpy(b.p, hb.data(), hb.size() * 2, cudaMemcpyHostToDevice));
    CUBENCH_CUDA(cudaMemset(c.p, 0, sizeof(float) * kGemmN * kGemmN));
  }
  // Elements of C that differ from the host's product (exact: integers); `fault` adds one to an
  // element first, as a wrong result would.
  double mismatches(bool fault) const {
    std::vector<float> hc(kGemmN * kGemmN);
    CUBENCH_CUDA(cudaMemcpy(hc.data(), c.p, hc.size() * sizeof(float), cudaMemcpyDeviceToHost));
    if (fault) hc[hc.size() / 2] += 1;
    double wrong = 0;
    for (int j = 0; j < kGemmN; ++j)
      for (int i = 0; i < kGemmN; ++i) {
        float sum = 0;
        for (int l = 0; l < kGemmN; ++l) sum += a_value(i + l * kGemmN) * b_value(l + j * kGemmN);
        wrong += hc[i + j * kGemmN] != sum;
      }
    return wrong;
  }
};

void gemm_ex(cublasHandle_t handle, const Gemm& g) {
  const float alpha = 1, beta = 0;
  CUBENCH_CUBLAS(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, kGemmN, kGemmN, kGemmN, &alpha,
                              g.a.p, CUDA_R_16BF, kGemmN, g.b.p, CUDA_R_16BF, kGemmN, &beta, g.c.p,
                              CUDA_R_32F, kGemmN, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// cuBLASLt from nothing to one finished matmul: what a first call through Lt costs. Returns
// the moment the matmul finished (the clean-up after it is not the stage).
double lt_first_matmul(const Gemm& g) {
  cublasLtHandle_t lt = nullptr;
  CUBENCH_CUBLAS(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  CUBENCH_CUBLAS(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  CUBENCH_CUBLAS(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, kGemmN, kGemmN, kGemmN));
  CUBENCH_CUBLAS(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, kGemmN, kGemmN, kGemmN));
  CUBENCH_CUBLAS(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, kGemmN, kGemmN, kGemmN));
  CUBENCH_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  CUBENCH_CUBLAS(
      cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 1, &heuristic, &found));
  if (found == 0) throw Error("cuBLASLt has no algorithm for a bf16 256^3 GEMM without workspace");
  const float alpha = 1, beta = 0;
  CUBENCH_CUBLAS(cublasLtMatmul(lt, desc, &alpha, g.a.p, la, g.b.p, lb, &beta, g.c.p, lc, g.c.p, lc,
                                &heuristic.algo, nullptr, 0, nullptr));
  CUBENCH_CUDA(cudaDeviceSynchronize());
  const double done = monotonic_seconds();
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatmulDescDestroy(desc);
  cublasLtDestroy(lt);
  return done;
}

double sequence_mismatches(const DeviceMemory& out, bool fault) {
  std::vector<int> h(kSequenceLength);
  CUBENCH_CUDA(cudaMemcpy(h.data(), out.p, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
  if (fault) h[h.size() / 2] += 1;
  double wrong = 0;
  for (int i = 0; i < kSequenceLength; ++i) wrong += h[i] != i * kSequenceStep + 1;
  return wrong;
}

int startup_child(const std::vector<std::string>& args, double main_entered) {
  const ChildStageArgs a = ChildStageArgs::parse(args);
  CUBENCH_CUDA(cudaSetDevice(a.device));
  CUBENCH_CUDA(cudaFree(nullptr));
  const double context_ready = monotonic_seconds();

  double stage_seconds = 0;
  std::optional<double> wrong;
  if (a.stage == "context" || a.stage == "first_kernel") {
    DeviceMemory out(sizeof(int) * kSequenceLength);
    const double launched_at = monotonic_seconds();
    launch_sequence(static_cast<int*>(out.p), kSequenceLength, kSequenceStep, nullptr);
    CUBENCH_CUDA_LAUNCHED();
    CUBENCH_CUDA(cudaDeviceSynchronize());
    const double done = monotonic_seconds();
    // first_kernel: from main() to the kernel's end, less the untimed allocation between.
    stage_seconds = a.stage == "context" ? context_ready - main_entered
                                         : (context_ready - main_entered) + (done - launched_at);
    if (a.check) wrong = sequence_mismatches(out, a.fault);
  } else if (a.stage == "cublas_handle" || a.stage == "cublas_first_gemm") {
    Gemm g;
    cublasHandle_t handle = nullptr;
    const double t0 = monotonic_seconds();
    CUBENCH_CUBLAS(cublasCreate(&handle));
    const double created = monotonic_seconds();
    gemm_ex(handle, g);
    CUBENCH_CUDA(cudaDeviceSynchronize());
    const double done = monotonic_seconds();
    stage_seconds = a.stage == "cublas_handle" ? created - t0 : done - created;
    if (a.check) wrong = g.mismatches(a.fault);
    cublasDestroy(handle);
  } else if (a.stage == "cublaslt_first_matmul") {
    Gemm g;
    const double t0 = monotonic_seconds();
    stage_seconds = lt_first_matmul(g) - t0;
    if (a.check) wrong = g.mismatches(a.fault);
  } else {
    return child_fail("startup/cuda child: unknown stage '" + a.stage + "'");
  }
  return report_child_stage(main_entered, stage_seconds, wrong);
}
CUBENCH_CHILD_ENTRY(kChildEntry, startup_child);

void register_startup() {
  child_stage_family("startup/cuda",
                     "start-up costs, a fresh process per sample: context, first kernel, "
                     "cuBLAS/cuBLASLt's first call, under each CUDA_MODULE_LOADING",
                     kChildEntry, kStages)
      // What a job meets by default, the first kernel under EAGER too (the pre-12.2 default,
      // where the toolkits differ most); every stage under every loading with --cubench_suite=full.
      .default_suite([](const Point& p) {
        const std::string& stage = p.get_string("stage");
        const std::string& loading = p.get_string("loading");
        return (loading == "default" &&
                (stage == "first_kernel" || stage == "cublas_first_gemm")) ||
               (loading == "eager" && stage == "first_kernel");
      })
      .add();
}
CUBENCH_REGISTER(register_startup);

}  // namespace
}  // namespace cubench
