// The core operations through LibTorch, with the core families' counters, so cuBLASLt-direct
// against PyTorch and our sigmoid against torch::sigmoid sit in one table:
//   torch/gemm/<dtype>/<n>: torch::mm of n x n (fp32 with TF32 off, tf32, fp16, bf16); 2n^3 FLOPs
//   torch/sigmoid/<dtype>/<n>: torch::sigmoid_out (fp32, fp16, bf16); n read + n written
//   torch/svd/<dtype>/<n>: torch::linalg_svd (fp32, fp64), reduced
// cpu/torch/...: the same on the CPU at small sizes (gemm 512, sigmoid 1M, svd 256).
// Check, once per configuration, of the timed call's output: gemm, every element against a float64
// product of the same inputs within gemm_bound() (fixtures/check/validate.h: the same bound as
// gemm/), and in fp32 the fp32 math control (relative L2 within fp32_math_control); sigmoid,
// every element against float64 sigmoid (max relative error within the dtype's tolerance); svd, the
// residual ||A - U S V^T|| / ||A||, orthogonality of U and V and the singular values against
// float64's (max |s - s_ref| / s_max), each under 30 n eps, as svd/ does.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "fixtures/cubench_torch.h"

namespace cubench {
namespace {

enum class Op { gemm, sigmoid, svd };
constexpr EnumName<Op> kOps[] = {{Op::gemm, "gemm"}, {Op::sigmoid, "sigmoid"}, {Op::svd, "svd"}};

// Each operation's check that a planted fault must meet, by name (ValidationError::check).
constexpr const char* kCheck[] = {"every element against the float64 product",
                                  "sigmoid against float64's", "singular values against float64's"};
// fp32 GEMMs: the fp32 math control (validate.h: fp32_math_control), which TF32 cannot pass.
constexpr const char* kFp32MathCheck = "fp32 math: the product's relative L2 error";

class TorchOp final : public TorchCase {
 public:
  TorchOp(Op op, DType t, int64_t n)
      : TorchCase(TorchMath{t == DType::tf32}), op_(op), t_(t), n_(n) {}

  // A gemm in fp32 on a GPU: TF32 allowed as well, which the element bound lets through (on an
  // H100 at n = 4096) and the fp32 math control rejects (2.6e-4 against 1.5e-5).
  int fault_count() const override {
    return op_ == Op::gemm && t_ == DType::fp32 && on_gpu() ? 2 : 1;
  }
  std::string fault_check() const override {
    return fault_ == 1 ? kFp32MathCheck : kCheck[int(op_)];
  }

  Work work() const override {
    if (op_ == Op::gemm) return {model::gemm_flops(n_, n_, n_), t_, 0};
    if (op_ == Op::sigmoid)
      return {0, std::nullopt, model::elementwise_bytes(n_, dtype_bytes(t_), dtype_bytes(t_))};
    return {};
  }

 private:
  void set_up(Env&) override {
    auto opts = torch::TensorOptions().device(device()).dtype(scalar_type(t_));
    if (op_ == Op::sigmoid) {
      a_ = torch::rand({n_}, opts) * 16 - 8;
      out_ = torch::empty_like(a_);
    } else {
      a_ = torch::rand({n_, n_}, opts) * 2 - 1;
      if (op_ == Op::gemm) b_ = torch::rand({n_, n_}, opts) * 2 - 1;
    }
  }

  void timed_run(Env&) override {
    if (op_ == Op::gemm)
      out_ = torch::mm(a_, b_);
    else if (op_ == Op::sigmoid)
      torch::sigmoid_out(out_, a_);
    else
      svd_ = torch::linalg_svd(a_, /*full_matrices=*/false);
  }

  // What the timed call writes: the product, the sigmoid, the factors.
  void poison_outputs(Env&) override {
    poison(out_);
    poison(std::get<0>(svd_)), poison(std::get<1>(svd_)), poison(std::get<2>(svd_));
  }

