// The GEMM families, one cuBLASLt case class (Gemm) for all: C = A^T B, A stored k x m and B
// k x n (column-major, the "TN" layout), C m x n.
//   fp32: FP32 in/out, CUBLAS_COMPUTE_32F_PEDANTIC (no TF32, no reduced-precision shortcuts)
//   tf32: FP32 in/out, CUBLAS_COMPUTE_32F_FAST_TF32
//   fp16, bf16: 16-bit in/out, FP32 accumulation (what PyTorch's torch.mm does)
//   fp8: e4m3 in, bf16 out, FP32 accumulation (sm_89+; cuBLASLt wants the "TN" layout we use)
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
//
// gemm_peak/<dtype>: the most this GPU's matmul does with this toolkit (mamf-finder's question).
// Set-up searches shapes (gemm_shape_search.h: a coarse grid, then a local search around the best,
// sides multiples of 256 up to 20480) with the heuristic's top 8 algorithms each, timed as
// gemm_autotune times them, until the search ends or --cubench_search_seconds (default 60 s) runs
// out; with what is left of the box its 5 fastest pairs are timed again over a sustained second
// each (the power cap bites after the search's bursts), the fastest sustained kept; the row then
// samples that (shape, algorithm) as any GEMM, so its TFLOPS and
// sm_clock_MHz are that run's, not the search's. Beside them, two figures in mamf-finder's manner
// (kBurstReps, below): achievable_TFLOPS (after its MAMF: boost bursts after idle) and
// sustained_TFLOPS (after its MSMF: a 2 s window at full load). The anchors an H200 result is set
// against: mamf-finder's published 794.5 TFLOP/s bf16 on H100/H200 SXM (about 80% of the
// datasheet) and 1453 TFLOP/s fp8 on H200. Not in the default run: a search is a minute per dtype
// by design, and a shorter box would report a peak that is only as far as the search got.
//
// Check (all): every element of C, poisoned before the checked run, against an fp64 product of
// the same stored inputs (cuBLAS DGEMM), each within gemm_bound()
// (fixtures/detail/check/validate.h); the worst element's error over its bound is the
// `max_error_ratio` counter. Where cuBLASLt has no algorithm for a configuration (fp8 at some
// shapes), the row says so: NotSupported.
#include <cublasLt.h>
#include <cublas_v2.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "benchmarks/gemm_shape_search.h"
#include "fixtures/cubench.h"
#include "kernels/fill.h"
#include "kernels/reference.h"

namespace cubench {
namespace {

constexpr std::size_t kWorkspaceBytes = 32u << 20;  // cuBLAS's recommendation for Hopper
constexpr int kCandidates = 8;
// gemm_peak times each (shape, algorithm) of its search with fewer runs than gemm_autotune's
// 3 + 10: it compares many, and the best is sampled properly afterwards.
constexpr int kSearchWarmUp = 2, kSearchRuns = 5;
// Then, with what is left of the box, its fastest few (shape, algorithm) pairs are timed again
// over a sustained second each: the search's bursts of 7 runs can rank first a pair that only
// keeps its rate until the power cap bites (measured on the H200: the sampled best runs
// power-capped at 1424 MHz), and the best is what the GPU sustains.
constexpr int kSustainedFinalists = 5;
constexpr double kSustainedSeconds = 1.0;
// Two figures in the manner of mamf-finder (version 4 of stas00/ml-engineering's mamf-finder.py),
// measured after the search, to set gemm_peak beside the figures it publishes; like it in what is
// counted, not the same procedure:
// - achievable (after its MAMF): kBurstReps bursts of kBurstRuns queued runs, each burst after
//   kIdleSeconds idle so the clock climbs back to boost; the median of the kFastestRuns fastest
//   runs. For the search's fastest pair by burst rate and the row's pair, the better kept.
//   mamf-finder also drops runs whose SM clock is under 97% of the highest seen, resets the caches
//   and C before each run and confirms many more shapes: none of that here.
// - sustained (after its MSMF): the rate over kWindowSeconds of back-to-back runs after
//   kWarmSeconds of them, for the row's pair, and how much slower the window's second half ran
//   than its first (mamf-finder calls over 1% not steady and settles the clock for up to 20 s,
//   ranks shapes and locks the leader in over 4 s first: not here). With no cache reset between
//   runs the GPU does nothing but GEMMs, so expect it under a published MSMF, not over.
// They take about 8 s after the search, beyond --cubench_search_seconds.
constexpr int kBurstReps = 10, kBurstRuns = 20, kFastestRuns = 5;
constexpr double kIdleSeconds = 0.25, kWarmSeconds = 1.0, kWindowSeconds = 2.0;

using Shape = GemmShape;

// What a Gemm case is for: how it picks its algorithm (and shape), and what its work counts.
enum class Role {
  gemm,      // the heuristic's first algorithm
  autotune,  // the fastest of the heuristic's top 8, timed in set-up
  decode,    // the heuristic's first; bandwidth-bound, so its bytes count too
  peak,      // the fastest (shape, algorithm) a time-boxed search finds in set-up
};

const char* role_family(Role r) {
  switch (r) {
    case Role::gemm:
      return "gemm";
    case Role::autotune:
      return "gemm_autotune";
    case Role::decode:
      return "gemm_decode";
    case Role::peak:
      return "gemm_peak";
  }
  return "gemm";
}

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
  // s: C's m x n and the inner k (gemm_decode passes {N, tokens, K}; gemm_peak's search sets it).
  Gemm(DType t, Shape s, Role role) : t_(t), s_(s), types_(lt_types(t)), role_(role) {}

