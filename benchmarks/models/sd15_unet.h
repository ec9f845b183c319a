#pragma once
// Stable Diffusion v1.5's UNet: diffusers' UNet2DConditionModel with SD 1.5's configuration —
// block_out_channels 320/640/1280/1280, layers_per_block 2, down blocks CrossAttnDownBlock2D x3 +
// DownBlock2D, mid block UNetMidBlock2DCrossAttn, up blocks UpBlock2D + CrossAttnUpBlock2D x3
// (3 resnets each), attention_head_dim 8 (a head count there: head dims 40/80/160/160),
// cross_attention_dim 768, GEGLU feed-forward, GroupNorm 32 groups (eps 1e-5; 1e-6 in the
// Transformer2DModels), a sinusoidal time embedding 320 -> 1280 (flip_sin_to_cos, freq_shift 0),
// 4 latent channels. 859,520,964 parameters, diffusers' count. Parameter names are diffusers'
// ("down_blocks.0.attentions.0.transformer_blocks.0.attn1.to_q.weight", "conv_in.weight",
// "time_embedding.linear_1.weight", "mid_block.resnets.0.norm1.weight"...).
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "benchmarks/models/sd15_layers.h"

namespace cubench::sd15 {

struct UNetConfig {
  std::vector<int64_t> block_out_channels;
  // Per down block: CrossAttnDownBlock2D (true) or DownBlock2D; the up blocks mirror them.
  std::vector<bool> cross_attention;
  int64_t layers_per_block = 2;
  int64_t heads = 8;  // diffusers' attention_head_dim, which SD 1.5's config uses as a head count
  int64_t context_dim = 768;
  int64_t latent_channels = 4;
  int64_t norm_groups = 32;

  static UNetConfig sd15() {
    return {{320, 640, 1280, 1280}, {true, true, true, false}, 2, 8, 768, 4, 32};
  }
  // Every block of SD 1.5's kinds, narrow: 32/64/64/64, 2 heads, a 32-wide context (the CPU rows').
  static UNetConfig tiny() {
    return {{32, 64, 64, 64}, {true, true, true, false}, 2, 2, 32, 4, 32};
  }
  int64_t time_embed_dim() const { return 4 * block_out_channels.front(); }
  // Counted from the configuration alone, layer by layer (not from a built model), so the models
  // are checked against it: 859,520,964 for SD 1.5, diffusers' count.
  int64_t parameter_count() const;
  // FLOPs of one forward of `batch` latents of h x w under a context of `context_tokens` tokens
  // (flops:: in sd15_layers.h says what is counted): 803.3 GFLOP a sample at 64 x 64 and 77
  // tokens, 1.61 TFLOP a guided step (batch 2).
  double forward_flops(int64_t batch, int64_t h, int64_t w, int64_t context_tokens) const;
};

// diffusers 0.3x's count of UNet2DConditionModel at SD 1.5's configuration.
constexpr int64_t kSd15UNetParameters = 859520964;

// The sinusoidal timestep embedding (diffusers' get_timestep_embedding, flip_sin_to_cos true,
// downscale_freq_shift 0, max_period 10000): [cos(t f_i), sin(t f_i)], f_i = 10000^(-i/(dim/2)).
// t: [batch] timesteps (any type) -> [batch, dim] fp32.
torch::Tensor timestep_embedding(const torch::Tensor& t, int64_t dim);

class UNet2DConditionModel : public torch::nn::Module {
 public:
  UNet2DConditionModel(const UNetConfig& config, const Placement& at);
  // The noise prediction for `sample` [batch, 4, h, w] at `timestep` ([1] or [batch], on the
  // model's device; float) under `context` [batch, tokens, context_dim] (the text encoder's).
  torch::Tensor forward(const torch::Tensor& sample, const torch::Tensor& timestep,
                        const torch::Tensor& context) const;
  const UNetConfig& config() const { return config_; }

 private:
  struct DownBlock;
  struct MidBlock;
  struct UpBlock;
  UNetConfig config_;
  std::shared_ptr<Conv2d> conv_in_, conv_out_;
  std::shared_ptr<Linear> time_linear_1_, time_linear_2_;
  std::vector<std::shared_ptr<DownBlock>> down_;
  std::shared_ptr<MidBlock> mid_;
  std::vector<std::shared_ptr<UpBlock>> up_;
  std::shared_ptr<GroupNorm> conv_norm_out_;
};

}  // namespace cubench::sd15
