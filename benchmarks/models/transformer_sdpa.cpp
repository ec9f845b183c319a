#include "benchmarks/models/transformer_sdpa.h"

#include "benchmarks/models/aten_linear.h"

#include "fixtures/cubench_torch.h"

namespace cubench {
namespace {

using torch::Tensor;
namespace nn = torch::nn;

// F.multi_head_attention_forward (need_weights=False, no masks, no bias_k/v): packed in-projection,
// heads split by views, SDPA, heads merged, out-projection.
Tensor attention(nn::MultiheadAttentionImpl& mha, const Tensor& query, const Tensor& memory,
                 bool self_attention) {
  const int64_t tgt_len = query.size(0), batch = query.size(1), embed = query.size(2);
  const int64_t src_len = memory.size(0), heads = mha.options.num_heads();
  const int64_t head_dim = embed / heads;
  const Tensor& w = mha.in_proj_weight;
  const Tensor& b = mha.in_proj_bias;
  Tensor q, k, v;
  if (self_attention) {
    // One matmul for q, k and v, then Python's unflatten/transpose/contiguous: a (3, S, N, E) copy.
    Tensor proj = torch::linear(query, w, b)
                      .view({tgt_len, batch, 3, embed})
                      .permute({2, 0, 1, 3})
                      .contiguous();
    q = proj[0], k = proj[1], v = proj[2];
  } else {
    // Encoder-decoder attention: q from the query, k and v packed from the memory.
    auto ws = w.split_with_sizes({embed, 2 * embed});
    auto bs = b.split_with_sizes({embed, 2 * embed});
    q = torch::linear(query, ws[0], bs[0]);
    Tensor kv = torch::linear(memory, ws[1], bs[1])
                    .view({src_len, batch, 2, embed})
                    .permute({2, 0, 1, 3})
                    .contiguous();
    k = kv[0], v = kv[1];
  }
  // (L, N, E) -> (N*h, L, d) -> (N, h, L, d): views, as Python takes them.
  q = q.view({tgt_len, batch * heads, head_dim})
          .transpose(0, 1)
          .view({batch, heads, tgt_len, head_dim});
  k = k.view({src_len, batch * heads, head_dim})
          .transpose(0, 1)
          .view({batch, heads, src_len, head_dim});
  v = v.view({src_len, batch * heads, head_dim})
          .transpose(0, 1)
          .view({batch, heads, src_len, head_dim});
  const double dropout = mha.is_training() ? mha.options.dropout() : 0.0;
  Tensor out = torch_compat::scaled_dot_product_attention(q, k, v, dropout);
  out = out.permute({2, 0, 1, 3}).contiguous().view({batch * tgt_len, embed});
  out = torch::linear(out, mha.out_proj->weight, mha.out_proj->bias);
  return out.view({tgt_len, batch, embed});  // q, k, v die here, as Python's locals do
}

// Python frees a temporary as soon as the call it was passed to returns; C++ keeps it to the end
// of the full expression. The layers below are written one step a statement, each result
// replacing the last, so the same tensors are alive at the same time as in torch/nn (the peak
// memory compared with Python's depends on it).

// norm(x + branch), the branch dropped once the sum exists, as Python's `norm(x + block(x))`.
Tensor add_and_norm(nn::LayerNorm& norm, const Tensor& x, Tensor branch) {
  Tensor sum = x + branch;
  branch = Tensor();
  return norm(sum);
}

// linear2(dropout(relu(linear1(x)))): ReLU, the layers' default (the activation option is a
// c10::variant on 1.13, std::variant on 2.x, and is not read: the header says the layers must be
// built with it).
Tensor feed_forward(nn::Linear& linear1, nn::Dropout& dropout, nn::Linear& linear2,
                    const Tensor& x) {
  Tensor h = aten_linear(linear1, x);
  h = torch::relu(h);
  h = dropout(h);
  return aten_linear(linear2, h);
}

Tensor encoder_layer(nn::TransformerEncoderLayerImpl& l, Tensor x) {
  Tensor branch = attention(*l.self_attn, x, x, true);
  branch = l.dropout1(branch);
  x = add_and_norm(l.norm1, x, std::move(branch));
  branch = feed_forward(l.linear1, l.dropout, l.linear2, x);
  branch = l.dropout2(branch);
  return add_and_norm(l.norm2, x, std::move(branch));
}

Tensor decoder_layer(nn::TransformerDecoderLayerImpl& l, Tensor x, const Tensor& memory) {
  Tensor branch = attention(*l.self_attn, x, x, true);
  branch = l.dropout1(branch);
  x = add_and_norm(l.norm1, x, std::move(branch));
  branch = attention(*l.multihead_attn, x, memory, false);
  branch = l.dropout2(branch);
  x = add_and_norm(l.norm2, x, std::move(branch));
  branch = feed_forward(l.linear1, l.dropout, l.linear2, x);
  branch = l.dropout3(branch);
  return add_and_norm(l.norm3, x, std::move(branch));
}

Tensor final_norm(nn::AnyModule& norm, const Tensor& x) {
  return norm.is_empty() ? x : norm.get<nn::LayerNormImpl>().forward(x);
}

}  // namespace

Tensor sdpa_transformer_forward(nn::TransformerImpl& model, const Tensor& src, const Tensor& tgt) {
  auto& encoder = model.encoder.get<nn::TransformerEncoderImpl>();
  auto& decoder = model.decoder.get<nn::TransformerDecoderImpl>();
  Tensor memory = src;
  for (size_t i = 0; i < encoder.layers->size(); ++i)
    memory = encoder_layer(encoder.layers->at<nn::TransformerEncoderLayerImpl>(i), memory);
  memory = final_norm(encoder.norm, memory);
  Tensor out = tgt;
  for (size_t i = 0; i < decoder.layers->size(); ++i)
    out = decoder_layer(decoder.layers->at<nn::TransformerDecoderLayerImpl>(i), out, memory);
  return final_norm(decoder.norm, out);
}

}  // namespace cubench
