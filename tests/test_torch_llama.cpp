// The LLaMA model of llama_decode on the CPU (LibTorch 1.13 in CI): its parameter count against
// the reference architecture's, the KV cache against a forward without it, the rotary embedding
// against its formula, and greedy decoding repeating.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <iostream>
#include <set>
#include <string>

#include "benchmarks/models/llama.h"
#include "case_lifecycle.h"
#include "fixtures/detail/case/registry.h"
#include "fixtures/support/status.h"

namespace cubench {
namespace {

LlamaConfig tiny() { return {2, 64, 4, 172, 100}; }

torch::Tensor positions(int64_t from, int64_t count) {
  return torch::arange(from, from + count, torch::kLong);
}

// The config's formula gives transformers' count at 7B, and the model built from a config holds
// exactly what the formula counts (at 7B the model itself would be 27 GB in fp32).
TEST(Llama, ParameterCountIsTheReferenceArchitectures) {
  EXPECT_EQ(LlamaConfig::llama_7b().parameter_count(), kLlama7bParameters);
  LlamaModel model(tiny(), torch::TensorOptions().dtype(torch::kFloat));
  EXPECT_EQ(model.parameter_count(), tiny().parameter_count());
  EXPECT_EQ(model.weight_bytes(), 4.0 * double(tiny().parameter_count()));
}

// Prefill and decode steps through the static cache give the logits of one forward over all the
// tokens without it; a cache written one position late does not.
TEST(Llama, CachedLogitsEqualAFullForward) {
  torch::manual_seed(3);
  for (int64_t offset : {0, 1}) {
    LlamaModel model(tiny(), torch::TensorOptions().dtype(torch::kFloat));
    model.misplace_cache_writes(offset);
    model.allocate_cache(2, 10);
    auto tokens = torch::randint(tiny().vocab, {2, 10}, torch::kLong);
    std::vector<torch::Tensor> steps = {
        model.forward(tokens.narrow(1, 0, 6), positions(0, 6), true, true)};
    for (int64_t p = 6; p < 10; ++p)
      steps.push_back(model.forward(tokens.narrow(1, p, 1), positions(p, 1), true, true));
    auto cached = torch::cat(steps, 1);
    auto full = model.forward(tokens, positions(0, 10), false, false).narrow(1, 5, 5);
    EXPECT_EQ(cached.sizes(), (std::vector<int64_t>{2, 5, tiny().vocab}));
    const double error = ((cached - full).norm() / full.norm()).item<double>();
    if (offset == 0)
      EXPECT_LT(error, 1e-5);
    else
      EXPECT_GT(error, 1e-2) << "a misplaced cache write went unnoticed";
  }
}

// The prefill's logits at the last position are the full forward's there: logits_to_keep=1.
TEST(Llama, LastOnlyKeepsTheLastPosition) {
  torch::manual_seed(4);
  LlamaModel model(tiny(), torch::TensorOptions().dtype(torch::kFloat));
  auto tokens = torch::randint(tiny().vocab, {1, 5}, torch::kLong);
  auto all = model.forward(tokens, positions(0, 5), false, false);
  auto last = model.forward(tokens, positions(0, 5), false, true);
  ASSERT_EQ(last.size(1), 1);
  EXPECT_TRUE(torch::allclose(last, all.narrow(1, 4, 1), 1e-5, 1e-6));
}

// Rotary embedding: with one head, identity weights and a one-token sequence, attention returns
// the value whatever the rotation; so check the rotation itself through two tokens whose scores
// depend only on their distance: q_m . k_n of a rotated pair is a function of m - n. Shifting
// both positions by the same amount must leave the logits unchanged (no cache, causal).
TEST(Llama, RotaryEmbeddingDependsOnRelativePositionsOnly) {
  torch::manual_seed(5);
  LlamaModel model(tiny(), torch::TensorOptions().dtype(torch::kDouble));
  auto tokens = torch::randint(tiny().vocab, {1, 4}, torch::kLong);
  auto at_zero = model.forward(tokens, positions(0, 4), false, false);
  auto at_100 = model.forward(tokens, positions(100, 4), false, false);
  // (the rotary table is fp32, as transformers': angles near 100 rad are rounded to ~1e-5)
  const auto error = [&](const torch::Tensor& t) {
    return ((t - at_zero).norm() / at_zero.norm()).item<double>();
  };
  EXPECT_LT(error(at_100), 1e-4);
  // ... and is not the identity: swapping two tokens' positions changes the logits.
  auto reordered = model.forward(tokens, torch::tensor({0, 2, 1, 3}, torch::kLong), false, false);
  EXPECT_GT(error(reordered), 1e-2);
}

// A converted copy computes what the model does, in its own dtype; a planted head fault changes
// the model's logits, not the copy's.
TEST(Llama, ConvertedCopyHoldsTheSameWeightsWithoutFaults) {
  torch::manual_seed(3);
  LlamaModel model(tiny(), torch::TensorOptions().dtype(torch::kFloat));
  auto tokens = torch::randint(tiny().vocab, {1, 6}, torch::kLong);
  const auto want = model.forward(tokens, positions(0, 6), false, false);
  LlamaModel copy = model.converted(torch::TensorOptions().dtype(torch::kDouble));
  EXPECT_TRUE(torch::allclose(copy.forward(tokens, positions(0, 6), false, false).to(torch::kFloat),
                              want, 1e-5, 1e-6));
  model.scale_head_output(0, 1, 64);
  EXPECT_FALSE(torch::allclose(model.forward(tokens, positions(0, 6), false, false), want));
  LlamaModel clean = model.converted(torch::TensorOptions().dtype(torch::kFloat));
  EXPECT_TRUE(torch::allclose(clean.forward(tokens, positions(0, 6), false, false), want));
}

// The family's check takes both planted faults in turn (a head's output in the generating model,
// then the cache written late), after a right generation it accepts.
TEST(LlamaDecode, CheckRejectsEachPlantedFaultInTurn) {
  int families = 0;
  for (const Spec& s : registered_specs()) {
    if (s.needs_gpu() || s.name.rfind("cpu/llama_decode/", 0) != 0) continue;
    SCOPED_TRACE(s.name);
    ++families;
    auto env = Env::host_only(1);
    auto c = s.make();
    c->setup(*env);
    c->run(*env);
    EXPECT_NO_THROW(c->validate(*env));
    std::cout << "[ FIGURES ] token_gap_std " << c->counters(1.0).at("token_gap_std") << "\n";
    std::set<std::string> faults;
    // each fault, both in the generating model, by the first tokens' check, in its words
    for (const char* caught_by : {"fp32 copy of the weights", "fp32 copy of the weights"}) {
      run_once(*c, *env);
      const PlantedFault planted = plant_fault_and_check(*c, *env, s.name, caught_by);
      EXPECT_TRUE(planted.caught);
      faults.insert(planted.fault);
    }
    EXPECT_EQ(faults.size(), 2u);
  }
  EXPECT_EQ(families, 1);
}

}  // namespace
}  // namespace cubench
