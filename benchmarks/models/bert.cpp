#include "benchmarks/models/bert.h"

#include "benchmarks/models/aten_linear.h"

#include "fixtures/cubench_torch.h"

namespace cubench {
namespace {

using torch::Tensor;
namespace nn = torch::nn;

nn::LayerNorm layer_norm(const BertConfig& c) {
  return nn::LayerNorm(nn::LayerNormOptions({c.hidden}).eps(c.layer_norm_eps));
}

// HF's _init_weights for Linear and Embedding (LayerNorm starts at 1 and 0 already).
void init_linear(nn::Linear& l) {
  torch::NoGradGuard no_grad;
  l->weight.normal_(0.0, 0.02);
  if (l->bias.defined()) l->bias.zero_();
}

Tensor maybe_dropout(const Tensor& x, double p, bool training) {
  return training && p > 0 ? torch::dropout(x, p, true) : x;
}

}  // namespace

BertLayerImpl::BertLayerImpl(const BertConfig& config) : c(config) {
  query = register_module("query", nn::Linear(c.hidden, c.hidden));
  key = register_module("key", nn::Linear(c.hidden, c.hidden));
  value = register_module("value", nn::Linear(c.hidden, c.hidden));
  attention_out = register_module("attention_out", nn::Linear(c.hidden, c.hidden));
  attention_norm = register_module("attention_norm", layer_norm(c));
  intermediate = register_module("intermediate", nn::Linear(c.hidden, c.intermediate));
  output = register_module("output", nn::Linear(c.intermediate, c.hidden));
  output_norm = register_module("output_norm", layer_norm(c));
  for (auto* l : {&query, &key, &value, &attention_out, &intermediate, &output}) init_linear(*l);
}

// One step a statement, each result replacing the last, so temporaries die when Python's would.
Tensor BertLayerImpl::forward(const Tensor& x) {
  const int64_t batch = x.size(0), seq = x.size(1), head_dim = c.hidden / c.heads;
  // (B, L, H) -> (B, h, L, d), as HF's view + transpose.
  auto heads = [&](const Tensor& t) {
    return t.view({batch, seq, c.heads, head_dim}).transpose(1, 2);
  };
  Tensor q = heads(aten_linear(query, x)), k = heads(aten_linear(key, x)),
         v = heads(aten_linear(value, x));
  Tensor a = torch_compat::scaled_dot_product_attention(q, k, v, is_training() ? c.dropout : 0.0);
  q = k = v = Tensor();
  a = a.transpose(1, 2).reshape({batch, seq, c.hidden});
  a = aten_linear(attention_out, a);
  a = maybe_dropout(a, c.dropout, is_training());
  a = a + x;
  Tensor h = attention_norm(a);
  a = Tensor();
  Tensor f = aten_linear(intermediate, h);
  f = torch::gelu(f);  // exact (erf) GELU: the default approximation "none"
  f = aten_linear(output, f);
  f = maybe_dropout(f, c.dropout, is_training());
  f = f + h;
  h = Tensor();
  return output_norm(f);
}

BertForMaskedLMImpl::BertForMaskedLMImpl(const BertConfig& config) : c(config) {
  word = register_module("word", nn::Embedding(c.vocab, c.hidden));
  position = register_module("position", nn::Embedding(c.max_positions, c.hidden));
  token_type = register_module("token_type", nn::Embedding(c.token_types, c.hidden));
  embedding_norm = register_module("embedding_norm", layer_norm(c));
  layers = register_module("layers", nn::ModuleList());
  for (int64_t i = 0; i < c.layers; ++i) layers->push_back(BertLayer(c));
  head_dense = register_module("head_dense", nn::Linear(c.hidden, c.hidden));
  head_norm = register_module("head_norm", layer_norm(c));
  decoder_bias = register_parameter("decoder_bias", torch::zeros({c.vocab}));
  init_linear(head_dense);
  torch::NoGradGuard no_grad;
  for (auto* e : {&word, &position, &token_type}) (*e)->weight.normal_(0.0, 0.02);
}

Tensor BertForMaskedLMImpl::forward(const Tensor& input_ids, const Tensor& token_type_ids) {
  const int64_t seq = input_ids.size(1);
  Tensor positions = torch::arange(seq, input_ids.options()).unsqueeze(0);
  Tensor x = word(input_ids);
  x = x + token_type(token_type_ids);
  x = x + position(positions);
  x = embedding_norm(x);
  x = maybe_dropout(x, c.dropout, is_training());
  for (size_t i = 0; i < layers->size(); ++i) x = layers->at<BertLayerImpl>(i).forward(x);
  x = aten_linear(head_dense, x);
  x = torch::gelu(x);
  x = head_norm(x);
  return torch::linear(x, word->weight, decoder_bias);
}

Tensor masked_lm_loss(const Tensor& logits, const Tensor& labels) {
  return torch::nn::functional::cross_entropy(
      logits.view({-1, logits.size(-1)}), labels.view({-1}),
      torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-100));
}

double bert_train_step_flops(const BertConfig& c, int64_t batch, int64_t seq) {
  const double tokens = double(batch) * double(seq);
  const double forward_per_token =
      2.0 * double(c.matmul_parameters()) + 4.0 * double(c.layers) * double(seq) * double(c.hidden);
  return 3.0 * forward_per_token * tokens;
}

}  // namespace cubench
