#include "benchmarks/models/llama.h"

#include <cmath>

#include "fixtures/cubench_torch.h"

namespace cubench {
namespace {

torch::Tensor weight(std::initializer_list<int64_t> shape, const torch::TensorOptions& options) {
  return torch::empty(shape, options).normal_(0.0, 0.02);
}

}  // namespace

LlamaModel::LlamaModel(const LlamaConfig& c, torch::TensorOptions options) : config_(c) {
  torch::NoGradGuard no_grad;
  embedding_ = weight({c.vocab, c.hidden}, options);
  for (int64_t i = 0; i < c.layers; ++i) {
    Layer l;
    l.attention_norm = torch::ones({c.hidden}, options);
    l.wq = weight({c.hidden, c.hidden}, options);
    l.wk = weight({c.hidden, c.hidden}, options);
    l.wv = weight({c.hidden, c.hidden}, options);
    l.wo = weight({c.hidden, c.hidden}, options);
    l.mlp_norm = torch::ones({c.hidden}, options);
    l.gate = weight({c.ffn, c.hidden}, options);
    l.up = weight({c.ffn, c.hidden}, options);
    l.down = weight({c.hidden, c.ffn}, options);
    layers_.push_back(l);
  }
  final_norm_ = torch::ones({c.hidden}, options);
  lm_head_ = weight({c.vocab, c.hidden}, options);
  // transformers' rotary table: inverse frequencies theta^(-2i/d), angles position x frequency,
  // each frequency used twice (cat(freqs, freqs)), cos and sin in fp32, cast to the activations'
  // type where they are applied.
  const auto f32 = options.dtype(torch::kFloat);
  const int64_t d = c.head_dim();
  auto inv_freq = torch::pow(c.rope_theta, torch::arange(0, d, 2, f32) / double(d)).reciprocal();
  auto angles = torch::outer(torch::arange(c.max_positions, f32), inv_freq);
  auto emb = torch::cat({angles, angles}, -1);
  rope_cos_ = emb.cos();
  rope_sin_ = emb.sin();
}

void LlamaModel::allocate_cache(int64_t batch, int64_t max_len) {
  const auto options = embedding_.options();
  keys_.clear(), values_.clear();
  for (int64_t i = 0; i < config_.layers; ++i) {
    keys_.push_back(torch::zeros({batch, config_.heads, max_len, config_.head_dim()}, options));
    values_.push_back(torch::zeros({batch, config_.heads, max_len, config_.head_dim()}, options));
  }
}

torch::Tensor LlamaModel::rms_norm(const torch::Tensor& x, const torch::Tensor& w) const {
  auto x32 = x.to(torch::kFloat);
  x32 = x32 * torch::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true) + config_.rms_eps);
  return w * x32.to(x.scalar_type());
}

torch::Tensor LlamaModel::rotate(const torch::Tensor& x, const torch::Tensor& cos,
                                 const torch::Tensor& sin) const {
  const int64_t half = x.size(-1) / 2;
  auto rotated = torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  return x * cos + rotated * sin;
}

