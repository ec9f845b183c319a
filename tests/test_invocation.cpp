// parse_invocation: what each command line asks, without running anything.
#include "fixtures/detail/run/invocation.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "fixtures/detail/report/reporters.h"
#include "fixtures/detail/support/compat/benchmark_compat.h"

namespace cubench {
namespace {

using Args = std::vector<std::string>;

// An environment of these variables alone.
Environment environment(std::map<std::string, std::string> variables = {}) {
  return [variables = std::move(variables)](const char* name) -> const char* {
    const auto it = variables.find(name);
    return it == variables.end() ? nullptr : it->second.c_str();
  };
}

Invocation parse(const Args& tail, const Environment& env = environment(),
                 const RankOfRun& rank = {}) {
  Args args = {"cubench"};
  args.insert(args.end(), tail.begin(), tail.end());
  return parse_invocation(args, env, rank);
}

// What Google Benchmark is always handed after the command line's own: no file of its own, the
// format, and (the noise rule on) the one-iteration flag.
Args handed_on(const Args& tail, const std::string& out = "", const std::string& format = "json",
               bool adaptive = true) {
  Args args = {"cubench"};
  args.insert(args.end(), tail.begin(), tail.end());
  args.push_back("--benchmark_out=" + out);
  args.push_back("--benchmark_out_format=" + format);
  if (adaptive) args.push_back(one_iteration_min_time_flag());
  return args;
}

TEST(Invocation, ARunByDefaultWithTheDefaultOptions) {
  const Invocation inv = parse({"--benchmark_filter=gemm", "--cubench_seed=7"});
  EXPECT_EQ(inv.mode, Mode::run);
  EXPECT_EQ(inv.error, "");
  EXPECT_EQ(inv.options.seed, 7);
  EXPECT_EQ(inv.options.suite, Suite::default_);
  EXPECT_TRUE(inv.options.adaptive);
  EXPECT_EQ(inv.output.path, "");
  EXPECT_FALSE(inv.google_console);
  // cubench's own flags are not Google Benchmark's to see.
  EXPECT_EQ(inv.benchmark_args, handed_on({"--benchmark_filter=gemm"}));
}

TEST(Invocation, VersionAnswersWhateverElseIsGiven) {
  EXPECT_EQ(parse({"--version"}).mode, Mode::version);
  EXPECT_EQ(parse({"--cubench_typo=1", "--version"}).mode, Mode::version);
  EXPECT_EQ(parse({"--version", "--benchmark_repetitions=-1", "--help"}).mode, Mode::version);
}

TEST(Invocation, ABadFlagIsAUsageErrorOfOneLine) {
  const Invocation unknown = parse({"--cubench_colour=on"});
  EXPECT_EQ(unknown.mode, Mode::usage_error);
  EXPECT_EQ(unknown.error, "cubench: unknown flag --cubench_colour (--help lists cubench's flags)");
  EXPECT_EQ(parse({"--cubench_timeout"}).error,
            "cubench: --cubench_timeout needs a value (--cubench_timeout=N)");
  EXPECT_EQ(parse({"--benchmark_repetitions=-1"}).error,
            "cubench: --benchmark_repetitions takes a whole number of at least 1, got '-1'");
  EXPECT_EQ(parse({}, environment({{"BENCHMARK_REPETITIONS", "-1"}})).error,
            "cubench: BENCHMARK_REPETITIONS (the default of --benchmark_repetitions) takes a whole "
            "number of at least 1, got '-1'");
  EXPECT_EQ(parse({}, environment({{"CUBENCH_DEVICE", "first"}})).error,
            "cubench: CUBENCH_DEVICE takes a non-negative integer, got 'first'");
  // Help does not hide a bad value: the line comes first.
  EXPECT_EQ(parse({"--help", "--cubench_seed=x"}).mode, Mode::usage_error);
  for (const Invocation& bad : {unknown, parse({"--benchmark_format=xml"})}) {
    EXPECT_EQ(bad.error.find('\n'), std::string::npos) << bad.error;
    EXPECT_TRUE(bad.benchmark_args.empty());  // nothing goes on to Google Benchmark
  }
}

// -h asks for help as --help does, and would reach Google Benchmark, which knows --help alone, as
// it. --help=false is Google Benchmark's to refuse (main ends that with status 2).
TEST(Invocation, HelpIsHelpWhateverElseIsAsked) {
  for (const char* help : {"--help", "-h", "--help=true"}) {
    EXPECT_EQ(parse({help}).mode, Mode::help) << help;
    EXPECT_EQ(parse({"--benchmark_list_tests", help}).mode, Mode::help) << help;
    EXPECT_EQ(parse({help, "--cubench_list=axes"}).mode, Mode::help) << help;
    EXPECT_EQ(parse({"--not_a_flag", help}).mode, Mode::help) << help;
  }
  EXPECT_EQ(parse({"-h", "--benchmark_filter=gemm"}).benchmark_args,
            handed_on({"--help", "--benchmark_filter=gemm"}));
  const Invocation not_help = parse({"--benchmark_filter=-h", "--help=false"});
  EXPECT_EQ(not_help.mode, Mode::run);
  EXPECT_EQ(not_help.benchmark_args, handed_on({"--benchmark_filter=-h", "--help=false"}));
}

TEST(Invocation, ListingsAreModes) {
  EXPECT_EQ(parse({"--benchmark_list_tests"}).mode, Mode::list_tests);
  EXPECT_EQ(parse({"--benchmark_list_tests=true"}).mode, Mode::list_tests);
  EXPECT_EQ(parse({"--benchmark_list_tests=1"}).mode, Mode::list_tests);
  EXPECT_EQ(parse({"--benchmark_list_tests=false"}).mode, Mode::run);
  EXPECT_EQ(parse({"--cubench_list=needs"}).mode, Mode::list_needs);
  EXPECT_EQ(parse({"--cubench_list=axes"}).mode, Mode::list_axes);
  EXPECT_EQ(parse({"--cubench_list=axes", "--cubench_list=needs"}).mode, Mode::list_needs);
  // cubench's listings answer before Google Benchmark's.
  EXPECT_EQ(parse({"--benchmark_list_tests", "--cubench_list=axes"}).mode, Mode::list_axes);
  EXPECT_EQ(parse({"--cubench_list=tests"}).error,
            "cubench: --cubench_list takes needs or axes, got 'tests'");
  // Google Benchmark lists the names: it is handed the flag.
  EXPECT_EQ(parse({"--benchmark_list_tests"}).benchmark_args,
            handed_on({"--benchmark_list_tests"}));
  for (Mode m : {Mode::list_tests, Mode::list_needs, Mode::list_axes}) EXPECT_TRUE(is_listing(m));
  for (Mode m : {Mode::run, Mode::help, Mode::version, Mode::usage_error})
    EXPECT_FALSE(is_listing(m));
}

// cubench owns the result file: Google Benchmark is handed a sink for its own --benchmark_out.
TEST(Invocation, TheResultFileIsCubenchs) {
  const std::string dir = testing::TempDir();
  const Invocation inv = parse({"--benchmark_out=" + dir + "a.json", "--benchmark_filter=gemm",
                                "--benchmark_out=" + dir + "b.json"});
  EXPECT_EQ(inv.output.path, dir + "b.json");  // the last one given, as Google Benchmark reads it
  EXPECT_EQ(inv.output.format, "json");
  EXPECT_EQ(inv.benchmark_args, handed_on({"--benchmark_filter=gemm"}, kBenchmarkOutSink));
  const Invocation csv = parse({"--benchmark_out=" + dir + "a.csv", "--benchmark_out_format=csv"});
  EXPECT_EQ(csv.output.format, "csv");
  EXPECT_EQ(csv.benchmark_args, handed_on({}, kBenchmarkOutSink, "csv"));
  // Google Benchmark's variables are the defaults; a flag wins.
  const Environment variables =
      environment({{"BENCHMARK_OUT", dir + "v.json"}, {"BENCHMARK_OUT_FORMAT", "console"}});
  EXPECT_EQ(parse({}, variables).output.path, dir + "v.json");
  EXPECT_EQ(parse({}, variables).output.format, "console");
  EXPECT_EQ(parse({}, variables).benchmark_args, handed_on({}, kBenchmarkOutSink, "console"));
  EXPECT_EQ(parse({"--benchmark_out=" + dir + "f.json"}, variables).output.path, dir + "f.json");
  // No file: Google Benchmark is told none, over its variable.
  EXPECT_EQ(parse({}).benchmark_args, handed_on({}, ""));
  // A bare --benchmark_out is Google Benchmark's to refuse.
  EXPECT_EQ(parse({"--benchmark_out"}).benchmark_args, handed_on({"--benchmark_out"}));
  EXPECT_EQ(parse({"--benchmark_out=/nonexistent/dir/x.json"}).error,
            "cubench: --benchmark_out takes a file in a folder that exists and can be written, got "
            "'/nonexistent/dir/x.json': no folder /nonexistent/dir");
}

// Under MPI rank 0 writes the file and the others none; each rank takes its node-local GPU unless
// CUBENCH_DEVICE says which.
TEST(Invocation, RanksOtherThanZeroWriteNoFile) {
  const Args args = {"--benchmark_filter=allreduce", "--benchmark_out=/nonexistent/dir/run.json",
                     "--benchmark_out_format=json"};
  const Invocation third = parse(args, environment(), {3, 4, 1});
  EXPECT_EQ(third.mode, Mode::run);  // its folder is rank 0's to judge
  EXPECT_EQ(third.output.path, "");
  EXPECT_EQ(third.benchmark_args, handed_on({"--benchmark_filter=allreduce"}));
  EXPECT_EQ(third.options.device, 1);
  EXPECT_EQ(parse({}, environment({{"CUBENCH_DEVICE", "0"}}), {3, 4, 1}).options.device, 0);
  EXPECT_EQ(parse(args, environment(), {0, 4, 0}).mode, Mode::usage_error);
}

TEST(Invocation, TheScreensFormat) {
  EXPECT_TRUE(parse({"--benchmark_format=json"}).google_console);
  EXPECT_TRUE(parse({}, environment({{"BENCHMARK_FORMAT", "csv"}})).google_console);
  EXPECT_EQ(parse({"--benchmark_format=json"}).benchmark_args,
            handed_on({"--benchmark_format=json"}));
}

// --benchmark_min_time: Google Benchmark's own loop, and no one-iteration flag handed on.
TEST(Invocation, MinTimeTurnsTheNoiseRuleOff) {
  const Invocation inv = parse({"--benchmark_min_time=0.5"});
  EXPECT_FALSE(inv.options.adaptive);
  EXPECT_EQ(inv.benchmark_args, handed_on({"--benchmark_min_time=0.5"}, "", "json", false));
}

// The file's one owner opens it (emptied, as Google Benchmark did) once its format is known good:
// a refused format leaves no file behind.
TEST(Invocation, TheFileReporterOpensTheFile) {
  const std::string path = testing::TempDir() + "cubench_invocation_owner.json";
  std::remove(path.c_str());
  EXPECT_THROW(FileReporter("xml", path), std::invalid_argument);
  EXPECT_FALSE(std::ifstream(path).good());
  {
    std::ofstream(path) << "an earlier run's file";
    FileReporter reporter("json", path);
  }
  std::ifstream file(path);
  EXPECT_TRUE(file.good());
  EXPECT_EQ(file.peek(), std::ifstream::traits_type::eof());  // emptied
  std::remove(path.c_str());
  EXPECT_THROW(FileReporter("json", "/nonexistent/dir/x.json"), std::runtime_error);
}

}  // namespace
}  // namespace cubench
