// torch_scale/<output>/<dtype>/<n>: y = a x through LibTorch, into a y kept between runs
// (torch::mul_out) or into a new tensor each run (x * a: the caching allocator in the time).
// cpu/torch_scale/...: the same on the CPU at one size, so CI runs it. Model: n elements read and
// n written. Check: every element against a * x in float64.
#include <string>
#include <vector>

#include "fixtures/cubench_torch.h"

namespace cubench {
namespace {

constexpr double kA = 0.5;
constexpr const char* kElementCheck = "every element against a * x in float64";  // the check's name

// An enum axis's values, each named once: the names are segments of the benchmark names.
enum class Output { kept, fresh };
constexpr EnumName<Output> kOutputs[] = {{Output::kept, "kept"}, {Output::fresh, "fresh"}};

// TorchCase places the case (the CPU for a host-clock family, else the case's GPU with LibTorch on
// the benchmark's stream), seeds LibTorch, restarts and reports the caching allocator's peaks, and
// labels the row; the case says what the operation is.
class TorchScale final : public TorchCase {
 public:
  // TorchMath: LibTorch's math flags for this configuration (none here: no products).
  TorchScale(Output output, DType t, std::int64_t n)
      : TorchCase(TorchMath{}), output_(output), t_(t), n_(n) {}

  // The check that must reject the planted fault, by the name check() gives it.
  std::string fault_check() const override { return kElementCheck; }

  // The work model: the runner turns it into GBps and % of the copy ceiling.
  Work work() const override {
    return {0, std::nullopt, model::elementwise_bytes(n_, dtype_bytes(t_), dtype_bytes(t_))};
  }

 private:
  // Set-up, never timed, LibTorch's generators seeded from the configuration's seed: tensors made
  // on device().
  void set_up(Env&) override {
    const auto options = torch::TensorOptions().device(device()).dtype(scalar_type(t_));
    x_ = torch::rand({n_}, options) * 2 - 1;
    y_ = torch::empty_like(x_);
  }

  // The timed call.
  void timed_run(Env&) override {
    if (output_ == Output::kept)
      torch::mul_out(y_, x_, kA);
    else
      y_ = x_ * kA;
  }

  // Before the checked run: what it writes, NaN (poison()), so the check sees that run's output.
  void poison_outputs(Env&) override { poison(y_); }

  // Once per configuration, after one run: every element against a reference.
  void check(Env&) override {
    const torch::Tensor want = x_.to(torch::kDouble) * kA;
    max_error_ = ((y_.to(torch::kDouble) - want).abs().max() / want.abs().max()).item<double>();
    require_at_most("torch_scale: the worst element's error", max_error_, dtype_tolerance(t_),
                    kElementCheck);
  }

  // For the checks' own test: corrupt the result as a bug would, and say how.
  std::string arm_fault(Env&) override {
    y_[n_ / 2].fill_(12345);
    return "element n/2 set to 12345";
  }

  // The family's own counter; the caching allocator's peaks come beside it (on the GPU).
  std::map<std::string, double> own_counters(double) const override {
    return {{"max_error", max_error_}};
  }

  Output output_;
  DType t_;
  std::int64_t n_;
  torch::Tensor x_, y_;
  double max_error_ = 0;
};

void add_scale_family(const std::string& name, std::vector<DType> dtypes,
                      std::vector<std::int64_t> sizes, Timer timer) {
  Family(name, "y = a x through LibTorch")
      .axis(enum_axis("output", kOutputs))
      .axis(dtype_axis(dtypes))
      .axis(pow2_axis("n", sizes))
      .counter({"max_error", "", Better::lower, "worst element's error over the largest |a x|"})
      .main_counter("GBps")
      .size_axis("n")
      .timer(timer)
      .size([](const Point& p) { return double(p.get_int("n")); })
      // x, y and a fresh y, the check's float64 tensors, and LibTorch's own.
      .needs([](const Point& p) {
        GpuNeeds needs;
        needs.device_bytes =
            std::uint64_t(p.get_int("n")) * (3 * dtype_bytes(p.get_dtype()) + 40) + 256 * kMiB;
        return needs;
      })
      .make([](const Point& p) {
        return std::make_unique<TorchScale>(p.get_enum<Output>("output"), p.get_dtype(),
                                            p.get_int("n"));
      })
      .add();
}

// On the CPU at one size (the host clock; CI runs its check), and on the GPU where this build's
// LibTorch has CUDA.
void register_torch_scale() {
  add_scale_family("cpu/torch_scale", {DType::fp32}, {1 << 20}, Timer::host_clock);
#if CUBENCH_TORCH_CUDA
  add_scale_family("torch_scale", {DType::fp32, DType::bf16}, {1 << 20, 1 << 24, 1 << 28},
                   Timer::cuda_events);
#endif
}
CUBENCH_REGISTER(register_torch_scale);

}  // namespace
}  // namespace cubench
