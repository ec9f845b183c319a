#include "benchmarks/models/clip_text.h"

#include <string>

#include "fixtures/cubench_torch.h"

namespace cubench::sd15 {
namespace {

// An embedding table (transformers initialises CLIP's two with N(0, 0.02)).
torch::Tensor embedding_table(torch::nn::Module& parent, const std::string& name, int64_t rows,
                              int64_t width, const Placement& at) {
  auto t = torch::empty({rows, width}, at.options);
  if (at.init == Init::random) t.normal_(0.0, 0.02);
  return add_list(parent, name)->register_parameter("weight", t, false);
}

}  // namespace

// CLIPEncoderLayer: x + self_attn(layer_norm1(x)) (causal), then x + mlp(layer_norm2(x)) with
// quick_gelu (x sigmoid(1.702 x)).
struct ClipTextModel::Layer : torch::nn::Module {
  Layer(const ClipTextConfig& c, const Placement& at) : heads(c.heads) {
    auto attn = add_list(*this, "self_attn");
    k_proj = add_child<Linear>(*attn, "k_proj", c.width, c.width, at);
    v_proj = add_child<Linear>(*attn, "v_proj", c.width, c.width, at);
    q_proj = add_child<Linear>(*attn, "q_proj", c.width, c.width, at);
    out_proj = add_child<Linear>(*attn, "out_proj", c.width, c.width, at);
    layer_norm1 = add_child<LayerNorm>(*this, "layer_norm1", c.width, c.eps, at);
    auto mlp = add_list(*this, "mlp");
    fc1 = add_child<Linear>(*mlp, "fc1", c.width, c.mlp, at);
    fc2 = add_child<Linear>(*mlp, "fc2", c.mlp, c.width, at);
    layer_norm2 = add_child<LayerNorm>(*this, "layer_norm2", c.width, c.eps, at);
  }
  torch::Tensor forward(const torch::Tensor& x, bool causal) const {
    const int64_t b = x.size(0), n = x.size(1);
    auto normed = layer_norm1->forward(x);
    auto split = [&](const torch::Tensor& t) { return t.view({b, n, heads, -1}).transpose(1, 2); };
    auto attended = torch_compat::scaled_dot_product_attention(
        split(q_proj->forward(normed)), split(k_proj->forward(normed)),
        split(v_proj->forward(normed)), 0.0, causal);
    auto h = x + out_proj->forward(attended.transpose(1, 2).reshape({b, n, -1}));
    auto up = fc1->forward(layer_norm2->forward(h));
    return h + fc2->forward(up * torch::sigmoid(1.702 * up));
  }
  int64_t heads;
  std::shared_ptr<Linear> q_proj, k_proj, v_proj, out_proj, fc1, fc2;
  std::shared_ptr<LayerNorm> layer_norm1, layer_norm2;
};

ClipTextModel::ClipTextModel(const ClipTextConfig& c, const Placement& at) : config_(c) {
  auto text_model = add_list(*this, "text_model");
  auto embeddings = add_list(*text_model, "embeddings");
  token_embedding_ = embedding_table(*embeddings, "token_embedding", c.vocab, c.width, at);
  position_embedding_ = embedding_table(*embeddings, "position_embedding", c.tokens, c.width, at);
  auto layers = add_list(*add_list(*text_model, "encoder"), "layers");
  for (int64_t i = 0; i < c.layers; ++i)
    layers_.push_back(add_child<Layer>(*layers, std::to_string(i), c, at));
  final_layer_norm_ = add_child<LayerNorm>(*text_model, "final_layer_norm", c.width, c.eps, at);
}

torch::Tensor ClipTextModel::forward(const torch::Tensor& ids) const {
  torch::NoGradGuard no_grad;
  auto x = torch::embedding(token_embedding_, ids) +
           position_embedding_.narrow(0, 0, ids.size(1)).unsqueeze(0);
  for (const auto& layer : layers_) x = layer->forward(x, causal_);
  return final_layer_norm_->forward(x);
}

double ClipTextConfig::encode_flops(int64_t batch) const {
  const double n = double(tokens), w = double(width);
  const double layer = 4 * flops::linear(w, w, n) + flops::attention(n, n, w) +
                       flops::linear(w, double(mlp), n) + flops::linear(double(mlp), w, n);
  return double(layers) * layer * double(batch);
}

}  // namespace cubench::sd15
