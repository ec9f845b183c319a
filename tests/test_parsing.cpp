// Flags and environment, filter selection, validation logic, clocks and the run context: all
// without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <regex>
#include <set>

#include "fixtures/check/validate.h"
#include "fixtures/detail/case/registry.h"
#include "fixtures/detail/device/seed.h"
#include "fixtures/detail/report/context.h"
#include "fixtures/detail/report/loaded_libraries.h"
#include "fixtures/detail/run/benchmark_flags.h"
#include "fixtures/detail/run/options.h"
#include "fixtures/detail/run/runner.h"
#include "fixtures/detail/support/compat/benchmark_compat.h"
#include "fixtures/detail/timing/clock.h"
#include "fixtures/support/status.h"

namespace cubench {
namespace {

TEST(Options, FlagsAreTakenOutOfArgv) {
  std::vector<std::string> args = {"cubench", "--cubench_device=1", "--benchmark_filter=gemm",
                                   "--cubench_gpus=8", "--cubench_seed=7"};
  Options o = parse_options(args, nullptr, nullptr);
  EXPECT_EQ(o.device, 1);
  EXPECT_EQ(o.gpus, 8);
  EXPECT_EQ(o.seed, 7);
  EXPECT_EQ(args, (std::vector<std::string>{"cubench", "--benchmark_filter=gemm"}));
}

// A configuration's inputs are the same in every process (so A/A and A/B runs time the same
// data), differ between configurations, and change with --cubench_seed.
TEST(Seeds, SameNameAndRunSeedGiveTheSameSequence) {
  std::uint64_t a = case_seed("svd/gesvdj/fp32/1024", 1), b = case_seed("svd/gesvdj/fp32/1024", 1);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, case_seed("svd/gesvdj/fp32/2048", 1));
  EXPECT_NE(a, case_seed("svd/gesvdj/fp32/1024", 2));
  std::uint64_t first = next_seed(a), second = next_seed(a);
  EXPECT_EQ(first, next_seed(b));
  EXPECT_NE(first, second);  // each draw of one configuration gets its own seed
}

TEST(Options, EnvironmentIsTheDefaultAndFlagsWin) {
  std::vector<std::string> args = {"cubench"};
  EXPECT_EQ(parse_options(args, "3", "2").device, 3);
  EXPECT_EQ(parse_options(args, "3", "2").gpus, 2);
  args = {"cubench", "--cubench_device=0"};
  EXPECT_EQ(parse_options(args, "3", nullptr).device, 0);
  args = {"cubench"};
  EXPECT_EQ(parse_options(args, "", nullptr).device, 0);  // empty variable: unset
}

// --cubench_list names one listing; given twice, the last wins, as any flag given twice.
TEST(Options, ListNamesOneListing) {
  std::vector<std::string> args = {"cubench", "--cubench_list=axes"};
  Listing listing = Listing::none;
  parse_options(args, nullptr, nullptr, &listing);
  EXPECT_EQ(listing, Listing::axes);
  args = {"cubench", "--cubench_list=axes", "--cubench_list=needs"};
  parse_options(args, nullptr, nullptr, &listing);
  EXPECT_EQ(listing, Listing::needs);
  args = {"cubench"};
  listing = Listing::none;
  parse_options(args, nullptr, nullptr, &listing);
  EXPECT_EQ(listing, Listing::none);
}

TEST(Options, BadValuesAreClearErrors) {
  for (std::vector<std::string> args :
       {std::vector<std::string>{"cubench", "--cubench_device=-1"},
        std::vector<std::string>{"cubench", "--cubench_device=one"},
        std::vector<std::string>{"cubench", "--cubench_gpus"},
        std::vector<std::string>{"cubench", "--cubench_gpus=99999999999"},
        std::vector<std::string>{"cubench", "--cubench_seed=x"},
        std::vector<std::string>{"cubench", "--cubench_typo=1"},
        std::vector<std::string>{"cubench", "--cubench_list=tests"}})
    EXPECT_THROW(parse_options(args, nullptr, nullptr), std::invalid_argument) << args[1];
  std::vector<std::string> args = {"cubench"};
  EXPECT_THROW(parse_options(args, "x", nullptr), std::invalid_argument);
  std::string message;
  try {
    parse_count("--cubench_device", "abc");
  } catch (const std::invalid_argument& e) {
    message = e.what();
  }
  EXPECT_EQ(message, "--cubench_device takes a non-negative integer, got 'abc'");
}

TEST(Options, GpuOptionsBeyondTheVisibleGpusNameTheLimit) {
  Options o;
  EXPECT_EQ(gpu_options_error(o, 1, 1), "");
  o.gpus = 4;
  EXPECT_EQ(gpu_options_error(o, 1, 1),
            "--cubench_gpus=4 is out of range: only 1 GPU(s) are visible (1..1, or 0 for all)");
  EXPECT_EQ(gpu_options_error(o, 8, 1), "");
  o = Options{};
  o.device = 2;
  EXPECT_EQ(gpu_options_error(o, 2, 1),
            "--cubench_device=2 is out of range: 2 GPU(s) are visible (devices 0..1)");
  o = Options{};
  o.gpus = 2;
  EXPECT_NE(gpu_options_error(o, 8, 4).find("under MPI each of the 4 ranks drives one GPU"),
            std::string::npos);
}

TEST(Options, HelpGivesEachFlagOneLine) {
  const std::string help = options_help();
  for (const char* flag :
       {"--cubench_device=N", "--cubench_gpus=N", "--cubench_seed=N", "--cubench_suite=S",
        "--cubench_max_noise=P", "--cubench_min_samples=N", "--cubench_min_time=S",
        "--cubench_timeout=S", "--cubench_busy_gpu=W", "--cubench_search_seconds=S",
        "--cubench_kernels=on", "--cubench_memory_limit=SIZE", "--cubench_list=needs",
        "--cubench_list=axes", "--version"}) {
    const auto at = help.find(std::string("\n  ") + flag);
    ASSERT_NE(at, std::string::npos) << flag;
    EXPECT_EQ(help.find(flag, at + 4), std::string::npos) << flag << " listed twice";
  }
  // A heading, fifteen flags and the lines on --benchmark_min_time and the refused
  // --benchmark_min_warmup_time.
  EXPECT_NE(help.find("\n  (--benchmark_min_warmup_time is refused: "), std::string::npos);
  EXPECT_EQ(std::count(help.begin(), help.end(), '\n'), 18);
}

// The noise target is a percentage of the samples' mean: above 0, at most 100; a bad value is
// one line naming the flag and its range.
TEST(Options, MaxNoiseIsAPercentageAboveZeroAndAtMostAHundred) {
  for (const auto& [flag, fraction] :
       {std::pair<const char*, double>{"--cubench_max_noise=0.5", 0.005},
        {"--cubench_max_noise=100", 1.0},
        {"--cubench_max_noise=1e-3", 1e-5}}) {
    std::vector<std::string> args = {"cubench", flag};
    EXPECT_DOUBLE_EQ(parse_options(args, nullptr, nullptr).stopping.max_noise, fraction) << flag;
  }
  for (const char* bad : {"100000", "100.5", "0", "-1", "x", "inf", "nan", ""}) {
    std::vector<std::string> args = {"cubench", std::string("--cubench_max_noise=") + bad};
    try {
      parse_options(args, nullptr, nullptr);
      ADD_FAILURE() << "accepted --cubench_max_noise=" << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), std::string("--cubench_max_noise takes a percentage above 0 "
                                                   "and at most 100 (0.5: half a percent), got '") +
                                           bad + "'");
    }
  }
}

