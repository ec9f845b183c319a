// The core operations through LibTorch, with the core fixtures' counters, so cuBLASLt-direct
// against PyTorch and our sigmoid against torch::sigmoid sit in one table:
//   torch/gemm/<dtype>/<n>: torch::mm of n x n (fp32 with TF32 off, tf32, fp16, bf16); 2n^3 FLOPs
//   torch/sigmoid/<dtype>/<n>: torch::sigmoid_out (fp32, fp16, bf16); n read + n written
//   torch/svd/<dtype>/<n>: torch::linalg_svd (fp32, fp64), reduced
// cpu/torch/...: the same on the CPU at small sizes (gemm 512, sigmoid 1M, svd 256).
// Check, once per configuration: gemm, every element against a float64 product of the same
// inputs within gemm_bound() (fixtures/validate.h: the same bound as gemm/); sigmoid, every
// element against float64 sigmoid (max relative error within the dtype's tolerance); svd, the
// residual ||A - U S V^T|| / ||A||, orthogonality of U and V and the singular values against
// float64's (max |s - s_ref| / s_max), each under 30 n eps, as svd/ does.
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "fixtures/check.h"
#include "fixtures/compat/torch_compat.h"
#include "fixtures/cpu_runner.h"
#include "fixtures/models.h"
#include "fixtures/registry.h"
#include "fixtures/torch/torch_support.h"
#include "fixtures/validate.h"

namespace cubench {
namespace {

enum class Op { gemm, sigmoid, svd };

const char* op_name(Op op) {
  return op == Op::gemm ? "gemm" : op == Op::sigmoid ? "sigmoid" : "svd";
}

torch::ScalarType scalar_type(DType t) {
  switch (t) {
    case DType::fp64:
      return torch::kDouble;
    case DType::fp16:
      return torch::kHalf;
    case DType::bf16:
      return torch::kBFloat16;
    default:
      return torch::kFloat;
  }
}

// The operation on tensors of one device; shared by the CPU and GPU cases.
class TorchOp {
 public:
  TorchOp(Op op, DType t, int64_t n, torch::Device device) : op_(op), t_(t), n_(n) {
    auto opts = torch::TensorOptions().device(device).dtype(scalar_type(t));
    if (op == Op::sigmoid) {
      a_ = torch::rand({n}, opts) * 16 - 8;
      out_ = torch::empty_like(a_);
    } else {
      a_ = torch::rand({n, n}, opts) * 2 - 1;
      if (op == Op::gemm) b_ = torch::rand({n, n}, opts) * 2 - 1;
    }
  }

  void run() {
    if (op_ == Op::gemm)
      out_ = torch::mm(a_, b_);
    else if (op_ == Op::sigmoid)
      torch::sigmoid_out(out_, a_);
    else
      svd_ = torch::linalg_svd(a_, /*full_matrices=*/false);
  }

  void validate() {
    torch::NoGradGuard no_grad;
    run();
    if (fault_armed_) plant_fault_now();
    std::string what = std::string("torch ") + op_name(op_) + " " + std::string(dtype_name(t_)) +
                       " n=" + std::to_string(n_);
    if (op_ == Op::gemm) {
      auto a = a_.to(torch::kDouble), b = b_.to(torch::kDouble);
      auto want = torch::mm(a, b);
      auto scale = torch::mm(a.abs(), b.abs());
      const GemmBound bound = gemm_bound(t_, static_cast<int>(n_));
      auto got = out_.to(torch::kDouble);
      auto ratio = (got - want).abs() / (bound.rel * want.abs() + bound.scale * scale);
      if (!torch::isfinite(got).all().item<bool>())
        throw ValidationError(what + ": NaN/inf in the product");
      const double worst = ratio.max().item<double>();
      if (!(worst <= 1))
        throw ValidationError(what + ": an element is " + std::to_string(worst) +
                              " times its bound from the float64 product");
    } else if (op_ == Op::sigmoid) {
      auto want = torch::sigmoid(a_.to(torch::kDouble));
      double err = ((out_.to(torch::kDouble) - want).abs() / want.abs()).max().item<double>();
      if (!(err <= dtype_tolerance(t_)))
        throw ValidationError(what + ": max relative error " + std::to_string(err));
    } else {
      auto [u, s, vh] = svd_;
      auto a = a_.to(torch::kDouble);
      auto ud = u.to(torch::kDouble), sd = s.to(torch::kDouble), vd = vh.to(torch::kDouble);
      auto recon = torch::mm(ud * sd.unsqueeze(0), vd);
      auto eye = torch::eye(n_, a.options());
      const double root_n = std::sqrt(double(n_));
      const double errors[] = {
          ((a - recon).norm() / a.norm()).item<double>(),
          (torch::mm(ud.t(), ud) - eye).norm().item<double>() / root_n,
          (torch::mm(vd, vd.t()) - eye).norm().item<double>() / root_n,
          ((sd - torch::linalg_svdvals(a)).abs().max() / sd.max()).item<double>()};
      const char* names[] = {"reconstruction", "orthogonality of U", "orthogonality of V",
                             "singular values against float64's"};
      double eps = t_ == DType::fp64 ? std::numeric_limits<double>::epsilon()
                                     : std::numeric_limits<float>::epsilon();
      for (int i = 0; i < 4; ++i)
        if (!(errors[i] <= 30 * n_ * eps))
          throw ValidationError(what + ": " + names[i] + " error " + std::to_string(errors[i]) +
                                " exceeds " + std::to_string(30 * n_ * eps));
    }
  }

