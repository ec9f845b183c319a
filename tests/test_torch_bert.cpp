// BERT for masked LM (benchmarks/models/bert.h), the multi-tensor AdamW and the bert_train
// family's check, on the CPU (Debian's LibTorch 1.13 in CI); step_unless' fused kernel on a GPU.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "benchmarks/models/bert.h"
#include "benchmarks/models/resnet50.h"  // parameter_count
#include "case_lifecycle.h"
#include "fixtures/detail/case/registry.h"
#include "fixtures/libraries/torch/foreach_adamw.h"
#include "fixtures/support/status.h"
#include "gpu_test.h"

namespace cubench {
namespace {

TEST(Bert, BaseHasTransformersParameterCount) {
  BertForMaskedLM model;  // BERT-base, 440 MB in fp32
  // transformers 5.17's BertForMaskedLM(BertConfig()): the tied decoder weight counted once.
  EXPECT_EQ(parameter_count(*model), 109514298);
  EXPECT_EQ(model->c.matmul_parameters(), 108965376);
}

TEST(Bert, LogitsCoverEveryPositionAndTheVocabulary) {
  torch::manual_seed(1);
  const auto c = BertConfig::tiny();
  BertForMaskedLM model(c);
  auto ids = torch::randint(c.vocab, {3, 16}, torch::kLong);
  auto types = torch::randint(2, {3, 16}, torch::kLong);
  EXPECT_EQ(model->forward(ids, types).sizes(), (std::vector<int64_t>{3, 16, c.vocab}));
}

TEST(Bert, DecoderIsTiedToTheWordEmbeddings) {
  torch::manual_seed(2);
  BertForMaskedLM model(BertConfig::tiny());
  model->eval();
  auto ids = torch::randint(6, 97, {1, 8}, torch::kLong);  // never token 5
  auto types = torch::zeros({1, 8}, torch::kLong);
  auto before = model->forward(ids, types).detach();
  {
    torch::NoGradGuard no_grad;
    // A row no input uses moves its logit only... (by a vector that is not constant: the head's
    // LayerNorm output sums to zero, so adding a constant to the row leaves the logit as it was)
    model->word->weight[5].add_(torch::randn({model->c.hidden}));
  }
  auto after = model->forward(ids, types).detach();
  auto changed = (after - before).abs().amax({0, 1}) > 1e-6;
  EXPECT_TRUE(changed[5].item<bool>());
  EXPECT_EQ(changed.sum().item<int64_t>(), 1);  // ...through the tied decoder
}

TEST(Bert, MaskedLmLossCountsOnlyTheLabelledPositions) {
  auto logits = torch::randn({2, 4, 7});
  auto labels = torch::full({2, 4}, -100, torch::kLong);
  labels[0][1] = 3, labels[1][2] = 6;
  auto want = torch::nn::functional::cross_entropy(torch::stack({logits[0][1], logits[1][2]}),
                                                   torch::tensor({3, 6}, torch::kLong));
  EXPECT_NEAR(masked_lm_loss(logits, labels).item<double>(), want.item<double>(), 1e-6);
}

TEST(Bert, TinyModelLearnsAFixedBatch) {
  torch::manual_seed(3);
  const auto c = BertConfig::tiny();
  BertForMaskedLM model(c);
  model->eval();  // dropout off: each step must lower the loss on the batch it sees
  ForeachAdamW opt(model->parameters(), AdamWSettings{1e-3, 0.9, 0.999, 1e-8, 0.01});
  auto ids = torch::randint(c.vocab, {4, 16}, torch::kLong);
  auto types = torch::randint(2, {4, 16}, torch::kLong);
  auto labels = torch::where(torch::rand({4, 16}) < 0.3, ids, torch::full({4, 16}, -100L));
  double first = 0, last = 0;
  for (int i = 0; i < 8; ++i) {
    opt.zero_grad();
    auto loss = masked_lm_loss(model->forward(ids, types), labels);
    loss.backward();
    opt.step();
    (i == 0 ? first : last) = loss.item<double>();
  }
  EXPECT_LT(last, first - 0.05) << "first " << first << ", last " << last;
}

// The autograd nodes named `name` that `t` was computed through, each counted once.
int graph_nodes_named(const torch::Tensor& t, const std::string& name) {
  std::vector<torch::autograd::Node*> pending{t.grad_fn().get()};
  std::set<torch::autograd::Node*> seen;
  int count = 0;
  while (!pending.empty()) {
    torch::autograd::Node* node = pending.back();
    pending.pop_back();
    if (node == nullptr || !seen.insert(node).second) continue;
    if (node->name() == name) ++count;
    for (const auto& edge : node->next_edges()) pending.push_back(edge.function.get());
  }
  return count;
}

// Python's nn.Linear runs a 3-D input through ATen's linear: one addmm on the flattened rows with
// the bias in it (cuBLASLt's epilogue on the GPU). The C++ module's own forward is a matmul and a
// separate add, which costs bert_train about 11 ms of a 109 ms step on an H200 (aten_linear.h):
// each of a layer's 6 Linear layers, the head's dense layer and the decoder must be an addmm.
TEST(Bert, EveryLinearIsOneAddmmAsInPython) {
  torch::manual_seed(5);
  const auto c = BertConfig::tiny();
  BertForMaskedLM model(c);
  auto ids = torch::randint(c.vocab, {2, 8}, torch::kLong);
  auto types = torch::randint(2, {2, 8}, torch::kLong);
  auto logits = model->forward(ids, types);
  EXPECT_EQ(graph_nodes_named(logits, "AddmmBackward0"), 6 * c.layers + 2);
}

TEST(ForeachAdamW, TakesLibTorchsAdamWSteps) {
  torch::manual_seed(4);
  std::vector<torch::Tensor> ours, theirs, initial;
  for (auto shape : {std::vector<int64_t>{5, 3}, {7}, {2, 2, 2}}) {
    auto p = torch::randn(shape);
    initial.push_back(p);
    ours.push_back(p.clone().requires_grad_());
    theirs.push_back(p.clone().requires_grad_());
  }
  const AdamWSettings s{1e-2, 0.8, 0.95, 1e-6, 0.1};
  ForeachAdamW foreach_adamw(ours, s);
  torch::optim::AdamW reference(theirs, torch::optim::AdamWOptions(s.lr)
                                            .betas({s.beta1, s.beta2})
                                            .eps(s.eps)
                                            .weight_decay(s.weight_decay));
  for (int step = 0; step < 4; ++step) {
    foreach_adamw.zero_grad();
    reference.zero_grad();
    for (std::size_t i = 0; i < ours.size(); ++i) {
      auto g = torch::randn(ours[i].sizes());
      ours[i].mutable_grad() = g.clone();
      theirs[i].mutable_grad() = g.clone();
    }
    foreach_adamw.step();
    reference.step();
    for (std::size_t i = 0; i < ours.size(); ++i)
      EXPECT_TRUE(torch::allclose(ours[i], theirs[i], 1e-6, 1e-7)) << "step " << step << ", " << i;
  }
  EXPECT_EQ(foreach_adamw.steps(), 4);
  EXPECT_FALSE(torch::allclose(ours[0], initial[0]));  // the steps moved the parameters
}

// step_unless with nothing found takes step()'s steps; with the flag set, nothing moves (moments
// included) and the next good step is counted as the one before it was. On the CPU a host read
// and step(); on a GPU the fused kernel with found_inf (a different kernel: allclose, not equal).
void expect_step_unless_steps_as_step(torch::Device device) {
  torch::manual_seed(5);
  std::vector<torch::Tensor> plain, unless;
  for (auto shape : {std::vector<int64_t>{5, 3}, {7}, {2, 2, 2}}) {
    auto p = torch::randn(shape, torch::TensorOptions().device(device));
    plain.push_back(p.clone().requires_grad_());
    unless.push_back(p.clone().requires_grad_());
  }
  const AdamWSettings s{1e-2, 0.8, 0.95, 1e-6, 0.1};
  ForeachAdamW a(plain, s), b(unless, s);
  const auto flag = [&](float v) { return torch::full({1}, v, plain[0].options()); };
  for (int step = 0; step < 4; ++step) {
    a.zero_grad();
    b.zero_grad();
    for (std::size_t i = 0; i < plain.size(); ++i) {
      auto g = torch::randn(plain[i].sizes(), plain[i].options());
      plain[i].mutable_grad() = g.clone();
      unless[i].mutable_grad() = g.clone();
    }
    if (step == 2) {  // a skipped step: b's parameters stay put, a takes no step either
      std::vector<torch::Tensor> before;
      for (auto& p : unless) before.push_back(p.detach().clone());
      b.step_unless(flag(1.0f));
      for (std::size_t i = 0; i < unless.size(); ++i)
        EXPECT_TRUE(torch::equal(unless[i], before[i])) << "skipped step moved " << i;
      continue;
    }
    a.step();
    b.step_unless(flag(0.0f));
    for (std::size_t i = 0; i < plain.size(); ++i)
      EXPECT_TRUE(torch::allclose(plain[i], unless[i], 1e-5, 1e-6)) << "step " << step << ", " << i;
  }
}

TEST(ForeachAdamW, StepUnlessStepsAsStepAndSkipsWhenFound) {
  expect_step_unless_steps_as_step(torch::kCPU);
}

#if CUBENCH_TORCH_CUDA  // a CPU-only LibTorch has no CUDA tensors, GPU or not
TEST(ForeachAdamWGpu, StepUnlessStepsAsStepAndSkipsWhenFound) {
  CUBENCH_REQUIRE_GPU();
  expect_step_unless_steps_as_step(torch::Device(torch::kCUDA, 0));
}
#endif

// Every planted fault in turn (the loss, a negated gradient, halved gradients, a frozen layer),
// each through run()'s own step, each rejected; a right step accepted before and between them,
// its check figures printed (the fp32 bounds come from them).
TEST(BertTrain, CheckAcceptsAStepAndRejectsEveryPlantedFault) {
  int families = 0;
  for (const Spec& s : registered_specs()) {
    if (s.needs_gpu() || s.name.rfind("cpu/bert_train/", 0) != 0) continue;
    SCOPED_TRACE(s.name);
    ++families;
    auto env = Env::host_only(1);
    auto c = s.make();
    c->setup(*env);
    std::set<std::string> faults;
    for (int round = 0; round < 4; ++round) {
      run_once(*c, *env);
      EXPECT_NO_THROW(c->validate(*env));
      for (const auto& [name, value] : c->counters(1.0))
        if (name.find("cos") != std::string::npos || name.find("ratio") != std::string::npos ||
            name == "loss_error")
          std::cout << "[ FIGURES ] " << s.name << " " << name << " " << value << "\n";
      EXPECT_GT(c->counters(1.0).at("tokens_per_s"), 0);
      const PlantedFault planted = plant_fault_and_check(*c, *env, s.name);
      ASSERT_FALSE(planted.fault.empty());
      EXPECT_TRUE(planted.caught);
      faults.insert(planted.fault);
    }
    EXPECT_EQ(faults.size(), 4u) << "four different faults planted";
  }
  EXPECT_EQ(families, 1);
}

}  // namespace
}  // namespace cubench