// gemm_peak's time box: seconds, positive; a bad value is one line naming the flag.
TEST(Options, SearchSecondsIsAPositiveNumber) {
  std::vector<std::string> args = {"cubench"};
  EXPECT_DOUBLE_EQ(parse_options(args, nullptr, nullptr).search_seconds, 60);
  args = {"cubench", "--cubench_search_seconds=2.5"};
  EXPECT_DOUBLE_EQ(parse_options(args, nullptr, nullptr).search_seconds, 2.5);
  EXPECT_EQ(args.size(), 1u);
  for (const char* bad : {"--cubench_search_seconds=0", "--cubench_search_seconds=-3",
                          "--cubench_search_seconds=soon", "--cubench_search_seconds=inf",
                          "--cubench_search_seconds="}) {
    std::vector<std::string> a = {"cubench", bad};
    EXPECT_THROW(parse_options(a, nullptr, nullptr), std::invalid_argument) << bad;
  }
  std::vector<std::string> a = {"cubench", "--cubench_search_seconds=soon"};
  try {
    parse_options(a, nullptr, nullptr);
    FAIL() << "accepted --cubench_search_seconds=soon";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "--cubench_search_seconds takes a positive number, got 'soon'");
  }
}

// Each of Google Benchmark's flags cubench hands on takes its good values and refuses a bad one
// in one line that names the flag and what it takes. The table must cover every rule.
TEST(BenchmarkFlags, EveryRuleTakesGoodValuesAndNamesABadOne) {
  const bool suffixes = benchmark_min_time_takes_suffixes();
  struct Row {
    const char* flag;
    std::vector<std::string> good, bad;
  };
  const std::vector<Row> table = {
      {"benchmark_list_tests", {"true", "false", "1", "no", ""}, {"ture"}},
      // Google Benchmark's grammar, POSIX extended: a lookahead is another grammar's.
      {"benchmark_filter",
       {"^gemm/", "-^cpu/", "", "all", "gemm/[0-9]+/"},
       {"gemm((", "[a-", "(?!cpu/)gemm"}},
      {"benchmark_min_time",
       suffixes ? std::vector<std::string>{"0.5", "0.5s", "100x"} : std::vector<std::string>{"0.5"},
       {"0", "-1", "abc", "0x", "inf", "nan", "0x10", suffixes ? "1.5x" : "0.5s"}},
      {"benchmark_repetitions", {"1", "5"}, {"0", "-1", "two", "1.5", "99999999999"}},
      {"benchmark_enable_random_interleaving", {"true", "0"}, {"maybe"}},
      {"benchmark_report_aggregates_only", {"true", "FALSE"}, {"ture"}},
      {"benchmark_display_aggregates_only", {"yes", "off"}, {"2"}},
      {"benchmark_format", {"console", "json", "csv"}, {"xml", "JSON"}},
      {"benchmark_out_format", {"json", "csv"}, {"jsn"}},
      {"benchmark_out",
       {"/tmp/cubench-flag-test.json", "relative.json", ""},
       {"/tmp", "/nonexistent/dir/x.json"}},
      {"benchmark_color", {"auto", "true", "false"}, {"blue"}},
      {"benchmark_counters_tabular", {"true"}, {"wide"}},
      {"benchmark_time_unit", {"ns", "us", "ms", "s", ""}, {"fortnight", "sec"}},
      {"v", {"0", "2", "-1"}, {"loud"}},
  };
  auto no_env = [](const char*) -> const char* { return nullptr; };
  std::set<std::string> covered;
  for (const Row& row : table) {
    covered.insert(row.flag);
    const std::string flag = std::string("--") + row.flag;
    for (const auto& v : row.good)
      EXPECT_EQ(bad_benchmark_flag_value({"cubench", flag + "=" + v}, no_env), "")
          << flag << "=" << v;
    for (const auto& v : row.bad) {
      const std::string line = bad_benchmark_flag_value({"cubench", flag + "=" + v}, no_env);
      EXPECT_EQ(line.rfind(flag + " takes ", 0), 0u) << flag << "=" << v << ": " << line;
      EXPECT_NE(line.find(", got '" + v + "'"), std::string::npos) << line;
      EXPECT_EQ(line.find('\n'), std::string::npos) << line;
    }
  }
  for (const FlagRule& rule : benchmark_flag_rules())
    EXPECT_TRUE(covered.count(rule.flag)) << rule.flag << " has no row in this table";
}

