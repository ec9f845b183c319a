// Child processes (fixtures/process/child_process.h), as the start-up families use them:
// this test binary starts itself again with the entries below (tests/test_main.cpp dispatches
// them), so everything here runs for real, without a GPU.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "fixtures/case/family.h"
#include "fixtures/device/env.h"
#include "fixtures/process/child_process.h"
#include "fixtures/detail/run/runner.h"
#include "fixtures/support/status.h"

namespace cubench {
namespace {

// Reports its arguments' count, when main() was entered, a stage it times itself (a 30 ms
// sleep), and what CUBENCH_TEST_VAR holds (-1 where unset).
int reporter_child(const std::vector<std::string>& args, double main_entered) {
  child_report("args", static_cast<double>(args.size()));
  child_report("main_entered", main_entered);
  const double t0 = monotonic_seconds();
  usleep(30000);
  child_report("stage_s", monotonic_seconds() - t0);
  const char* var = std::getenv("CUBENCH_TEST_VAR");
  child_report("var", var ? std::atof(var) : -1);
  return 0;
}
CUBENCH_CHILD_ENTRY("test/reporter", reporter_child);

int failing_child(const std::vector<std::string>&, double) {
  child_report("partial", 1);
  return child_fail("the child's own words\nin one line");
}
CUBENCH_CHILD_ENTRY("test/failing", failing_child);

int throwing_child(const std::vector<std::string>&, double) { throw Error("thrown in the child"); }
CUBENCH_CHILD_ENTRY("test/throwing", throwing_child);

int sleeping_child(const std::vector<std::string>&, double) {
  sleep(30);
  return 0;
}
CUBENCH_CHILD_ENTRY("test/sleeping", sleeping_child);

int aborting_child(const std::vector<std::string>&, double) {
  raise(SIGABRT);
  return 0;
}
CUBENCH_CHILD_ENTRY("test/aborting", aborting_child);

int silent_child(const std::vector<std::string>&, double) { return 0; }
CUBENCH_CHILD_ENTRY("test/silent", silent_child);

std::string error_of(const std::string& entry, double timeout = 30) {
  try {
    run_child(entry, {}, {}, timeout);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ChildProcess, ReportsItsValuesAndItsOwnStageTime) {
  const ChildRun r = run_child("test/reporter", {"a", "b", "c"}, {}, 30);
  EXPECT_EQ(r.values.at("args"), 3);
  // main() ran after the spawn and before the parent saw the exit; one clock for both.
  EXPECT_GT(r.values.at("main_entered"), r.spawned_at);
  EXPECT_LT(r.values.at("main_entered"), r.spawned_at + r.wall_seconds);
  EXPECT_GE(r.values.at("stage_s"), 0.029);
  EXPECT_LT(r.values.at("stage_s"), r.wall_seconds);
}

TEST(ChildProcess, EnvironmentIsSetReplacedAndRemoved) {
  setenv("CUBENCH_TEST_VAR", "7", 1);
  EXPECT_EQ(run_child("test/reporter", {}, {}, 30).values.at("var"), 7);  // inherited
  EXPECT_EQ(run_child("test/reporter", {}, {{"CUBENCH_TEST_VAR", "42"}}, 30).values.at("var"), 42);
  EXPECT_EQ(run_child("test/reporter", {}, {{"CUBENCH_TEST_VAR", ""}}, 30).values.at("var"), -1);
  unsetenv("CUBENCH_TEST_VAR");
}

TEST(ChildProcess, FailuresAreOneLineErrors) {
  EXPECT_EQ(error_of("test/failing"),
            "child process 'test/failing' exited with status 1: the child's own words in one line");
  EXPECT_EQ(error_of("test/throwing"),
            "child process 'test/throwing' exited with status 1: thrown in the child");
  EXPECT_EQ(error_of("test/aborting"), "child process 'test/aborting' died of signal 6");
  EXPECT_EQ(error_of("test/silent"), "child process 'test/silent' exited 0 but reported nothing");
  EXPECT_EQ(error_of("test/no_such_entry"),
            "child process 'test/no_such_entry' exited with status 2: no child entry named "
            "'test/no_such_entry' here");
}

TEST(ChildProcess, AChildPastItsTimeoutIsKilled) {
  const double t0 = monotonic_seconds();
  const std::string e = error_of("test/sleeping", 0.5);
  EXPECT_NE(e.find("child process 'test/sleeping' did not finish in 0.5"), std::string::npos) << e;
  EXPECT_LT(monotonic_seconds() - t0, 10);
}

TEST(ChildProcess, ChildrenRunningCountsTheLiveOnes) {
  // The GPU's process list counts our children too; the conditions monitor subtracts these.
  EXPECT_EQ(children_running(), 0);
  std::thread parent([] { run_child("test/reporter", {}, {}, 30); });
  int seen = 0;
  for (int i = 0; i < 2000 && seen == 0; ++i) {
    seen = children_running();
    usleep(1000);
  }
  parent.join();
  EXPECT_EQ(seen, 1);
  EXPECT_EQ(children_running(), 0);
}

TEST(ReportedTimer, EnvHandsTheRunnerOneTimePerRun) {
  auto env = Env::host_only(1);
  EXPECT_FALSE(env->take_reported_sample_seconds());
  env->report_sample_seconds(0.25);
  EXPECT_EQ(env->take_reported_sample_seconds(), 0.25);
  EXPECT_FALSE(env->take_reported_sample_seconds());  // taken: the next run must report again
}

TEST(ReportedTimer, OneRunPerSampleAndNamedInTheSchema) {
  Spec s;
  s.timer = Timer::reported;
  EXPECT_EQ(choose_batch(s, 1e-6), 1);
  EXPECT_FALSE(s.needs_gpu());  // a child without CUDA; Family::needs_gpu(true) for startup/
  EXPECT_STREQ(timer_name(Timer::reported), "reported");
  EXPECT_STREQ(timer_name(Timer::host_clock), "host_clock");
  EXPECT_STREQ(timer_name(Timer::cuda_events), "cuda_events");
}

}  // namespace
}  // namespace cubench
