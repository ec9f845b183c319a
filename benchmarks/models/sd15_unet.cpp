#include "benchmarks/models/sd15_unet.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace cubench::sd15 {
namespace {

constexpr double kResnetEps = 1e-5;  // the UNet's GroupNorms (norm_eps)

// The channels of each up block's resnets, as diffusers wires its skip connections: up block i
// outputs reversed[i]; its first resnet takes the previous block's output, the others its own;
// each also takes one skip (the down path's outputs, last first), the last of them the input
// width of the block (reversed[i + 1]).
struct UpResnet {
  int64_t in, skip, out;
};
std::vector<std::vector<UpResnet>> up_resnets(const UNetConfig& c) {
  const std::vector<int64_t> reversed(c.block_out_channels.rbegin(), c.block_out_channels.rend());
  const std::size_t n = reversed.size();
  std::vector<std::vector<UpResnet>> out(n);
  int64_t previous = reversed[0];
  for (std::size_t i = 0; i < n; ++i) {
    const int64_t width = reversed[i], input = reversed[std::min(i + 1, n - 1)];
    for (int64_t j = 0; j <= c.layers_per_block; ++j)
      out[i].push_back({j == 0 ? previous : width, j == c.layers_per_block ? input : width, width});
    previous = width;
  }
  return out;
}

}  // namespace

torch::Tensor timestep_embedding(const torch::Tensor& t, int64_t dim) {
  const int64_t half = dim / 2;
  const auto f32 = t.options().dtype(torch::kFloat);
  auto freqs = torch::exp(-std::log(10000.0) * torch::arange(half, f32) / double(half));
  auto angles = t.to(torch::kFloat).unsqueeze(1) * freqs.unsqueeze(0);
  return torch::cat({torch::cos(angles), torch::sin(angles)}, 1);  // flip_sin_to_cos
}

// CrossAttnDownBlock2D (resnets and attentions) or DownBlock2D (resnets), then a downsampler
// unless it is the last block. Returns the block's output; each resnet's (or attention's) output
// and the downsampler's are kept for the up path's skip connections.
struct UNet2DConditionModel::DownBlock : torch::nn::Module {
  DownBlock(const UNetConfig& c, int64_t in, int64_t out, bool cross, bool last,
            const Placement& at) {
    auto resnets_list = add_list(*this, "resnets");
    auto attentions_list = cross ? add_list(*this, "attentions") : nullptr;
    for (int64_t j = 0; j < c.layers_per_block; ++j) {
      const std::string n = std::to_string(j);
      resnets.push_back(add_child<ResnetBlock2D>(*resnets_list, n, j == 0 ? in : out, out,
                                                 c.time_embed_dim(), c.norm_groups, kResnetEps,
                                                 at));
      if (cross)
        attentions.push_back(add_child<Transformer2DModel>(*attentions_list, n, out, c.heads,
                                                           c.context_dim, c.norm_groups, at));
    }
    if (!last)
      downsampler = add_child<Downsample2D>(*add_list(*this, "downsamplers"), "0", out, at);
  }
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& temb, const torch::Tensor& context,
                        std::vector<torch::Tensor>& skips) const {
    for (std::size_t j = 0; j < resnets.size(); ++j) {
      x = resnets[j]->forward(x, temb);
      if (!attentions.empty()) x = attentions[j]->forward(x, context);
      skips.push_back(x);
    }
    if (downsampler) {
      x = downsampler->forward(x);
      skips.push_back(x);
    }
    return x;
  }
  std::vector<std::shared_ptr<ResnetBlock2D>> resnets;
  std::vector<std::shared_ptr<Transformer2DModel>> attentions;
  std::shared_ptr<Downsample2D> downsampler;
};

// UNetMidBlock2DCrossAttn: resnet, attention, resnet.
struct UNet2DConditionModel::MidBlock : torch::nn::Module {
  MidBlock(const UNetConfig& c, int64_t width, const Placement& at) {
    auto resnets_list = add_list(*this, "resnets");
    auto attentions_list = add_list(*this, "attentions");
    first = add_child<ResnetBlock2D>(*resnets_list, "0", width, width, c.time_embed_dim(),
                                     c.norm_groups, kResnetEps, at);
    attention = add_child<Transformer2DModel>(*attentions_list, "0", width, c.heads, c.context_dim,
                                              c.norm_groups, at);
    second = add_child<ResnetBlock2D>(*resnets_list, "1", width, width, c.time_embed_dim(),
                                      c.norm_groups, kResnetEps, at);
  }
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& temb,
                        const torch::Tensor& context) const {
    return second->forward(attention->forward(first->forward(x, temb), context), temb);
  }
  std::shared_ptr<ResnetBlock2D> first, second;
  std::shared_ptr<Transformer2DModel> attention;
};