// --benchmark_min_warmup_time is refused whatever its value, given or set by its variable: cubench
// warms each row up itself, and Google Benchmark's warm-up trial, run as a repetition is, was
// recorded as the row's first repetition. An empty variable of the number flag is unset.
TEST(BenchmarkFlags, MinWarmupTimeIsRefusedWhateverItsValue) {
  auto none = [](const char*) -> const char* { return nullptr; };
  const std::string why =
      " is not taken: cubench warms each row up itself (untimed runs for 50 ms before its "
      "samples), and Google Benchmark's warm-up would be recorded as the row's first repetition";
  for (const char* arg : {"--benchmark_min_warmup_time=0.5", "--benchmark_min_warmup_time=0",
                          "--benchmark_min_warmup_time=-1", "--benchmark_min_warmup_time"})
    EXPECT_EQ(bad_benchmark_flag_value({"cubench", arg}, none), "--benchmark_min_warmup_time" + why)
        << arg;
  auto set = [](const char* name) -> const char* {
    return std::string(name) == "BENCHMARK_MIN_WARMUP_TIME" ? "0.25" : nullptr;
  };
  EXPECT_EQ(bad_benchmark_flag_value({"cubench"}, set),
            "BENCHMARK_MIN_WARMUP_TIME (the default of --benchmark_min_warmup_time)" + why);
  auto empty = [](const char* name) -> const char* {
    return std::string(name) == "BENCHMARK_MIN_WARMUP_TIME" ? "" : nullptr;
  };
  EXPECT_EQ(bad_benchmark_flag_value({"cubench"}, empty), "");
  // Refused before any other flag's value is judged, and named alone.
  EXPECT_EQ(bad_benchmark_flag_value(
                {"cubench", "--benchmark_repetitions=0", "--benchmark_min_warmup_time=1"}, none),
            "--benchmark_min_warmup_time" + why);
}

