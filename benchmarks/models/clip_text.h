#pragma once
// CLIP ViT-L/14's text encoder, Stable Diffusion v1.5's: transformers' CLIPTextModel — 12
// pre-LayerNorm layers of width 768, 12 heads, MLP 3072 with quick_gelu, 77 learned positions, a
// vocabulary of 49,408, a causal mask, final_layer_norm: 123,060,480 parameters, transformers'
// count. Its output is the last hidden state [batch, 77, 768], the UNet's cross-attention context.
// Parameter names are CLIPTextModel's ("text_model.embeddings.token_embedding.weight",
// "text_model.encoder.layers.0.self_attn.q_proj.weight", "text_model.final_layer_norm.weight"...).
// No tokenizer: the benchmark feeds random token ids.
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "benchmarks/models/sd15_layers.h"

namespace cubench::sd15 {

struct ClipTextConfig {
  int64_t vocab, width, layers, heads, mlp, tokens;
  double eps = 1e-5;

  static ClipTextConfig vit_l14() { return {49408, 768, 12, 12, 3072, 77}; }
  // 2 layers 32 wide, 2 heads, a vocabulary of 1000, the 77 positions (the CPU rows').
  static ClipTextConfig tiny() { return {1000, 32, 2, 2, 64, 77}; }
  // Counted from the configuration alone: 123,060,480 for ViT-L/14's text encoder.
  int64_t parameter_count() const {
    const int64_t layer =
        4 * (width * width + width) + 2 * (2 * width) + (width * mlp + mlp) + (mlp * width + width);
    return vocab * width + tokens * width + layers * layer + 2 * width;
  }
  // FLOPs of encoding `batch` sequences of `tokens` tokens: per layer q, k, v, out, the MLP's two
  // layers and attention's two products (the full square: the causal mask does not skip work in
  // the math kernels), as sd15_layers.h's flops:: count.
  double encode_flops(int64_t batch) const;
};

// transformers' count of CLIPTextModel at ViT-L/14's text configuration
// (openai/clip-vit-large-patch14).
constexpr int64_t kClipVitL14TextParameters = 123060480;

class ClipTextModel : public torch::nn::Module {
 public:
  ClipTextModel(const ClipTextConfig& config, const Placement& at);
  // The last hidden state [batch, tokens, width] of token ids [batch, tokens] (int64).
  torch::Tensor forward(const torch::Tensor& ids) const;
  const ClipTextConfig& config() const { return config_; }

  // Checks' own tests only: attention without its causal mask (a port that forgot it).
  void drop_causal_mask(bool drop) { causal_ = !drop; }

 private:
  struct Layer;
  ClipTextConfig config_;
  bool causal_ = true;
  torch::Tensor token_embedding_, position_embedding_;
  std::vector<std::shared_ptr<Layer>> layers_;
  std::shared_ptr<LayerNorm> final_layer_norm_;
};

}  // namespace cubench::sd15
