// The planted-fault judgement every family's check test uses (case_lifecycle.h), driven with a
// host case whose checks and faults are set by hand: a fault counts as caught only when the check
// the case names for it rejects it, after that check accepted the result without the fault. A
// rejection by another check, by one that gives no name, of a result already wrong, or any other
// outcome is a failure with its reason. No GPU needed.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "fixtures/case/benchmark_case.h"
#include "fixtures/check/validate.h"
#include "fixtures/device/env.h"
#include "fixtures/support/status.h"
#include "tests/case_lifecycle.h"

namespace cubench {
namespace {

constexpr const char* kSumCheck = "the sum";
constexpr const char* kCountCheck = "the count";

// Adds 1 + 2 + 3 + 4 and counts the terms; two named checks. `fault` says what plant_fault
// corrupts (and how the rejection reads), `named` the check the case says must catch it. In
// place (no prepare), a second run adds to the last sum, as an all-reduce in place over two GPUs
// does without its inputs restored.
class Terms final : public BenchmarkCase {
 public:
  enum class Fault {
    none,            // plants nothing
    sum,             // the sum one too large
    count,           // the count one too large
    sum_unnamed,     // the sum wrong, rejected by a check that gives no name
    ignored,         // says it planted a fault, changes nothing
    excused,         // the sum wrong, excused as a known inaccuracy
    check_throws,    // the check fails to run (not a ValidationError)
  };
  Terms(Fault fault, std::string named, bool in_place = false)
      : fault_(fault), named_(std::move(named)), in_place_(in_place) {}

  void setup(Env&) override {}
  void run(Env&) override {
    if (!in_place_) sum_ = 0;
    count_ = 0;
    for (int i = 1; i <= 4; ++i) sum_ += i, ++count_;
  }
  void validate(Env&) override {
    if (fault_active_ && fault_ == Fault::check_throws) throw std::runtime_error("a lost device");
    if (sum_ != 10) {
      const std::string words = "the sum is " + std::to_string(sum_) + ", not 10";
      if (fault_active_ && fault_ == Fault::excused) throw KnownInaccuracy(words, kSumCheck);
      if (fault_active_ && fault_ == Fault::sum_unnamed) throw ValidationError(words);
      throw ValidationError(words, kSumCheck);
    }
    if (count_ != 4)
      throw ValidationError("the count is " + std::to_string(count_) + ", not 4", kCountCheck);
  }
  std::string plant_fault(Env&) override {
    if (fault_ == Fault::none) return {};
    fault_active_ = true;
    if (fault_ == Fault::count)
      ++count_;
    else if (fault_ != Fault::ignored && fault_ != Fault::check_throws)
      ++sum_;
    return "one term too many";
  }
  std::string fault_check() const override { return named_; }
  Work work() const override { return {}; }

