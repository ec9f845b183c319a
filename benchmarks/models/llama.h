#pragma once
// The LLaMA architecture (LLaMA-7B: 32 layers, hidden 4096, 32 heads, FFN 11008, vocab 32000) as
// transformers' LlamaForCausalLM computes it: RMSNorm (in fp32, then cast back), rotary position
// embeddings (rotate_half convention, theta 10000), SwiGLU MLP, no biases, an untied lm_head. The
// weights are plain tensors made where they live, in their dtype (randn x 0.02, transformers'
// initializer_range; norms ones): torch::nn::Linear would build fp32 weights on the CPU first,
// 27 GB and minutes of initialisation at 7B.
// The KV cache has a static size, as transformers' StaticCache: [batch, heads, max_len, head_dim]
// per layer, written at the step's positions (a device tensor) and attended over its whole length
// with a mask beyond them, so a decode step has fixed shapes and a CUDA graph can hold it.
#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cubench {

struct LlamaConfig {
  int64_t layers, hidden, heads, ffn, vocab;
  double rms_eps = 1e-6, rope_theta = 10000.0;
  int64_t max_positions = 4096;  // the rotary table's length

  static LlamaConfig llama_7b() { return {32, 4096, 32, 11008, 32000}; }
  int64_t head_dim() const { return hidden / heads; }
  // Embedding, per layer four attention projections, three MLP ones and two norms, final norm,
  // lm_head: 6,738,415,616 for LLaMA-7B, as transformers counts LlamaForCausalLM's.
  int64_t parameter_count() const {
    return 2 * vocab * hidden + layers * (4 * hidden * hidden + 3 * hidden * ffn + 2 * hidden) +
           hidden;
  }
};

// transformers 5.17's count of LlamaForCausalLM at LLaMA-7B's config.
constexpr int64_t kLlama7bParameters = 6738415616;

class LlamaModel {
 public:
  LlamaModel(const LlamaConfig& config, torch::TensorOptions options);

  // A static cache for `batch` sequences of up to `max_len` tokens (zeros).
  void allocate_cache(int64_t batch, int64_t max_len);
  void drop_cache() { keys_.clear(), values_.clear(); }

  // Logits for `tokens` [batch, n] at `positions` [n] (int64, on the model's device). With the
  // cache: this step's keys and values are written into it at `positions` and attention covers
  // every cached position up to each query's; without: attention covers this call's tokens alone
  // (causal). last_only: the logits of the last position alone (transformers' logits_to_keep=1).
  torch::Tensor forward(const torch::Tensor& tokens, const torch::Tensor& positions, bool use_cache,
                        bool last_only);

  // Every weight under transformers' LlamaForCausalLM name (model.embed_tokens.weight,
  // model.layers.N.self_attn.q_proj.weight, model.layers.N.input_layernorm.weight, ...,
  // lm_head.weight), the rotary tables as model.rotary_emb.cos and .sin, and the cache, where one
  // is allocated, as model.layers.N.self_attn.k_cache and v_cache: the tensors themselves, not
  // copies (a compiled step handed them writes this cache). tools/cubench_tools/
  // compiled_modules.py's decode step has the same names.
  std::map<std::string, torch::Tensor> named_tensors() const;

  int64_t parameter_count() const;
  double weight_bytes() const;
  double cache_bytes() const;
  const LlamaConfig& config() const { return config_; }
  // A copy of the model with the same weights in another dtype or on another device, without a
  // cache or planted faults: a check's reference (fp32 weights of a bf16 model).
  LlamaModel converted(torch::TensorOptions options) const;

  // Checks' own tests only: the cache write lands `offset` positions after where it belongs.
  void misplace_cache_writes(int64_t offset) { cache_write_offset_ = offset; }
  // Checks' own tests only: one attention head's output (before the output projection) of one
  // layer multiplied by `factor` (1: none).
  void scale_head_output(int64_t layer, int64_t head, double factor) {
    fault_layer_ = factor == 1 ? -1 : layer, fault_head_ = head, fault_factor_ = factor;
  }

 private:
  struct Layer {
    torch::Tensor attention_norm, wq, wk, wv, wo, mlp_norm, gate, up, down;
  };
  torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight) const;
  torch::Tensor rotate(const torch::Tensor& x, const torch::Tensor& cos,
                       const torch::Tensor& sin) const;

  LlamaConfig config_;
  torch::Tensor embedding_, final_norm_, lm_head_, rope_cos_, rope_sin_;
  std::vector<Layer> layers_;
  std::vector<torch::Tensor> keys_, values_;
  int64_t cache_write_offset_ = 0;
  int64_t fault_layer_ = -1, fault_head_ = 0;
  double fault_factor_ = 1;
};

}  // namespace cubench
