#pragma once
// GPU tests skip, saying why, on a machine without a GPU, run for real where there is one, and
// fail where a driver is loaded but CUDA cannot use it (a driver too old for this runtime must
// not pass as "no GPU"). CUBENCH_GPU_TESTS=required (the GPU machine's runs) turns every such
// skip into a failure, so a run where no GPU test ran cannot read green. A GPU test skips only
// through CUBENCH_GPU_SKIP, whatever the reason (no GPU, a family this GPU cannot check, a family
// this build left out: family_check.h), so none stays a skip where GPU tests are required.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "fixtures/device/device.h"

namespace cubench::test {
// CUBENCH_GPU_TESTS: "required", or "auto" / unset (skip without a GPU). Another value is a
// mistake a run must not pass over: "" with what is wrong, else "required" or "auto".
inline std::string gpu_tests_mode(std::string& wrong) {
  const char* v = std::getenv("CUBENCH_GPU_TESTS");
  const std::string mode = v ? v : "";
  if (mode.empty() || mode == "auto") return "auto";
  if (mode == "required") return mode;
  wrong = "CUBENCH_GPU_TESTS takes required or auto, got '" + mode + "'";
  return "";
}
}  // namespace cubench::test

// Skips the test (a stated reason) unless GPU tests are required here, where it fails instead.
#define CUBENCH_GPU_SKIP(reason)                                                       \
  do {                                                                                 \
    std::string wrong_;                                                                \
    const std::string mode_ = ::cubench::test::gpu_tests_mode(wrong_);                 \
    if (mode_.empty()) FAIL() << wrong_;                                               \
    if (mode_ == "required") FAIL() << "CUBENCH_GPU_TESTS=required, but " << (reason); \
    GTEST_SKIP() << (reason);                                                          \
  } while (0)

#define CUBENCH_REQUIRE_GPU()                                                             \
  do {                                                                                    \
    ::cubench::GpuAvailability gpus_ = ::cubench::probe_gpus();                           \
    if (gpus_.driver_fault) FAIL() << "an NVIDIA driver is loaded, but " << gpus_.reason; \
    if (gpus_.count == 0) CUBENCH_GPU_SKIP("no usable CUDA GPU: " + gpus_.reason);        \
  } while (0)
