// What decides how long a benchmark samples and what a row says of its conditions, all without a
// GPU: the stopping rule, the run flags, the default suite, NVML's reasons turned into counters
// and label words, the interrupted mark and the progress line's durations.
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "fixtures/case/family.h"
#include "fixtures/detail/case/registry.h"
#include "fixtures/detail/device/nvml.h"
#include "fixtures/detail/process/interrupt.h"
#include "fixtures/detail/report/conditions.h"
#include "fixtures/detail/report/energy_meter.h"
#include "fixtures/detail/report/progress.h"
#include "fixtures/detail/report/row_lookup.h"
#include "fixtures/detail/run/options.h"
#include "fixtures/detail/run/runner.h"
#include "fixtures/detail/timing/stopping.h"
#include "tests/nothing_case.h"

namespace cubench {
namespace {

StoppingParams params(double max_noise, int min_samples, double min_time, double timeout) {
  StoppingParams p;
  p.max_noise = max_noise;
  p.min_samples = min_samples;
  p.min_time = min_time;
  p.timeout = timeout;
  return p;
}

TEST(Stopping, QuietSamplesStopOnceMinimaAreMet) {
  StoppingRule rule(params(0.005, 10, 0.002, 100));
  for (int i = 0; i < 9; ++i) {
    rule.add(1e-3 * (1 + 0.001 * (i % 2)), 1e-3);
    EXPECT_EQ(rule.decide(0.01), StopReason::not_yet) << "sample " << i + 1;  // < min_samples
  }
  rule.add(1e-3, 1e-3);
  EXPECT_EQ(rule.decide(0.01), StopReason::noise_reached);
  EXPECT_LT(rule.noise(), 0.005);
  EXPECT_EQ(rule.samples(), 10u);
}

TEST(Stopping, MinTimeHoldsEvenQuietSamples) {
  StoppingRule rule(params(0.005, 2, 1.0, 100));
  for (int i = 0; i < 50; ++i) rule.add(1e-3, 1e-3);  // 50 ms of samples < 1 s
  EXPECT_EQ(rule.decide(0.1), StopReason::not_yet);
}

TEST(Stopping, NoisySamplesRunOnUntilTheNoiseSettles) {
  StoppingRule rule(params(0.005, 10, 0.0, 1000));
  // Alternating 1.0 and 1.1 ms: a noise near 5% that never goes under 0.5%, and settles.
  StopReason reason = StopReason::not_yet;
  int n = 0;
  while (reason == StopReason::not_yet && n < 100000) {
    rule.add(n % 2 ? 1.1e-3 : 1.0e-3, 1e-3);
    reason = rule.decide(0.0);
    ++n;
  }
  EXPECT_EQ(reason, StopReason::noise_converged);
  EXPECT_GT(rule.noise(), 0.04);
  EXPECT_GE(rule.samples(), StoppingRule::kNoiseWindow);
  EXPECT_EQ(rule.samples() % StoppingRule::kCheckEvery, 0u);
}

TEST(Stopping, TimeoutEndsAnyRunEvenBeforeMinSamples) {
  StoppingRule rule(params(0.005, 10, 0.0, 2.0));
  rule.add(1.0, 1.0);
  EXPECT_EQ(rule.decide(1.0), StopReason::not_yet);
  EXPECT_EQ(describe_stop(rule.decide(2.0), rule), "timeout 2s: noise unknown after 1 sample");
  rule.add(1.5, 1.5);
  EXPECT_EQ(rule.decide(2.5), StopReason::timeout);
  EXPECT_EQ(describe_stop(StopReason::timeout, rule).rfind("timeout 2s: noise ", 0), 0u)
      << describe_stop(StopReason::timeout, rule);
}

TEST(Stopping, LabelSaysTheNoiseAndWhy) {
  StoppingRule rule(params(0.005, 2, 0.0, 10));
  rule.add(1e-3, 1e-3);
  rule.add(1e-3, 1e-3);
  EXPECT_EQ(describe_stop(rule.decide(0), rule), "noise 0.00% < 0.5% after 2 samples");
}

TEST(Options, RunFlagsAreParsedAndCheckedInTheirOwnWords) {
  std::vector<std::string> args = {"cubench",
                                   "--cubench_suite=full",
                                   "--cubench_max_noise=1.5",
                                   "--cubench_min_samples=20",
                                   "--cubench_min_time=0.5",
                                   "--cubench_timeout=30",
                                   "--cubench_busy_gpu=refuse"};
  Options o = parse_options(args, nullptr, nullptr);
  EXPECT_EQ(o.suite, Suite::full);
  EXPECT_DOUBLE_EQ(o.stopping.max_noise, 0.015);
  EXPECT_EQ(o.stopping.min_samples, 20);
  EXPECT_DOUBLE_EQ(o.stopping.min_time, 0.5);
  EXPECT_DOUBLE_EQ(o.stopping.timeout, 30);
  EXPECT_EQ(o.busy_gpu, BusyGpu::refuse);
  EXPECT_TRUE(o.adaptive);
  EXPECT_EQ(args.size(), 1u);

  for (const char* bad : {"--cubench_suite=quick", "--cubench_max_noise=0", "--cubench_max_noise=x",
                          "--cubench_min_samples=1", "--cubench_timeout=-1",
                          "--cubench_min_time=inf", "--cubench_busy_gpu=yes"}) {
    std::vector<std::string> a = {"cubench", bad};
    EXPECT_THROW(parse_options(a, nullptr, nullptr), std::invalid_argument) << bad;
  }
  std::vector<std::string> a = {"cubench", "--cubench_suite=quick"};
  try {
    parse_options(a, nullptr, nullptr);
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "--cubench_suite takes default, full or cpu, got 'quick'");
  }
}

TEST(Options, BenchmarkMinTimeHandsTheLoopBackToGoogleBenchmark) {
  std::vector<std::string> args = {"cubench", "--benchmark_min_time=0.1"};
  EXPECT_FALSE(parse_options(args, nullptr, nullptr).adaptive);
  args = {"cubench", "--benchmark_repetitions=5"};  // repetitions alone: each one adaptive
  EXPECT_TRUE(parse_options(args, nullptr, nullptr).adaptive);
}

TEST(Suite, DefaultKeepsWhatTheFamilyKeepsAndFullKeepsAll) {
  auto asked = std::make_shared<int>(0);  // the registry keeps the predicate: no stack capture
  Family("run_control_test/suite", "")
      .axis(int_axis("n", {1, 2, 3, 4}))
      .default_suite([asked](const Point& p) {
        ++*asked;  // asked when the run starts, not at registration
        return p.get_int("n") % 2 == 0;
      })
      .make(testing_support::nothing())
      .add();
  EXPECT_EQ(*asked, 0);
  auto names = [](const std::vector<const Spec*>& cases) {
    std::vector<std::string> out;
    for (const Spec* s : cases)
      if (s->family == "run_control_test/suite") out.push_back(s->name);
    return out;
  };
  EXPECT_EQ(
      names(suite_specs(registered_specs(), Suite::default_, /*gpu_present=*/false, RunSettings{})),
      (std::vector<std::string>{"run_control_test/suite/2", "run_control_test/suite/4"}));
  EXPECT_EQ(*asked, 4);
  EXPECT_EQ(names(suite_specs(registered_specs(), Suite::full, false, RunSettings{})).size(), 4u);
}

// The CPU families measure the host: where a GPU runs the rest, the default run leaves them out
// and --cubench_suite=cpu runs them alone; without a GPU, or in a build of host families only,
// the default keeps them.
TEST(Suite, HostFamiliesWaitToBeAskedWhereAGpuRunsTheRest) {
  Family("run_control_test/host", "")
      .axis(int_axis("n", {1}))
      .timer(Timer::host_clock)
      .make(testing_support::nothing())
      .add();
  Family("run_control_test/device", "")
      .axis(int_axis("n", {1}))
      .make(testing_support::nothing())
      .add();
  auto names = [](const std::vector<const Spec*>& cases) {
    std::vector<std::string> out;
    for (const Spec* s : cases)
      if (s->family == "run_control_test/host" || s->family == "run_control_test/device")
        out.push_back(s->name);
    return out;
  };
  const std::vector<std::string> both = {"run_control_test/host/1", "run_control_test/device/1"};
  EXPECT_EQ(
      names(suite_specs(registered_specs(), Suite::default_, /*gpu_present=*/true, RunSettings{})),
      std::vector<std::string>{"run_control_test/device/1"});
  EXPECT_EQ(names(suite_specs(registered_specs(), Suite::default_, false, RunSettings{})), both);
  EXPECT_EQ(names(suite_specs(registered_specs(), Suite::full, true, RunSettings{})), both);
  EXPECT_EQ(names(suite_specs(registered_specs(), Suite::cpu, true, RunSettings{})),
            std::vector<std::string>{"run_control_test/host/1"});
  // A build of host families only (no GPU case at all) runs them by default, GPU or not.
  std::vector<Spec> host_only;
  for (const Spec& s : registered_specs())
    if (!s.needs_gpu()) host_only.push_back(s);
  std::vector<std::string> kept;
  for (const Spec* s : suite_specs(host_only, Suite::default_, true, RunSettings{}))
    if (s->family == "run_control_test/host") kept.push_back(s->name);
  EXPECT_EQ(kept, std::vector<std::string>{"run_control_test/host/1"});
}

TEST(Conditions, PowerCapIsNamedApartFromThrottling) {
  Conditions c;
  c.polls = 100;
  c.power_capped = 97;
  EXPECT_EQ(describe_conditions(c, 700), "power-capped in 97% of polls (software cap 700 W)");
  c.slowdown = 12;
  c.other_processes = 2;
  EXPECT_EQ(describe_conditions(c, 0),
            "power-capped in 97% of polls; THROTTLED: thermal or hardware slowdown in 12% of "
            "polls; BUSY GPU: 2 other compute processes");
  EXPECT_EQ(describe_conditions(Conditions{}, 700), "");
  Conditions rare;
  rare.polls = 300;
  rare.power_capped = 1;
  EXPECT_EQ(describe_conditions(rare, 0), "power-capped in <1% of polls");
}

TEST(Conditions, EnergyPerRunIsMeanPowerTimesTheRun) {
  Conditions c;
  c.polls = 10;
  c.power_capped = 5;
  c.power.watts = 700.0;
  c.nvml_power_w = 690.0;
  c.gpu_util_pct = 99.0;
  c.wall_s = 0.5;
  c.other_processes = 0;
  Work w;
  w.flops = 2e12;
  Counters k = condition_counters(c, w, 2e-3);  // 2 ms a run: 1.4 J
  EXPECT_DOUBLE_EQ(k.at("power_W"), 700);
  EXPECT_DOUBLE_EQ(k.at("energy_per_run_J"), 1.4);
  EXPECT_NEAR(k.at("GFLOP_per_J"), 2000 / 1.4, 1e-9);
  EXPECT_EQ(k.count("GB_per_J"), 0u);
  EXPECT_DOUBLE_EQ(k.at("nvml_power_W"), 690);
  EXPECT_DOUBLE_EQ(k.at("gpu_util_pct"), 99);
  EXPECT_DOUBLE_EQ(k.at("power_capped_pct"), 50);
  EXPECT_DOUBLE_EQ(k.at("slowdown_pct"), 0);
  EXPECT_DOUBLE_EQ(k.at("other_processes"), 0);
  c.power = EnergyMeter::Reading{};  // not read: no power, no energy, and a note says why
  c.power.why_not = "NVML's energy counter moved 1 time in the 0.01 s window";
  Counters none = condition_counters(c, w, 2e-3);
  EXPECT_EQ(none.count("power_W"), 0u);
  EXPECT_EQ(none.count("energy_per_run_J"), 0u);
  const auto notes = condition_notes(c, 700);
  const Note* why = find_note(notes, "power_not_read");
  ASSERT_NE(why, nullptr);
  EXPECT_EQ(why->text, "power not read: NVML's energy counter moved 1 time in the 0.01 s window");
  EXPECT_EQ(condition_counters(Conditions{}, w, 2e-3).size(), 0u);  // no NVML: nothing claimed
}

// A counter like NVML's: it adds the energy of each `step_s` at the step's end, so a read sees
// the energy up to the last step, up to one step old.
struct SteppedCounter {
  double watts, step_s, phase_s;
  std::uint64_t at(double t) const {
    const double steps = std::floor((t + phase_s) / step_s);
    return static_cast<std::uint64_t>(std::llround(steps * step_s * watts * 1e3));
  }
};

EnergyMeter::Reading metered(const SteppedCounter& c, double window_s, double poll_s, int limit_w) {
  EnergyMeter m;
  for (double t = 10.0; t <= 10.0 + window_s + 1e-12; t += poll_s) m.add(t, c.at(t));
  return m.read(ConditionsMonitor::kMaxPowerError, limit_w);
}

TEST(EnergyMeter, ReadsTheTruthOnShortWindowsWhereBothEndsDoNot) {
  // 700 W, the counter updating every 100 ms, a 0.26 s window at every phase of the steps, polled
  // every millisecond: within 2% of the truth, where the two ends' difference over the window is
  // off by up to a step's share (38%: 0.26 s windows read 800 W and more on 700 W cards).
  double worst_meter = 0, worst_ends = 0;
  for (double phase = 0; phase < 0.1; phase += 0.0037) {
    const SteppedCounter c{700, 0.100, phase};
    const auto r = metered(c, 0.26, 0.001, 0);
    ASSERT_TRUE(r.watts.has_value()) << r.why_not;
    worst_meter = std::max(worst_meter, std::abs(*r.watts / 700 - 1));
    const double ends = (c.at(10.26) - c.at(10.0)) * 1e-3 / 0.26;
    worst_ends = std::max(worst_ends, std::abs(ends / 700 - 1));
  }
  EXPECT_LT(worst_meter, 0.02);
  EXPECT_GT(worst_ends, 0.10);  // the old reading's error, which the meter removes
  // From 0.25 s to 5 s, at a 100 ms step: within 2% wherever the counter moved twice.
  for (double window : {0.25, 1.0, 5.0}) {
    const auto r = metered(SteppedCounter{450, 0.100, 0.013}, window, 0.001, 700);
    ASSERT_TRUE(r.watts.has_value()) << window << ": " << r.why_not;
    EXPECT_NEAR(*r.watts, 450, 450 * 0.02) << window;
  }
}

TEST(EnergyMeter, SaysWhyWhereItCannotRead) {
  // One move in the window: no span to divide by.
  auto one = metered(SteppedCounter{700, 0.100, 0.03}, 0.05, 0.001, 700);
  EXPECT_FALSE(one.watts.has_value());
  EXPECT_EQ(one.why_not, "NVML's energy counter moved 0 times in the 0.05 s window");
  // Polled too coarsely for the span: the moves' timing error is over 2%.
  auto coarse = metered(SteppedCounter{700, 0.020, 0.0}, 0.1, 0.010, 700);
  EXPECT_FALSE(coarse.watts.has_value());
  EXPECT_NE(coarse.why_not.find("timed to +-"), std::string::npos) << coarse.why_not;
  // A reading over the card's enforced limit by more than 3% is an error, never a figure.
  auto over = metered(SteppedCounter{760, 0.040, 0.0}, 1.0, 0.001, 700);
  EXPECT_FALSE(over.watts.has_value());
  EXPECT_EQ(over.why_not.rfind("read 76", 0), 0u) << over.why_not;
  EXPECT_NE(over.why_not.find("over the card's enforced 700 W limit"), std::string::npos);
  auto at_limit = metered(SteppedCounter{715, 0.040, 0.0}, 1.0, 0.001, 700);  // within 3%
  EXPECT_TRUE(at_limit.watts.has_value()) << at_limit.why_not;
}

TEST(Conditions, OtherProcessesCountEveryEntryButOurs) {
  EXPECT_EQ(other_processes({}), std::nullopt);  // not even this process: NVML cannot see
  EXPECT_EQ(other_processes({{123, 1}}), 0);
  EXPECT_EQ(other_processes({{123, 1}, {456, 2}}), 1);  // whichever pid is ours (a container)
}

TEST(Conditions, MonitorWithoutNvmlClaimsNothing) {
  ConditionsMonitor m(nullptr);
  m.start();
  Conditions c = m.stop();
  EXPECT_EQ(c.polls, 0);
  EXPECT_FALSE(c.power.watts.has_value());
  EXPECT_FALSE(c.other_processes.has_value());
}

TEST(Interrupt, AbandonedRowsAreLeftOut) {
  benchmark::BenchmarkReporter::Run done, cut;
  done.run_name.function_name = "run_control_test/done";
  cut.run_name.function_name = "run_control_test/cut";
  mark_abandoned("run_control_test/cut");
  auto kept = finished_runs({done, cut, done});
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0].run_name.function_name, "run_control_test/done");
}

