#pragma once
// nn.Transformer's forward as Python's torch.nn layers compute it: the same torch::nn::Transformer
// module (its weights, layer norms, dropouts and feed-forward layers), but each attention is
// Python's F.multi_head_attention_forward with need_weights=False, which calls
// at::scaled_dot_product_attention instead of materialising the batch x heads x S x S score
// matrix as the C++ frontend's MultiheadAttention does. Written by hand because the C++ frontend
// has no SDPA attention module; it follows torch/nn/functional.py op for op (packed in-projection,
// the same contiguous copies, the same views), so the caching allocator sees the same tensors and
// peak memory can be compared with Python's. Its feed-forward Linear layers go through ATen's
// linear, as Python's do (benchmarks/models/aten_linear.h: the C++ module's forward would add the
// bias in a separate kernel).
// Post-norm layers with ReLU (PyTorch's defaults, what the benchmark builds); no masks.
#include <torch/torch.h>

namespace cubench {

// `src` (S, N, E) and `tgt` (T, N, E), sequence-first as the C++ module.
torch::Tensor sdpa_transformer_forward(torch::nn::TransformerImpl& model, const torch::Tensor& src,
                                       const torch::Tensor& tgt);

}  // namespace cubench
