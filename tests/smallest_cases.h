#pragma once
// The configuration of each variant (a family with its string axes' values: "gemm/bf16",
// "sigmoid/copy/fp16/cold") with the smallest size: what the every-family tests run, so a new
// family is tested without an edit here.
// CUBENCH_TEST_VARIANTS (a regex, searched in each variant's name) narrows them while one family
// is being worked on, e.g. on the GPU machine, where a whole run of these tests takes minutes;
// ctest never sets it.
#include <cstdlib>
#include <map>
#include <regex>
#include <string>

#include "fixtures/detail/case/registry.h"

namespace cubench {

inline bool variants_narrowed() {
  const char* only = std::getenv("CUBENCH_TEST_VARIANTS");
  return only && *only;
}

inline std::map<std::string, const Spec*> smallest_of_each_variant(bool on_gpu) {
  std::map<std::string, const Spec*> smallest;
  const char* only = std::getenv("CUBENCH_TEST_VARIANTS");
  const std::regex wanted(only && *only ? only : "");
  for (const Spec& s : registered_cases()) {
    if (s.needs_gpu() != on_gpu) continue;
    if (only && *only && !std::regex_search(s.variant(), wanted)) continue;
    auto& slot = smallest[s.variant()];
    if (!slot || s.size < slot->size) slot = &s;
  }
  return smallest;
}

}  // namespace cubench
