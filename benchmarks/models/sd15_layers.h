#pragma once
// The layers Stable Diffusion v1.5's models are built of (sd15_unet.h, sd15_vae.h), as diffusers
// computes them, each a torch::nn::Module whose parameters carry diffusers' names ("conv1.weight",
// "to_out.0.weight", "ff.net.0.proj.weight"), so that a state dict of diffusers' loads into ours by
// name and ours into diffusers'. Parameters are plain tensors made where they live, in their
// dtype: torch::nn::Conv2d would build fp32 weights on the CPU first (3.4 GB for the UNet) and then
// move them. Placement says where, and whether they are filled (Init::random) or left as they come
// (Init::none: a copy about to take another model's weights). On the meta device nothing is
// allocated, so the full-size models can be built, named and counted anywhere (tests).
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace cubench::sd15 {

// Init::random is PyTorch's default initialisation, what diffusers' models get when built from a
// configuration: a linear's or convolution's weight and bias uniform in +-1/sqrt(fan_in) (kaiming
// uniform with a = sqrt(5)), norms' weights one and biases zero.
enum class Init { random, none };

struct Placement {
  torch::TensorOptions options;
  Init init = Init::random;
};

// A child module registered under `name` (a number for diffusers' ModuleLists: "0", "1"...).
template <class M, class... Args>
std::shared_ptr<M> add_child(torch::nn::Module& parent, const std::string& name, Args&&... args) {
  return parent.register_module(name, std::make_shared<M>(std::forward<Args>(args)...));
}

// An empty module that only names its children: diffusers' ModuleLists ("down_blocks") and
// Sequentials ("to_out", "ff.net").
std::shared_ptr<torch::nn::Module> add_list(torch::nn::Module& parent, const std::string& name);

// The number of elements of a module's parameters, its children's included.
int64_t parameter_count(const torch::nn::Module& module);

// Every parameter of `to` takes the value of `from`'s of the same name (converted to `to`'s
// dtype and device); both must have the same names and shapes.
void copy_parameters(const torch::nn::Module& from, torch::nn::Module& to);

class Conv2d : public torch::nn::Module {
 public:
  // Padding kernel / 2 (diffusers' "same" convolutions and its downsampler's padding 1).
  Conv2d(int64_t in, int64_t out, int64_t kernel, const Placement& at, int64_t stride = 1);
  torch::Tensor forward(const torch::Tensor& x) const;
  torch::Tensor weight, bias;

 private:
  int64_t stride_, padding_;
};

class Linear : public torch::nn::Module {
 public:
  Linear(int64_t in, int64_t out, const Placement& at, bool with_bias = true);
  torch::Tensor forward(const torch::Tensor& x) const;
  torch::Tensor weight, bias;  // bias undefined without one
};

class GroupNorm : public torch::nn::Module {
 public:
  GroupNorm(int64_t groups, int64_t channels, double eps, const Placement& at);
  torch::Tensor forward(const torch::Tensor& x) const;
  torch::Tensor weight, bias;

 private:
  int64_t groups_;
  double eps_;
};

class LayerNorm : public torch::nn::Module {
 public:
  LayerNorm(int64_t dim, double eps, const Placement& at);
  torch::Tensor forward(const torch::Tensor& x) const;
  torch::Tensor weight, bias;

 private:
  double eps_;
};

// diffusers' ResnetBlock2D (time_embedding_norm "default", output_scale_factor 1): GroupNorm,
// SiLU, 3x3 conv, plus the projected time embedding (the UNet's; the VAE's blocks have none),
// GroupNorm, SiLU, 3x3 conv, added to the input (through a 1x1 conv_shortcut where the channels
// change).
class ResnetBlock2D : public torch::nn::Module {
 public:
  // temb_channels 0: no time embedding (the VAE's blocks).
  ResnetBlock2D(int64_t in, int64_t out, int64_t temb_channels, int64_t groups, double eps,
                const Placement& at);
  // temb: the UNet's time embedding [batch, temb_channels] (SiLU is applied here, as diffusers
  // does in each block); undefined for the VAE's.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& temb) const;

 private:
  std::shared_ptr<GroupNorm> norm1_, norm2_;
  std::shared_ptr<Conv2d> conv1_, conv2_, conv_shortcut_;
  std::shared_ptr<Linear> time_emb_proj_;
};

// diffusers' Attention with AttnProcessor2_0 on sequences [batch, tokens, channels]: to_q, to_k,
// to_v, heads of head_dim channels, scaled_dot_product_attention (scale 1/sqrt(head_dim), no mask),
// to_out.0. Self-attention, or cross-attention over a context of context_dim channels.
struct AttentionShape {
  int64_t query_dim, context_dim, heads, head_dim;  // context_dim 0: self-attention
  bool qkv_bias;
};
class Attention : public torch::nn::Module {
 public:
  Attention(const AttentionShape& shape, const Placement& at);
  // context undefined: self-attention.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& context) const;

 private:
  int64_t heads_;
  std::shared_ptr<Linear> to_q_, to_k_, to_v_, to_out_;
};

// The VAE's mid-block attention (diffusers' Attention with a group_norm, one head over every
// channel, biases on q, k, v, residual_connection): on an image [batch, C, h, w], attention over
// its h x w positions, added to the input.
class SpatialSelfAttention : public torch::nn::Module {
 public:
  SpatialSelfAttention(int64_t channels, int64_t groups, double eps, const Placement& at);
  torch::Tensor forward(const torch::Tensor& x) const;

 private:
  std::shared_ptr<GroupNorm> group_norm_;
  std::shared_ptr<Attention> attention_;
};

// diffusers' Transformer2DModel as SD 1.x configures it (use_linear_projection false): GroupNorm
// (eps 1e-6), a 1x1 conv proj_in, one BasicTransformerBlock over the h x w positions (LayerNorm,
// self-attention; LayerNorm, cross-attention over the text; LayerNorm, GEGLU feed-forward 4x wide;
// each added to its input), a 1x1 conv proj_out, added to the input.
class Transformer2DModel : public torch::nn::Module {
 public:
  Transformer2DModel(int64_t channels, int64_t heads, int64_t context_dim, int64_t groups,
                     const Placement& at);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& context) const;

 private:
  struct Block;
  std::shared_ptr<GroupNorm> norm_;
  std::shared_ptr<Conv2d> proj_in_, proj_out_;
  std::shared_ptr<Block> block_;
};