// Google Benchmark takes a flag's default from its variable (BENCHMARK_REPETITIONS); the flag,
// when given, wins; the last of a flag given twice counts; an empty variable is unset.
TEST(BenchmarkFlags, VariablesAreCheckedUnlessTheFlagIsGiven) {
  auto env = [](const char* name) -> const char* {
    const std::string n = name;
    return n == "BENCHMARK_REPETITIONS" ? "-1" : n == "BENCHMARK_OUT" ? "" : nullptr;
  };
  EXPECT_EQ(bad_benchmark_flag_value({"cubench"}, env),
            "BENCHMARK_REPETITIONS (the default of --benchmark_repetitions) takes a whole number "
            "of at least 1, got '-1'");
  EXPECT_EQ(bad_benchmark_flag_value({"cubench", "--benchmark_repetitions=3"}, env), "");
  auto none = [](const char*) -> const char* { return nullptr; };
  EXPECT_EQ(bad_benchmark_flag_value(
                {"cubench", "--benchmark_repetitions=0", "--benchmark_repetitions=2"}, none),
            "");
  EXPECT_NE(bad_benchmark_flag_value(
                {"cubench", "--benchmark_repetitions=2", "--benchmark_repetitions=0"}, none),
            "");
  // An empty variable: a number flag's is unset, a string flag's the empty value.
  auto empty = [](const char* name) -> const char* {
    const std::string n = name;
    return n == "BENCHMARK_REPETITIONS" || n == "BENCHMARK_FORMAT" ? "" : nullptr;
  };
  EXPECT_EQ(bad_benchmark_flag_value({"cubench", "--benchmark_format=json"}, empty), "");
  EXPECT_NE(bad_benchmark_flag_value({"cubench"}, empty).find("BENCHMARK_FORMAT"),
            std::string::npos);
  // A bare bool flag is given: its variable no longer counts.
  auto junk = [](const char* name) -> const char* {
    return std::string(name) == "BENCHMARK_COUNTERS_TABULAR" ? "junk" : nullptr;
  };
  EXPECT_EQ(bad_benchmark_flag_value({"cubench", "--benchmark_counters_tabular"}, junk), "");
  EXPECT_NE(bad_benchmark_flag_value({"cubench"}, junk), "");
  // Only the process that writes --benchmark_out (MPI's rank 0) needs its folder.
  EXPECT_EQ(bad_benchmark_flag_value({"cubench", "--benchmark_out=/nonexistent/x.json"}, none,
                                     /*output_written=*/false),
            "");
}

std::vector<Spec> fake_specs() {
  std::vector<Spec> s(4);
  s[0].name = "gemm/bf16/4096/4096/4096";
  s[1].name = "gemm_autotune/bf16/4096/4096/4096";
  s[2].name = "launch/empty";
  s[3].name = "cpu/thing";
  s[3].timer = Timer::host_clock;
  return s;
}

TEST(Registry, SelectsAsGoogleBenchmarkFilters) {
  auto owned = fake_specs();
  std::vector<const Spec*> specs;
  for (const Spec& s : owned) specs.push_back(&s);
  EXPECT_EQ(select_specs(specs, "").size(), 4u);
  EXPECT_EQ(select_specs(specs, "all").size(), 4u);
  EXPECT_EQ(select_specs(specs, "gemm").size(), 2u);
  EXPECT_EQ(select_specs(specs, "^gemm/").size(), 1u);
  EXPECT_EQ(select_specs(specs, "-gemm").size(), 2u);
  EXPECT_EQ(select_specs(specs, "empty/manual_time$").size(), 1u);  // the reported name
  EXPECT_EQ(select_specs(specs, "nothing").size(), 0u);
  EXPECT_THROW(select_specs(specs, "("), std::regex_error);
}

