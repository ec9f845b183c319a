// launch/empty: an empty one-thread kernel, launched back to back, 1000 per timed sample: the
// harness's own floor, what one launch costs the stream. Check: launches report no error and the
// stream completes.
#include "fixtures/cubench.h"
#include "kernels/empty.h"

namespace cubench {
namespace {

class EmptyLaunch final : public BenchmarkCase {
 public:
  void setup(Env&) override {}
  void run(Env& env) override { launch_empty(env.stream()); }
  void validate(Env& env) override {
    CUBENCH_CUDA_LAUNCHED();
    CUBENCH_CUDA(cudaStreamSynchronize(env.stream()));
  }
  Work work() const override { return {}; }
};

void register_launch() {
  Family("launch/empty", "an empty one-thread kernel launched back to back: one launch's cost")
      .sampling(Sampling::runs_per_sample(1000))
      .needs([](const Point&) { return GpuNeeds{}; })  // any GPU; no memory of its own
      .make([](const Point&) { return std::make_unique<EmptyLaunch>(); })
      .add();
}
CUBENCH_REGISTER(register_launch);

}  // namespace
}  // namespace cubench
