#include "kernels/clock_probe.h"

namespace cubench {
namespace {
__global__ void clock_probe_kernel(ClockStamp* stamps) {
  unsigned smid;
  unsigned long long ns;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  long long cycles = clock64();
  if (smid < kClockSlots) {
    stamps[smid].cycles = static_cast<std::uint64_t>(cycles);
    stamps[smid].ns = ns;
  }
}
}  // namespace

cudaError_t preload_clock_probe() {
  cudaFuncAttributes attributes;
  return cudaFuncGetAttributes(&attributes, clock_probe_kernel);
}

void launch_clock_probe(ClockStamp* stamps, int blocks, cudaStream_t stream) {
  clock_probe_kernel<<<blocks, 1, 0, stream>>>(stamps);
}

}  // namespace cubench
