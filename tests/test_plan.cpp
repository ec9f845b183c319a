// The run's plan (run/plan.h), decided from the options, where the run is and the configurations
// alone: the filter applied once, what a GPU admits of the selection, and every way a run ends
// before its benchmarks, each with its one line. No GPU needed: the GPUs are profiles.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fixtures/detail/run/plan.h"

namespace cubench {
namespace {

const GpuProfile kH100{"NVIDIA H100 80GB HBM3", 90, 85'520'809'984ull};
const GpuProfile kT4{"Tesla T4", 75, 15'655'829'504ull};

Spec gpu_spec(const std::string& family, const std::string& rest, GpuNeeds needs,
              bool in_default = true) {
  Spec s;
  s.family = family;
  s.name = family + "/" + rest;
  s.gpu_needs = needs;
  if (!in_default) s.in_default_suite = [](const RunSettings&) { return false; };
  return s;
}

Spec host_spec(const std::string& family, const std::string& rest) {
  Spec s = gpu_spec(family, rest, {});
  s.timer = Timer::host_clock;
  return s;
}

const std::vector<Spec>& specs() {
  static const std::vector<Spec> list = {
      gpu_spec("gemm", "fp16/1024", GpuNeeds{75, "fp16 tensor cores", 1 << 20}),
      gpu_spec("gemm", "fp8/1024", GpuNeeds{89, "fp8 tensor cores", 1 << 20}),
      gpu_spec("gemm", "fp8/16384", GpuNeeds{89, "fp8 tensor cores", 1 << 20}, false),
      gpu_spec("sigmoid", "fp32/1024", GpuNeeds{0, "", 1 << 20}),
      host_spec("cpu/bert_train", "fp32/16"),
  };
  return list;
}

RunPlace on(const std::optional<GpuProfile>& gpu) {
  RunPlace p;
  p.gpus.count = gpu ? 1 : 0;
  p.gpus.reason = gpu ? "" : "no NVIDIA driver on this machine";
  p.device = gpu;
  p.gpu_on_any_rank = gpu.has_value();
  return p;
}

std::vector<std::string> names(const std::vector<const Spec*>& list) {
  std::vector<std::string> out;
  for (const Spec* s : list) out.push_back(s->name);
  return out;
}

TEST(Plan, TheFilterSelectsOnceAndTheGpuJudgesTheSelection) {
  const RunPlan plan = plan_run(Options{}, on(kT4), specs(), "^gemm/", false);
  EXPECT_EQ(names(plan.selected), (std::vector<std::string>{"gemm/fp16/1024", "gemm/fp8/1024"}));
  EXPECT_EQ(names(plan.admitted), (std::vector<std::string>{"gemm/fp16/1024"}));
  ASSERT_EQ(plan.not_run.size(), 1u);  // what the filter left out is not "not run"
  EXPECT_EQ(names(plan.not_run[0].specs), (std::vector<std::string>{"gemm/fp8/1024"}));
  EXPECT_EQ(not_run_line(plan.not_run[0], *plan.judged_on),
            "gemm: 1 configuration not run on Tesla T4: fp8 tensor cores need compute "
            "capability 8.9; this GPU is 7.5");
  EXPECT_EQ(plan.need_gpu, 2);
  EXPECT_EQ(plan.exit_status.code, 0) << plan.exit_status.line;
  // On an H100 everything selected runs; the default suite leaves the CPU family out where a GPU
  // is, the full one keeps it.
  const RunPlan h100 = plan_run(Options{}, on(kH100), specs(), "", false);
  EXPECT_EQ(names(h100.admitted),
            (std::vector<std::string>{"gemm/fp16/1024", "gemm/fp8/1024", "sigmoid/fp32/1024"}));
  EXPECT_TRUE(h100.not_run.empty());
  Options full;
  full.suite = Suite::full;
  EXPECT_EQ(plan_run(full, on(kH100), specs(), "", false).admitted.size(), 5u);
}

TEST(Plan, EveryWayARunEndsBeforeItsBenchmarksHasItsLine) {
  const RunPlan no_gpu = plan_run(Options{}, on(std::nullopt), specs(), "^sigmoid/", false);
  EXPECT_EQ(no_gpu.exit_status.code, kExitNoGpu);
  EXPECT_EQ(no_gpu.exit_status.line,
            "cubench: no usable CUDA GPU: no NVIDIA driver on this machine; 1 selected "
            "benchmark(s) need one. Run on a machine with a GPU, or the CPU families alone: "
            "--cubench_suite=cpu.");
  RunPlace faulty = on(std::nullopt);
  faulty.gpus.driver_fault = true;
  EXPECT_EQ(plan_run(Options{}, faulty, specs(), "", false).exit_status.code, kExitDriverFault);

  const RunPlan beyond = plan_run(Options{}, on(kH100), specs(), "fp8/16384", false);
  EXPECT_EQ(beyond.exit_status.code, kExitUsage);
  EXPECT_EQ(beyond.exit_status.line,
            "cubench: --benchmark_filter=fp8/16384 matches 1 benchmark(s) of the full suite and "
            "none of the default one; add --cubench_suite=full");
  const RunPlan host = plan_run(Options{}, on(kH100), specs(), "bert", false);
  EXPECT_NE(host.exit_status.line.find("add --cubench_suite=cpu"), std::string::npos)
      << host.exit_status.line;
  // What exists: each variant once (these have no string axes: their families).
  const RunPlan unknown = plan_run(Options{}, on(kH100), specs(), "gemm/fp17", false);
  EXPECT_EQ(unknown.exit_status.line,
            "cubench: no benchmark matches --benchmark_filter=gemm/fp17; families: gemm, sigmoid, "
            "cpu/bert_train");
  const RunPlan invalid = plan_run(Options{}, on(kH100), specs(), "gemm(", false);
  EXPECT_EQ(invalid.exit_status.code, kExitUsage);
  EXPECT_EQ(invalid.exit_status.line.rfind(
                "cubench: --benchmark_filter is not a valid regular expression: ", 0),
            0u);
  Options third_gpu;
  third_gpu.device = 2;
  EXPECT_EQ(plan_run(third_gpu, on(kH100), specs(), "", false).exit_status.code, kExitUsage);
  // A listing lists what a run would run: no exit status but the filter's.
  EXPECT_EQ(plan_run(Options{}, on(std::nullopt), specs(), "gemm/fp17", true).exit_status.code, 0);
  EXPECT_EQ(plan_run(Options{}, on(std::nullopt), specs(), "", true).exit_status.code, 0);
  EXPECT_EQ(plan_run(Options{}, on(std::nullopt), specs(), "gemm(", true).exit_status.code,
            kExitUsage);
  // Without a GPU a run of the CPU suite goes on.
  Options cpu;
  cpu.suite = Suite::cpu;
  const RunPlan host_run = plan_run(cpu, on(std::nullopt), specs(), "", false);
  EXPECT_EQ(host_run.exit_status.code, 0) << host_run.exit_status.line;
  EXPECT_EQ(names(host_run.admitted), (std::vector<std::string>{"cpu/bert_train/fp32/16"}));
}

TEST(Plan, AMemoryLimitAboveTheGpuIsSaidToChangeNothing) {
  Options limited;
  limited.memory_limit = 100ull << 30;
  const RunPlan plan = plan_run(limited, on(kH100), specs(), "", false);
  ASSERT_EQ(plan.warnings.size(), 1u);
  EXPECT_EQ(plan.warnings[0],
            "cubench: warning: --cubench_memory_limit=100.0 GiB is not below this GPU's 79.6 GiB: "
            "it changes nothing");
  limited.memory_limit = 512ull << 10;  // under every configuration's 1 MiB
  const RunPlan small = plan_run(limited, on(kH100), specs(), "", false);
  EXPECT_TRUE(small.warnings.empty());
  EXPECT_TRUE(small.admitted.empty());
  EXPECT_EQ(small.not_run.size(), 2u);  // per family and reason
}

TEST(Plan, RanksAgreeOnTheAdmittedConfigurationsByTheirFingerprint) {
  const RunPlan a = plan_run(Options{}, on(kH100), specs(), "", false);
  const RunPlan b = plan_run(Options{}, on(kH100), specs(), "", false);
  const RunPlan t4 = plan_run(Options{}, on(kT4), specs(), "", false);
  EXPECT_EQ(admitted_fingerprint(a), admitted_fingerprint(b));
  EXPECT_NE(admitted_fingerprint(a), admitted_fingerprint(t4));
}

}  // namespace
}  // namespace cubench
