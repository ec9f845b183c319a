// scale/<dtype>/<n>: y = a x with our kernel (kernels/scale.cu), fp32. Model: n floats read and
// n written. Check: every element against a * x in double on the host.
#include <string>
#include <vector>

#include "fixtures/cubench.h"
#include "kernels/fill.h"
#include "kernels/scale.h"

namespace cubench {
namespace {

constexpr float kA = 0.5f;
constexpr const char* kElementCheck = "every element against a * x";  // the check's name

class Scale final : public BenchmarkCase {
 public:
  explicit Scale(std::size_t n) : n_(n) {}

  // Set-up, never timed: allocate from the configuration's pool (peak memory counts it), fill
  // with fresh random data from the configuration's seeds.
  void setup(Env& env) override {
    x_ = env.alloc(n_ * sizeof(float));
    y_ = env.alloc(n_ * sizeof(float));
    fill_uniform(DType::fp32, x_.get(), n_, env.fresh_seed(), -1, 1, env.stream());
    CUBENCH_CUDA_LAUNCHED();
  }

  // Before the checked run: the output NaN, so an element the run does not write shows.
  void poison_result(Env& env) override {
    CUBENCH_CUDA(cudaMemsetAsync(y_.get(), 0xff, y_.bytes(), env.stream()));
  }

  // The timed call: asynchronous on env.stream(), nothing else (no allocation, no sync).
  void run(Env& env) override {
    scale(x_.as<float>(), y_.as<float>(), kA, n_, env.stream());
    CUBENCH_CUDA_LAUNCHED();
  }

  // Once per configuration, after one run(): every element against a reference.
  void validate(Env& env) override {
    std::vector<float> x(n_), y(n_);
    CUBENCH_CUDA(cudaMemcpyAsync(x.data(), x_.get(), n_ * 4, cudaMemcpyDeviceToHost, env.stream()));
    CUBENCH_CUDA(cudaMemcpyAsync(y.data(), y_.get(), n_ * 4, cudaMemcpyDeviceToHost, env.stream()));
    CUBENCH_CUDA(cudaStreamSynchronize(env.stream()));
    std::vector<double> got(y.begin(), y.end()), ref(n_);
    for (std::size_t i = 0; i < n_; ++i) ref[i] = double(kA) * x[i];
    const ErrorStats e = compare(got, ref);
    max_rel_error_ = e.max_rel;
    require_within("scale", e, Norm::max_relative, dtype_tolerance(DType::fp32), kElementCheck);
  }

  // For the checks' own test (Check/EveryGpuFamily.AcceptsARunAndRejectsAPlantedFault): corrupt
  // the result as a bug would, and say how.
  std::string plant_fault(Env& env) override {
    const float wrong = 12345.f;
    CUBENCH_CUDA(cudaMemcpyAsync(y_.as<float>() + n_ / 2, &wrong, sizeof wrong,
                                 cudaMemcpyHostToDevice, env.stream()));
    CUBENCH_CUDA(cudaStreamSynchronize(env.stream()));
    return "element n/2 set to 12345";
  }
  // The check that must reject it, by the name validate() gives it: a rejection by another check
  // is not a catch.
  std::string fault_check() const override { return kElementCheck; }

  // The work model: the runner turns it into GBps and % of the copy ceiling.
  Work work() const override { return {0, std::nullopt, 2.0 * n_ * sizeof(float)}; }

  // The family's own counter (declared in register_scale).
  std::map<std::string, double> counters(double) const override {
    return {{"max_rel_error", max_rel_error_}};
  }

 private:
  std::size_t n_;
  DeviceBuffer x_, y_;
  double max_rel_error_ = 0;
};

// The family as data: axes (their values make the names, "scale/fp32/1048576"), the counters of
// its own, its headline and size axis for charts, how samples are taken, how to make a case.
void register_scale() {
  Family("scale", "y = a x with our kernel")
      .axis(dtype_axis({DType::fp32}))
      .axis(pow2_axis("n", {1 << 20, 1 << 24, 1 << 28}))
      .counter({"max_rel_error", "", Better::lower, "worst element's relative error"})
      .main_counter("GBps")
      .size_axis("n")
      .sampling(Sampling::launches_only())  // run() only launches: queue it whole
      .size([](const Point& p) { return double(p.get_int("n")); })
      // What a configuration needs of the GPU, known before set-up: x and y (fp32 runs on every
      // GPU, so no compute capability). A GPU without the memory leaves the row out, saying so.
      .needs([](const Point& p) {
        GpuNeeds needs;
        needs.device_bytes = 2 * std::uint64_t(p.get_int("n")) * sizeof(float);
        return needs;
      })
      .make([](const Point& p) { return std::make_unique<Scale>(std::size_t(p.get_int("n"))); })
      .add();
}
CUBENCH_REGISTER(register_scale);

}  // namespace
}  // namespace cubench
