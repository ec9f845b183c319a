#pragma once
// A Linear module applied as Python's nn.Linear applies it: through ATen's linear, which runs a
// 3-D contiguous input as one addmm on the flattened rows, the bias in it (in cuBLASLt's epilogue
// on the GPU).
// The module's own forward does not: LibTorch's C++ torch::nn::functional::linear is a
// hand-written matmul followed by `output += bias` for any input that is not 2-D — a GEMM without
// the epilogue plus a broadcast add, each layer. Those adds are not in PyTorch's step and cost
// bert_train about 11 ms of a 109 ms step at amp_bf16/512/64 on an H200 (ncu): the whole of its
// gap to PyTorch eager.
#include <torch/torch.h>

namespace cubench {

inline torch::Tensor aten_linear(const torch::nn::Linear& layer, const torch::Tensor& x) {
  return torch::linear(x, layer->weight, layer->bias);
}

}  // namespace cubench
