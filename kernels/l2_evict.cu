#include "kernels/l2_evict.h"

#include <cstdint>

namespace cubench {
namespace {

// An XOR of what was read can equal this only by a 1-in-2^32 chance (the buffer's contents are
// whatever they are); then one word is written, which costs nothing. The condition keeps the
// compiler from dropping the loads.
constexpr unsigned kNever = 0x9E3779B9u;

__global__ void read_through_l2(const uint4* __restrict__ p, std::size_t n, unsigned* sink) {
  unsigned acc = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const uint4 v = __ldcg(p + i);  // cached in L2 only: the L2 is what is being filled
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == kNever) *sink = acc;
}

__global__ void discard_l2_lines(char* p, std::size_t lines) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < lines;
       i += stride)
    asm volatile("discard.global.L2 [%0], 128;" ::"l"(p + i * 128) : "memory");
#endif
}

constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 4;

}  // namespace

void launch_l2_read_through(const void* buffer, std::size_t bytes, int sm_count,
                            cudaStream_t stream) {
  // The sink is the buffer's first word: written only in the never-case above.
  read_through_l2<<<sm_count * kBlocksPerSm, kThreads, 0, stream>>>(
      static_cast<const uint4*>(buffer), bytes / sizeof(uint4),
      static_cast<unsigned*>(const_cast<void*>(buffer)));
}

void launch_l2_discard(void* buffer, std::size_t bytes, int sm_count, cudaStream_t stream) {
  discard_l2_lines<<<sm_count * kBlocksPerSm, kThreads, 0, stream>>>(static_cast<char*>(buffer),
                                                                     bytes / 128);
}

}  // namespace cubench
