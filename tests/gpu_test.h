#pragma once
// GPU tests skip, saying why, on a machine without a GPU, run for real where there is one, and
// fail where a driver is loaded but CUDA cannot use it (a driver too old for this runtime must
// not pass as "no GPU").
#include <gtest/gtest.h>

#include "fixtures/detail/device.h"

#define CUBENCH_REQUIRE_GPU()                                                             \
  do {                                                                                    \
    ::cubench::GpuAvailability gpus_ = ::cubench::probe_gpus();                           \
    if (gpus_.driver_fault) FAIL() << "an NVIDIA driver is loaded, but " << gpus_.reason; \
    if (gpus_.count == 0) GTEST_SKIP() << "no usable CUDA GPU: " << gpus_.reason;         \
  } while (0)