// CrossAttnUpBlock2D or UpBlock2D: layers_per_block + 1 resnets, each on the previous output
// concatenated with a skip ([x, skip] on the channels, as diffusers), then an upsampler unless it
// is the last block.
struct UNet2DConditionModel::UpBlock : torch::nn::Module {
  UpBlock(const UNetConfig& c, const std::vector<UpResnet>& widths, bool cross, bool last,
          const Placement& at) {
    auto resnets_list = add_list(*this, "resnets");
    auto attentions_list = cross ? add_list(*this, "attentions") : nullptr;
    for (std::size_t j = 0; j < widths.size(); ++j) {
      const std::string n = std::to_string(j);
      const UpResnet& w = widths[j];
      resnets.push_back(add_child<ResnetBlock2D>(*resnets_list, n, w.in + w.skip, w.out,
                                                 c.time_embed_dim(), c.norm_groups, kResnetEps,
                                                 at));
      if (cross)
        attentions.push_back(add_child<Transformer2DModel>(*attentions_list, n, w.out, c.heads,
                                                           c.context_dim, c.norm_groups, at));
    }
    if (!last)
      upsampler = add_child<Upsample2D>(*add_list(*this, "upsamplers"), "0", widths.back().out, at);
  }
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& temb, const torch::Tensor& context,
                        std::vector<torch::Tensor>& skips) const {
    for (std::size_t j = 0; j < resnets.size(); ++j) {
      x = resnets[j]->forward(torch::cat({x, skips.back()}, 1), temb);
      skips.pop_back();
      if (!attentions.empty()) x = attentions[j]->forward(x, context);
    }
    return upsampler ? upsampler->forward(x) : x;
  }
  std::vector<std::shared_ptr<ResnetBlock2D>> resnets;
  std::vector<std::shared_ptr<Transformer2DModel>> attentions;
  std::shared_ptr<Upsample2D> upsampler;
};

UNet2DConditionModel::UNet2DConditionModel(const UNetConfig& c, const Placement& at) : config_(c) {
  const auto& widths = c.block_out_channels;
  const std::size_t n = widths.size();
  conv_in_ = add_child<Conv2d>(*this, "conv_in", c.latent_channels, widths[0], 3, at);
  // time_proj (the sinusoids) has no parameters; time_embedding is TimestepEmbedding.
  auto time_embedding = add_list(*this, "time_embedding");
  time_linear_1_ =
      add_child<Linear>(*time_embedding, "linear_1", widths[0], c.time_embed_dim(), at);
  time_linear_2_ =
      add_child<Linear>(*time_embedding, "linear_2", c.time_embed_dim(), c.time_embed_dim(), at);
  auto down_list = add_list(*this, "down_blocks");
  for (std::size_t i = 0; i < n; ++i)
    down_.push_back(add_child<DownBlock>(*down_list, std::to_string(i), c,
                                         i == 0 ? widths[0] : widths[i - 1], widths[i],
                                         c.cross_attention[i], i + 1 == n, at));
  auto up_list = add_list(*this, "up_blocks");
  const auto up_widths = up_resnets(c);
  for (std::size_t i = 0; i < n; ++i)
    up_.push_back(add_child<UpBlock>(*up_list, std::to_string(i), c, up_widths[i],
                                     c.cross_attention[n - 1 - i], i + 1 == n, at));
  mid_ = add_child<MidBlock>(*this, "mid_block", c, widths.back(), at);
  conv_norm_out_ =
      add_child<GroupNorm>(*this, "conv_norm_out", c.norm_groups, widths[0], kResnetEps, at);
  conv_out_ = add_child<Conv2d>(*this, "conv_out", widths[0], c.latent_channels, 3, at);
}

torch::Tensor UNet2DConditionModel::forward(const torch::Tensor& sample,
                                            const torch::Tensor& timestep,
                                            const torch::Tensor& context) const {
  torch::NoGradGuard no_grad;
  const auto t = timestep.expand({sample.size(0)});
  auto temb = timestep_embedding(t, config_.block_out_channels.front()).to(sample.scalar_type());
  temb = time_linear_2_->forward(torch::silu(time_linear_1_->forward(temb)));
  auto x = conv_in_->forward(sample);
  std::vector<torch::Tensor> skips = {x};
  for (const auto& block : down_) x = block->forward(x, temb, context, skips);
  x = mid_->forward(x, temb, context);
  for (const auto& block : up_) x = block->forward(x, temb, context, skips);
  return conv_out_->forward(torch::silu(conv_norm_out_->forward(x)));
}

