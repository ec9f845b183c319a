// resnet50_infer on the CPU (LibTorch 1.13 in CI): what eval mode changes in the model, and the
// CPU case's check accepting the forward and rejecting the planted fault.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "benchmarks/models/resnet50.h"
#include "case_lifecycle.h"
#include "fixtures/detail/case/registry.h"
#include "fixtures/support/status.h"

namespace cubench {
namespace {

// In eval mode BatchNorm uses its running statistics: an image's logits do not depend on the
// batch it is in (in train mode they do: the batch's statistics normalise it), and nothing is
// recorded for autograd under InferenceMode.
TEST(ResNet50Infer, EvalLogitsDoNotDependOnTheBatch) {
  torch::manual_seed(11);
  ResNet50 model(1000);
  model->eval();
  c10::InferenceMode inference;
  auto images = torch::randn({2, 3, 64, 64});
  auto both = model->forward(images);
  EXPECT_EQ(both.sizes(), (std::vector<int64_t>{2, 1000}));
  EXPECT_FALSE(both.requires_grad());
  auto first = model->forward(images.narrow(0, 0, 1));
  EXPECT_TRUE(torch::allclose(both.narrow(0, 0, 1), first, 1e-4, 1e-6));
  model->train();
  auto trained = model->forward(images);
  EXPECT_FALSE(torch::allclose(both, trained, 1e-2, 1e-4));
}

const Spec& cpu_case() {
  for (const Spec& s : registered_specs())
    if (s.name == "cpu/resnet50_infer/fp32/nchw/eager/1") return s;
  throw std::runtime_error("cpu/resnet50_infer/fp32/nchw/eager/1 is not registered");
}

// The CPU case end to end: its first forward timed, its check passing with an error far under
// its bound (fp32 against float64), then failing once the classifier's weight is negated.
TEST(ResNet50Infer, CpuCaseChecksItsLogitsAndRejectsThePlantedFault) {
  auto env = Env::host_only(5);
  auto c = cpu_case().make();
  ASSERT_NO_THROW(set_up_run_and_check(*c, *env));
  auto counters = c->counters(0.5);
  EXPECT_GT(counters.at("first_forward_ms"), 0.0);
  EXPECT_DOUBLE_EQ(counters.at("images_per_s"), 2.0);
  EXPECT_GT(counters.at("logits_rel_error"), 0.0);  // fp32 against float64: not bit-equal
  EXPECT_LT(counters.at("logits_rel_error"), 1e-4);
  std::cout << "[ ERROR  ] fp32 logits against float64: " << counters.at("logits_rel_error")
            << "\n";
  const PlantedFault planted = plant_fault_and_check(*c, *env, "cpu/resnet50_infer");
  EXPECT_FALSE(planted.fault.empty());
  EXPECT_TRUE(planted.caught);
}

}  // namespace
}  // namespace cubench