 private:
  Fault fault_;
  std::string named_;
  bool in_place_;
  bool fault_active_ = false;
  long sum_ = 0, count_ = 0;
};

// One set-up and run, then the judgement.
PlantedFault judged(Terms& c, const std::string& caught_by = "") {
  auto env = Env::host_only(1);
  c.setup(*env);
  run_once(c, *env);
  return judge_planted_fault(c, *env, caught_by);
}

TEST(FaultAttribution, TheNamedCheckRejectingItIsACatch) {
  Terms c(Terms::Fault::sum, kSumCheck);
  const PlantedFault p = judged(c);
  EXPECT_TRUE(p.caught);
  EXPECT_EQ(p.failure, "");
  EXPECT_EQ(p.fault, "one term too many");
  EXPECT_EQ(p.check, kSumCheck);
  EXPECT_EQ(p.rejected_by, kSumCheck);
  EXPECT_EQ(p.rejection, "the sum is 11, not 10");
}

TEST(FaultAttribution, AnotherCheckRejectingItIsNoCatch) {
  Terms c(Terms::Fault::count, kSumCheck);  // the count is wrong; the case says the sum's check
  const PlantedFault p = judged(c);
  EXPECT_FALSE(p.caught);
  EXPECT_EQ(p.rejected_by, kCountCheck);
  EXPECT_EQ(p.failure,
            "the fault (one term too many) was rejected by the check \"the count\", not by the "
            "check \"the sum\", which must catch it: the count is 5, not 4");
}

// The test's own helper fails such a fault: a test failure, not a pass.
TEST(FaultAttribution, TheTestHelperFailsACatchByTheWrongCheck) {
  Terms c(Terms::Fault::count, kSumCheck);
  auto env = Env::host_only(1);
  c.setup(*env);
  run_once(c, *env);
  PlantedFault p;
  EXPECT_NONFATAL_FAILURE(p = plant_fault_and_check(c, *env, "terms/4"),
                          "terms/4: the fault (one term too many) was rejected by the check "
                          "\"the count\", not by the check \"the sum\"");
  EXPECT_FALSE(p.caught);
}

// A second run of an in-place case without prepare() is wrong before any fault: its rejection is
// not the fault's catch (the judgement's first check rejects it and plants nothing).
TEST(FaultAttribution, AResultWrongWithoutTheFaultIsNoCatch) {
  Terms c(Terms::Fault::sum, kSumCheck, /*in_place=*/true);
  auto env = Env::host_only(1);
  c.setup(*env);
  run_once(c, *env);
  run_once(c, *env);  // the sum is now 20
  PlantedFault p;
  EXPECT_NONFATAL_FAILURE(p = plant_fault_and_check(c, *env, "terms/in_place"),
                          "the result without a fault was rejected, by the check \"the sum\": "
                          "the sum is 20, not 10");
  EXPECT_FALSE(p.caught);
  EXPECT_EQ(p.fault, "") << "no fault planted in a result already rejected";
}

TEST(FaultAttribution, ACheckThatGivesNoNameCatchesNothing) {
  Terms c(Terms::Fault::sum_unnamed, kSumCheck);
  const PlantedFault p = judged(c);
  EXPECT_FALSE(p.caught);
  EXPECT_EQ(p.rejected_by, "");
  EXPECT_NE(p.failure.find("rejected by a check that gives no name, not by the check \"the sum\""),
            std::string::npos)
      << p.failure;
}

TEST(FaultAttribution, ACaseThatNamesNoCheckFails) {
  Terms c(Terms::Fault::sum, "");
  const PlantedFault p = judged(c);
  EXPECT_FALSE(p.caught);
  EXPECT_NE(p.failure.find("names no check that must catch its fault (fault_check)"),
            std::string::npos)
      << p.failure;
}

TEST(FaultAttribution, AnAcceptedFaultFails) {
  Terms c(Terms::Fault::ignored, kSumCheck);
  const PlantedFault p = judged(c);
  EXPECT_FALSE(p.caught);
  EXPECT_EQ(p.failure, "the check accepted a planted fault: one term too many");
}

TEST(FaultAttribution, AFaultExcusedAsAKnownInaccuracyFails) {
  Terms c(Terms::Fault::excused, kSumCheck);
  const PlantedFault p = judged(c);
  EXPECT_FALSE(p.caught);
  EXPECT_EQ(p.failure,
            "a planted fault passed for a known inaccuracy: one term too many -> the sum is 11, "
            "not 10");
}

TEST(FaultAttribution, AnotherExceptionFails) {
  Terms c(Terms::Fault::check_throws, kSumCheck);
  const PlantedFault p = judged(c);
  EXPECT_FALSE(p.caught);
  EXPECT_EQ(p.failure,
            "the check of a planted fault (one term too many) threw something other than a "
            "ValidationError: a lost device");
}

TEST(FaultAttribution, TheRightCheckInOtherWordsFailsWhereWordsAreGiven) {
  Terms right(Terms::Fault::sum, kSumCheck);
  EXPECT_TRUE(judged(right, "not 10").caught);
  Terms other(Terms::Fault::sum, kSumCheck);
  const PlantedFault p = judged(other, "not 11");
  EXPECT_FALSE(p.caught);
  EXPECT_NE(p.failure.find("but not in words that say \"not 11\""), std::string::npos) << p.failure;
}

TEST(FaultAttribution, NoFaultPlantedIsNoFailureOfItsOwn) {
  Terms c(Terms::Fault::none, "");
  const PlantedFault p = judged(c);
  EXPECT_FALSE(p.caught);
  EXPECT_EQ(p.fault, "");
  EXPECT_EQ(p.failure, "");
}

// The name travels with the error, through the helpers that throw it, and a known inaccuracy
// keeps its check's.
TEST(FaultAttribution, ValidationErrorsCarryTheirCheck) {
  EXPECT_EQ(ValidationError("x").check(), "");
  EXPECT_EQ(ValidationError("x", "the sum").check(), "the sum");
  EXPECT_EQ(KnownInaccuracy("x", "the sum").check(), "the sum");
  try {
    require_at_most("residual", 2.0, 1.0, "reconstruction");
    ADD_FAILURE() << "accepted";
  } catch (const ValidationError& e) {
    EXPECT_EQ(e.check(), "reconstruction");
    EXPECT_EQ(std::string(e.what()), "residual 2 exceeds tolerance 1");
  }
  try {
    require_within("y", compare({1.0, 3.0}, {1.0, 2.0}), Norm::max_relative, 0.1, "y's elements");
    ADD_FAILURE() << "accepted";
  } catch (const ValidationError& e) {
    EXPECT_EQ(e.check(), "y's elements");
  }
}

}  // namespace
}  // namespace cubench
