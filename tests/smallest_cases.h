#pragma once
// The configuration of each variant (a family with its string axes' values: "gemm/bf16",
// "sigmoid/copy/fp16/cold") that the every-family tests run, so a new family is tested without an
// edit here: by default its smallest; with CUBENCH_TEST_SIZE=largest its largest of the default
// suite, the size a default run times (the GPU proof runs the checks so too: a fault must be caught
// where a wrong number would be timed, not only where the check is cheap), or, for a variant the
// default suite leaves out whole (gemm_peak's, resnet50_train's fp32), its largest of the full
// suite (--cubench_suite=full). On a GPU, only configurations it admits (run/gpu_fit.h: the
// capability and memory each declares), so a 24 GB GPU is never asked for what it cannot hold: what
// it cannot run is left out with its reason. CUBENCH_TEST_VARIANTS (a regex, searched in each
// variant's name) narrows them while one family is being worked on, e.g. on the GPU machine, where
// a whole run of these tests takes minutes; ctest never sets it. A family it leaves no variant of
// has no test at all (family_check.h's families_with_cases), rather than a test that fails for want
// of a case.
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>

#include "fixtures/detail/case/registry.h"
#include "fixtures/detail/run/gpu_fit.h"
#include "fixtures/device/device.h"

namespace cubench {

inline bool variants_narrowed() {
  const char* only = std::getenv("CUBENCH_TEST_VARIANTS");
  return only && *only;
}

// CUBENCH_TEST_VARIANTS as a test of a configuration's variant: true for every one where it is
// unset or empty.
inline std::function<bool(const Spec&)> variant_filter() {
  if (!variants_narrowed()) return [](const Spec&) { return true; };
  const std::regex wanted(std::getenv("CUBENCH_TEST_VARIANTS"));
  return [wanted](const Spec& s) { return std::regex_search(s.variant(), wanted); };
}

// CUBENCH_TEST_SIZE: "largest" (of the default suite), else the smallest.
inline bool testing_largest_sizes() {
  const char* size = std::getenv("CUBENCH_TEST_SIZE");
  return size && std::string(size) == "largest";
}

// The GPU the tests run on (device 0), where there is one.
inline std::optional<GpuProfile> test_gpu_profile() {
  static const std::optional<GpuProfile> profile = []() -> std::optional<GpuProfile> {
    if (probe_gpus().count == 0) return std::nullopt;
    try {
      return profile_of(query_device(0));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }();
  return profile;
}

// Why the test GPU cannot run `s` ("" where it can, or where there is no GPU to judge against).
inline std::string left_out_on_test_gpu(const Spec& s) {
  const std::optional<GpuProfile> gpu = test_gpu_profile();
  return s.needs_gpu() && gpu ? cannot_run(s.gpu_needs, *gpu, 0) : "";
}

// The variants with a configuration in the default suite (of those `wanted`).
inline std::set<std::string> variants_in_default_suite(
    bool on_gpu, const std::function<bool(const Spec&)>& wanted) {
  std::set<std::string> out;
  for (const Spec& s : registered_specs())
    if (s.needs_gpu() == on_gpu && wanted(s) && s.in_default(RunSettings{}))
      out.insert(s.variant());
  return out;
}

// Per variant, the configuration to test (smallest or largest, above), of those the test GPU
// admits; `left_out` gets the variants it admits none of, with the reason.
inline std::map<std::string, const Spec*> test_case_of_each_variant(
    bool on_gpu, std::map<std::string, std::string>* left_out = nullptr) {
  std::map<std::string, const Spec*> chosen;
  std::map<std::string, std::string> reasons;
  const auto wanted = variant_filter();
  const bool largest = testing_largest_sizes();
  const std::set<std::string> in_default =
      largest ? variants_in_default_suite(on_gpu, wanted) : std::set<std::string>{};
  for (const Spec& s : registered_specs()) {
    if (s.needs_gpu() != on_gpu || !wanted(s)) continue;
    // Largest: of the default suite's where the variant has any there (a configuration only the
    // full suite times is then no candidate), else of all of its configurations.
    if (largest && in_default.count(s.variant()) && !s.in_default(RunSettings{})) continue;
    if (const std::string why = left_out_on_test_gpu(s); !why.empty()) {
      reasons.emplace(s.variant(), why);
      continue;
    }
    auto& slot = chosen[s.variant()];
    if (!slot || (largest ? s.size > slot->size : s.size < slot->size)) slot = &s;
  }
  if (left_out)
    for (auto& [variant, why] : reasons)
      if (!chosen.count(variant)) (*left_out)[variant] = why;
  return chosen;
}

// The smallest of each variant, whatever the GPU admits (the registry's own tests).
inline std::map<std::string, const Spec*> smallest_of_each_variant(bool on_gpu) {
  std::map<std::string, const Spec*> smallest;
  for (const Spec& s : registered_specs()) {
    if (s.needs_gpu() != on_gpu) continue;
    auto& slot = smallest[s.variant()];
    if (!slot || s.size < slot->size) slot = &s;
  }
  return smallest;
}

}  // namespace cubench