  ~Gemm() override {
    if (pref_) cublasLtMatmulPreferenceDestroy(pref_);
    destroy_layouts();
    if (desc_) cublasLtMatmulDescDestroy(desc_);
    if (handle_) cublasLtDestroy(handle_);
  }

  void setup(Env& env) override {
    const DeviceInfo& d = env.info();
    if (t_ == DType::fp8_e4m3 && d.cc_major * 10 + d.cc_minor < 89)
      throw Error("fp8 GEMM needs compute capability 8.9 or newer (Ada, Hopper); this GPU is " +
                  std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor));
    // gemm_peak allocates once, for the largest shape its search can reach; every shape it times
    // uses the front of each buffer, packed (leading dimensions its own k and m).
    allocate_and_fill(env, role_ == Role::peak ? GemmShapeSearch::largest() : s_);
    create_descriptors();
    if (role_ == Role::peak) {
      search(env);
    } else {
      use_shape(s_);
      const std::vector<cublasLtMatmulHeuristicResult_t> found = heuristic();
      if (found.empty()) throw NotSupported("cuBLASLt offers no algorithm for " + describe());
      chosen_ = 0;
      if (role_ == Role::autotune) autotune(env, found);
      algo_ = found[chosen_].algo;
      candidates_ = static_cast<int>(found.size());
    }
    // NaN in every float format: an element the first (checked) run does not write shows.
    CUBENCH_CUDA(cudaMemsetAsync(c_.get(), 0xff, c_.bytes(), env.stream()));
  }

  void run(Env& env) override { matmul(env.stream(), algo_); }

  void validate(Env& env) override { check_every_element(env); }

  // One element of C wrong: the largest in magnitude of C's first 256 (a typical size, where a
  // relative error shows against the bound), 10% off; doubled (as if accumulated twice) for
  // gemm_decode and gemm_peak, whose k reaches 11008 and 20480: the bound grows with k (fp8's
  // with 2^-8 sum|a||b|, about k/1024) and a typical |c| with sqrt(k), so 10% of it lies within
  // fp8's bound there, while a doubled element stays about 5 bounds away at k = 20480.
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
    const bool large_k = role_ == Role::decode || role_ == Role::peak;
    perturb_element(types_.out, c_.get(), at, large_k ? 2.0 : 1.1, 0, s);
    CUBENCH_CUDA_LAUNCHED();
    return "C[" + std::to_string(at) + "] = " + std::to_string(values[at]) +
           (large_k ? " doubled" : " made 10% larger");
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

  Work work() const override {
    Work w{model::gemm_flops(s_.m, s_.n, s_.k), t_, 0};
    // A and B read once, C written once: for a decode step, the weights (A) are nearly all of it.
    if (role_ == Role::decode)
      w.bytes = double(dtype_bytes(t_)) * (double(s_.m) + s_.n) * s_.k +
                double(dtype_bytes(types_.out)) * s_.m * s_.n;
    return w;
  }

