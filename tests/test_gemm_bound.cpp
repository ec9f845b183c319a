// The GEMM check's element bound (fixtures/check/validate.h: gemm_bound), simulated on the host
// for every dtype at every inner dimension the GEMM families time: inputs drawn as the families
// draw them (uniform in [-1, 1), rounded to the stored type), each element's figures in double,
// then the question the check must answer: does a 10% error on a typical element clear its bound
// (by 1.5x, the margin a planted fault must have)? Typical: at least the median magnitude of the
// elements drawn, as the planted fault (Gemm::plant_fault) picks it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "fixtures/check/validate.h"

namespace cubench {
namespace {

// x rounded to nearest with `bits` significant bits (the stored types' precision; no subnormals or
// overflow in [-1, 1), bar e4m3's smallest, which change nothing here).
double round_to_bits(double x, int bits) {
  if (x == 0) return 0;
  int e = 0;
  std::frexp(x, &e);
  const double ulp = std::ldexp(1.0, e - bits);
  return std::nearbyint(x / ulp) * ulp;
}

int stored_bits(DType t) {
  switch (t) {
    case DType::fp16:
      return 11;
    case DType::bf16:
      return 8;
    case DType::fp8_e4m3:
      return 4;
    default:
      return 24;  // fp32, and tf32's stored fp32 (its rounding to 10 bits is the bound's own term)
  }
}

struct Element {
  double c, rms, sum;  // the product, sqrt(sum (ab)^2), sum |ab|
};

std::vector<Element> simulate(DType t, int k, int count, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<Element> out;
  for (int e = 0; e < count; ++e) {
    Element x{0, 0, 0};
    for (int i = 0; i < k; ++i) {
      const double a = round_to_bits(uniform(rng), stored_bits(t));
      const double b = round_to_bits(uniform(rng), stored_bits(t));
      x.c += a * b;
      x.rms += a * b * a * b;
      x.sum += std::fabs(a * b);
    }
    x.rms = std::sqrt(x.rms);
    out.push_back(x);
  }
  return out;
}

TEST(GemmBound, TenPercentOfATypicalElementClearsItAtEveryTimedK) {
  std::mt19937_64 rng(7);
  for (DType t : {DType::fp32, DType::tf32, DType::fp16, DType::bf16, DType::fp8_e4m3})
    for (int k : {1024, 2048, 4096, 8192, 11008, 16384, 20480}) {
      SCOPED_TRACE(std::string(dtype_name(t)) + " k=" + std::to_string(k));
      const GemmBound bound = gemm_bound(t, k);
      const auto elements = simulate(t, k, 64, rng);
      std::vector<double> magnitudes;
      for (const Element& x : elements) magnitudes.push_back(std::fabs(x.c));
      std::nth_element(magnitudes.begin(), magnitudes.begin() + 32, magnitudes.end());
      const double median = magnitudes[32];
      double worst = 1e300;  // the least margin of 10% over the bound, typical elements
      for (const Element& x : elements) {
        if (std::fabs(x.c) < median) continue;
        worst =
            std::min(worst, 0.1 * std::fabs(x.c) / gemm_element_bound(bound, x.c, x.rms, x.sum));
      }
      EXPECT_GE(worst, 1.5);
    }
}

// A right answer: the output's rounding alone (u_out |c|, the largest it can be) stays at 0.67 of
// the bound at most, so a clean result never stands near it.
TEST(GemmBound, RoundingTheOutputStaysUnderTwoThirdsOfIt) {
  for (DType t : {DType::fp32, DType::tf32, DType::fp16, DType::bf16, DType::fp8_e4m3}) {
    const double u_out = t == DType::fp16                       ? std::ldexp(1.0, -11)
                         : t == DType::fp32 || t == DType::tf32 ? std::ldexp(1.0, -24)
                                                                : std::ldexp(1.0, -8);
    EXPECT_LE(u_out, 0.67 * gemm_bound(t, 1024).rel) << dtype_name(t);
  }
}

// The former worst-case bound, (k + 1) 2^-24 sum|a||b| (+ 2^-8 sum|a||b| in fp8), let a 10%
// error on a typical element pass from k = 4096 on: the simulation above would have failed it.
TEST(GemmBound, TheFormerWorstCaseBoundMissedTenPercent) {
  std::mt19937_64 rng(11);
  const int k = 16384;
  const auto elements = simulate(DType::fp8_e4m3, k, 16, rng);
  int passed = 0;
  for (const Element& x : elements) {
    const double former = std::ldexp(1.0, -8) * std::fabs(x.c) +
                          (std::ldexp(1.0, -8) + (k + 1) * std::ldexp(1.0, -24)) * x.sum;
    if (0.1 * std::fabs(x.c) <= former) ++passed;
  }
  EXPECT_GE(passed, 14);  // nearly all of them
}

}  // namespace
}  // namespace cubench