  // Judges the timed call's output as it stands (a fault planted into it by arm_fault).
  void check(Env&) override {
    torch::NoGradGuard no_grad;
    std::string what = std::string("torch ") + name_of(op_, kOps) + " " +
                       std::string(dtype_name(t_)) + " n=" + std::to_string(n_);
    if (op_ == Op::gemm) {
      auto a = a_.to(torch::kDouble), b = b_.to(torch::kDouble);
      auto want = torch::mm(a, b);
      const GemmBound bound = gemm_bound(t_, static_cast<int>(n_));
      auto allowed = bound.rel * want.abs() + bound.sum * torch::mm(a.abs(), b.abs()) +
                     bound.rms * torch::mm(a * a, b * b).sqrt();
      auto got = out_.to(torch::kDouble);
      auto ratio = (got - want).abs() / allowed;
      if (!torch::isfinite(got).all().item<bool>())
        throw ValidationError(what + ": NaN/inf in the product", "the product finite");
      const double worst = ratio.max().item<double>();
      if (!(worst <= 1))
        throw ValidationError(what + ": an element is " + std::to_string(worst) +
                                  " times its bound from the float64 product",
                              kCheck[int(Op::gemm)]);
      // The element bound lets TF32's 10-bit inputs through (an H100 at n = 4096); the control,
      // a random walk of fp32's rounding, does not.
      if (t_ == DType::fp32)
        require_at_most(what + ": relative L2 error",
                        ((got - want).norm() / want.norm()).item<double>(),
                        fp32_math_control(static_cast<int>(n_)), kFp32MathCheck);

    } else if (op_ == Op::sigmoid) {
      auto want = torch::sigmoid(a_.to(torch::kDouble));
      double err = ((out_.to(torch::kDouble) - want).abs() / want.abs()).max().item<double>();
      if (!(err <= dtype_tolerance(t_)))
        throw ValidationError(what + ": max relative error " + std::to_string(err),
                              kCheck[int(Op::sigmoid)]);
    } else {
      auto [u, s, vh] = svd_;
      auto a = a_.to(torch::kDouble);
      auto ud = u.to(torch::kDouble), sd = s.to(torch::kDouble), vd = vh.to(torch::kDouble);
      auto recon = torch::mm(ud * sd.unsqueeze(0), vd);
      auto eye = torch::eye(n_, a.options());
      const double root_n = std::sqrt(double(n_));
      // The singular values first, as svd/ checks them: a fault in them alone (the planted one)
      // is theirs to catch, whatever the reconstruction's bound in the dtype.
      const double errors[] = {
          ((sd - torch::linalg_svdvals(a)).abs().max() / sd.max()).item<double>(),
          ((a - recon).norm() / a.norm()).item<double>(),
          (torch::mm(ud.t(), ud) - eye).norm().item<double>() / root_n,
          (torch::mm(vd, vd.t()) - eye).norm().item<double>() / root_n};
      const char* names[] = {kCheck[int(Op::svd)], "reconstruction", "orthogonality of U",
                             "orthogonality of V"};
      double eps = t_ == DType::fp64 ? std::numeric_limits<double>::epsilon()
                                     : std::numeric_limits<float>::epsilon();
      for (int i = 0; i < 4; ++i)
        if (!(errors[i] <= 30 * n_ * eps))
          throw ValidationError(what + ": " + names[i] + " error " + std::to_string(errors[i]) +
                                    " exceeds " + std::to_string(30 * n_ * eps),
                                names[i]);
    }
  }

  // The check meets, in the timed call's output, one element 10% off (gemm: a random one of the
  // first 256 at least their median in magnitude; sigmoid: 5%) or the middle singular value 1%
  // off; an fp32 gemm on a GPU, in turn, a timed call with TF32 allowed.
  std::string arm_fault(Env& env) override {
    fault_ = planted_++ % fault_count();
    if (fault_ == 1) {
      torch_compat::allow_tf32(true);
      run_again(env);
      torch_compat::allow_tf32(false);
      return "TF32 allowed in cuBLAS for an fp32 torch::mm";
    }
    run_again(env);  // the timed call's output, then a fault in it
    torch::NoGradGuard no_grad;
    if (op_ == Op::gemm) {
      auto head = out_[0].narrow(0, 0, std::min<int64_t>(256, n_));
      const double median = head.abs().median().item<double>();
      const auto typical = (head.abs() >= median).nonzero().flatten();
      const int64_t pick =
          typical[torch::randint(typical.size(0), {1}, torch::kLong).item<int64_t>()]
              .item<int64_t>();
      head[pick].mul_(1.1);
      return "element " + std::to_string(pick) +
             " of the product's first row (at least the median magnitude of its first 256) 10% "
             "off";
    }
    if (op_ == Op::sigmoid) {
      out_[n_ / 2].mul_(1.05);
      return "output element n/2 5% off";
    }
    std::get<1>(svd_)[n_ / 2].mul_(1.01);
    return "the middle singular value 1% off";
  }

