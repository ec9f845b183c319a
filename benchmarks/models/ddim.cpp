#include "benchmarks/models/ddim.h"

#include <algorithm>
#include <cmath>

namespace cubench::sd15 {
namespace {

// The step's previous timestep: t - train_steps / steps ("leading" spacing), or none (-1) after
// the last, where set_alpha_to_one false takes alphas_cumprod[0].
int64_t previous_timestep(int64_t t, int64_t steps, const DdimConfig& c) {
  return t - c.train_steps / steps;
}

}  // namespace

std::vector<int64_t> ddim_timesteps(int64_t steps, const DdimConfig& c) {
  const int64_t ratio = c.train_steps / steps;
  std::vector<int64_t> out;
  for (int64_t i = steps - 1; i >= 0; --i) out.push_back(i * ratio + c.steps_offset);
  return out;
}

std::vector<double> alphas_cumprod(const DdimConfig& c) {
  const double from = std::sqrt(c.beta_start), to = std::sqrt(c.beta_end);
  std::vector<double> out;
  double product = 1;
  for (int64_t i = 0; i < c.train_steps; ++i) {
    const double root = from + (to - from) * double(i) / double(c.train_steps - 1);
    product *= 1 - root * root;
    out.push_back(product);
  }
  return out;
}

DdimGuidedScheduler::DdimGuidedScheduler(int64_t steps, double guidance, torch::Device device,
                                         const DdimConfig& c)
    : config_(c),
      guidance_(guidance),
      timesteps_(ddim_timesteps(steps, c)),
      alphas_(alphas_cumprod(c)) {
  // diffusers' fp32 tensors: betas = linspace(sqrt(start), sqrt(end), n, float32)^2, their
  // cumulative product of 1 - beta in fp32.
  const auto betas =
      torch::linspace(std::sqrt(c.beta_start), std::sqrt(c.beta_end), c.train_steps, torch::kFloat)
          .pow(2);
  const auto cumprod = (1 - betas).cumprod(0);
  const auto index = torch::tensor(timesteps_, torch::kLong);
  std::vector<int64_t> previous;
  for (int64_t t : timesteps_)
    previous.push_back(std::max<int64_t>(previous_timestep(t, steps, c), 0));
  alpha_table_ = cumprod.index_select(0, index);
  alpha_prev_table_ = cumprod.index_select(0, torch::tensor(previous, torch::kLong));
  const auto f32 = torch::TensorOptions().device(device).dtype(torch::kFloat);
  timestep_table_ = index.to(f32);
  sqrt_a_ = alpha_table_.sqrt().to(f32);
  sqrt_1ma_ = (1 - alpha_table_).sqrt().to(f32);
  misalign_alpha_prev(false);
}

double DdimGuidedScheduler::alpha(int64_t i) const { return alpha_table_[i].item<double>(); }
double DdimGuidedScheduler::alpha_prev(int64_t i) const {
  return alpha_prev_table_[i].item<double>();
}

torch::Tensor DdimGuidedScheduler::step(const torch::Tensor& latents, const torch::Tensor& noise,
                                        const torch::Tensor& step) const {
  torch::NoGradGuard no_grad;
  auto at = [&](const torch::Tensor& table) { return table.index_select(0, step); };
  const auto eps_uc = noise.to(torch::kFloat).chunk(2);
  const auto eps = eps_uc[0] + guidance_ * (eps_uc[1] - eps_uc[0]);
  const auto x0 = (latents.to(torch::kFloat) - at(sqrt_1ma_) * eps) / at(sqrt_a_);
  return (at(sqrt_a_prev_) * x0 + at(sqrt_1ma_prev_) * eps).to(latents.scalar_type());
}

std::vector<double> DdimGuidedScheduler::reference_step(const std::vector<double>& x,
                                                        const std::vector<double>& eps_u,
                                                        const std::vector<double>& eps_c,
                                                        int64_t step) const {
  const int64_t t = timesteps_.at(std::size_t(step));
  const int64_t prev = previous_timestep(t, steps(), config_);
  const double a = alphas_.at(std::size_t(t)),
               a_prev = alphas_.at(std::size_t(prev >= 0 ? prev : 0));
  std::vector<double> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double eps = eps_u[i] + guidance_ * (eps_c[i] - eps_u[i]);
    const double x0 = (x[i] - std::sqrt(1 - a) * eps) / std::sqrt(a);
    out[i] = std::sqrt(a_prev) * x0 + std::sqrt(1 - a_prev) * eps;
  }
  return out;
}

void DdimGuidedScheduler::misalign_alpha_prev(bool misaligned) {
  torch::NoGradGuard no_grad;
  const auto& source = misaligned ? alpha_table_ : alpha_prev_table_;
  const auto options = sqrt_a_.options();
  // In place once the tables exist: a captured graph reads these very tensors.
  auto put = [&](torch::Tensor& table, const torch::Tensor& value) {
    if (table.defined())
      table.copy_(value);
    else
      table = value.to(options);
  };
  put(sqrt_a_prev_, source.sqrt());
  put(sqrt_1ma_prev_, (1 - source).sqrt());
}

}  // namespace cubench::sd15