// coreutils' `timeout` sends its SIGTERM to the command and then to its process group: two
// deliveries of one request. The second must not kill (the run would end without its JSON's
// close), as it did with SA_RESETHAND on the H200. raise() delivers before it returns.
TEST(Interrupt, TheSameSignalTwiceAtOnceIsOneRequest) {
  struct sigaction old_term = {};
  struct sigaction old_int = {};
  sigaction(SIGTERM, nullptr, &old_term);
  sigaction(SIGINT, nullptr, &old_int);
  simulate_interrupt(0);  // no signal seen yet: the first below is a first
  install_interrupt_handlers();
  raise(SIGTERM);
  raise(SIGTERM);  // killed this test's process before
  EXPECT_EQ(interrupt_signal(), SIGTERM);
  simulate_interrupt(0);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGINT, &old_int, nullptr);
}

// ...while a second signal a second later still kills: the way out of a hung library call.
// The child says, through a pipe, that it outlived the first signal: a first signal that killed
// would look the same at waitpid.
TEST(Interrupt, ASecondSignalASecondLaterKills) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  simulate_interrupt(0);  // the child inherits this: its first signal is a first
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // only async-signal-safe calls here
    close(pipe_fds[0]);
    install_interrupt_handlers();
    raise(SIGINT);
    const timespec pause{1, 200000000};
    nanosleep(&pause, nullptr);
    const char alive = 'a';
    if (write(pipe_fds[1], &alive, 1) != 1) _exit(2);
    raise(SIGINT);
    _exit(0);  // not reached if the second signal killed
  }
  close(pipe_fds[1]);
  char got = 0;
  const ssize_t n = read(pipe_fds[0], &got, 1);
  close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_EQ(n, 1) << "the first signal killed the child";
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << "status " << status;
}