  Op op_;
  DType t_;
  int64_t n_;
  torch::Tensor a_, b_, out_;
  std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> svd_;
  int fault_ = 0, planted_ = 0;  // the fault armed last, and how many so far
};

// torch/<op> on the GPU; cpu/torch/<op> on the CPU at one small size each.
void add_op_family(const std::string& prefix, Op op, std::vector<DType> dtypes,
                   std::vector<std::int64_t> sizes, Timer timer) {
  const char* what = op == Op::gemm      ? "torch::mm of n x n"
                     : op == Op::sigmoid ? "torch::sigmoid_out over n elements"
                                         : "torch::linalg_svd of n x n, reduced";
  Family(prefix + name_of(op, kOps), what)
      .axis(dtype_axis(dtypes))
      .axis(int_axis("n", sizes))
      .main_counter(op == Op::gemm      ? "TFLOPS"
                    : op == Op::sigmoid ? "GBps"
                                        : "")
      .size_axis("n")
      // Default run: the GPU GEMMs at 4096, sigmoid in fp32 and bf16 at 256 Mi elements, SVD in
      // fp32 at 512 and 1024: the configurations that set LibTorch beside our own gemm, sigmoid
      // and svd families' default rows.
      .default_suite([op, timer](const Point& p) {
        if (timer == Timer::host_clock) return true;
        const std::int64_t n = p.get_int("n");
        switch (op) {
          case Op::gemm:
            return n == 4096;
          case Op::sigmoid:
            return n == (std::int64_t{256} << 20) && p.get_dtype() != DType::fp16;
          default:
            return p.get_dtype() == DType::fp32 && n <= 1024;
        }
      })
      .timer(timer)
      .sampling(Sampling::runs_per_sample(op == Op::svd ? 1 : 0))
      .size([](const Point& p) { return double(p.get_int("n")); })
      // The operands and what the check holds at once (TorchOp::check: fp64 copies and the
      // temporaries of one expression): gemm A, B, C and eight fp64 n x n; sigmoid x, y and seven
      // fp64 n-vectors; svd our svd family's n^2 (8 e + 80); and 256 MiB for LibTorch's own and
      // cuBLAS's workspace.
      .needs([op](const Point& p) {
        const std::uint64_t n = p.get_int("n"), e = dtype_bytes(p.get_dtype());
        const std::uint64_t operands = op == Op::gemm      ? n * n * (3 * e + 64)
                                       : op == Op::sigmoid ? n * (2 * e + 56)
                                                           : n * n * (8 * e + 80);
        return tensor_core_needs(op == Op::gemm ? p.get_dtype() : DType::fp32,
                                 operands + 256 * kMiB);
      })
      .make([op](const Point& p) {
        return std::make_unique<TorchOp>(op, p.get_dtype(), p.get_int("n"));
      })
      .add();
}

void register_torch_ops() {
  add_op_family("cpu/torch/", Op::gemm, {DType::fp32}, {512}, Timer::host_clock);
  add_op_family("cpu/torch/", Op::sigmoid, {DType::fp32}, {1 << 20}, Timer::host_clock);
  add_op_family("cpu/torch/", Op::svd, {DType::fp32}, {256}, Timer::host_clock);
#if CUBENCH_TORCH_CUDA
  add_op_family("torch/", Op::gemm, {DType::fp32, DType::tf32, DType::fp16, DType::bf16},
                {4096, 8192}, Timer::cuda_events);
  add_op_family("torch/", Op::sigmoid, {DType::fp32, DType::fp16, DType::bf16},
                {10'000'000, std::int64_t{256} << 20}, Timer::cuda_events);
  add_op_family("torch/", Op::svd, {DType::fp32, DType::fp64}, {512, 1024, 2048, 4096},
                Timer::cuda_events);
#endif
}
CUBENCH_REGISTER(register_torch_ops);

}  // namespace
}  // namespace cubench
