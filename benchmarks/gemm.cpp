// The gemm, gemm_autotune and gemm_decode families: the cuBLASLt case (Gemm, gemm_case.h: the
// dtypes, C = A^T B in the "TN" layout, the fp64 check), gemm's as it is, gemm_autotune's and
// gemm_decode's with what they do otherwise (below). gemm_peak, a case that searches for its
// shape, is gemm_peak.cpp.
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
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks/gemm_case.h"
#include "fixtures/cubench.h"

namespace cubench::gemm {
namespace {

// gemm_autotune's case: the fastest of the heuristic's top kCandidates, each timed in set-up (3
// warm-up runs, then the median of 10), so autotuning never lands in a sample.
class GemmAutotune final : public Gemm {
 public:
  GemmAutotune(DType t, Shape s) : Gemm(GemmFamily::autotune, t, s) {}

  std::string label() const override {
    std::string l = algo_name() + ", autotuned: candidate " + std::to_string(chosen_ + 1) + " of " +
                    std::to_string(candidates_);
    if (chosen_ > 0) {
      char gain[64];
      std::snprintf(gain, sizeof gain, " (%.1f%% faster than the first)", (speedup_ - 1) * 100);
      l += gain;
    }
    return l;
  }

 private:
  void choose_algorithm(Env& env) override {
    const std::vector<cublasLtMatmulHeuristicResult_t> found = heuristic_for_case_shape();
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
    algo_ = found[chosen_].algo;
  }

  int chosen_ = 0;
  double speedup_ = 1;
};

void register_gemm() {
  const DType dtypes[] = {DType::fp32, DType::tf32, DType::fp16, DType::bf16, DType::fp8_e4m3};
  // Square sizes, then Transformer-shaped (8192 tokens, hidden 4096, LLaMA-7B): fused QKV, MLP
  // up, MLP down.
  const std::vector<std::int64_t> m = {1024, 2048, 4096, 8192, 16384, 8192, 8192, 8192};
  const std::vector<std::int64_t> n = {1024, 2048, 4096, 8192, 16384, 12288, 11008, 4096};
  const std::vector<std::int64_t> k = {1024, 2048, 4096, 8192, 16384, 4096, 4096, 11008};
  for (bool autotune : {false, true}) {
    Family f(name_of(autotune ? GemmFamily::autotune : GemmFamily::gemm, kGemmFamilies),
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
        .make([autotune](const Point& p) -> std::unique_ptr<BenchmarkCase> {
          Shape s{int(p.get_int("m")), int(p.get_int("n")), int(p.get_int("k"))};
          if (autotune) return std::make_unique<GemmAutotune>(p.get_dtype(), s);
          return std::make_unique<Gemm>(p.get_dtype(), s);
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

// gemm_decode's case: gemm's, with its bytes counted (a decode step is bandwidth-bound) and
// described in the family's own terms (weights N x K, m tokens).
class GemmDecode final : public Gemm {
 public:
  // s: {N, m, K} (the weights are cuBLASLt's A, the tokens its n: see the file's head).
  GemmDecode(DType t, Shape s) : Gemm(GemmFamily::decode, t, s) {}

  // A and B read once, C written once: for a decode step, the weights (A) are nearly all of it.
  Work work() const override {
    Work w = Gemm::work();
    w.bytes = double(dtype_bytes(t_)) * (double(s_.m) + s_.n) * s_.k +
              double(dtype_bytes(types_.out)) * s_.m * s_.n;
    return w;
  }

 private:
  std::string describe() const override {
    return family_and_dtype() + " weights " + std::to_string(s_.m) + "x" + std::to_string(s_.k) +
           ", m=" + std::to_string(s_.n);
  }
};

void register_gemm_decode() {
  const DType dtypes[] = {DType::bf16, DType::fp8_e4m3};
  Family f(name_of(GemmFamily::decode, kGemmFamilies),
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
        return std::make_unique<GemmDecode>(p.get_dtype(), Shape{w.n, int(p.get_int("m")), w.k});
      })
      .add();
}
CUBENCH_REGISTER(register_gemm_decode);

}  // namespace
}  // namespace cubench::gemm
