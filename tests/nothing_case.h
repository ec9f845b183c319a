#pragma once
// A case that does nothing, for tests of registration and the run's bookkeeping (no GPU).
#include <memory>

#include "fixtures/case/family.h"

namespace cubench::testing_support {

class Nothing final : public BenchmarkCase {
 public:
  void setup(Env&) override {}
  void run(Env&) override {}
  void validate(Env&) override {}
  Work work() const override { return {}; }
};

inline Family::Factory nothing() {
  return [](const Point&) { return std::make_unique<Nothing>(); };
}

}  // namespace cubench::testing_support
