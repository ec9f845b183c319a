// sigmoid/<variant>/<dtype>/<n>/<cold|hot>: y = 1 / (1 + exp(-x)) over n elements with our
// kernels (kernels/sigmoid.cu): `naive` (one element per thread) and `vectorized` (16-byte
// accesses, one pass); beside them `copy`, a device-to-device cudaMemcpyAsync of the same bytes:
// the ceiling an elementwise map can reach. n = 10M (the seed articles' size) and 256Mi.
// cold flushes the L2 before every sample; hot leaves the previous sample's data in it.
// Model: n elements read + n written. Check: the output was poisoned before the run; every element
// must be finite and match sigmoid in double of the same stored input, computed on the device,
// within the dtype's tolerance (max relative error, the `max_rel_error` counter); copy must
// reproduce its input exactly.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "fixtures/cubench.h"
#include "kernels/fill.h"
#include "kernels/reference.h"
#include "kernels/sigmoid.h"

namespace cubench {
namespace {

enum class Variant { naive, vectorized, copy };

constexpr EnumName<Variant> kVariants[] = {
    {Variant::naive, "naive"}, {Variant::vectorized, "vectorized"}, {Variant::copy, "copy"}};

enum class Cache { cold, hot };  // the L2 flushed before each sample, or left warm
constexpr EnumName<Cache> kCaches[] = {{Cache::cold, "cold"}, {Cache::hot, "hot"}};

// The checks' names (ValidationError::check): the copy's, and the kernels'.
constexpr const char* kCopyCheck = "the copy against its source";
constexpr const char* kElementCheck = "y against sigmoid in double";

class Sigmoid final : public BenchmarkCase {
 public:
  Sigmoid(Variant v, DType t, std::size_t n) : v_(v), t_(t), n_(n) {}

  void setup(Env& env) override {
    x_ = env.alloc(n_ * dtype_bytes(t_));
    y_ = env.alloc(n_ * dtype_bytes(t_));
    fill_uniform(t_, x_.get(), n_, env.fresh_seed(), -8.f, 8.f, env.stream());
    CUBENCH_CUDA_LAUNCHED();
  }

  void poison_result(Env& env) override {  // NaN: an element the checked run does not write
    CUBENCH_CUDA(cudaMemsetAsync(y_.get(), 0xff, y_.bytes(), env.stream()));
  }

  void run(Env& env) override {
    if (v_ == Variant::copy) {
      CUBENCH_CUDA(
          cudaMemcpyAsync(y_.get(), x_.get(), x_.bytes(), cudaMemcpyDeviceToDevice, env.stream()));
      return;
    }
    auto kernel = v_ == Variant::naive ? SigmoidVariant::naive : SigmoidVariant::vectorized;
    if (!launch_sigmoid(kernel, t_, x_.get(), y_.get(), n_, env.stream()))
      throw Error("sigmoid: no kernel for dtype " + std::string(dtype_name(t_)));
    CUBENCH_CUDA_LAUNCHED();
  }

  void validate(Env& env) override {
    cudaStream_t s = env.stream();
    if (v_ == Variant::copy) {
      std::vector<unsigned char> x(x_.bytes()), y(y_.bytes());
      CUBENCH_CUDA(cudaMemcpyAsync(x.data(), x_.get(), x.size(), cudaMemcpyDeviceToHost, s));
      CUBENCH_CUDA(cudaMemcpyAsync(y.data(), y_.get(), y.size(), cudaMemcpyDeviceToHost, s));
      CUBENCH_CUDA(cudaStreamSynchronize(s));
      if (std::memcmp(x.data(), y.data(), x.size()) != 0)
        throw ValidationError(describe() + ": the copy differs from its source", kCopyCheck);
      return;
    }
    // Every element against sigmoid in double of the same stored input, on the device.
    DeviceBuffer ref = env.alloc(n_ * sizeof(double));
    sigmoid_reference(t_, x_.get(), ref.as<double>(), n_, s);
    CUBENCH_CUDA_LAUNCHED();
    const ElementCheck checked =
        require_elements_within(describe(), env, t_, y_.get(), ref.as<double>(), nullptr, n_,
                                dtype_tolerance(t_), 0, kElementCheck);
    max_rel_error_ = checked.max_ratio * dtype_tolerance(t_);
  }

  // One output element 5% off (the copy: one element's stored value changed), in the middle.
  std::string plant_fault(Env& env) override {
    perturb_element(t_, y_.get(), n_ / 2 + 1, 1.05, v_ == Variant::copy ? 0.25 : 0, env.stream());
    CUBENCH_CUDA_LAUNCHED();
    return "y[" + std::to_string(n_ / 2 + 1) + "] made 5% larger";
  }
  std::string fault_check() const override {
    return v_ == Variant::copy ? kCopyCheck : kElementCheck;
  }

  std::map<std::string, double> counters(double) const override {
    if (v_ == Variant::copy) return {};
    return {{"max_rel_error", max_rel_error_}};
  }

  Work work() const override {
    return {0, std::nullopt,
            model::elementwise_bytes(double(n_), dtype_bytes(t_), dtype_bytes(t_))};
  }

  std::string label() const override {
    return v_ == Variant::copy ? "cudaMemcpyAsync device-to-device" : "cubench kernel";
  }

 private:
  std::string describe() const {
    return std::string("sigmoid ") + name_of(v_, kVariants) + " " + std::string(dtype_name(t_)) +
           " n=" + std::to_string(n_);
  }

  Variant v_;
  DType t_;
  std::size_t n_;
  double max_rel_error_ = 0;
  DeviceBuffer x_, y_;
};

void register_sigmoid() {
  Family("sigmoid", "y = 1 / (1 + exp(-x)) with our kernels, and a copy of the same bytes")
      .axis(enum_axis("variant", kVariants))
      .axis(dtype_axis({DType::fp32, DType::fp16, DType::bf16}))
      .axis(int_axis("n", {10'000'000, std::int64_t{256} << 20}))
      .axis(enum_axis("cache", kCaches))
      .counter({"max_rel_error", "", Better::lower,
                "worst element's relative error against sigmoid in double"})
      .main_counter("GBps")
      .size_axis("n")
      // Default run: fp16 behaves as bf16 (same bytes, same kernels' shape).
      .default_suite([](const Point& p) { return p.get_dtype() != DType::fp16; })
      .sampling([](const Point& p) {
        Sampling s = Sampling::launches_only();  // run() only launches
        s.cold_l2 = p.get_enum<Cache>("cache") == Cache::cold;
        return s;
      })
      .size([](const Point& p) { return double(p.get_int("n")); })
      // x and y, and the check's fp64 reference (the copy's check compares y with x).
      .needs([](const Point& p) {
        const std::uint64_t n = p.get_int("n");
        GpuNeeds needs;
        needs.device_bytes = 2 * n * dtype_bytes(p.get_dtype()) +
                             (p.get_enum<Variant>("variant") == Variant::copy ? 0 : n * 8);
        return needs;
      })
      .make([](const Point& p) {
        return std::make_unique<Sigmoid>(p.get_enum<Variant>("variant"), p.get_dtype(),
                                         std::size_t(p.get_int("n")));
      })
      .add();
}
CUBENCH_REGISTER(register_sigmoid);

}  // namespace
}  // namespace cubench