// A case that asks for the run to end (as a SIGTERM would) while its second repetition's row is
// written: the signal then lands between two repetitions, and the next one is skipped before it
// samples (two rows done, one skipped: Google Benchmark computes their statistics).
class InterruptsAfterItsSecondRow final : public BenchmarkCase {
 public:
  explicit InterruptsAfterItsSecondRow(std::shared_ptr<int> rows) : rows_(std::move(rows)) {}
  void setup(Env&) override {}
  void run(Env&) override {}
  void validate(Env&) override {}
  Work work() const override { return {}; }
  std::map<std::string, double> counters(double) const override {
    if (++*rows_ == 2) simulate_interrupt(SIGTERM);
    return {};
  }

 private:
  std::shared_ptr<int> rows_;  // rows written, across the case's repetitions
};

struct RunsSeen : benchmark::BenchmarkReporter {
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs)
      if (r.run_type == Run::RT_Iteration) iterations.push_back(r.iterations);
  }
  std::vector<benchmark::IterationCount> iterations;
};

// Google Benchmark aborts the process when a benchmark's repetitions have different iteration
// counts (ComputeStats' check): a repetition skipped after others ran must count as they do, or
// an interruption between repetitions loses every row of the run. Where a skipped repetition
// counts otherwise, this test dies of that abort.
TEST(Interrupt, ASignalBetweenRepetitionsEndsTheRunWithoutAborting) {
  auto rows = std::make_shared<int>(0);
  Family("run_control_test/interrupted_repetitions", "")
      .axis(int_axis("n", {1}))
      .timer(Timer::host_clock)
      .make([rows](const Point&) { return std::make_unique<InterruptsAfterItsSecondRow>(rows); })
      .add();
  std::optional<Spec> spec;  // a copy: the registry's vector may grow under it
  for (const Spec& s : registered_specs())
    if (s.family == "run_control_test/interrupted_repetitions") spec = s;
  ASSERT_TRUE(spec.has_value());
  Options quick;
  quick.adaptive = true;
  quick.stopping.min_samples = 2;
  quick.stopping.timeout = 0.01;
  simulate_interrupt(0);
  benchmark::RegisterBenchmark(
      spec->name.c_str(), [spec, quick](benchmark::State& state) { run_spec(state, *spec, quick); })
      ->UseManualTime()
      ->Iterations(1)
      ->Repetitions(3);
  RunsSeen seen;
  benchmark::RunSpecifiedBenchmarks(&seen, "^run_control_test/interrupted_repetitions/");
  release_active_case();
  benchmark::ClearRegisteredBenchmarks();
  simulate_interrupt(0);
  EXPECT_EQ(*rows, 2);  // two repetitions ran and wrote their rows; the third was skipped
  EXPECT_EQ(seen.iterations, (std::vector<benchmark::IterationCount>{1, 1, 1}));
}

TEST(Progress, DurationsReadAtAGlance) {
  EXPECT_EQ(format_duration(0.4), "0s");
  EXPECT_EQ(format_duration(42), "42s");
  EXPECT_EQ(format_duration(185), "3m05s");
  EXPECT_EQ(format_duration(3720), "1h02m");
}

}  // namespace
}  // namespace cubench
