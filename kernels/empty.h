#pragma once
#include <cuda_runtime.h>

namespace cubench {
// An empty kernel, one thread: what a launch costs and nothing else.
void launch_empty(cudaStream_t stream);
}  // namespace cubench
