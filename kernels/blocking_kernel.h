#pragma once
#include <cuda_runtime.h>

namespace cubench {
// nvbench's blocking kernel: one thread spins until the host sets gate[0] (mapped host memory),
// so everything queued behind it on the stream starts only once the whole sample is queued.
// Then a sample of short kernels times the GPU running them back to back, not the host's launch
// rate. Gives up after timeout_s (gate[1] = 1), so a run() that waits on the host cannot hang.
void launch_blocking_kernel(volatile int* gate, double timeout_s, cudaStream_t stream);

// With lazy module loading (the default since CUDA 12.2) a kernel's first launch loads its module,
// and that waits for the running kernels, the blocking one included, to finish (the programming
// guide's lazy-loading hazards; nvbench #136): so every kernel queued behind it must have been
// loaded before. These load the harness's own (cudaFuncGetAttributes loads a kernel); the
// benchmark's kernels are loaded by its unheld first call.
cudaError_t preload_blocking_kernel();
}  // namespace cubench
