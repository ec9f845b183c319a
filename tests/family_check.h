#pragma once
// Each family's check, one test per family, at the smallest size of each of its variants (with
// CUBENCH_TEST_SIZE=largest, the largest a default run times, or a full run's where the default has
// none; smallest_cases.h): set-up, a run and its validation must pass on the inputs a default run
// draws (the same seed), every counter it reports must be declared, and then, with each of its
// faults planted in turn (BenchmarkCase::plant_fault, fault_count() of them: one element 10% off,
// every singular value 5% larger, a guidance scale of 5, a step skipped...), the check the case
// names for the fault (BenchmarkCase::fault_check) must reject it: a rejection by another check is
// a failure, not a catch. Last, the result poisoned and no run after it must be rejected too: the
// check judges what the timed call wrote (case_lifecycle.h: judge_every_fault). One test per
// family, so ctest times each and runs them side by side; the families come from the registry, so a
// new family gets its test with no edit here (and Contract.EveryFamilyHasA CheckTest fails if one
// slips out). Under CUBENCH_GPU_TESTS=required a test that would skip fails instead (gpu_test.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "case_lifecycle.h"
#include "fixtures/case/counters.h"
#include "fixtures/detail/case/registry.h"
#include "fixtures/detail/device/seed.h"
#include "fixtures/detail/run/options.h"
#include "fixtures/device/env.h"
#include "fixtures/support/status.h"
#include "gpu_test.h"
#include "not_built.h"
#include "smallest_cases.h"

