#pragma once
// A case's life as the runner leads it, for tests that drive one by hand: find a registered case,
// set it up and run it once, plant its fault and require its check to reject it. One place, so
// every test drives a case the same way the runner does (prepare before each run, the stream
// drained before the host reads) and reports a planted fault the same way.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "fixtures/case/benchmark_case.h"
#include "fixtures/detail/case/registry.h"
#include "fixtures/device/env.h"
#include "fixtures/support/status.h"

namespace cubench {

// The registered case named `name` (as registered: "svd/gesvd/fp32/4096", no "/manual_time");
// nullptr, with a test failure, where this build has none.
inline const Spec* find_case(const std::string& name) {
  for (const Spec& s : registered_cases())
    if (s.name == name) return &s;
  ADD_FAILURE() << name << " is not registered in this build";
  return nullptr;
}

// One run as the runner times it: prepare(), run(), and on a GPU the stream drained.
inline void run_once(BenchmarkCase& c, Env& env) {
  c.prepare(env);
  c.run(env);
  if (env.has_gpu()) CUBENCH_CUDA(cudaStreamSynchronize(env.stream()));
}

// Set-up, one run, and its check, as the runner does before timing (throws what they throw).
inline void set_up_run_and_check(BenchmarkCase& c, Env& env) {
  c.setup(env);
  run_once(c, env);
  c.validate(env);
}

// What a planted fault came to: its words ("" when the case plants none) and whether the check
// rejected it, with the rejection's words.
struct PlantedFault {
  std::string fault;
  bool caught = false;
  std::string rejection;
};

// Plants the case's fault in its last result and runs its check, which must reject it with a
// ValidationError (containing `caught_by` where given); an accepted fault, one excused as a known
// inaccuracy, or a rejection in other words is a test failure. Prints "[ CAUGHT ] label: ...".
inline PlantedFault plant_fault_and_check(BenchmarkCase& c, Env& env, const std::string& label,
                                          const std::string& caught_by = "") {
  PlantedFault out;
  out.fault = c.plant_fault(env);
  if (out.fault.empty()) return out;
  try {
    c.validate(env);
    ADD_FAILURE() << "the check accepted a planted fault: " << out.fault;
  } catch (const KnownInaccuracy& e) {
    // Excused as a library's documented miss: not a catch of the fault (gesvdp fp32's miss has a
    // signature the planted faults do not share).
    ADD_FAILURE() << "a planted fault passed for a known inaccuracy: " << out.fault << " -> "
                  << e.what();
  } catch (const ValidationError& e) {
    out.rejection = e.what();
    out.caught = caught_by.empty() || out.rejection.find(caught_by) != std::string::npos;
    if (!out.caught)
      ADD_FAILURE() << "the fault (" << out.fault << ") was rejected, but not by the check that "
                    << "says \"" << caught_by << "\": " << out.rejection;
    std::cout << "[ CAUGHT ] " << label << ": " << out.fault << " -> "
              << out.rejection.substr(0, 200) << "\n";
  }
  if (env.has_gpu()) CUBENCH_CUDA(cudaStreamSynchronize(env.stream()));
  return out;
}

}  // namespace cubench
