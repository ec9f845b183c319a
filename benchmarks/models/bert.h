#pragma once
// BERT for masked language modelling as Hugging Face's BertForMaskedLM (transformers 5.x) builds
// it: word, learned position and token-type embeddings summed, LayerNorm (eps 1e-12), dropout;
// post-norm encoder layers (separate query/key/value projections, attention through
// scaled_dot_product_attention with dropout on its probabilities in training, output projection,
// dropout, residual, LayerNorm; FFN with exact erf GELU, dropout, residual, LayerNorm); the MLM
// head (dense + GELU + LayerNorm, then a decoder tied to the word embeddings plus its own bias).
// No pooler (BertForMaskedLM has none). Initialised as HF's _init_weights: normal(0, 0.02)
// weights and embeddings, zero biases, LayerNorm 1 and 0. No attention mask: every sequence is
// full length (the benchmark's batches have no padding).
#include <torch/torch.h>

#include <cstdint>

namespace cubench {

struct BertConfig {
  int64_t vocab = 30522, hidden = 768, layers = 12, heads = 12, intermediate = 3072;
  int64_t max_positions = 512, token_types = 2;
  double dropout = 0.1, layer_norm_eps = 1e-12;
  // A model of a few thousand parameters for tests and the CPU variant.
  static BertConfig tiny() {
    BertConfig c;
    c.vocab = 97, c.hidden = 32, c.layers = 2, c.heads = 4, c.intermediate = 64;
    c.max_positions = 64;
    return c;
  }
  // Parameters that multiply activations in matmuls (projections, FFN, MLM dense, decoder).
  int64_t matmul_parameters() const {
    return layers * (4 * hidden * hidden + 2 * hidden * intermediate) + hidden * hidden +
           hidden * vocab;
  }
};

struct BertLayerImpl : torch::nn::Module {
  explicit BertLayerImpl(const BertConfig& c);
  torch::Tensor forward(const torch::Tensor& x);
  BertConfig c;
  torch::nn::Linear query{nullptr}, key{nullptr}, value{nullptr}, attention_out{nullptr};
  torch::nn::LayerNorm attention_norm{nullptr};
  torch::nn::Linear intermediate{nullptr}, output{nullptr};
  torch::nn::LayerNorm output_norm{nullptr};
};
TORCH_MODULE(BertLayer);

struct BertForMaskedLMImpl : torch::nn::Module {
  explicit BertForMaskedLMImpl(const BertConfig& c = BertConfig());
  // input_ids and token_type_ids (batch, seq), int64; returns logits (batch, seq, vocab).
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids);
  BertConfig c;
  torch::nn::Embedding word{nullptr}, position{nullptr}, token_type{nullptr};
  torch::nn::LayerNorm embedding_norm{nullptr};
  torch::nn::ModuleList layers;
  torch::nn::Linear head_dense{nullptr};
  torch::nn::LayerNorm head_norm{nullptr};
  torch::Tensor decoder_bias;  // the decoder's weight is word->weight
};
TORCH_MODULE(BertForMaskedLM);

// HF's MLM loss: cross-entropy over the labelled positions (label -100 elsewhere is ignored).
torch::Tensor masked_lm_loss(const torch::Tensor& logits, const torch::Tensor& labels);

// 6 x matmul parameters x tokens plus attention's two matmuls (4 x seq x hidden per token and
// layer in the forward), times 3 for forward and backward: the conventional training count.
double bert_train_step_flops(const BertConfig& c, int64_t batch, int64_t seq);

}  // namespace cubench
