#pragma once
// The configuration of each variant (a family with its string axes' values: "gemm/bf16",
// "sigmoid/copy/fp16/cold") with the smallest size: what the every-family tests run, so a new
// family is tested without an edit here.
#include <map>
#include <string>

#include "fixtures/detail/registry.h"

namespace cubench {

inline std::map<std::string, const Spec*> smallest_of_each_variant(bool on_gpu) {
  std::map<std::string, const Spec*> smallest;
  for (const Spec& s : registered_cases()) {
    if (s.needs_gpu() != on_gpu) continue;
    auto& slot = smallest[s.variant()];
    if (!slot || s.size < slot->size) slot = &s;
  }
  return smallest;
}

}  // namespace cubench
