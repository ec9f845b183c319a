// CPU-side logic, tested everywhere: dtypes and tolerances, work models, counters, fragmentation,
// statistics, datasheet peaks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "fixtures/case/counters.h"
#include "fixtures/case/models.h"
#include "fixtures/check/validate.h"
#include "fixtures/device/memory_pool.h"
#include "fixtures/detail/device/datasheet.h"
#include "fixtures/detail/report/console_table.h"
#include "fixtures/detail/report/context.h"
#include "fixtures/detail/report/row_counters.h"
#include "fixtures/timing/stats.h"
#include "kernels/dtype.h"
#include "tests/nothing_case.h"

#include <benchmark/benchmark.h>

#include <regex>
#include <sstream>

namespace cubench {
namespace {

TEST(DType, EachTypeHasANameOfItsOwn) {
  std::set<std::string_view> names;
  for (DType t : {DType::fp64, DType::fp32, DType::tf32, DType::fp16, DType::bf16, DType::fp8_e4m3})
    EXPECT_TRUE(names.insert(dtype_name(t)).second) << dtype_name(t);
  EXPECT_EQ(dtype_name(DType::fp8_e4m3), "fp8");
}

TEST(DType, StorageSizes) {
  EXPECT_EQ(dtype_bytes(DType::tf32), 4u);  // tf32 lives in fp32 storage
  EXPECT_EQ(dtype_bytes(DType::bf16), 2u);
  EXPECT_EQ(dtype_bytes(DType::fp8_e4m3), 1u);
  EXPECT_EQ(dtype_bytes(DType::fp64), 8u);
}

TEST(DType, HostElementsReadEveryStorageType) {
  const double d[] = {1.5, -2.25};
  const float f[] = {0.5f, 3.0f};
  const std::uint16_t half_two = 0x4000, bf16_minus_one = 0xBF80;
  const std::uint8_t fp8_one = 0x38;  // e4m3: exponent 7 (bias 7), mantissa 0
  EXPECT_DOUBLE_EQ(host_element(DType::fp64, d, 1), -2.25);
  EXPECT_DOUBLE_EQ(host_element(DType::fp32, f, 1), 3.0);
  EXPECT_DOUBLE_EQ(host_element(DType::tf32, f, 0), 0.5);
  EXPECT_DOUBLE_EQ(host_element(DType::fp16, &half_two, 0), 2.0);
  EXPECT_DOUBLE_EQ(host_element(DType::bf16, &bf16_minus_one, 0), -1.0);
  EXPECT_DOUBLE_EQ(host_element(DType::fp8_e4m3, &fp8_one, 0), 1.0);
}

TEST(DType, TolerancesFollowPrecision) {
  EXPECT_DOUBLE_EQ(dtype_tolerance(DType::fp32), 1e-5);
  EXPECT_DOUBLE_EQ(dtype_tolerance(DType::tf32), 1e-3);
  EXPECT_DOUBLE_EQ(dtype_tolerance(DType::fp16), 1e-2);
  EXPECT_DOUBLE_EQ(dtype_tolerance(DType::bf16), 1e-2);
  EXPECT_LT(dtype_tolerance(DType::fp64), dtype_tolerance(DType::fp32));
}

TEST(Models, GemmIsTwoMnk) {
  EXPECT_DOUBLE_EQ(model::gemm_flops(4096, 4096, 4096), 2.0 * 4096.0 * 4096.0 * 4096.0);
  EXPECT_DOUBLE_EQ(model::gemm_flops(8192, 12288, 4096), 824633720832.0);
}

TEST(Models, ElementwiseBytes) {
  EXPECT_DOUBLE_EQ(model::elementwise_bytes(10'000'000, 4, 4), 80'000'000);
  EXPECT_DOUBLE_EQ(model::elementwise_bytes(10, 2, 4), 60);
}

TEST(Models, AllReduceBusFactorMatchesNcclTests) {
  EXPECT_DOUBLE_EQ(model::allreduce_bus_factor(1), 0.0);
  EXPECT_DOUBLE_EQ(model::allreduce_bus_factor(2), 1.0);
  EXPECT_DOUBLE_EQ(model::allreduce_bus_factor(4), 1.5);
  EXPECT_DOUBLE_EQ(model::allreduce_bus_factor(8), 1.75);
}

TEST(Fragmentation, IsUnusedShareOfReservedHighWater) {
  EXPECT_DOUBLE_EQ(fragmentation(0, 0), 0.0);
  EXPECT_DOUBLE_EQ(fragmentation(100, 100), 0.0);
  EXPECT_DOUBLE_EQ(fragmentation(75, 100), 0.25);
  EXPECT_DOUBLE_EQ(fragmentation(200, 100), 0.0);  // clamped: used never exceeds reserved
}

TEST(Counters, RatesFromWorkAndTime) {
  auto peaks = datasheet_peaks("NVIDIA H200", 132);
  ASSERT_TRUE(peaks);
  Work w{model::gemm_flops(8192, 8192, 8192), DType::bf16, 0};
  double seconds = w.flops / 700e12;
  Counters c = rate_counters(w, seconds, peaks, 0);
  EXPECT_NEAR(c.at("TFLOPS"), 700.0, 1e-9);
  EXPECT_NEAR(c.at("pct_peak"), 100.0 * 700.0 / 989.4, 1e-9);
  EXPECT_EQ(c.count("GBps"), 0u);
}

TEST(Counters, NoPercentWithoutAKnownPeakOrCeiling) {
  Work w{1e12, DType::fp32, 4e9};
  Counters c = rate_counters(w, 1.0, std::nullopt, 0);
  EXPECT_DOUBLE_EQ(c.at("TFLOPS"), 1.0);
  EXPECT_DOUBLE_EQ(c.at("GBps"), 4.0);
  EXPECT_EQ(c.count("pct_peak"), 0u);
  EXPECT_EQ(c.count("pct_copy_ceiling"), 0u);
  c = rate_counters(w, 1.0, std::nullopt, 8e9);
  EXPECT_DOUBLE_EQ(c.at("pct_copy_ceiling"), 50.0);
  EXPECT_TRUE(rate_counters(w, 0.0, std::nullopt, 8e9).empty());
}

TEST(Counters, MemoryFromPoolHighWater) {
  Counters c = memory_counters({600, 800});
  EXPECT_DOUBLE_EQ(c.at("peak_mem_bytes"), 800);
  EXPECT_DOUBLE_EQ(c.at("used_mem_bytes"), 600);
  EXPECT_DOUBLE_EQ(c.at("fragmentation"), 0.25);
}

TEST(Peaks, KnownGpusByNameAndSmCount) {
  auto h200 = datasheet_peaks("NVIDIA H200", 132);
  ASSERT_TRUE(h200);
  EXPECT_DOUBLE_EQ(h200->flops(DType::bf16), 989.4e12);
  EXPECT_DOUBLE_EQ(h200->flops(DType::fp8_e4m3), 1978.9e12);
  EXPECT_EQ(datasheet_peaks("NVIDIA H200 NVL", 132)->product, "H200 NVL");
  EXPECT_EQ(datasheet_peaks("NVIDIA H100 80GB HBM3", 132)->product, "H100 SXM");
  EXPECT_EQ(datasheet_peaks("NVIDIA H100 PCIe", 114)->product, "H100 PCIe");
  EXPECT_FALSE(datasheet_peaks("NVIDIA GeForce GTX 1080", 20));
  EXPECT_DOUBLE_EQ(datasheet_peaks("NVIDIA A100-SXM4-80GB", 108)->flops(DType::fp8_e4m3), 0.0);
}

TEST(Stats, MedianMeanCv) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0);
  EXPECT_DOUBLE_EQ(mean({1, 2, 3}), 2);
  EXPECT_DOUBLE_EQ(coefficient_of_variation({5}), 0);
  EXPECT_NEAR(coefficient_of_variation({1, 2, 3}), 0.5, 1e-12);  // stdev 1, mean 2
  // t(2) = 4.303: 4.303 * 0.5 / sqrt(3)
  EXPECT_NEAR(mean_ci95_half_width({1, 2, 3}), 4.303 * 0.5 / std::sqrt(3.0), 1e-9);
  EXPECT_DOUBLE_EQ(mean_ci95_half_width({5}), 0);
}

