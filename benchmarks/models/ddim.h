#pragma once
// diffusers' DDIMScheduler as Stable Diffusion v1.5 configures it, with classifier-free guidance:
// 1000 training steps, scaled_linear betas from 0.00085 to 0.012 (betas = linspace(sqrt(0.00085),
// sqrt(0.012), 1000)^2), steps_offset 1, set_alpha_to_one false, timestep_spacing "leading",
// prediction_type epsilon, eta 0, no clipping. At 20 steps the timesteps are 951, 901, ..., 1, and
// one guided step is
//   eps    = eps_u + g (eps_c - eps_u)
//   x0     = (x - sqrt(1 - a_t) eps) / sqrt(a_t)
//   x_prev = sqrt(a_prev) x0 + sqrt(1 - a_prev) eps
// with a = alphas_cumprod, a_prev that of t - 1000/steps, or alphas_cumprod[0] after the last
// step (set_alpha_to_one false).
// On the device the step reads its timestep and coefficients from tables indexed by a step counter
// that lives on the device too, so one captured step replays as every step (a CUDA graph); its
// arithmetic is fp32 (alphas_cumprod is fp32 in diffusers), the result rounded once to the
// latents' dtype. reference_step is the same formula in float64 on the host, for the check.
#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace cubench::sd15 {

struct DdimConfig {
  int64_t train_steps = 1000;
  double beta_start = 0.00085, beta_end = 0.012;
  int64_t steps_offset = 1;
};

// The timesteps of `steps` inference steps, first to last: 951, 901, ..., 1 at 20.
std::vector<int64_t> ddim_timesteps(int64_t steps, const DdimConfig& config = {});
// alphas_cumprod in float64, from the formula (not diffusers' fp32 tensors).
std::vector<double> alphas_cumprod(const DdimConfig& config = {});

class DdimGuidedScheduler {
 public:
  // Tables on `device` for `steps` steps of guidance scale `guidance`.
  DdimGuidedScheduler(int64_t steps, double guidance, torch::Device device,
                      const DdimConfig& config = {});

  int64_t steps() const { return int64_t(timesteps_.size()); }
  const std::vector<int64_t>& timesteps() const { return timesteps_; }
  // The timesteps as a float32 tensor [steps] on the device (the UNet's input at step i: index i).
  const torch::Tensor& timestep_table() const { return timestep_table_; }
  // a_t and a_prev of step i, as the device tables hold them (fp32).
  double alpha(int64_t i) const;
  double alpha_prev(int64_t i) const;

  // One guided update at step `step` ([1] int64 on the device): `latents` [n, c, h, w], `noise` the
  // UNet's prediction for [latents, latents] under [unconditional, conditional] context
  // ([2n, c, h, w], unconditional first). Returns the next latents in the latents' dtype.
  torch::Tensor step(const torch::Tensor& latents, const torch::Tensor& noise,
                     const torch::Tensor& step) const;
  // The same in float64 on the host, from float64 alphas: x, eps_u, eps_c flattened alike.
  std::vector<double> reference_step(const std::vector<double>& x, const std::vector<double>& eps_u,
                                     const std::vector<double>& eps_c, int64_t step) const;

  // Checks' own tests only: a_prev taken at the step's own timestep (an off-by-one in the
  // scheduler's index), in the device tables; false puts them back.
  void misalign_alpha_prev(bool misaligned);
  // Checks' own tests only: another guidance scale (a captured graph keeps the one it captured).
  void set_guidance(double guidance) { guidance_ = guidance; }

 private:
  DdimConfig config_;
  double guidance_;
  std::vector<int64_t> timesteps_;
  std::vector<double> alphas_;  // float64
  torch::Tensor timestep_table_, sqrt_a_, sqrt_1ma_, sqrt_a_prev_, sqrt_1ma_prev_;
  torch::Tensor alpha_table_, alpha_prev_table_;  // host copies of the fp32 values (for alpha())
};

}  // namespace cubench::sd15