  // Tests only: the next validate() meets one element 10% off (gemm, sigmoid: 5%) or the middle
  // singular value 1% off.
  std::string arm_fault() {
    fault_armed_ = true;
    return op_ == Op::gemm      ? "the largest of the product's first 256 elements 10% off"
           : op_ == Op::sigmoid ? "output element n/2 5% off"
                                : "the middle singular value 1% off";
  }

  Work work() const {
    if (op_ == Op::gemm) return {model::gemm_flops(n_, n_, n_), t_, 0};
    if (op_ == Op::sigmoid)
      return {0, std::nullopt, model::elementwise_bytes(n_, dtype_bytes(t_), dtype_bytes(t_))};
    return {};
  }

 private:
  Op op_;
  DType t_;
  int64_t n_;
  void plant_fault_now() {
    if (op_ == Op::gemm) {  // the largest in magnitude of row 0's first 256: a typical size
      auto head = out_[0].narrow(0, 0, std::min<int64_t>(256, n_));
      head[head.abs().argmax().item<int64_t>()].mul_(1.1);
    } else if (op_ == Op::sigmoid)
      out_[n_ / 2].mul_(1.05);
    else
      std::get<1>(svd_)[n_ / 2].mul_(1.01);
  }

  torch::Tensor a_, b_, out_;
  std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> svd_;
  bool fault_armed_ = false;
};

class CpuTorchOp final : public CpuCase {
 public:
  CpuTorchOp(Op op, DType t, int64_t n) : op_(op), t_(t), n_(n) {}
  void setup() override {
    seed_torch(static_cast<std::uint64_t>(std::random_device{}()));
    impl_ = std::make_unique<TorchOp>(op_, t_, n_, torch::kCPU);
  }
  void run() override { impl_->run(); }
  void validate() override { impl_->validate(); }
  std::string plant_fault() override { return impl_->arm_fault(); }
  Work work() const override { return impl_->work(); }
  std::string label() const override {
    return "LibTorch " + torch_compat::version() + " on the CPU";
  }

 private:
  Op op_;
  DType t_;
  int64_t n_;
  std::unique_ptr<TorchOp> impl_;
};

#if CUBENCH_TORCH_CUDA
class GpuTorchOp final : public BenchmarkCase {
 public:
  GpuTorchOp(Op op, DType t, int64_t n) : op_(op), t_(t), n_(n) {}
  void setup(GpuEnv& env) override {
    stream_.bind(env.stream(), env.device());
    auto guard = stream_.use();
    seed_torch(env.fresh_seed());
    torch_compat::allow_tf32(t_ == DType::tf32);
    impl_ = std::make_unique<TorchOp>(op_, t_, n_, torch::Device(torch::kCUDA, env.device()));
  }
  void run(GpuEnv&) override {
    auto guard = stream_.use();
    impl_->run();
  }
  void validate(GpuEnv&) override {
    auto guard = stream_.use();
    impl_->validate();
  }
  std::string plant_fault(GpuEnv&) override { return impl_->arm_fault(); }
  Work work() const override { return impl_->work(); }
  std::string label() const override { return "LibTorch " + torch_compat::version(); }

 private:
  Op op_;
  DType t_;
  int64_t n_;
  TorchStream stream_;
  std::unique_ptr<TorchOp> impl_;
};
#endif

std::string op_spec_name(Op op, DType t, int64_t n) {
  return std::string("torch/") + op_name(op) + "/" + std::string(dtype_name(t)) + "/" +
         std::to_string(n);
}

void register_torch_ops() {
  struct Cpu {
    Op op;
    DType t;
    int64_t n;
  };
  for (Cpu c : {Cpu{Op::gemm, DType::fp32, 512}, Cpu{Op::sigmoid, DType::fp32, 1 << 20},
                Cpu{Op::svd, DType::fp32, 256}}) {
    CpuSpec spec;
    spec.name = "cpu/" + op_spec_name(c.op, c.t, c.n);
    spec.make = [c] { return std::make_unique<CpuTorchOp>(c.op, c.t, c.n); };
    spec.size = double(c.n);
    register_cpu_case(spec);
  }
#if CUBENCH_TORCH_CUDA
  auto add = [](Op op, DType t, int64_t n) {
    Spec spec;
    spec.name = op_spec_name(op, t, n);
    spec.make = [=] { return std::make_unique<GpuTorchOp>(op, t, n); };
    spec.size = double(n);
    if (op == Op::svd) spec.batch = 1;
    register_case(spec);
  };
  for (DType t : {DType::fp32, DType::tf32, DType::fp16, DType::bf16})
    for (int64_t n : {4096, 8192}) add(Op::gemm, t, n);
  for (DType t : {DType::fp32, DType::fp16, DType::bf16})
    for (int64_t n : {int64_t{10'000'000}, int64_t{256} << 20}) add(Op::sigmoid, t, n);
  for (DType t : {DType::fp32, DType::fp64})
    for (int64_t n : {512, 1024, 2048, 4096}) add(Op::svd, t, n);
#endif
}
CUBENCH_REGISTER(register_torch_ops);

}  // namespace
}  // namespace cubench
