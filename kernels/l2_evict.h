#pragma once
// Kernels that empty the L2 of a benchmark's data without leaving work for the timed region.
#include <cuda_runtime.h>

#include <cstddef>

namespace cubench {

// Reads `bytes` of `buffer` (16-byte aligned) through L2 and writes nothing: every line it brings
// in is clean, so work that follows evicts them without writing anything back to memory, and
// whatever dirty lines were in L2 before are written back now, during this kernel.
void launch_l2_read_through(const void* buffer, std::size_t bytes, int sm_count,
                            cudaStream_t stream);

// Drops `bytes` of `buffer` (128-byte aligned, a multiple of 128) from L2 without writing them
// back (PTX discard.global.L2, compute capability 8.0 and up; nothing on older GPUs): no line of
// the buffer is left dirty, whatever wrote it. Its contents are undefined afterwards.
void launch_l2_discard(void* buffer, std::size_t bytes, int sm_count, cudaStream_t stream);

}  // namespace cubench