// The t quantiles against the tables (two-sided 95%): exact where tabled, the series within 0.001.
TEST(Stats, StudentT95MatchesTheTables) {
  EXPECT_DOUBLE_EQ(student_t95(1), 12.706);
  EXPECT_DOUBLE_EQ(student_t95(8), 2.306);
  for (auto [degrees, table] : std::vector<std::pair<int, double>>{
           {9, 2.262}, {10, 2.228}, {19, 2.093}, {29, 2.045}, {60, 2.000}, {120, 1.980}})
    EXPECT_NEAR(student_t95(degrees), table, 0.001) << degrees;
  EXPECT_NEAR(student_t95(100000), 1.960, 0.001);
}

// The console table's cells: a time in the unit that fits it (its notes: test_row_outcome.cpp).
TEST(ConsoleTable, TimesInTheUnitThatFits) {
  EXPECT_EQ(format_seconds(6.324e-6), "6.324 us");
  EXPECT_EQ(format_seconds(723.4e-6), "723.4 us");
  EXPECT_EQ(format_seconds(0.2551), "255.1 ms");
  EXPECT_EQ(format_seconds(12.5e-9), "12.50 ns");
  EXPECT_EQ(format_seconds(1.5), "1.500 s");
  EXPECT_EQ(format_seconds(0), "-");
}

// The fp32 math control (validate.h) on the host: fp32 sums of any length pass it, the same sums
// of inputs rounded to TF32's 10 bits fail it, at the sizes gemm and torch/gemm time and beyond.
float to_tf32(float x) {  // round to nearest, 13 low mantissa bits dropped, as TF32 math does
  std::uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits = (bits + 0x1000u) & ~0x1fffu;
  std::memcpy(&x, &bits, 4);
  return x;
}