TEST(Runner, BatchesShortRunsIntoSamplesOfAtLeast200us) {
  Spec auto_batch, cold, fixed;
  cold.sampling.cold_l2 = true;
  fixed.sampling.batch = 1000;
  EXPECT_EQ(choose_batch(auto_batch, 1e-3), 1);     // long runs: one per sample
  EXPECT_EQ(choose_batch(auto_batch, 25e-6), 8);    // 8 x 25 us = 200 us
  EXPECT_EQ(choose_batch(auto_batch, 30e-6), 7);    // rounded up
  EXPECT_EQ(choose_batch(auto_batch, 5e-9), 1000);  // capped
  EXPECT_EQ(choose_batch(cold, 5e-6), 1);           // every run must start cold
  EXPECT_EQ(choose_batch(fixed, 1.0), 1000);
  EXPECT_EQ(choose_batch(auto_batch, 0.0), 1);
}

TEST(Validate, ExactResultPasses) {
  ErrorStats e = compare({1, 2, 3}, {1, 2, 3});
  EXPECT_TRUE(within(e, Norm::relative_l2, 0));
  EXPECT_TRUE(within(e, Norm::max_relative, 0));
  EXPECT_NO_THROW(require_within("exact", e, Norm::relative_l2, 1e-12));
}

TEST(Validate, PlantedErrorIsCaughtWithItsNumbers) {
  std::vector<double> ref(1000, 1.0), got(1000, 1.0);
  got[417] = 1.5;
  ErrorStats e = compare(got, ref);
  EXPECT_EQ(e.worst_index, 417u);
  EXPECT_DOUBLE_EQ(e.max_rel, 0.5);
  EXPECT_FALSE(within(e, Norm::max_relative, 1e-2));
  EXPECT_TRUE(within(e, Norm::relative_l2, 2e-2));  // one bad value in a thousand: small in L2
  try {
    require_within("planted", e, Norm::max_relative, 1e-2);
    FAIL() << "planted error passed";
  } catch (const ValidationError& err) {
    EXPECT_NE(std::string(err.what()).find("max relative error 0.5"), std::string::npos);
    EXPECT_NE(std::string(err.what()).find("worst at 417"), std::string::npos);
  }
}

TEST(Validate, NaNNeverPasses) {
  std::vector<double> got = {1, std::numeric_limits<double>::quiet_NaN(), 3};
  ErrorStats e = compare(got, {1, 2, 3});
  EXPECT_EQ(e.nonfinite, 1u);
  EXPECT_FALSE(within(e, Norm::relative_l2, 1e300));
  EXPECT_THROW(require_at_most("nan", std::nan(""), 1.0), ValidationError);
  EXPECT_THROW(require_at_most("big", 2.0, 1.0), ValidationError);
  EXPECT_NO_THROW(require_at_most("small", 0.5, 1.0));
  EXPECT_THROW(compare({1, 2}, {1}), ValidationError);
}

TEST(Validate, ToleranceSeparatesDtypes) {
  // A relative error of 5e-4 is a pass for tf32 and bf16, a failure for fp32.
  std::vector<double> ref = {1, 2, 4}, got = {1.0005, 2.001, 4.002};
  ErrorStats e = compare(got, ref);
  EXPECT_FALSE(within(e, Norm::relative_l2, dtype_tolerance(DType::fp32)));
  EXPECT_TRUE(within(e, Norm::relative_l2, dtype_tolerance(DType::tf32)));
  EXPECT_TRUE(within(e, Norm::relative_l2, dtype_tolerance(DType::bf16)));
}

TEST(Clock, MedianSmReadingAndSkippedSlots) {
  std::vector<ClockStamp> begin(kClockSlots, {0, 0}), end(kClockSlots, {0, 0});
  // Three SMs reached by both probes at 1500, 1800 and 1980 MHz over 100 us; one reached once.
  double mhz[] = {1500, 1800, 1980};
  for (int i = 0; i < 3; ++i) {
    begin[i * 7] = {1000, 5000};
    end[i * 7] = {1000 + static_cast<std::uint64_t>(mhz[i] * 100), 105000};
  }
  begin[100] = {1, 1};
  auto r = read_clock(begin.data(), end.data(), kClockSlots);
  ASSERT_TRUE(r);
  EXPECT_NEAR(r->mhz(), 1800, 1e-9);
  std::vector<ClockStamp> none(kClockSlots, {0, 0});
  EXPECT_FALSE(read_clock(none.data(), none.data(), kClockSlots));
}

