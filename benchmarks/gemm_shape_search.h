#pragma once
// gemm_peak's search order (benchmarks/gemm_peak.cpp): which GEMM shapes to time, one after
// another, to find the one this GPU multiplies fastest. mamf-finder asks the same question by
// timing every m, n, k in steps of 256 up to about 20480 (hours); this asks it within a time box: a
// coarse grid from the smallest shape to the largest, then a pattern search around the best so far
// (its six neighbours, one side moved by a step of 2048; the step halves down to 256 whenever no
// neighbour is faster). The caller times each shape and stops when its time box runs out, so the
// order matters: small shapes first, and the search closes in on the best. Pure logic, no GPU:
// tests/test_gemm_shape_search.cpp runs it against made-up rates.
#include <algorithm>
#include <deque>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

namespace cubench {

struct GemmShape {
  int m = 0, n = 0, k = 0;
  double volume() const { return double(m) * n * k; }
  friend bool operator<(const GemmShape& a, const GemmShape& b) {
    return std::tie(a.m, a.n, a.k) < std::tie(b.m, b.n, b.k);
  }
  friend bool operator==(const GemmShape& a, const GemmShape& b) {
    return a.m == b.m && a.n == b.n && a.k == b.k;
  }
};

class GemmShapeSearch {
 public:
  static constexpr int kGrain = 256;  // every side is a multiple of it (mamf-finder's)
  static constexpr int kLow = 1024, kHigh = 20480;  // every side within these
  static constexpr int kFirstStep = 2048;

  // The coarse grid: m, n in {4096, 8192, 16384}, k in {2048, 4096, 8192, 16384} (36 shapes),
  // smallest volume first, so a short time box still times some shapes.
  GemmShapeSearch() {
    std::vector<GemmShape> grid;
    for (int m : {4096, 8192, 16384})
      for (int n : {4096, 8192, 16384})
        for (int k : {2048, 4096, 8192, 16384}) grid.push_back({m, n, k});
    std::stable_sort(grid.begin(), grid.end(), [](const GemmShape& a, const GemmShape& b) {
      return a.volume() < b.volume();
    });
    for (const GemmShape& s : grid) enqueue(s);
  }

  // The largest any shape gets: what the caller allocates once, every shape a part of it.
  static GemmShape largest() { return {kHigh, kHigh, kHigh}; }

  // The next shape to time, or nothing once the search is over. Score each before the next.
  std::optional<GemmShape> next() {
    while (queue_.empty()) {
      if (!local_) {
        if (!found()) return std::nullopt;  // nothing on the grid ran: nowhere to search from
        local_ = true;
        centre_ = best_;
        step_ = kFirstStep;
      } else if (!(best_ == centre_)) {
        centre_ = best_;  // a neighbour was faster: search around it, at the same step
      } else if ((step_ /= 2) < kGrain) {
        return std::nullopt;  // no neighbour is faster even a grain away
      }
      enqueue_neighbours();
    }
    GemmShape s = queue_.front();
    queue_.pop_front();
    return s;
  }

  // The rate the shape reached (any unit, higher is better; 0: it did not run at all).
  void score(const GemmShape& s, double rate) {
    if (rate > 0) ++scored_;
    if (rate > best_rate_) {
      best_rate_ = rate;
      best_ = s;
    }
  }

  bool found() const { return best_rate_ > 0; }
  GemmShape best() const { return best_; }
  double best_rate() const { return best_rate_; }
  int shapes_that_ran() const { return scored_; }

 private:
  void enqueue(const GemmShape& s) {
    if (seen_.insert(s).second) queue_.push_back(s);
  }

  void enqueue_neighbours() {
    for (int side = 0; side < 3; ++side)
      for (int sign : {+1, -1}) {
        GemmShape s = centre_;
        int& v = side == 0 ? s.m : side == 1 ? s.n : s.k;
        v = std::clamp(v + sign * step_, kLow, kHigh);
        enqueue(s);  // a clamped side may repeat a shape already seen: enqueue skips it
      }
  }

  std::deque<GemmShape> queue_;
  std::set<GemmShape> seen_;
  bool local_ = false;
  GemmShape centre_, best_;
  int step_ = kFirstStep;
  double best_rate_ = 0;
  int scored_ = 0;
};

}  // namespace cubench
