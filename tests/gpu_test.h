#pragma once
// GPU tests skip, saying why, on a machine without a usable GPU, and run for real where there is
// one.
#include <gtest/gtest.h>

#include "fixtures/device.h"

#define CUBENCH_REQUIRE_GPU()                                                     \
  do {                                                                            \
    ::cubench::GpuAvailability gpus_ = ::cubench::probe_gpus();                   \
    if (gpus_.count == 0) GTEST_SKIP() << "no usable CUDA GPU: " << gpus_.reason; \
  } while (0)
