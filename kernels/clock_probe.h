#pragma once
// Reads every SM's cycle counter (clock64) beside the GPU's nanosecond timer (%globaltimer), as
// nvbench does: two probes around a sample give the SM clock the sample actually ran at,
// whatever the driver or NVML would report. Summaries are in fixtures/detail/timing/clock.h.
#include <cuda_runtime.h>

#include <cstdint>

namespace cubench {

struct ClockStamp {
  std::uint64_t cycles;  // clock64() of that SM; 0 when no block ran there
  std::uint64_t ns;      // %globaltimer when it was read
};

// Slots indexed by %smid; SM ids can run past the SM count, so callers pass a generous capacity.
constexpr int kClockSlots = 1024;

// One single-thread block per SM writes stamps[smid]. stamps must be device-accessible (mapped
// host memory, so reading needs no copy).
void launch_clock_probe(ClockStamp* stamps, int blocks, cudaStream_t stream);
// Loads the probe's module now, so its first launch cannot wait behind a blocking kernel
// (blocking_kernel.h says why).
cudaError_t preload_clock_probe();

}  // namespace cubench
