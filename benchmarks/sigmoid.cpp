// sigmoid/<variant>/<dtype>/<n>/<cold|hot>: y = 1 / (1 + exp(-x)) over n elements with our
// kernels (kernels/sigmoid.cu): `naive` (one element per thread) and `vectorized` (16-byte
// accesses, grid-stride); beside them `copy`, a device-to-device cudaMemcpyAsync of the same bytes:
// the ceiling an elementwise map can reach. n = 10M (the seed articles' size) and 256Mi.
// cold flushes the L2 before every sample; hot leaves the previous sample's data in it.
// Model: n elements read + n written. Check: the output was poisoned in set-up; every element
// must be finite, and (all of them up to 16M, beyond that head, tail and a stride sample of 4M)
// must match a double-precision CPU sigmoid of the same stored inputs within the dtype's
// tolerance (max relative error); copy must reproduce its input exactly.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "fixtures/check.h"
#include "fixtures/models.h"
#include "fixtures/registry.h"
#include "fixtures/validate.h"
#include "kernels/fill.h"
#include "kernels/reference.h"
#include "kernels/sigmoid.h"

namespace cubench {
namespace {

constexpr std::size_t kFullCheckLimit = std::size_t{16} << 20;
constexpr std::size_t kSampledChecks = std::size_t{4} << 20;
constexpr std::size_t kEdge = 4096;

enum class Variant { naive, vectorized, copy };

const char* variant_name(Variant v) {
  return v == Variant::naive ? "naive" : v == Variant::vectorized ? "vectorized" : "copy";
}

// The indices checked against the CPU reference: all, or the edges (where vector tails live)
// and an even stride through the middle.
std::vector<std::size_t> checked_indices(std::size_t n) {
  std::vector<std::size_t> idx;
  if (n <= kFullCheckLimit) {
    for (std::size_t i = 0; i < n; ++i) idx.push_back(i);
    return idx;
  }
  for (std::size_t i = 0; i < kEdge; ++i) idx.push_back(i);
  const std::size_t stride = n / kSampledChecks + 1;  // odd offsets hit every vector lane
  for (std::size_t i = kEdge; i < n - kEdge; i += stride) idx.push_back(i);
  for (std::size_t i = n - kEdge; i < n; ++i) idx.push_back(i);
  return idx;
}

class Sigmoid final : public BenchmarkCase {
 public:
  Sigmoid(Variant v, DType t, std::size_t n) : v_(v), t_(t), n_(n) {}

  void setup(GpuEnv& env) override {
    x_ = env.alloc(n_ * dtype_bytes(t_));
    y_ = env.alloc(n_ * dtype_bytes(t_));
    sm_count_ = env.info().sm_count;
    fill_uniform(t_, x_.get(), n_, env.fresh_seed(), -8.f, 8.f, env.stream());
    CUBENCH_CUDA_LAUNCHED();
    CUBENCH_CUDA(cudaMemsetAsync(y_.get(), 0xff, y_.bytes(), env.stream()));  // NaN: unwritten
  }

  void run(GpuEnv& env) override {
    if (v_ == Variant::copy) {
      CUBENCH_CUDA(
          cudaMemcpyAsync(y_.get(), x_.get(), x_.bytes(), cudaMemcpyDeviceToDevice, env.stream()));
      return;
    }
    auto kernel = v_ == Variant::naive ? SigmoidVariant::naive : SigmoidVariant::vectorized;
    if (!launch_sigmoid(kernel, t_, x_.get(), y_.get(), n_, sm_count_, env.stream()))
      throw Error("sigmoid: no kernel for dtype " + std::string(dtype_name(t_)));
    CUBENCH_CUDA_LAUNCHED();
  }

  void validate(GpuEnv& env) override {
    cudaStream_t s = env.stream();
    DeviceBuffer bad = env.alloc(sizeof(unsigned long long));
    CUBENCH_CUDA(cudaMemsetAsync(bad.get(), 0, sizeof(unsigned long long), s));
    count_nonfinite(t_, y_.get(), n_, bad.as<unsigned long long>(), s);
    CUBENCH_CUDA_LAUNCHED();
    std::vector<unsigned char> x(x_.bytes()), y(y_.bytes());
    unsigned long long nonfinite = 0;
    CUBENCH_CUDA(cudaMemcpyAsync(x.data(), x_.get(), x.size(), cudaMemcpyDeviceToHost, s));
    CUBENCH_CUDA(cudaMemcpyAsync(y.data(), y_.get(), y.size(), cudaMemcpyDeviceToHost, s));
    CUBENCH_CUDA(
        cudaMemcpyAsync(&nonfinite, bad.get(), sizeof nonfinite, cudaMemcpyDeviceToHost, s));
    CUBENCH_CUDA(cudaStreamSynchronize(s));
    if (nonfinite > 0)
      throw ValidationError(describe() + ": " + std::to_string(nonfinite) + " of " +
                            std::to_string(n_) + " outputs are NaN/inf or were never written");
    if (v_ == Variant::copy) {
      if (std::memcmp(x.data(), y.data(), x.size()) != 0)
        throw ValidationError(describe() + ": the copy differs from its source");
      return;
    }
    std::vector<std::size_t> idx = checked_indices(n_);
    std::vector<double> got(idx.size()), ref(idx.size());
    for (std::size_t j = 0; j < idx.size(); ++j) {
      got[j] = host_element(t_, y.data(), idx[j]);
      ref[j] = 1.0 / (1.0 + std::exp(-host_element(t_, x.data(), idx[j])));
    }
    require_within(describe(), compare(got, ref), Norm::max_relative, dtype_tolerance(t_));
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
    return std::string("sigmoid ") + variant_name(v_) + " " + std::string(dtype_name(t_)) +
           " n=" + std::to_string(n_);
  }

  Variant v_;
  DType t_;
  std::size_t n_;
  int sm_count_ = 0;
  DeviceBuffer x_, y_;
};

void register_sigmoid() {
  for (Variant v : {Variant::naive, Variant::vectorized, Variant::copy})
    for (DType t : {DType::fp32, DType::fp16, DType::bf16})
      for (std::size_t n : {std::size_t{10'000'000}, std::size_t{256} << 20})
        for (bool cold : {true, false}) {
          Spec spec;
          spec.name = std::string("sigmoid/") + variant_name(v) + "/" + std::string(dtype_name(t)) +
                      "/" + std::to_string(n) + (cold ? "/cold" : "/hot");
          spec.make = [=] { return std::make_unique<Sigmoid>(v, t, n); };
          spec.cold_l2 = cold;
          spec.queue_behind_blocking_kernel = true;  // run() only launches
          spec.size = double(n);
          register_case(spec);
        }
}
CUBENCH_REGISTER(register_sigmoid);

}  // namespace
}  // namespace cubench
