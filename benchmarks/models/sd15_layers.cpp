#include "benchmarks/models/sd15_layers.h"

#include <cmath>
#include <vector>

#include "fixtures/cubench_torch.h"

namespace cubench::sd15 {
namespace {

// Parameters take no gradients: the models only ever run forward.
torch::Tensor uniform(at::IntArrayRef shape, const Placement& at, double bound) {
  auto t = torch::empty(shape, at.options);
  if (at.init == Init::random) t.uniform_(-bound, bound);
  return t;
}

torch::Tensor filled(at::IntArrayRef shape, const Placement& at, double value) {
  auto t = torch::empty(shape, at.options);
  if (at.init == Init::random) t.fill_(value);
  return t;
}

}  // namespace

std::shared_ptr<torch::nn::Module> add_list(torch::nn::Module& parent, const std::string& name) {
  return parent.register_module(name, std::make_shared<torch::nn::Module>());
}

int64_t parameter_count(const torch::nn::Module& module) {
  int64_t count = 0;
  for (const auto& p : module.parameters()) count += p.numel();
  return count;
}

void copy_parameters(const torch::nn::Module& from, torch::nn::Module& to) {
  torch::NoGradGuard no_grad;
  const auto source = from.named_parameters();
  auto target = to.named_parameters();
  TORCH_CHECK(source.size() == target.size(), "copy_parameters: ", source.size(),
              " parameters into ", target.size());
  for (auto& item : target) {
    const torch::Tensor* value = source.find(item.key());
    TORCH_CHECK(value != nullptr, "copy_parameters: no parameter ", item.key(), " to copy from");
    item.value().copy_(*value);
  }
}

Conv2d::Conv2d(int64_t in, int64_t out, int64_t kernel, const Placement& at, int64_t stride)
    : stride_(stride), padding_(kernel / 2) {
  const double bound = 1.0 / std::sqrt(double(in * kernel * kernel));
  weight = register_parameter("weight", uniform({out, in, kernel, kernel}, at, bound), false);
  bias = register_parameter("bias", uniform({out}, at, bound), false);
}

torch::Tensor Conv2d::forward(const torch::Tensor& x) const {
  return torch::conv2d(x, weight, bias, stride_, padding_);
}

Linear::Linear(int64_t in, int64_t out, const Placement& at, bool with_bias) {
  const double bound = 1.0 / std::sqrt(double(in));
  weight = register_parameter("weight", uniform({out, in}, at, bound), false);
  if (with_bias) bias = register_parameter("bias", uniform({out}, at, bound), false);
}

torch::Tensor Linear::forward(const torch::Tensor& x) const {
  return torch::linear(x, weight, bias);
}

GroupNorm::GroupNorm(int64_t groups, int64_t channels, double eps, const Placement& at)
    : groups_(groups), eps_(eps) {
  weight = register_parameter("weight", filled({channels}, at, 1.0), false);
  bias = register_parameter("bias", filled({channels}, at, 0.0), false);
}

torch::Tensor GroupNorm::forward(const torch::Tensor& x) const {
  return torch::group_norm(x, groups_, weight, bias, eps_);
}

LayerNorm::LayerNorm(int64_t dim, double eps, const Placement& at) : eps_(eps) {
  weight = register_parameter("weight", filled({dim}, at, 1.0), false);
  bias = register_parameter("bias", filled({dim}, at, 0.0), false);
}

torch::Tensor LayerNorm::forward(const torch::Tensor& x) const {
  return torch::layer_norm(x, {weight.size(0)}, weight, bias, eps_);
}

ResnetBlock2D::ResnetBlock2D(int64_t in, int64_t out, int64_t temb_channels, int64_t groups,
                             double eps, const Placement& at) {
  // Registered in diffusers' order, so that named_parameters() lists them as its state dict does.
  norm1_ = add_child<GroupNorm>(*this, "norm1", groups, in, eps, at);
  conv1_ = add_child<Conv2d>(*this, "conv1", in, out, 3, at);
  if (temb_channels > 0)
    time_emb_proj_ = add_child<Linear>(*this, "time_emb_proj", temb_channels, out, at);
  norm2_ = add_child<GroupNorm>(*this, "norm2", groups, out, eps, at);
  conv2_ = add_child<Conv2d>(*this, "conv2", out, out, 3, at);
  if (in != out) conv_shortcut_ = add_child<Conv2d>(*this, "conv_shortcut", in, out, 1, at);
}

torch::Tensor ResnetBlock2D::forward(const torch::Tensor& x, const torch::Tensor& temb) const {
  auto h = conv1_->forward(torch::silu(norm1_->forward(x)));
  if (time_emb_proj_)
    h = h + time_emb_proj_->forward(torch::silu(temb)).unsqueeze(-1).unsqueeze(-1);
  h = conv2_->forward(torch::silu(norm2_->forward(h)));
  return (conv_shortcut_ ? conv_shortcut_->forward(x) : x) + h;
}

Attention::Attention(const AttentionShape& s, const Placement& at) : heads_(s.heads) {
  const int64_t inner = s.heads * s.head_dim;
  const int64_t context = s.context_dim > 0 ? s.context_dim : s.query_dim;
  to_q_ = add_child<Linear>(*this, "to_q", s.query_dim, inner, at, s.qkv_bias);
  to_k_ = add_child<Linear>(*this, "to_k", context, inner, at, s.qkv_bias);
  to_v_ = add_child<Linear>(*this, "to_v", context, inner, at, s.qkv_bias);
  // to_out is diffusers' ModuleList [Linear, Dropout]: the linear layer is "to_out.0".
  to_out_ = add_child<Linear>(*add_list(*this, "to_out"), "0", inner, s.query_dim, at);
}

torch::Tensor Attention::forward(const torch::Tensor& x, const torch::Tensor& context) const {
  const auto& source = context.defined() ? context : x;
  const int64_t batch = x.size(0);
  // [batch, tokens, heads x d] -> [batch, heads, tokens, d]
  auto split = [&](const torch::Tensor& t) {
    return t.view({batch, t.size(1), heads_, -1}).transpose(1, 2);
  };
  auto out = torch_compat::scaled_dot_product_attention(
      split(to_q_->forward(x)), split(to_k_->forward(source)), split(to_v_->forward(source)), 0.0);
  return to_out_->forward(out.transpose(1, 2).reshape({batch, x.size(1), -1}));
}

SpatialSelfAttention::SpatialSelfAttention(int64_t channels, int64_t groups, double eps,
                                           const Placement& at) {
  group_norm_ = add_child<GroupNorm>(*this, "group_norm", groups, channels, eps, at);
  // The projections stand beside group_norm in diffusers' names ("attentions.0.to_q.weight"):
  // the attention's parameters are registered as this module's own.
  attention_ = std::make_shared<Attention>(AttentionShape{channels, 0, 1, channels, true}, at);
  for (const auto& child : attention_->named_children())
    register_module(child.key(), child.value());
}

torch::Tensor SpatialSelfAttention::forward(const torch::Tensor& x) const {
  const int64_t b = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  auto tokens = group_norm_->forward(x).view({b, c, h * w}).transpose(1, 2);
  auto out = attention_->forward(tokens, {});
  return out.transpose(1, 2).reshape({b, c, h, w}) + x;
}

// BasicTransformerBlock (activation "geglu", norm_type "layer_norm", eps 1e-5, no attention
// bias, out bias): self-attention, cross-attention, feed-forward, each on a LayerNorm of the
// input and added to it.
struct Transformer2DModel::Block : torch::nn::Module {
  Block(int64_t channels, int64_t heads, int64_t context_dim, const Placement& at) {
    const int64_t d = channels / heads;
    norm1 = add_child<LayerNorm>(*this, "norm1", channels, 1e-5, at);
    attn1 = add_child<Attention>(*this, "attn1", AttentionShape{channels, 0, heads, d, false}, at);
    norm2 = add_child<LayerNorm>(*this, "norm2", channels, 1e-5, at);
    attn2 = add_child<Attention>(*this, "attn2",
                                 AttentionShape{channels, context_dim, heads, d, false}, at);
    norm3 = add_child<LayerNorm>(*this, "norm3", channels, 1e-5, at);
    // FeedForward: net.0 is GEGLU (its proj gives the value and the gate, 4x wide each), net.1
    // dropout, net.2 the projection back.
    auto net = add_list(*add_list(*this, "ff"), "net");
    geglu = add_child<Linear>(*add_list(*net, "0"), "proj", channels, 8 * channels, at);
    ff_out = add_child<Linear>(*net, "2", 4 * channels, channels, at);
  }
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& context) const {
    x = attn1->forward(norm1->forward(x), {}) + x;
    x = attn2->forward(norm2->forward(x), context) + x;
    auto value_gate = geglu->forward(norm3->forward(x)).chunk(2, -1);
    return ff_out->forward(value_gate[0] * torch::gelu(value_gate[1])) + x;
  }
  std::shared_ptr<LayerNorm> norm1, norm2, norm3;
  std::shared_ptr<Attention> attn1, attn2;
  std::shared_ptr<Linear> geglu, ff_out;
};