// diffusers' Downsample2D (use_conv, padding 1): a 3x3 convolution of stride 2.
class Downsample2D : public torch::nn::Module {
 public:
  Downsample2D(int64_t channels, const Placement& at);
  torch::Tensor forward(const torch::Tensor& x) const;

 private:
  std::shared_ptr<Conv2d> conv_;
};

// diffusers' Upsample2D (use_conv): nearest-neighbour upsampling by 2, then a 3x3 convolution.
class Upsample2D : public torch::nn::Module {
 public:
  Upsample2D(int64_t channels, const Placement& at);
  torch::Tensor forward(const torch::Tensor& x) const;

 private:
  std::shared_ptr<Conv2d> conv_;
};

// FLOPs of the layers above (a multiply and an add per term of each product), as the models'
// counts add them up: convolutions, linear layers and attention's two products; norms,
// activations, softmax, upsampling and additions are left out (under 1% of the UNet's).
namespace flops {
// A k x k convolution from `in` to `out` channels onto an h x w output, per image.
constexpr double conv(double in, double out, double k, double h, double w) {
  return 2.0 * in * out * k * k * h * w;
}
// A linear layer applied to `tokens` rows.
constexpr double linear(double in, double out, double tokens) { return 2.0 * in * out * tokens; }
// Attention's two products (q k^T and the weights times v) over `queries` x `keys`, `width`
// channels over all heads.
constexpr double attention(double queries, double keys, double width) {
  return 2.0 * 2.0 * queries * keys * width;
}
// A ResnetBlock2D on an h x w image (the time embedding's projection included where temb > 0).
double resnet(int64_t in, int64_t out, int64_t temb, int64_t h, int64_t w);
}  // namespace flops

}  // namespace cubench::sd15