namespace cubench {

// The case of each variant to test (smallest_cases.h: smallest, or with CUBENCH_TEST_SIZE=largest
// the largest of the default suite, of the full one where the default has none; those the GPU
// admits), grouped by family ("gemm" -> gemm/fp32/.., gemm/bf16/..), and the variants the GPU
// admits none of, with the reason.
inline std::map<std::string, std::vector<const Spec*>> test_cases_by_family(
    bool on_gpu, std::map<std::string, std::string>* left_out = nullptr) {
  std::map<std::string, std::vector<const Spec*>> out;
  for (const auto& [variant, spec] : test_case_of_each_variant(on_gpu, left_out))
    out[spec->family].push_back(spec);
  return out;
}

// Every family with cases there that CUBENCH_TEST_VARIANTS leaves a variant of (the tests'
// instantiation: before main, so no GPU is asked). A family the filter leaves out gets no test:
// its check would find no case to run and fail.
inline std::vector<std::string> families_with_cases(bool on_gpu) {
  const auto wanted = variant_filter();
  std::set<std::string> names;
  for (const Spec& s : registered_specs())
    if (s.needs_gpu() == on_gpu && wanted(s)) names.insert(s.family);
  return {names.begin(), names.end()};
}

// Whether CUBENCH_GPU_TESTS=required (the GPU machine's runs).
inline bool gpu_tests_required() {
  std::string wrong;
  return test::gpu_tests_mode(wrong) == "required";
}

// A family as a test name: Google Test allows letters, digits and '_' ("torch/attention" ->
// "torch_attention").
inline std::string family_test_name(const std::string& family) {
  std::string name = family;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

// Families whose result is only "it ran" (launch/empty times launches of an empty kernel).
inline bool family_has_no_result(const std::string& family) { return family == "launch/empty"; }

// A family that searches in its set-up (gemm_peak) searches for --cubench_search_seconds, 60 s
// in a run: here the checks are of what the search found, not of how far it got, so a short box.
inline RunSettings bounded_set_up_searches() {
  RunSettings settings;
  settings.search_seconds = 0.5;
  return settings;
}

// Runs one family's check at each variant's test size (smallest, or largest: smallest_cases.h);
// failures are Google Test failures. Returns how many variants were checked both ways (accepted,
// then their planted fault caught).
inline int check_family_at_its_test_sizes(const std::string& family, bool on_gpu) {
  const RunSettings settings = bounded_set_up_searches();
  std::map<std::string, std::string> left_out;
  const auto by_family = test_cases_by_family(on_gpu, &left_out);
  bool any_left_out = false;
  for (const auto& [variant, why] : left_out)
    if (variant == family || variant.rfind(family + "/", 0) == 0) {
      std::cout << "[ LEFT OUT ] " << variant << ": " << why << "\n";
      any_left_out = true;
    }
  const auto found = by_family.find(family);
  if (found == by_family.end()) {
    if (!any_left_out)
      ADD_FAILURE() << family << " has no " << (on_gpu ? "GPU" : "host") << " case in this build";
    return 0;  // every variant left out, each with its reason (above): the caller's skip
  }
  int checked = 0;
  for (const Spec* spec : found->second) {
    SCOPED_TRACE(spec->name);
    const auto start = std::chrono::steady_clock::now();
    const std::uint64_t seed = case_seed(spec->name, Options{}.seed);
    std::unique_ptr<Env> env =
        on_gpu ? std::make_unique<Env>(0, seed, settings) : Env::host_only(seed, settings);
    auto work = spec->make();
    // Set-up and one run as the runner makes them; then the check must accept that result, and
    // reject it with the case's fault planted, by the check the case names (case_lifecycle.h).
    std::vector<PlantedFault> faults;
    try {
      work->setup(*env);
      run_once(*work, *env);
      run_once(*work, *env);  // the check judges a second call, as the runner's does
      faults = plant_every_fault_and_check(*work, *env, spec->name);
    } catch (const NotSupported& e) {
      // The library has nothing for this configuration on this GPU: a reported row. But the
      // configuration was chosen because it declares nothing this GPU lacks (Family::needs), so
      // where GPU tests are required, and on the Hopper GPUs cubench is measured on, it is a
      // failure: a graph or a layout gone wrong hiding as a skip, or a need left undeclared.
      std::cout << "[ NOT SUPPORTED ] " << e.what() << "\n";
      if (!on_gpu)
        ADD_FAILURE() << "a host case not supported: " << e.what();
      else if (gpu_tests_required() || env->info().cc_major >= 9)
        ADD_FAILURE() << "not supported, though it declares no need this GPU lacks "
                         "(Family::needs): "
                      << e.what();
      continue;
    } catch (const std::exception& e) {
      // fp8 on a GPU older than Ada is a stated limitation, not a failure.
      const std::string what = e.what();
      if (what.find("needs compute capability") != std::string::npos)
        std::cout << "[ REPORTED ] " << what << "\n";
      else
        ADD_FAILURE() << "set-up, run or check failed: " << what;
      continue;
    }
    for (const auto& counter : work->counters(1.0))
      EXPECT_NE(find_counter(counter.first), nullptr) << counter.first << " is not declared";
    const PlantedFault first = faults.empty() ? PlantedFault{} : faults.front();
    if (!first.known_inaccuracy.empty()) {  // a library's documented miss: no fault to judge
      std::cout << "[ KNOWN INACCURACY ] " << first.known_inaccuracy.substr(0, 300) << "\n";
      continue;
    }
    if (first.fault.empty()) {
      if (!first.failure.empty()) continue;  // the clean result rejected: a failure already
      if (family_has_no_result(family))
        std::cout << "[ NO FAULT ] " << spec->name << "\n";
      else
        ADD_FAILURE() << family << " has a result but plants no fault (plant_fault)";
      continue;
    }
    // Checked both ways: every fault (the unwritten result's too) caught by its check.
    if (std::all_of(faults.begin(), faults.end(), [](const PlantedFault& p) { return p.caught; }))
      ++checked;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "[ SECONDS ] " << spec->name << ": " << seconds << "\n";
  }
  return checked;
}

// The test body: the family's check, and at least one variant checked both ways, unless the
// family has no result to check (launch/empty). Where every variant is a stated limitation of this
// GPU (fp8 before Ada) the test skips, saying so; under CUBENCH_GPU_TESTS=required that skip is a
// failure too, as a missing GPU's is: a required run where a family was never checked is not green.
inline void expect_family_checked(const std::string& family, bool on_gpu) {
  const int checked = check_family_at_its_test_sizes(family, on_gpu);
  if (checked > 0 || family_has_no_result(family) || testing::Test::HasFailure()) return;
  CUBENCH_GPU_SKIP("no variant of " + family + " could be checked on this GPU (see above)");
}

// A family's test name from its parameter (INSTANTIATE_TEST_SUITE_P's name generator).
struct FamilyTestName {
  std::string operator()(const testing::TestParamInfo<std::string>& p) const {
    return family_test_name(p.param);
  }
};

// The names of the tests Google Test instantiated from `suite` (e.g. "Check/EveryGpuFamily"),
// one per family, for the coverage test.
inline std::set<std::string> instantiated_family_tests(const std::string& suite) {
  std::set<std::string> names;
  const testing::UnitTest& unit = *testing::UnitTest::GetInstance();
  for (int i = 0; i < unit.total_test_suite_count(); ++i) {
    const testing::TestSuite& s = *unit.GetTestSuite(i);
    if (s.name() != suite) continue;
    for (int j = 0; j < s.total_test_count(); ++j) {
      const std::string test = s.GetTestInfo(j)->name();  // "AcceptsARunAndRejectsAFault/gemm"
      names.insert(test.substr(test.find('/') + 1));
    }
  }
  return names;
}

// The coverage test: every registered family with cases on the GPU (on_gpu) or the host has its
// test in `suite`, so a new family cannot slip out of the checks; and there are at least
// `min_families` of them.
inline void expect_a_check_test_per_family(const std::string& suite, bool on_gpu,
                                           std::size_t min_families) {
  if (variants_narrowed()) CUBENCH_GPU_SKIP("CUBENCH_TEST_VARIANTS narrows the families");
  std::set<std::string> families;
  for (const Spec& s : registered_specs())
    if (s.needs_gpu() == on_gpu) families.insert(family_test_name(s.family));
  EXPECT_EQ(instantiated_family_tests(suite), families);
  EXPECT_GE(families.size(), min_families);
}

// The libraries this build left GPU families out for, as the run context's not_built says them
// (generated/not_built.h: {"torch": "LibTorch 1.13.0 here is CPU only: ..."}); "" when none. Those
// families have no test to fail: the coverage test says so instead.
inline std::string libraries_not_built() {
  const std::string json = CUBENCH_NOT_BUILT_JSON;
  return json == "{}" ? std::string() : json;
}

// The GPU coverage test's last word: a family this build left out (a library missing, LibTorch
// CPU only) is a skip saying which and why, and under CUBENCH_GPU_TESTS=required a failure, so a
// required run never reads green with families that were never checked.
inline void expect_every_gpu_family_built() {
  const std::string missing = libraries_not_built();
  if (!missing.empty())
    CUBENCH_GPU_SKIP("this build left out the GPU families of these libraries: " + missing);
}

}  // namespace cubench
