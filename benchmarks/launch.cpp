// launch/empty: an empty one-thread kernel, launched back to back, 1000 per timed sample: the
// harness's own floor, what one launch costs the stream. Check: launches report no error and the
// stream completes.
#include "fixtures/check.h"
#include "fixtures/registry.h"
#include "kernels/empty.h"

namespace cubench {
namespace {

class EmptyLaunch final : public BenchmarkCase {
 public:
  void setup(GpuEnv&) override {}
  void run(GpuEnv& env) override { launch_empty(env.stream()); }
  void validate(GpuEnv& env) override {
    CUBENCH_CUDA_LAUNCHED();
    CUBENCH_CUDA(cudaStreamSynchronize(env.stream()));
  }
  Work work() const override { return {}; }
};

void register_launch() {
  Spec spec;
  spec.name = "launch/empty";
  spec.make = [] { return std::make_unique<EmptyLaunch>(); };
  spec.batch = 1000;
  register_case(spec);
}
CUBENCH_REGISTER(register_launch);

}  // namespace
}  // namespace cubench