int64_t UNetConfig::parameter_count() const {
  auto conv = [](int64_t in, int64_t out, int64_t k) { return out * in * k * k + out; };
  auto linear = [](int64_t in, int64_t out, bool bias) { return in * out + (bias ? out : 0); };
  auto norm = [](int64_t c) { return 2 * c; };
  const int64_t temb = time_embed_dim();
  auto resnet = [&](int64_t in, int64_t out) {
    return norm(in) + conv(in, out, 3) + linear(temb, out, true) + norm(out) + conv(out, out, 3) +
           (in != out ? conv(in, out, 1) : 0);
  };
  auto transformer = [&](int64_t c) {
    const int64_t self = 3 * linear(c, c, false) + linear(c, c, true);
    const int64_t cross =
        linear(c, c, false) + 2 * linear(context_dim, c, false) + linear(c, c, true);
    const int64_t ff = linear(c, 8 * c, true) + linear(4 * c, c, true);
    return norm(c) + 2 * conv(c, c, 1) + 3 * norm(c) + self + cross + ff;
  };
  const auto& w = block_out_channels;
  const std::size_t n = w.size();
  int64_t count =
      conv(latent_channels, w[0], 3) + linear(w[0], temb, true) + linear(temb, temb, true);
  for (std::size_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < layers_per_block; ++j)
      count += resnet(j == 0 ? (i == 0 ? w[0] : w[i - 1]) : w[i], w[i]) +
               (cross_attention[i] ? transformer(w[i]) : 0);
    if (i + 1 < n) count += conv(w[i], w[i], 3);
  }
  count += 2 * resnet(w.back(), w.back()) + transformer(w.back());
  const auto up = up_resnets(*this);
  for (std::size_t i = 0; i < n; ++i) {
    for (const UpResnet& r : up[i])
      count += resnet(r.in + r.skip, r.out) + (cross_attention[n - 1 - i] ? transformer(r.out) : 0);
    if (i + 1 < n) count += conv(up[i].back().out, up[i].back().out, 3);
  }
  return count + norm(w[0]) + conv(w[0], latent_channels, 3);
}

double UNetConfig::forward_flops(int64_t batch, int64_t h, int64_t w,
                                 int64_t context_tokens) const {
  const int64_t temb = time_embed_dim();
  // One Transformer2DModel on c channels at h x w: proj_in and proj_out (1x1), self-attention's
  // four projections and its two products over h w tokens, cross-attention's q and out
  // projections, k and v over the context and its products, GEGLU's proj (8c wide) and back (4c).
  auto transformer = [&](int64_t c, int64_t hh, int64_t ww) {
    const double tokens = double(hh * ww), cd = double(c);
    return 2 * flops::conv(cd, cd, 1, double(hh), double(ww)) + 4 * flops::linear(cd, cd, tokens) +
           flops::attention(tokens, tokens, cd) + 2 * flops::linear(cd, cd, tokens) +
           2 * flops::linear(double(context_dim), cd, double(context_tokens)) +
           flops::attention(tokens, double(context_tokens), cd) +
           flops::linear(cd, 8 * cd, tokens) + flops::linear(4 * cd, cd, tokens);
  };
  const auto& widths = block_out_channels;
  const std::size_t n = widths.size();
  double f = flops::conv(double(latent_channels), double(widths[0]), 3, double(h), double(w)) +
             flops::linear(double(widths[0]), double(temb), 1) +
             flops::linear(double(temb), double(temb), 1);
  int64_t hh = h, ww = w;
  for (std::size_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < layers_per_block; ++j)
      f += flops::resnet(j == 0 ? (i == 0 ? widths[0] : widths[i - 1]) : widths[i], widths[i], temb,
                         hh, ww) +
           (cross_attention[i] ? transformer(widths[i], hh, ww) : 0);
    if (i + 1 < n) {
      hh /= 2, ww /= 2;
      f += flops::conv(double(widths[i]), double(widths[i]), 3, double(hh), double(ww));
    }
  }
  f += 2 * flops::resnet(widths.back(), widths.back(), temb, hh, ww) +
       transformer(widths.back(), hh, ww);
  const auto up = up_resnets(*this);
  for (std::size_t i = 0; i < n; ++i) {
    for (const UpResnet& r : up[i])
      f += flops::resnet(r.in + r.skip, r.out, temb, hh, ww) +
           (cross_attention[n - 1 - i] ? transformer(r.out, hh, ww) : 0);
    if (i + 1 < n) {
      hh *= 2, ww *= 2;
      f += flops::conv(double(up[i].back().out), double(up[i].back().out), 3, double(hh),
                       double(ww));
    }
  }
  f += flops::conv(double(widths[0]), double(latent_channels), 3, double(hh), double(ww));
  return f * double(batch);
}

}  // namespace cubench::sd15
