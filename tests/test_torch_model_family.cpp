// model_family (fixtures/libraries/torch/model_family.h): what the two sides of every LibTorch
// model family share, the CPU twin's default run and the GPU side's, one run a sample, the timer
// and the library its file names.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fixtures/case/family.h"
#include "fixtures/detail/case/registry.h"
#include "fixtures/libraries/torch/model_family.h"
#include "tests/nothing_case.h"

namespace cubench {
namespace {

std::vector<const Spec*> specs_of(const std::string& family) {
  std::vector<const Spec*> out;
  for (const Spec& s : registered_specs())
    if (s.family == family) out.push_back(&s);
  return out;
}

void add_side(const std::string& name, Timer timer) {
  model_family(
      name, "a model", timer, [](const Point& p) { return p.get_int("batch") == 8; },
      "tests/model.torch.cpp")
      .axis(int_axis("batch", {1, 8}))
      .make(testing_support::nothing())
      .add();
}

TEST(ModelFamily, TheCpuTwinKeepsEveryRowTheGpuSideWhatItsRuleKeeps) {
  add_side("model_family_test/twin", Timer::host_clock);
  add_side("model_family_test/gpu", Timer::cuda_events);
  const RunSettings run;
  for (const std::string side : {"twin", "gpu"}) {
    const std::vector<const Spec*> specs = specs_of("model_family_test/" + side);
    ASSERT_EQ(specs.size(), 2u) << side;
    for (const Spec* s : specs) {
      SCOPED_TRACE(s->name);
      EXPECT_EQ(s->timer, side == "twin" ? Timer::host_clock : Timer::cuda_events);
      EXPECT_EQ(s->sampling.batch, 1);  // one run a sample
      EXPECT_EQ(s->in_default(run), side == "twin" || s->point.get_int("batch") == 8);
    }
    const FamilyInfo* info = find_family("model_family_test/" + side);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->library, "torch");  // the caller's file, not model_family's
    EXPECT_EQ(info->description, "a model");
  }
}

}  // namespace
}  // namespace cubench
