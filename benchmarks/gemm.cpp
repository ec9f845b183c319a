// The gemm, gemm_autotune and gemm_decode families: one cuBLASLt case class (Gemm, gemm_case.h:
// the dtypes, C = A^T B in the "TN" layout, the fp64 check) in three roles. gemm_peak, the same
// case searching for its shape, is gemm_peak.cpp.
//
// gemm/<dtype>/<m>/<n>/<k> takes the heuristic's first algorithm; gemm_autotune/<dtype>/<m>/<n>/<k>
// times its top 8 during set-up and keeps the fastest. Model: 2mnk FLOPs.
//
// gemm_decode/<dtype>/<weights>/<m>: one decode step's products, Y[m x N] = X[m x K] W^T, against
// LLaMA-7B's weights W (N x K: 4096x4096 attention out, 11008x4096 MLP up/gate, 4096x11008 MLP
// down, 12288x4096 fused QKV) for m = 1..64 tokens in flight, bf16 and fp8. The weights are
// cuBLASLt's A and the tokens its n (C = W X^T, N x m column-major: Y row-major), the orientation
// torch's F.linear hands cuBLAS: every leading dimension is then K or N, never m (tokens as
// cuBLASLt's m would give C a leading dimension of one element, which the tensor-core kernels, and
// fp8's, do not take). Bandwidth-bound: the model counts the weights read once plus the
// activations and the output (GBps, % of the copy ceiling), and 2mNK FLOPs. Sampled with the L2
// flushed before each sample: a decode step finds its weights in DRAM, not in L2 (4096x4096 bf16
// weights, 32 MiB, would otherwise sit in the H200's L2 from the sample before).
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks/gemm_case.h"
#include "fixtures/cubench.h"

namespace cubench::gemm {
namespace {

void register_gemm() {
  const DType dtypes[] = {DType::fp32, DType::tf32, DType::fp16, DType::bf16, DType::fp8_e4m3};
  // Square sizes, then Transformer-shaped (8192 tokens, hidden 4096, LLaMA-7B): fused QKV, MLP
  // up, MLP down.
  const std::vector<std::int64_t> m = {1024, 2048, 4096, 8192, 16384, 8192, 8192, 8192};
  const std::vector<std::int64_t> n = {1024, 2048, 4096, 8192, 16384, 12288, 11008, 4096};
  const std::vector<std::int64_t> k = {1024, 2048, 4096, 8192, 16384, 4096, 4096, 11008};
  for (bool autotune : {false, true}) {
    Family f(autotune ? "gemm_autotune" : "gemm",
             autotune ? "C = A^T B through cuBLASLt, the fastest of the heuristic's top 8"
                      : "C = A^T B through cuBLASLt, the heuristic's first algorithm");
    f.axis(dtype_axis({dtypes, dtypes + 5}))
        .axis(int_axis("m", m))
        .axis(int_axis("n", n))
        .axis(int_axis("k", k))
        .zip({"m", "n", "k"});
    with_error_counters(f)
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
        .needs([](const Point& p) {
          return gemm_needs(p.get_dtype(),
                            {int(p.get_int("m")), int(p.get_int("n")), int(p.get_int("k"))});
        })
        .size([](const Point& p) {
          return model::gemm_flops(p.get_int("m"), p.get_int("n"), p.get_int("k"));
        })
        .make([autotune](const Point& p) {
          Shape s{int(p.get_int("m")), int(p.get_int("n")), int(p.get_int("k"))};
          return std::make_unique<Gemm>(p.get_dtype(), s, autotune ? Role::autotune : Role::gemm);
        })
        .add();
  }
}
CUBENCH_REGISTER(register_gemm);

// LLaMA-7B's weight matrices a decode step reads, W's N x K: attention out, MLP up (and gate),
// MLP down, fused QKV. Named "NxK" in benchmark names.
enum class Weights { attention_out, mlp_up, mlp_down, fused_qkv };

struct WeightShape {
  Weights which;
  int n, k;
  std::string name() const { return std::to_string(n) + "x" + std::to_string(k); }
};

constexpr WeightShape kWeights[] = {{Weights::attention_out, 4096, 4096},
                                    {Weights::mlp_up, 11008, 4096},
                                    {Weights::mlp_down, 4096, 11008},
                                    {Weights::fused_qkv, 12288, 4096}};

const WeightShape& shape_of(Weights w) {
  for (const WeightShape& s : kWeights)
    if (s.which == w) return s;
  throw Error("gemm_decode: weights without a shape");
}

Axis weights_axis() {
  std::vector<std::pair<Weights, std::string>> values;
  for (const WeightShape& s : kWeights) values.push_back({s.which, s.name()});
  return enum_axis("weights", values);
}

void register_gemm_decode() {
  const DType dtypes[] = {DType::bf16, DType::fp8_e4m3};
  Family f("gemm_decode",
           "Y = X W^T through cuBLASLt for one decode step: LLaMA-7B's weights against 1 to 64 "
           "tokens (bandwidth-bound)");
  f.axis(dtype_axis({dtypes, dtypes + 2}))
      .axis(weights_axis())
      .axis(int_axis("m", {1, 2, 4, 8, 16, 32, 64}));
  with_error_counters(f)
      .main_counter("GBps")
      .size_axis("m")
      // Default run: the MLP up weights at 1, 8 and 64 tokens (the flat start, the middle and the
      // end of the curve), the attention weights at 1; each a few seconds (cold samples of
      // 10-30 us), 8 rows in all.
      .default_suite([](const Point& p) {
        const std::int64_t m = p.get_int("m");
        const Weights w = p.get_enum<Weights>("weights");
        return (w == Weights::mlp_up && (m == 1 || m == 8 || m == 64)) ||
               (w == Weights::attention_out && m == 1);
      })
      .sampling([](const Point&) {
        Sampling s = Sampling::launches_only();  // run() only launches
        s.cold_l2 = true;  // a decode step reads weights that are not in L2: flush before each
        return s;
      })
      .needs([](const Point& p) {
        const WeightShape& w = shape_of(p.get_enum<Weights>("weights"));
        return gemm_needs(p.get_dtype(), {w.n, int(p.get_int("m")), w.k});
      })
      .size([](const Point& p) {
        const WeightShape& w = shape_of(p.get_enum<Weights>("weights"));
        return model::gemm_flops(p.get_int("m"), w.n, w.k);
      })
      .make([](const Point& p) {
        const WeightShape& w = shape_of(p.get_enum<Weights>("weights"));
        // The weights are cuBLASLt's A (its m = N) and the tokens its n (see the file's head).
        return std::make_unique<Gemm>(p.get_dtype(), Shape{w.n, int(p.get_int("m")), w.k},
                                      Role::decode);
      })
      .add();
}
CUBENCH_REGISTER(register_gemm_decode);

}  // namespace
}  // namespace cubench::gemm
