// gemm_peak's search order (benchmarks/gemm_shape_search.h) against made-up rates: no GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <set>

#include "benchmarks/gemm_shape_search.h"

namespace cubench {
namespace {

// Runs the search to its end with `rate` standing in for the timing; returns the shapes it asked
// for, in order.
std::vector<GemmShape> search_all(GemmShapeSearch& search,
                                  const std::function<double(const GemmShape&)>& rate) {
  std::vector<GemmShape> asked;
  while (std::optional<GemmShape> s = search.next()) {
    asked.push_back(*s);
    search.score(*s, rate(*s));
    if (asked.size() > 10000) break;  // a search that never ends fails below
  }
  return asked;
}

// One best shape off the coarse grid, the rate falling with the distance from it in each side
// (a separable, single-peaked landscape): the search must land on it exactly.
TEST(GemmShapeSearch, FindsAPeakOffTheGridAndAsksEachShapeOnce) {
  const GemmShape peak{6144, 17920, 2816};
  auto rate = [&](const GemmShape& s) {
    return 1e6 - std::abs(s.m - peak.m) - std::abs(s.n - peak.n) - 3.0 * std::abs(s.k - peak.k);
  };
  GemmShapeSearch search;
  const std::vector<GemmShape> asked = search_all(search, rate);
  ASSERT_LT(asked.size(), 200u);
  EXPECT_TRUE(search.best() == peak)
      << search.best().m << "x" << search.best().n << "x" << search.best().k;
  EXPECT_EQ(search.shapes_that_ran(), int(asked.size()));
  // The grid first, smallest volume first; every shape on the 256 grain, within bounds, once.
  EXPECT_TRUE(asked.front() == (GemmShape{4096, 4096, 2048}));
  for (std::size_t i = 1; i < 36; ++i) EXPECT_LE(asked[i - 1].volume(), asked[i].volume());
  std::set<GemmShape> unique(asked.begin(), asked.end());
  EXPECT_EQ(unique.size(), asked.size());
  for (const GemmShape& s : asked)
    for (int side : {s.m, s.n, s.k}) {
      EXPECT_EQ(side % GemmShapeSearch::kGrain, 0);
      EXPECT_GE(side, GemmShapeSearch::kLow);
      EXPECT_LE(side, GemmShapeSearch::kHigh);
    }
}

// The best at the largest corner: the search reaches the bound and stops there.
TEST(GemmShapeSearch, StopsAtTheBounds) {
  GemmShapeSearch search;
  search_all(search, [](const GemmShape& s) { return s.volume(); });
  EXPECT_TRUE(search.best() == GemmShapeSearch::largest());
}

// Nothing runs (no algorithm for this dtype anywhere): the grid, then the end, nothing found.
TEST(GemmShapeSearch, NothingRunsNothingFound) {
  GemmShapeSearch search;
  const std::vector<GemmShape> asked = search_all(search, [](const GemmShape&) { return 0.0; });
  EXPECT_EQ(asked.size(), 36u);
  EXPECT_FALSE(search.found());
  EXPECT_EQ(search.shapes_that_ran(), 0);
}

}  // namespace
}  // namespace cubench