  std::string label() const override {
    std::string l = "cuBLASLt algo " + std::to_string(algo_id(algo_));
    if (role_ == Role::peak) {
      char text[256];
      std::snprintf(text, sizeof text,
                    "best %d x %d x %d, %s, searched %d shapes x up to %d algorithms (%d timed), "
                    "the fastest %d then sustained for %.0f s each, in %.1f s",
                    s_.m, s_.n, s_.k, l.c_str(), shapes_searched_, kCandidates, algorithms_timed_,
                    finalists_sustained_, kSustainedSeconds, search_seconds_);
      return text;
    }
    if (role_ == Role::autotune)
      l += ", autotuned: candidate " + std::to_string(chosen_ + 1) + " of " +
           std::to_string(candidates_);
    else
      l += ", heuristic's first of " + std::to_string(candidates_);
    if (role_ == Role::autotune && chosen_ > 0) {
      char gain[64];
      std::snprintf(gain, sizeof gain, " (%.1f%% faster than the first)", (speedup_ - 1) * 100);
      l += gain;
    }
    return l;
  }

  std::map<std::string, double> counters(double) const override {
    std::map<std::string, double> c = {{"rel_error", rel_error_},
                                       {"max_error_ratio", max_error_ratio_}};
    if (role_ == Role::peak) {
      c["best_m"] = s_.m;
      c["best_n"] = s_.n;
      c["best_k"] = s_.k;
      c["shapes_searched"] = shapes_searched_;
      c["search_s"] = search_seconds_;
      c["achievable_TFLOPS"] = achievable_rate_ / 1e12;
      c["sustained_TFLOPS"] = sustained_rate_ / 1e12;
      c["sustained_drop_pct"] = sustained_drop_pct_;
    }
    return c;
  }

 private:
  std::string describe() const {
    const std::string family = std::string(role_family(role_)) + " " + std::string(dtype_name(t_));
    if (role_ == Role::decode)  // in the family's own terms: weights N x K, m tokens
      return family + " weights " + std::to_string(s_.m) + "x" + std::to_string(s_.k) +
             ", m=" + std::to_string(s_.n);
    return family + " " + std::to_string(s_.m) + "x" + std::to_string(s_.n) + "x" +
           std::to_string(s_.k);
  }

  // Buffers for C = A^T B at `room` (A k x m, B k x n, C m x n), A and B filled whole.
  void allocate_and_fill(Env& env, Shape room) {
    const std::size_t a_elems = std::size_t(room.k) * room.m,
                      b_elems = std::size_t(room.k) * room.n;
    a_ = env.alloc(a_elems * dtype_bytes(t_));
    b_ = env.alloc(b_elems * dtype_bytes(t_));
    c_ = env.alloc(std::size_t(room.m) * room.n * dtype_bytes(types_.out));
    workspace_ = env.alloc(kWorkspaceBytes);
    fill_uniform(t_, a_.get(), a_elems, env.fresh_seed(), -1.f, 1.f, env.stream());
    fill_uniform(t_, b_.get(), b_elems, env.fresh_seed(), -1.f, 1.f, env.stream());
    CUBENCH_CUDA_LAUNCHED();
  }