TEST(Clock, ThrottleRuleIsSeventyFivePercentOfMax) {
  ClockTally tally(1980);
  tally.add({1980.0 * 100, 100e3});  // full clock
  tally.add({1400.0 * 100, 100e3});  // 70%: throttled
  tally.add({1000.0 * 10, 10e3});    // too short to judge alone
  EXPECT_EQ(tally.judged(), 2);
  EXPECT_EQ(tally.throttled(), 1);
  EXPECT_NEAR(tally.mean_mhz(), (198000.0 + 140000 + 10000) / 210e3 * 1e3, 1e-9);
}

TEST(Context, SaysWhatStackMadeTheRunEvenWithoutAGpu) {
  GpuAvailability none{0, "test: no GPU"};
  ContextFields f = collect_context(none, 0);
  std::set<std::string> keys;
  for (auto& [k, v] : f) {
    keys.insert(k);
    EXPECT_FALSE(v.empty()) << k;
  }
  for (const char* k : {"cuda_toolkit", "cuda_compiler", "cuda_runtime", "cuda_driver_api",
                        "cublas", "cublaslt", "cusolver", "host_compiler", "build_type",
                        "google_benchmark", "git_revision", "gpu", "gpu_count"})
    EXPECT_TRUE(keys.count(k)) << k;
  for (auto& [k, v] : f)
    if (k == "gpu") {
      EXPECT_EQ(v, "none (test: no GPU)");
    }
}

TEST(Context, NamesTheLibraryFilesTheProcessLoaded) {
  // The C++ runtime is loaded in every test process: its file is found by its name's start, with
  // its real path (not the loader's symlink), and a prefix that matches no loaded file gives none.
  const auto found = loaded_libraries({"libstdc++."});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].first.rfind("libstdc++.so", 0), 0u) << found[0].first;
  EXPECT_EQ(found[0].second.front(), '/');
  EXPECT_EQ(found[0].second.find("/libstdc++.so.6."), found[0].second.rfind('/'))
      << found[0].second;  // the file the symlink names: libstdc++.so.6.0.30, not .so.6
  EXPECT_TRUE(loaded_libraries({"libno-such-library."}).empty());
  // The context says which of the stack's files ran, as JSON text of an object.
  GpuAvailability none{0, "test: no GPU"};
  for (const auto& [k, v] : collect_context(none, 0))
    if (k == "loaded_libraries") {
      EXPECT_EQ(v.front(), '{');
      EXPECT_EQ(v.back(), '}');
      return;
    }
  FAIL() << "no loaded_libraries in the context";
}

TEST(Context, CudaVersionEncoding) {
  EXPECT_EQ(cuda_version_string(13000), "13.0");
  EXPECT_EQ(cuda_version_string(11080), "11.8");
  EXPECT_EQ(cuda_version_string(12040), "12.4");
  EXPECT_EQ(cuda_version_string(0), "none");
}

TEST(Check, ErrorsNameCallFileAndLibraryWords) {
  try {
    CUBENCH_CUDA(cudaErrorInvalidValue);
    FAIL();
  } catch (const Error& e) {
    std::string w = e.what();
    EXPECT_NE(w.find("cudaErrorInvalidValue"), std::string::npos) << w;
    EXPECT_NE(w.find("test_parsing.cpp"), std::string::npos) << w;
  }
  EXPECT_THROW(CUBENCH_CUDA(cudaErrorMemoryAllocation), OutOfMemory);
  EXPECT_THROW(CUBENCH_CUSOLVER(CUSOLVER_STATUS_ALLOC_FAILED), OutOfMemory);
  try {
    CUBENCH_CUBLAS(CUBLAS_STATUS_NOT_SUPPORTED);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("CUBLAS_STATUS_NOT_SUPPORTED"), std::string::npos);
  }
  EXPECT_STREQ(cusolver_status_string(CUSOLVER_STATUS_INVALID_VALUE),
               "CUSOLVER_STATUS_INVALID_VALUE");
}

}  // namespace
}  // namespace cubench
