#include "benchmarks/models/sd15_vae.h"

#include <string>

namespace cubench::sd15 {
namespace {

constexpr double kEps = 1e-6;  // every GroupNorm of the VAE

// The decoder's up blocks from the deepest: block i outputs reversed[i]; its first resnet takes
// the previous block's width (the mid block's for the first).
std::vector<int64_t> reversed_widths(const VaeConfig& c) {
  return {c.block_out_channels.rbegin(), c.block_out_channels.rend()};
}

}  // namespace

// UpDecoderBlock2D: layers_per_block + 1 resnets (no time embedding), then an upsampler unless it
// is the last block.
struct VaeDecoder::UpBlock : torch::nn::Module {
  UpBlock(const VaeConfig& c, int64_t in, int64_t out, bool last, const Placement& at) {
    auto resnets_list = add_list(*this, "resnets");
    for (int64_t j = 0; j <= c.layers_per_block; ++j)
      resnets.push_back(add_child<ResnetBlock2D>(
          *resnets_list, std::to_string(j), j == 0 ? in : out, out, 0, c.norm_groups, kEps, at));
    if (!last) upsampler = add_child<Upsample2D>(*add_list(*this, "upsamplers"), "0", out, at);
  }
  torch::Tensor forward(torch::Tensor x) const {
    for (const auto& r : resnets) x = r->forward(x, {});
    return upsampler ? upsampler->forward(x) : x;
  }
  std::vector<std::shared_ptr<ResnetBlock2D>> resnets;
  std::shared_ptr<Upsample2D> upsampler;
};

VaeDecoder::VaeDecoder(const VaeConfig& c, const Placement& at) : config_(c) {
  const auto widths = reversed_widths(c);
  // diffusers registers the encoder first (not built here), then the decoder, then
  // quant_conv and post_quant_conv.
  auto decoder = add_list(*this, "decoder");
  conv_in_ = add_child<Conv2d>(*decoder, "conv_in", c.latent_channels, widths[0], 3, at);
  auto up_list = add_list(*decoder, "up_blocks");
  auto mid = add_list(*decoder, "mid_block");
  auto mid_attentions = add_list(*mid, "attentions");
  mid_attention_ =
      add_child<SpatialSelfAttention>(*mid_attentions, "0", widths[0], c.norm_groups, kEps, at);
  auto mid_resnets = add_list(*mid, "resnets");
  mid_first_ =
      add_child<ResnetBlock2D>(*mid_resnets, "0", widths[0], widths[0], 0, c.norm_groups, kEps, at);
  mid_second_ =
      add_child<ResnetBlock2D>(*mid_resnets, "1", widths[0], widths[0], 0, c.norm_groups, kEps, at);
  int64_t previous = widths[0];
  for (std::size_t i = 0; i < widths.size(); ++i) {
    up_.push_back(add_child<UpBlock>(*up_list, std::to_string(i), c, previous, widths[i],
                                     i + 1 == widths.size(), at));
    previous = widths[i];
  }
  conv_norm_out_ =
      add_child<GroupNorm>(*decoder, "conv_norm_out", c.norm_groups, widths.back(), kEps, at);
  conv_out_ = add_child<Conv2d>(*decoder, "conv_out", widths.back(), c.out_channels, 3, at);
  post_quant_conv_ =
      add_child<Conv2d>(*this, "post_quant_conv", c.latent_channels, c.latent_channels, 1, at);
}

torch::Tensor VaeDecoder::forward(const torch::Tensor& latents) const {
  torch::NoGradGuard no_grad;
  auto x = conv_in_->forward(post_quant_conv_->forward(latents));
  x = mid_second_->forward(mid_attention_->forward(mid_first_->forward(x, {})), {});
  for (const auto& block : up_) x = block->forward(x);
  return conv_out_->forward(torch::silu(conv_norm_out_->forward(x)));
}

int64_t VaeConfig::parameter_count() const {
  auto conv = [](int64_t in, int64_t out, int64_t k) { return out * in * k * k + out; };
  auto norm = [](int64_t c) { return 2 * c; };
  auto resnet = [&](int64_t in, int64_t out) {
    return norm(in) + conv(in, out, 3) + norm(out) + conv(out, out, 3) +
           (in != out ? conv(in, out, 1) : 0);
  };
  const auto widths = reversed_widths(*this);
  const int64_t top = widths[0];
  int64_t count = conv(latent_channels, latent_channels, 1) + conv(latent_channels, top, 3);
  count += 2 * resnet(top, top) + norm(top) + 4 * (top * top + top);  // mid: attention's q k v out
  int64_t previous = top;
  for (std::size_t i = 0; i < widths.size(); ++i) {
    for (int64_t j = 0; j <= layers_per_block; ++j)
      count += resnet(j == 0 ? previous : widths[i], widths[i]);
    if (i + 1 < widths.size()) count += conv(widths[i], widths[i], 3);
    previous = widths[i];
  }
  return count + norm(widths.back()) + conv(widths.back(), out_channels, 3);
}

double VaeConfig::decode_flops(int64_t batch, int64_t h, int64_t w) const {
  const auto widths = reversed_widths(*this);
  const double top = double(widths[0]), tokens = double(h * w);
  double f =
      flops::conv(double(latent_channels), double(latent_channels), 1, double(h), double(w)) +
      flops::conv(double(latent_channels), top, 3, double(h), double(w));
  f += 2 * flops::resnet(widths[0], widths[0], 0, h, w) + 4 * flops::linear(top, top, tokens) +
       flops::attention(tokens, tokens, top);
  int64_t previous = widths[0], hh = h, ww = w;
  for (std::size_t i = 0; i < widths.size(); ++i) {
    for (int64_t j = 0; j <= layers_per_block; ++j)
      f += flops::resnet(j == 0 ? previous : widths[i], widths[i], 0, hh, ww);
    if (i + 1 < widths.size()) {
      hh *= 2, ww *= 2;
      f += flops::conv(double(widths[i]), double(widths[i]), 3, double(hh), double(ww));
    }
    previous = widths[i];
  }
  f += flops::conv(double(widths.back()), double(out_channels), 3, double(hh), double(ww));
  return f * double(batch);
}

}  // namespace cubench::sd15
