// DeviceLossScaler and ForeachSGD::step_unless, amp_fp16's loss scaling decided on the device (so
// a CUDA graph can capture it): on the CPU their tensor-operation paths (CI, LibTorch 1.13), on a
// GPU the CUDA kernels they take there (_amp_foreach_non_finite_check_and_unscale_,
// _amp_update_scale_, _fused_sgd_ with found_inf), the same rule for both.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>
#include <vector>

#include "fixtures/libraries/torch/device_loss_scaler.h"
#include "fixtures/libraries/torch/foreach_sgd.h"
#include "fixtures/libraries/torch/torch_support.h"
#include "gpu_test.h"

#if CUBENCH_TORCH_CUDA
#include <ATen/cuda/CUDAGraph.h>
#endif

namespace cubench {
namespace {

std::vector<torch::Tensor> copies(const std::vector<torch::Tensor>& ts) {
  std::vector<torch::Tensor> out;
  for (const auto& t : ts) out.push_back(t.detach().clone());
  return out;
}

bool all_equal(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!torch::equal(a[i].cpu(), b[i].cpu())) return false;
  return true;
}

// A good step (momentum buffers made), then a planted inf: that step is skipped on the device —
// every parameter and momentum buffer bit-identical, the scale halved, the skip counted — then a
// good step unscales and steps.
void expect_device_scaler_skips_an_inf_step(torch::Device device) {
  torch::manual_seed(1);
  torch::nn::Linear layer(4, 2);
  layer->to(device);
  ForeachSGD sgd(layer->parameters(), 0.5, 0.9);
  DeviceLossScaler scaler(device);
  auto backward = [&] {
    sgd.zero_grad();
    scaler.scale(layer->forward(torch::ones({1, 4}, device)).sum()).backward();
  };
  auto step = [&] {
    scaler.step([&](const torch::Tensor& found_inf) { sgd.step_unless(found_inf); },
                layer->parameters());
  };
  auto weight_before = layer->weight.detach().clone();
  backward();
  step();
  // The unscaled gradient of sum(W x + b) with x = 1 is 1 for every weight; the first step's
  // momentum buffer is that gradient: W -= 0.5.
  EXPECT_TRUE(torch::allclose(layer->weight.detach(), weight_before - 0.5));
  EXPECT_EQ(scaler.skipped_steps(), 0);
  EXPECT_DOUBLE_EQ(scaler.scale_value(), 65536.0);
  ASSERT_EQ(sgd.momentum_buffers().size(), 2u);

  const auto params_before = copies(layer->parameters());
  const auto momentum_before = copies(sgd.momentum_buffers());
  backward();
  {
    torch::NoGradGuard no_grad;
    layer->weight.grad()[0][1] = std::numeric_limits<float>::infinity();  // planted
  }
  step();
  EXPECT_TRUE(all_equal(layer->parameters(), params_before));
  EXPECT_TRUE(all_equal(sgd.momentum_buffers(), momentum_before));
  EXPECT_DOUBLE_EQ(scaler.scale_value(), 32768.0);
  EXPECT_EQ(scaler.skipped_steps(), 1);

  backward();
  step();
  // buf = 0.9 x 1 + 1 = 1.9: W -= 0.95.
  EXPECT_TRUE(torch::allclose(layer->weight.detach(), params_before[0] - 0.95));
  EXPECT_DOUBLE_EQ(scaler.scale_value(), 32768.0);
  EXPECT_EQ(scaler.skipped_steps(), 1);
}

TEST(DeviceLossScaler, SkipsAnInfStepOnTheDeviceAndHalvesItsScale) {
  expect_device_scaler_skips_an_inf_step(torch::kCPU);
}

#if CUBENCH_TORCH_CUDA
TEST(DeviceLossScalerGpu, SkipsAnInfStepOnTheDeviceAndHalvesItsScale) {
  CUBENCH_REQUIRE_GPU();
  expect_device_scaler_skips_an_inf_step(torch::Device(torch::kCUDA, 0));
}

// What resnet50_train_graph/amp_fp16 relies on: a whole scaled step captured once in a CUDA
// graph decides on the device, replay by replay. An inf drawn into the static input makes the
// replayed step skip (parameters and momentum bit-identical, scale halved); finite input again,
// and the next replay steps.
TEST(DeviceLossScalerGpu, ACapturedStepSkipsOnTheDeviceWhenItsGradientsHoldInf) {
  CUBENCH_REQUIRE_GPU();
  Env env(0);
  TorchPlace place;
  place.bind(env);
  auto guard = place.use();  // the case's own stream: a graph is not captured on the default one
  torch::manual_seed(2);
  torch::nn::Linear layer(4, 2);
  layer->to(place.device());
  ForeachSGD sgd(layer->parameters(), 0.5, 0.9);
  DeviceLossScaler scaler(place.device());
  auto x = torch::ones({1, 4}, torch::TensorOptions().device(place.device()));
  auto step = [&] {
    sgd.zero_grad();
    scaler.scale(layer->forward(x).sum()).backward();
    scaler.step([&](const torch::Tensor& found_inf) { sgd.step_unless(found_inf); },
                layer->parameters());
  };
  step();  // eager: the momentum buffers made
  at::cuda::CUDAGraph graph;
  graph.capture_begin();
  step();
  graph.capture_end();

  graph.replay();
  EXPECT_EQ(scaler.skipped_steps(), 0);
  const auto params_before = copies(layer->parameters());
  const auto momentum_before = copies(sgd.momentum_buffers());
  x.fill_(std::numeric_limits<float>::infinity());
  graph.replay();
  EXPECT_EQ(scaler.skipped_steps(), 1);
  EXPECT_DOUBLE_EQ(scaler.scale_value(), 32768.0);
  EXPECT_TRUE(all_equal(layer->parameters(), params_before));
  EXPECT_TRUE(all_equal(sgd.momentum_buffers(), momentum_before));

  x.fill_(1.0);
  graph.replay();
  EXPECT_EQ(scaler.skipped_steps(), 1);
  EXPECT_FALSE(torch::equal(layer->weight.detach().cpu(), params_before[0].cpu()));
}
#endif

// GradScaler's growth: doubled after `interval` good steps in a row, the count restarted by an
// inf step.
TEST(DeviceLossScaler, GrowsAfterItsIntervalOfGoodStepsInARow) {
  torch::nn::Linear layer(2, 1);
  ForeachSGD sgd(layer->parameters(), 0.0, 0.9);
  DeviceLossScaler scaler(torch::kCPU, 8.0, 2.0, 0.5, /*growth_interval=*/3);
  auto step = [&](bool plant_inf) {
    sgd.zero_grad();
    scaler.scale(layer->forward(torch::ones({1, 2})).sum()).backward();
    if (plant_inf) {
      torch::NoGradGuard no_grad;
      layer->bias.grad()[0] = std::numeric_limits<float>::quiet_NaN();
    }
    scaler.step([&](const torch::Tensor& found_inf) { sgd.step_unless(found_inf); },
                layer->parameters());
  };
  step(false);
  step(false);
  step(true);  // 4, the count restarted
  EXPECT_DOUBLE_EQ(scaler.scale_value(), 4.0);
  step(false);
  step(false);
  EXPECT_DOUBLE_EQ(scaler.scale_value(), 4.0);
  step(false);
  EXPECT_DOUBLE_EQ(scaler.scale_value(), 8.0);
  EXPECT_EQ(scaler.skipped_steps(), 1);
}

// step_unless with nothing found takes step()'s steps (the first one included, from its zero
// buffers).
TEST(ForeachSGD, StepUnlessTakesTheSameStepsAsStep) {
  torch::manual_seed(3);
  torch::nn::Linear a(5, 3), b(5, 3);
  {
    torch::NoGradGuard no_grad;
    b->weight.copy_(a->weight);
    b->bias.copy_(a->bias);
  }
  ForeachSGD plain(a->parameters(), 0.1, 0.9), unless(b->parameters(), 0.1, 0.9);
  const auto nothing_found = torch::zeros({});
  for (int step = 0; step < 3; ++step) {
    auto x = torch::randn({4, 5});
    plain.zero_grad();
    unless.zero_grad();
    a->forward(x).pow(2).sum().backward();
    b->forward(x).pow(2).sum().backward();
    plain.step();
    unless.step_unless(nothing_found);
    EXPECT_TRUE(torch::allclose(a->weight, b->weight, 1e-6, 1e-7)) << "step " << step;
    EXPECT_TRUE(torch::allclose(a->bias, b->bias, 1e-6, 1e-7)) << "step " << step;
  }
}

}  // namespace
}  // namespace cubench
