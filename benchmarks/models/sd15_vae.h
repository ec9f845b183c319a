#pragma once
// Stable Diffusion v1.5's VAE decoder: the decoding half of diffusers' AutoencoderKL with SD 1.5's
// configuration — block_out_channels 128/256/512/512, layers_per_block 2 (the decoder's up blocks
// have 3 resnets each), 4 latent channels, GroupNorm 32 groups (eps 1e-6), a mid block with one
// single-head attention over the latent's positions, scaling factor 0.18215 — with its
// post_quant_conv: 49,490,199 parameters, diffusers' count. Parameter names are AutoencoderKL's
// ("post_quant_conv.weight", "decoder.conv_in.weight",
// "decoder.mid_block.attentions.0.to_q.weight", "decoder.up_blocks.0.resnets.0.conv1.weight"...),
// so its state dict's decoder part loads here.
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "benchmarks/models/sd15_layers.h"

namespace cubench::sd15 {

struct VaeConfig {
  std::vector<int64_t> block_out_channels;
  int64_t layers_per_block = 2;
  int64_t latent_channels = 4;
  int64_t out_channels = 3;
  int64_t norm_groups = 32;
  double scaling_factor = 0.18215;

  static VaeConfig sd15() { return {{128, 256, 512, 512}, 2, 4, 3, 32, 0.18215}; }
  // SD 1.5's blocks, narrow: 32/32/64/64 (the CPU rows').
  static VaeConfig tiny() { return {{32, 32, 64, 64}, 2, 4, 3, 32, 0.18215}; }
  // Image pixels per latent position along a side: 2^(blocks - 1), 8 for SD 1.5.
  int64_t upscale() const { return int64_t(1) << (block_out_channels.size() - 1); }
  // Counted from the configuration alone (post_quant_conv and the decoder): 49,490,199 for SD 1.5.
  int64_t parameter_count() const;
  // FLOPs of decoding `batch` latents of h x w (flops:: in sd15_layers.h says what is counted).
  double decode_flops(int64_t batch, int64_t h, int64_t w) const;
};

// diffusers 0.3x's count of AutoencoderKL's decoder and post_quant_conv at SD 1.5's configuration.
constexpr int64_t kSd15VaeDecoderParameters = 49490199;

class VaeDecoder : public torch::nn::Module {
 public:
  VaeDecoder(const VaeConfig& config, const Placement& at);
  // AutoencoderKL.decode: `latents` [batch, 4, h, w], already divided by the scaling factor, to an
  // image [batch, 3, 8h, 8w] in about [-1, 1] (the pipeline maps it to [0, 1]).
  torch::Tensor forward(const torch::Tensor& latents) const;
  const VaeConfig& config() const { return config_; }

 private:
  struct UpBlock;
  VaeConfig config_;
  std::shared_ptr<Conv2d> post_quant_conv_, conv_in_, conv_out_;
  std::shared_ptr<ResnetBlock2D> mid_first_, mid_second_;
  std::shared_ptr<SpatialSelfAttention> mid_attention_;
  std::vector<std::shared_ptr<UpBlock>> up_;
  std::shared_ptr<GroupNorm> conv_norm_out_;
};

}  // namespace cubench::sd15