torch::Tensor LlamaModel::forward(const torch::Tensor& tokens, const torch::Tensor& positions,
                                  bool use_cache, bool last_only) {
  torch::NoGradGuard no_grad;
  const int64_t batch = tokens.size(0), n = tokens.size(1), h = config_.heads,
                d = config_.head_dim();
  const auto dtype = embedding_.scalar_type();
  // [1, 1, n, d]: broadcast over batch and heads.
  const auto cos = rope_cos_.index_select(0, positions).to(dtype).view({1, 1, n, d});
  const auto sin = rope_sin_.index_select(0, positions).to(dtype).view({1, 1, n, d});
  // Which keys each query sees: key position <= query position. With the cache the keys are its
  // whole length (positions 0..max_len-1; the slots not yet written are masked); without it, this
  // call's tokens.
  const int64_t key_count = use_cache ? keys_.at(0).size(2) : n;
  const auto key_positions = use_cache ? torch::arange(key_count, positions.options()) : positions;
  const auto visible =
      key_positions.unsqueeze(0).le(positions.unsqueeze(1)).view({1, 1, n, key_count});
  // (the planted fault's late write wraps around the cache: never out of its bounds)
  const auto write_at =
      cache_write_offset_ ? (positions + cache_write_offset_).remainder(key_count) : positions;

  auto x = torch::embedding(embedding_, tokens);
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const Layer& l = layers_[i];
    auto normed = rms_norm(x, l.attention_norm);
    auto q = torch::linear(normed, l.wq).view({batch, n, h, d}).transpose(1, 2);
    auto k = torch::linear(normed, l.wk).view({batch, n, h, d}).transpose(1, 2);
    auto v = torch::linear(normed, l.wv).view({batch, n, h, d}).transpose(1, 2);
    q = rotate(q, cos, sin);
    k = rotate(k, cos, sin);
    if (use_cache) {
      keys_[i].index_copy_(2, write_at, k);
      values_[i].index_copy_(2, write_at, v);
      k = keys_[i];
      v = values_[i];
    }
    auto attended = torch_compat::scaled_dot_product_attention_masked(q, k, v, visible);
    if (int64_t(i) == fault_layer_) attended.select(1, fault_head_).mul_(fault_factor_);
    x = x + torch::linear(attended.transpose(1, 2).reshape({batch, n, config_.hidden}), l.wo);
    normed = rms_norm(x, l.mlp_norm);
    x = x + torch::linear(torch::silu(torch::linear(normed, l.gate)) * torch::linear(normed, l.up),
                          l.down);
  }
  if (last_only) x = x.narrow(1, n - 1, 1);
  return torch::linear(rms_norm(x, final_norm_), lm_head_);
}

LlamaModel LlamaModel::converted(torch::TensorOptions options) const {
  torch::NoGradGuard no_grad;
  LlamaModel out = *this;  // tensors shared until replaced below
  out.drop_cache();
  out.cache_write_offset_ = 0;
  out.fault_layer_ = -1;
  auto convert = [&](torch::Tensor& t) { t = t.to(options); };
  convert(out.embedding_), convert(out.final_norm_), convert(out.lm_head_);
  // the rotary tables stay as they are (fp32; forward casts them to the activations' dtype)
  out.rope_cos_ = out.rope_cos_.to(options.device()),
  out.rope_sin_ = out.rope_sin_.to(options.device());
  for (Layer& l : out.layers_)
    for (auto* t :
         {&l.attention_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.mlp_norm, &l.gate, &l.up, &l.down})
      convert(*t);
  return out;
}

std::map<std::string, torch::Tensor> LlamaModel::named_tensors() const {
  std::map<std::string, torch::Tensor> out = {{"model.embed_tokens.weight", embedding_},
                                              {"model.norm.weight", final_norm_},
                                              {"lm_head.weight", lm_head_},
                                              {"model.rotary_emb.cos", rope_cos_},
                                              {"model.rotary_emb.sin", rope_sin_}};
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const Layer& l = layers_[i];
    const std::string at = "model.layers." + std::to_string(i) + ".";
    out[at + "input_layernorm.weight"] = l.attention_norm;
    out[at + "self_attn.q_proj.weight"] = l.wq;
    out[at + "self_attn.k_proj.weight"] = l.wk;
    out[at + "self_attn.v_proj.weight"] = l.wv;
    out[at + "self_attn.o_proj.weight"] = l.wo;
    out[at + "post_attention_layernorm.weight"] = l.mlp_norm;
    out[at + "mlp.gate_proj.weight"] = l.gate;
    out[at + "mlp.up_proj.weight"] = l.up;
    out[at + "mlp.down_proj.weight"] = l.down;
    if (i < keys_.size()) {
      out[at + "self_attn.k_cache"] = keys_[i];
      out[at + "self_attn.v_cache"] = values_[i];
    }
  }
  return out;
}

int64_t LlamaModel::parameter_count() const {
  int64_t count = embedding_.numel() + final_norm_.numel() + lm_head_.numel();
  for (const Layer& l : layers_)
    for (const auto* t :
         {&l.attention_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.mlp_norm, &l.gate, &l.up, &l.down})
      count += t->numel();
  return count;
}

double LlamaModel::weight_bytes() const {
  return double(parameter_count()) * double(embedding_.element_size());
}

double LlamaModel::cache_bytes() const {
  double bytes = 0;
  for (std::size_t i = 0; i < keys_.size(); ++i)
    bytes += double(keys_[i].nbytes()) + double(values_[i].nbytes());
  return bytes;
}

}  // namespace cubench