Transformer2DModel::Transformer2DModel(int64_t channels, int64_t heads, int64_t context_dim,
                                       int64_t groups, const Placement& at) {
  norm_ = add_child<GroupNorm>(*this, "norm", groups, channels, 1e-6, at);
  proj_in_ = add_child<Conv2d>(*this, "proj_in", channels, channels, 1, at);
  block_ = add_child<Block>(*add_list(*this, "transformer_blocks"), "0", channels, heads,
                            context_dim, at);
  proj_out_ = add_child<Conv2d>(*this, "proj_out", channels, channels, 1, at);
}

torch::Tensor Transformer2DModel::forward(const torch::Tensor& x,
                                          const torch::Tensor& context) const {
  const int64_t b = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  auto tokens = proj_in_->forward(norm_->forward(x)).permute({0, 2, 3, 1}).reshape({b, h * w, c});
  tokens = block_->forward(tokens, context);
  auto image = tokens.reshape({b, h, w, c}).permute({0, 3, 1, 2}).contiguous();
  return proj_out_->forward(image) + x;
}

Downsample2D::Downsample2D(int64_t channels, const Placement& at) {
  conv_ = add_child<Conv2d>(*this, "conv", channels, channels, 3, at, /*stride=*/2);
}

torch::Tensor Downsample2D::forward(const torch::Tensor& x) const { return conv_->forward(x); }

Upsample2D::Upsample2D(int64_t channels, const Placement& at) {
  conv_ = add_child<Conv2d>(*this, "conv", channels, channels, 3, at);
}

torch::Tensor Upsample2D::forward(const torch::Tensor& x) const {
  namespace F = torch::nn::functional;
  const auto twice = F::InterpolateFuncOptions()
                         .size(std::vector<int64_t>{2 * x.size(2), 2 * x.size(3)})
                         .mode(torch::kNearest);
  return conv_->forward(F::interpolate(x, twice));
}

double flops::resnet(int64_t in, int64_t out, int64_t temb, int64_t h, int64_t w) {
  double f = conv(double(in), double(out), 3, double(h), double(w)) +
             conv(double(out), double(out), 3, double(h), double(w));
  if (in != out) f += conv(double(in), double(out), 1, double(h), double(w));
  if (temb > 0) f += linear(double(temb), double(out), 1);
  return f;
}

}  // namespace cubench::sd15