  void create_descriptors() {
    CUBENCH_CUBLAS(cublasLtCreate(&handle_));
    CUBENCH_CUBLAS(cublasLtMatmulDescCreate(&desc_, types_.compute, CUDA_R_32F));
    cublasOperation_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
    CUBENCH_CUBLAS(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a,
                                                  sizeof trans_a));
    CUBENCH_CUBLAS(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b,
                                                  sizeof trans_b));
    CUBENCH_CUBLAS(cublasLtMatmulPreferenceCreate(&pref_));
    std::size_t workspace = kWorkspaceBytes;
    CUBENCH_CUBLAS(cublasLtMatmulPreferenceSetAttribute(
        pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace));
  }

  // The matrix layouts for shape s, packed in the front of the buffers; s becomes the case's.
  void use_shape(Shape s) {
    destroy_layouts();
    s_ = s;
    CUBENCH_CUBLAS(cublasLtMatrixLayoutCreate(&a_layout_, types_.ab, s_.k, s_.m, s_.k));
    CUBENCH_CUBLAS(cublasLtMatrixLayoutCreate(&b_layout_, types_.ab, s_.k, s_.n, s_.k));
    CUBENCH_CUBLAS(cublasLtMatrixLayoutCreate(&c_layout_, types_.cd, s_.m, s_.n, s_.m));
  }

  void destroy_layouts() {
    for (cublasLtMatrixLayout_t* layout : {&a_layout_, &b_layout_, &c_layout_})
      if (*layout) {
        cublasLtMatrixLayoutDestroy(*layout);
        *layout = nullptr;
      }
  }

  // The heuristic's top kCandidates for the current shape, best first; none where cuBLASLt has
  // nothing for it (it answers NOT_SUPPORTED, or with no algorithm).
  std::vector<cublasLtMatmulHeuristicResult_t> heuristic() {
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

  void matmul(cudaStream_t stream, const cublasLtMatmulAlgo_t& algo) {
    const float alpha = 1.f, beta = 0.f;
    const cublasStatus_t status = cublasLtMatmul(
        handle_, desc_, &alpha, a_.get(), a_layout_, b_.get(), b_layout_, &beta, c_.get(),
        c_layout_, c_.get(), c_layout_, &algo, workspace_.get(), kWorkspaceBytes, stream);
    if (status == CUBLAS_STATUS_NOT_SUPPORTED)
      throw NotSupported("cuBLASLt's algorithm " + std::to_string(algo_id(algo)) +
                         " does not run " + describe());
    check_cublas(status, "cublasLtMatmul", __FILE__, __LINE__);
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

  // gemm_peak: times the search's shapes in its order, each with the heuristic's top 8
  // algorithms, until the search is over or the time box (--cubench_search_seconds) has run out,
  // and keeps the fastest (shape, algorithm). The box is checked before every timing, so it is
  // overrun by one timing at most; and the first shape that runs is always timed, so there is
  // a best whatever the box.
  void search(Env& env) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point start = Clock::now();
    const double box = run_settings().search_seconds;
    auto seconds_since_start = [&] {
      return std::chrono::duration<double>(Clock::now() - start).count();
    };
    GemmShapeSearch order;
    double best_rate = 0;
    Shape best_shape;
    cublasLtMatmulAlgo_t best_algo{};
    struct Timed {
      double rate;
      Shape shape;
      cublasLtMatmulAlgo_t algo;
    };
    std::vector<Timed> timed;
    while (const std::optional<Shape> shape = order.next()) {
      if (best_rate > 0 && seconds_since_start() >= box) break;
      use_shape(*shape);
      double shape_rate = 0;
      for (const cublasLtMatmulHeuristicResult_t& candidate : heuristic()) {
        if (best_rate > 0 && seconds_since_start() >= box) break;
        double t = 0;
        try {
          t = median_seconds_on_stream(
              env.stream(), [&] { matmul(env.stream(), candidate.algo); }, kSearchWarmUp,
              kSearchRuns);
        } catch (const Error&) {
          continue;  // a candidate the heuristic offered but that will not run here
        }
        if (!(t > 0)) continue;
        ++algorithms_timed_;
        const double rate = model::gemm_flops(shape->m, shape->n, shape->k) / t;
        timed.push_back({rate, *shape, candidate.algo});
        shape_rate = std::max(shape_rate, rate);
        if (rate > best_rate) {
          best_rate = rate;
          best_shape = *shape;
          best_algo = candidate.algo;
        }
      }
      order.score(*shape, shape_rate);
    }
    shapes_searched_ = order.shapes_that_ran();
    // The finalists, sustained: as many runs as fill kSustainedSeconds at the burst's rate, after
    // a quarter of that as warm-up, while the box lasts.
    std::sort(timed.begin(), timed.end(),
              [](const Timed& a, const Timed& b) { return a.rate > b.rate; });
    double sustained_best = 0;
    for (std::size_t i = 0; i < timed.size() && i < std::size_t(kSustainedFinalists); ++i) {
      const Timed& f = timed[i];
      const double burst = model::gemm_flops(f.shape.m, f.shape.n, f.shape.k) / f.rate;
      const int runs = std::max(10, int(kSustainedSeconds / burst));
      // Its whole time (runs and warm-up: 10 runs of a slow shape can pass the second) in the box.
      if (seconds_since_start() + 1.25 * runs * burst >= box) break;
      use_shape(f.shape);
      double t = 0;
      try {
        t = median_seconds_on_stream(
            env.stream(), [&] { matmul(env.stream(), f.algo); }, runs / 4, runs);
      } catch (const Error&) {
        continue;
      }
      if (!(t > 0)) continue;
      ++finalists_sustained_;
      const double rate = model::gemm_flops(f.shape.m, f.shape.n, f.shape.k) / t;
      if (rate > sustained_best) {
        sustained_best = rate;
        best_rate = rate;
        best_shape = f.shape;
        best_algo = f.algo;
      }
    }
    search_seconds_ = seconds_since_start();
    if (!(best_rate > 0))
      throw NotSupported("cuBLASLt offers no algorithm that runs " +
                         std::string(role_family(role_)) + " " + std::string(dtype_name(t_)) +
                         " at any shape searched");
    // The mamf-finder-style figures: achievable for the fastest burst pair and the row's pair,
    // sustained for the row's pair.
    std::sort(timed.begin(), timed.end(),
              [](const Timed& a, const Timed& b) { return a.rate > b.rate; });
    const bool same_pair = !timed.empty() && timed.front().shape == best_shape &&
                           std::memcmp(&timed.front().algo, &best_algo, sizeof best_algo) == 0;
    if (!timed.empty() && !same_pair) {
      use_shape(timed.front().shape);
      achievable_rate_ = achievable_rate(env, timed.front().algo);
    }
    use_shape(best_shape);
    algo_ = best_algo;
    achievable_rate_ = std::max(achievable_rate_, achievable_rate(env, algo_));
    sustain(env);
  }

  // The achievable rate of the current shape and `algo` (kBurstReps bursts; see kBurstRuns).
  double achievable_rate(Env& env, const cublasLtMatmulAlgo_t& algo) {
    std::vector<double> runs;
    try {
      for (int rep = 0; rep < kBurstReps; ++rep) {
        std::this_thread::sleep_for(std::chrono::duration<double>(kIdleSeconds));
        const std::vector<double> burst = queued_run_seconds(
            env.stream(), [&] { matmul(env.stream(), algo); }, kBurstRuns);
        runs.insert(runs.end(), burst.begin(), burst.end());
      }
    } catch (const Error&) {
      return 0;  // a pair that will not run again is no candidate
    }
    std::sort(runs.begin(), runs.end());
    runs.resize(std::min<std::size_t>(runs.size(), kFastestRuns));
    const double t = median(runs);
    return t > 0 ? model::gemm_flops(s_.m, s_.n, s_.k) / t : 0;
  }

  // The sustained rate of the row's (shape, algorithm): kWarmSeconds untimed, then the rate over
  // kWindowSeconds of back-to-back runs, and how much slower its second half ran.
  void sustain(Env& env) {
    const double flops = model::gemm_flops(s_.m, s_.n, s_.k);
    const double burst = flops / std::max(achievable_rate_, 1.0);  // seconds a run, about
    const int warm = std::max(10, int(kWarmSeconds / burst));
    const int window = std::max(20, int(kWindowSeconds / burst)) / 2 * 2;
    for (int i = 0; i < warm; ++i) matmul(env.stream(), algo_);
    // The window in two halves, three events: each half's runs back to back, nothing between them.
    const std::vector<double> halves = queued_run_seconds(
        env.stream(),
        [&] {
          for (int i = 0; i < window / 2; ++i) matmul(env.stream(), algo_);
        },
        2);
    const double first = halves[0], second = halves[1];
    sustained_rate_ = flops * window / (first + second);
    sustained_drop_pct_ = first > 0 ? (second / first - 1) * 100 : 0;
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
Family& with_error_counters(Family& f) {
  return f.counter({"rel_error", "", Better::lower, "RMS error of C against the fp64 product"})
      .counter({"max_error_ratio", "", Better::lower,
                "worst element's error over its bound (gemm_bound); above 1 fails the check"});
}

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

// "11008x4096" -> {N = 11008, K = 4096}.
std::pair<int, int> parse_weights(const std::string& weights) {
  const std::size_t x = weights.find('x');
  if (x == std::string::npos) throw Error("gemm_decode: weights " + weights + " are not NxK");
  return {std::stoi(weights.substr(0, x)), std::stoi(weights.substr(x + 1))};
}

void register_gemm_decode() {
  const DType dtypes[] = {DType::bf16, DType::fp8_e4m3};
  Family f("gemm_decode",
           "Y = X W^T through cuBLASLt for one decode step: LLaMA-7B's weights against 1 to 64 "
           "tokens (bandwidth-bound)");
  f.axis(dtype_axis({dtypes, dtypes + 2}))
      // W's N x K: attention out, MLP up (and gate), MLP down, fused QKV.
      .axis(string_axis("weights", {"4096x4096", "11008x4096", "4096x11008", "12288x4096"}))
      .axis(int_axis("m", {1, 2, 4, 8, 16, 32, 64}));
  with_error_counters(f)
      .main_counter("GBps")
      .size_axis("m")
      // Default run: the MLP up weights at 1, 8 and 64 tokens (the flat start, the middle and the
      // end of the curve), the attention weights at 1; each a few seconds (cold samples of
      // 10-30 us), 8 rows in all.
      .default_suite([](const Point& p) {
        const std::int64_t m = p.get_int("m");
        const std::string& w = p.get_string("weights");
        return (w == "11008x4096" && (m == 1 || m == 8 || m == 64)) || (w == "4096x4096" && m == 1);
      })
      .sampling([](const Point&) {
        Sampling s = Sampling::launches_only();  // run() only launches
        s.cold_l2 = true;  // a decode step reads weights that are not in L2: flush before each
        return s;
      })
      .size([](const Point& p) {
        const auto [n, k] = parse_weights(p.get_string("weights"));
        return model::gemm_flops(p.get_int("m"), n, k);
      })
      .make([](const Point& p) {
        const auto [n, k] = parse_weights(p.get_string("weights"));
        // The weights are cuBLASLt's A (its m = N) and the tokens its n (see the file's head).
        return std::make_unique<Gemm>(p.get_dtype(), Shape{n, int(p.get_int("m")), k},
                                      Role::decode);
      })
      .add();
}
CUBENCH_REGISTER(register_gemm_decode);

void register_gemm_peak() {
  const DType dtypes[] = {DType::bf16, DType::fp8_e4m3, DType::fp16, DType::tf32, DType::fp32};
  Family f("gemm_peak",
           "the most TFLOPS cuBLASLt reaches here: the best (shape, algorithm) of a time-boxed "
           "search (--cubench_search_seconds)");
  f.axis(dtype_axis({dtypes, dtypes + 5}));
  with_error_counters(f)
      .counter({"best_m", "", Better::none, "m of the fastest shape the search found"})
      .counter({"best_n", "", Better::none, "n of the fastest shape the search found"})
      .counter({"best_k", "", Better::none, "k of the fastest shape the search found"})
      .counter({"shapes_searched", "", Better::none, "shapes the search timed within its box"})
      .counter({"search_s", "s", Better::none, "wall seconds of the search in set-up"})
      .counter({"achievable_TFLOPS", "TFLOP/s", Better::higher,
                "after mamf-finder's MAMF: median of the 5 fastest of 10 bursts x 20 runs, each "
                "burst after 0.25 s idle (no clock filter, no cache reset)"})
      .counter({"sustained_TFLOPS", "TFLOP/s", Better::higher,
                "after mamf-finder's MSMF: the rate over one 2 s window of back-to-back runs after "
                "1 s, for the row's pair (no clock settling, no steadiness gate)"})
      .counter({"sustained_drop_pct", "%", Better::lower,
                "how much slower the sustained window's second half ran than its first"})
      .main_counter("TFLOPS")
      // Never in the default run: a search is --cubench_search_seconds (60 s) per dtype, and a
      // shorter one would report how far it got as a peak. --cubench_suite=full runs it.
      .default_suite([](const Point&) { return false; })
      .sampling(Sampling::launches_only())
      .make(
          [](const Point& p) { return std::make_unique<Gemm>(p.get_dtype(), Shape{}, Role::peak); })
      .add();
}
CUBENCH_REGISTER(register_gemm_peak);

}  // namespace
}  // namespace cubench