double relative_l2_of_sums(int k, bool tf32) {
  std::mt19937 gen(k);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  double error2 = 0, ref2 = 0;
  for (int element = 0; element < 64; ++element) {
    float c = 0;
    double ref = 0;
    for (int i = 0; i < k; ++i) {
      const float a = u(gen), b = u(gen);
      c += tf32 ? to_tf32(a) * to_tf32(b) : a * b;  // one by one: fp32's worst order
      ref += static_cast<double>(a) * b;
    }
    error2 += (c - ref) * (c - ref);
    ref2 += ref * ref;
  }
  return std::sqrt(error2 / ref2);
}

TEST(Fp32MathControl, Fp32SumsPassItTf32MathFailsIt) {
  for (int k : {256, 4096, 16384, 65536}) {
    EXPECT_LT(relative_l2_of_sums(k, false), fp32_math_control(k) / 3) << k;
    EXPECT_GT(relative_l2_of_sums(k, true), fp32_math_control(k) * 3) << k;
  }
}

// --version: the revision first, then each field a user asks about, in a fixed order, those the
// build lacks left out; fields of no version interest never.
TEST(Version, NamesTheRevisionThenEachLibrary) {
  const ContextFields fields = {{"gpu_l2_bytes", "52428800"}, {"cublas", "13.1.0"},
                                {"git_revision", "edfad3b"}, {"cuda_runtime", "13.0"},
                                {"gpu", "none (no NVIDIA driver)"}};
  EXPECT_EQ(version_text(fields),
            "cubench edfad3b\ncuda_runtime: 13.0\ncublas: 13.1.0\ngpu: none (no NVIDIA driver)\n");
  EXPECT_EQ(version_text({}), "cubench unknown\n");
}

// The console's aggregate rows say what the JSON file says: a cv row as a percentage of the
// mean (Google Benchmark's JSON holds the ratio), the spread rows' counter in its own terms.
benchmark::BenchmarkReporter::Run aggregate_run(const std::string& name, const std::string& kind,
                                                double value, double counter) {
  benchmark::BenchmarkReporter::Run run;
  run.run_name.function_name = name;
  run.run_type = benchmark::BenchmarkReporter::Run::RT_Aggregate;
  run.aggregate_name = kind;
  run.aggregate_unit = kind == "cv" ? benchmark::kPercentage : benchmark::kTime;
  run.time_unit = benchmark::kMicrosecond;
  run.iterations = 3;  // the repetitions: Google Benchmark divides a time aggregate by them
  run.real_accumulated_time = run.cpu_accumulated_time = value;
  run.counters["console_test_GBps"] = benchmark::Counter(counter);
  run.counters["sample_cv"] = benchmark::Counter(0.004);
  run.counters["samples"] = benchmark::Counter(40);
  return run;
}

double json_real_time(const benchmark::BenchmarkReporter::Run& run) {
  std::ostringstream out, err;
  benchmark::JSONReporter json;
  json.SetOutputStream(&out);
  json.SetErrorStream(&err);
  json.ReportRuns({run});
  std::smatch m;
  const std::string text = out.str();
  EXPECT_TRUE(std::regex_search(text, m, std::regex("\"real_time\": ([-0-9.e+]+)"))) << text;
  return m.empty() ? -1 : std::stod(m[1]);
}

TEST(ConsoleTable, AggregateRowsSayWhatTheJsonSays) {
  Family("console_test/rate", "")
      .counter({"console_test_GBps", "GB/s", Better::higher, "a rate for this test"})
      .main_counter("console_test_GBps")
      .make(testing_support::nothing())
      .add();
  const std::string name = "console_test/rate";
  // cv: 0.00079 of the mean, in the JSON as the ratio; the console as 0.079%.
  const auto cv = aggregate_run(name, "cv", 0.00079, 0.0021);
  EXPECT_DOUBLE_EQ(json_real_time(cv), 0.00079);
  const TableRow cv_row = table_row(cv);
  EXPECT_EQ(cv_row.time, "0.079%");
  EXPECT_EQ(cv_row.main_value, "0.210%");  // the rate's own cv
  EXPECT_EQ(cv_row.noise, "");              // a cv of the samples' cv says nothing
  EXPECT_EQ(cv_row.samples, "");
  EXPECT_NE(cv_row.notes.find("cv of the repetitions"), std::string::npos);
  // stddev: 1.5 us of time over 3 repetitions; the rate's stddev with a sign that it is one.
  const auto stddev = aggregate_run(name, "stddev", 4.5e-6 * 3, 0.012);
  EXPECT_NEAR(json_real_time(stddev), 4.5, 1e-9);
  const TableRow stddev_row = table_row(stddev);
  EXPECT_EQ(stddev_row.time, "4.500 us");
  EXPECT_EQ(stddev_row.main_value, "± 0.012");
  EXPECT_EQ(stddev_row.noise, "");
  // mean: a rate and a noise like any row's.
  const TableRow mean_row = table_row(aggregate_run(name, "mean", 550e-6 * 3, 3059));
  EXPECT_EQ(mean_row.time, "550.0 us");
  EXPECT_EQ(mean_row.main_value, "3059");
  EXPECT_EQ(mean_row.noise, "0.40%");
  EXPECT_EQ(mean_row.samples, "40");
}

}  // namespace
}  // namespace cubench
