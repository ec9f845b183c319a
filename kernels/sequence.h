#pragma once
#include <cuda_runtime.h>

namespace cubench {
// out[i] = i * step + 1 for i < n: a result whose every element is known without a reference
// computation (startup/cuda's first kernel, checked in its child process).
void launch_sequence(int* out, int n, int step, cudaStream_t stream);
}  // namespace cubench
