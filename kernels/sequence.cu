#include "kernels/sequence.h"

namespace cubench {
namespace {
__global__ void sequence_kernel(int* out, int n, int step) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i * step + 1;
}
}  // namespace

void launch_sequence(int* out, int n, int step, cudaStream_t stream) {
  constexpr int kThreads = 256;
  sequence_kernel<<<(n + kThreads - 1) / kThreads, kThreads, 0, stream>>>(out, n, step);
}
}  // namespace cubench
