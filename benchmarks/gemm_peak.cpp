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
// The search and the figures are GemmPeak's, here; the sampling, the check and the rest of the
// case are Gemm's (gemm_case.h), as for every GEMM family.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "benchmarks/gemm_case.h"
#include "benchmarks/gemm_shape_search.h"
#include "fixtures/cubench.h"

namespace cubench::gemm {
namespace {

// gemm_peak times each (shape, algorithm) of its search with fewer runs than gemm_autotune's
// 3 + 10: it compares many, and the best is sampled properly afterwards.
constexpr int kSearchWarmUp = 2, kSearchRuns = 5;
// Then, with what is left of the box, its fastest few (shape, algorithm) pairs are timed again
// over a sustained second each: the search's bursts of 7 runs can rank first a pair that only
// keeps its rate until the power cap bites (on an H200 the sampled best runs power-capped, at
// about 1424 MHz), and the best is what the GPU sustains.
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

// gemm_peak's case: Gemm, its shape and algorithm found by a search in set-up, its buffers for the
// largest shape the search reaches (its check is at most as large), its row with the search's and
// the mamf-finder-style figures.
class GemmPeak final : public Gemm {
 public:
  explicit GemmPeak(DType t) : Gemm(GemmFamily::peak, t, Shape{}) {}

  std::string label() const override;
  std::map<std::string, double> counters(double seconds_per_run) const override;

 private:
  Shape room() const override { return GemmShapeSearch::largest(); }
  void choose_algorithm(Env& env) override { search(env); }

  void search(Env& env);
  double achievable_rate(Env& env, const cublasLtMatmulAlgo_t& algo);
  void sustain(Env& env);

  int shapes_searched_ = 0, algorithms_timed_ = 0;
  int finalists_sustained_ = 0;
  double achievable_rate_ = 0, sustained_rate_ = 0, sustained_drop_pct_ = 0;  // FLOP/s, %
  double search_seconds_ = 0;
};

// Times the search's shapes in its order, each with the heuristic's top 8 algorithms, until the
// search is over or the time box (--cubench_search_seconds) has run out, and keeps the fastest
// (shape, algorithm). The box is checked before every timing, so it is overrun by one timing at
// most; and the first shape that runs is always timed, so there is a best whatever the box.
void GemmPeak::search(Env& env) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  const double box = env.settings().search_seconds;
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
    throw NotSupported("cuBLASLt offers no algorithm that runs " + family_and_dtype() +
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
double GemmPeak::achievable_rate(Env& env, const cublasLtMatmulAlgo_t& algo) {
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
void GemmPeak::sustain(Env& env) {
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

// Its shape, its algorithm and how the search found them.
std::string GemmPeak::label() const {
  char text[256];
  std::snprintf(text, sizeof text,
                "best %d x %d x %d, %s, searched %d shapes x up to %d algorithms (%d timed), "
                "the fastest %d then sustained for %.0f s each, in %.1f s",
                s_.m, s_.n, s_.k, algo_name().c_str(), shapes_searched_, kCandidates,
                algorithms_timed_, finalists_sustained_, kSustainedSeconds, search_seconds_);
  return text;
}

std::map<std::string, double> GemmPeak::counters(double seconds_per_run) const {
  std::map<std::string, double> c = Gemm::counters(seconds_per_run);
  c["best_m"] = s_.m;
  c["best_n"] = s_.n;
  c["best_k"] = s_.k;
  c["shapes_searched"] = shapes_searched_;
  c["search_s"] = search_seconds_;
  c["achievable_TFLOPS"] = achievable_rate_ / 1e12;
  c["sustained_TFLOPS"] = sustained_rate_ / 1e12;
  c["sustained_drop_pct"] = sustained_drop_pct_;
  return c;
}

void register_gemm_peak() {
  const DType dtypes[] = {DType::bf16, DType::fp8_e4m3, DType::fp16, DType::tf32, DType::fp32};
  Family f(name_of(GemmFamily::peak, kGemmFamilies),
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
      // Its buffers hold the largest shape the search can reach; the check is at most as large.
      .needs([](const Point& p) { return gemm_needs(p.get_dtype(), GemmShapeSearch::largest()); })
      .make([](const Point& p) { return std::make_unique<GemmPeak>(p.get_dtype()); })
      .add();
}
CUBENCH_REGISTER(register_gemm_peak);

}  // namespace
}  // namespace cubench::gemm
