// torch/attention/<backend>/<pass>/<dtype>/<mask>/<head_dim>/<seq>: LibTorch's
// scaled_dot_product_attention with one backend allowed (flash, efficient, cudnn, math: the
// switches Python's torch.nn.attention.sdpa_kernel sets), on the shapes of cuDNN-direct
// attention/, so one table holds cuDNN, LibTorch and PyTorch (tools/torch_reference.py):
// 16384 tokens per batch (b = 16384 / seq), model width 2048 (h = 2048 / head_dim); Q, K, V
// stored (b, s, h, d) contiguous and passed as their (b, h, s, d) transposed views, as a
// fused-QKV model does; scale 1/sqrt(d); no dropout; mask `causal` (key j seen by query i when
// j <= i) or `full`.
//   fwd: the forward, no autograd graph (inputs without requires_grad).
//   fwd_bwd: the forward, then dQ, dK, dV of sum(O * dO) for a fixed random dO (O.backward(dO),
//   through torch::autograd::grad, so nothing accumulates into .grad between runs).
// FLOPs: 4 b h s^2 d forward, half of it causal; fwd_bwd 3.5 times that.
// A backend that refuses a configuration is a "not supported here" row with LibTorch's reasons;
// an allocation that does not fit (the math backend's s x s scores) an out-of-memory row.
// Counters: out_rel_error, grad_rel_error (the check's), PyTorch's allocator peaks since the check.
// cpu/torch/attention/math/...: the same code on the CPU (512 tokens, width 256), for CI; on
// LibTorch 1.13 its attention is torch_compat's math definition.
//
// Check, once per configuration, against a float64 evaluation of the definition
// (softmax(Q K^T / sqrt(d) + mask) V and its autograd gradients) on the same inputs:
// - a small problem of the same backend, pass, dtype, mask and head_dim (2 sequences of 384,
//   4 heads): O and, for fwd_bwd, dQ, dK, dV, each by relative L2 error;
// - the real size: no NaN/inf in O (and the gradients), and O at 16 query positions of the last
//   sequence, every head (the last position sees every key), by relative L2 error.
// Tolerances (not yet measured on the GPU; out_rel_error and grad_rel_error say what was seen):
// the inputs are exact in float64, so the error is the kernels' rounding: bf16 keeps 8 bits
// (unit roundoff 3.9e-3), fp16 11 (4.9e-4); O is held to 5x bf16's unit roundoff (2e-2) or
// 10x fp16's (5e-3), the gradients (three more products, rounded P and dS) to 5e-2 and 1.5e-2. A
// wrong mask, scale or layout is off by O(0.1..1); the planted fault (one sequence's head 0 of the
// small problem's O, or dK for fwd_bwd, negated) by about 0.7.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fixtures/cubench_torch.h"

namespace cubench {
namespace {

using torch_compat::SdpaBackend;
constexpr EnumName<SdpaBackend> kBackends[] = {{SdpaBackend::flash, "flash"},
                                               {SdpaBackend::efficient, "efficient"},
                                               {SdpaBackend::cudnn, "cudnn"},
                                               {SdpaBackend::math, "math"}};

// fwd, or fwd and the backward; the causal mask, or none.
enum class Pass { fwd, fwd_bwd };
constexpr EnumName<Pass> kPasses[] = {{Pass::fwd, "fwd"}, {Pass::fwd_bwd, "fwd_bwd"}};
enum class Mask { causal, full };
constexpr EnumName<Mask> kMasks[] = {{Mask::causal, "causal"}, {Mask::full, "full"}};

// (b, s, h, d): sequences, their length, heads, head_dim.
struct Shape {
  int64_t b, s, h, d;
};

struct Result {
  torch::Tensor out;         // (b, h, s, d), as SDPA returns it
  torch::Tensor dq, dk, dv;  // (b, s, h, d), as the inputs are stored; fwd_bwd only
};

// One attention configuration: the call under test, and the float64 definition it is held to.
class Attention {
 public:
  Attention(SdpaBackend backend, bool train, bool causal, DType t)
      : backend_(backend), train_(train), causal_(causal), t_(t) {}

  // Q, K, V (requiring grad for fwd_bwd) and dO, all (b, s, h, d), fresh normal numbers.
  std::vector<torch::Tensor> inputs(const Shape& x, torch::Device device) const {
    std::vector<torch::Tensor> v;
    for (int i = 0; i < 4; ++i) {
      auto t = torch::randn({x.b, x.s, x.h, x.d}, torch::TensorOptions().device(device))
                   .to(scalar_type());
      v.push_back(i < 3 && train_ ? t.requires_grad_() : t);
    }
    return v;
  }

  // The operation under test, with only this backend allowed.
  Result operator()(const std::vector<torch::Tensor>& in) const {
    const torch::Tensor &q = in[0], &k = in[1], &v = in[2], &dout = in[3];
    torch_compat::SdpaOnly only(backend_);
    try {
      Result r;
      r.out = torch_compat::scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                                         v.transpose(1, 2), 0.0, causal_);
      if (train_) {
        auto g = torch::autograd::grad({r.out}, {q, k, v}, {dout.transpose(1, 2)});
        r.dq = g[0], r.dk = g[1], r.dv = g[2];
      }
      return r;
    } catch (const c10::OutOfMemoryError&) {
      throw;  // TorchCase's to report
    } catch (const c10::Error& e) {
      if (e.msg().find("No available kernel") != std::string::npos)
        throw NotSupported(std::string("LibTorch's ") + name_of(backend_, kBackends) +
                           " attention refuses this configuration: " + only.warnings());
      throw Error(std::string("LibTorch: ") + e.what_without_backtrace());
    }
  }

  // The definition in float64 on the same inputs, with autograd's gradients for fwd_bwd.
  Result reference(const std::vector<torch::Tensor>& in) const {
    std::vector<torch::Tensor> x;
    for (const auto& t : in) x.push_back(t.detach().to(torch::kDouble));
    for (int i = 0; i < 3; ++i) x[i].requires_grad_(train_);
    auto scores = torch::matmul(x[0].transpose(1, 2), x[1].transpose(1, 2).transpose(-2, -1)) /
                  std::sqrt(double(x[0].size(-1)));
    if (causal_) {
      const int64_t s = scores.size(-1);
      scores = scores.masked_fill(
          torch::ones({s, s}, torch::TensorOptions().dtype(torch::kBool).device(scores.device()))
              .triu(1),
          -std::numeric_limits<double>::infinity());
    }
    Result r;
    r.out = torch::matmul(torch::softmax(scores, -1), x[2].transpose(1, 2));
    if (train_) {
      auto g = torch::autograd::grad({r.out}, {x[0], x[1], x[2]}, {x[3].transpose(1, 2)});
      r.dq = g[0], r.dk = g[1], r.dv = g[2];
    }
    return r;
  }

  // The real size's O at 16 query positions (the first and the last among them) of the last
  // sequence, every head, against float64: the relative L2 error.
  double rows_error(const std::vector<torch::Tensor>& in, const torch::Tensor& out) const {
    const int64_t n = in[0].size(0) - 1, s = in[0].size(1);
    std::vector<int64_t> positions;
    for (int64_t i = 0; i < 16; ++i) positions.push_back(i * (s - 1) / 15);
    auto at = torch::tensor(positions, torch::kLong).to(out.device());
    auto seq = [&](int i) { return in[i].detach()[n].to(torch::kDouble).transpose(0, 1); };
    auto q = seq(0).index_select(1, at), k = seq(1), v = seq(2);  // (h, 16, d), (h, s, d)
    auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(double(q.size(-1)));
    if (causal_)  // key j is future to query position p when j > p
      scores = scores.masked_fill(torch::arange(s, at.options()).unsqueeze(0) > at.unsqueeze(1),
                                  -std::numeric_limits<double>::infinity());
    auto want = torch::matmul(torch::softmax(scores, -1), v);
    return rel_l2(out.detach()[n].index_select(1, at), want);
  }

  static double rel_l2(const torch::Tensor& got, const torch::Tensor& want) {
    return ((got.detach().to(torch::kDouble) - want.detach()).norm() / want.detach().norm())
        .item<double>();
  }

  static bool finite(const torch::Tensor& t) { return torch::isfinite(t).all().item<bool>(); }

  double out_tolerance() const { return t_ == DType::bf16 ? 2e-2 : 5e-3; }
  double grad_tolerance() const { return t_ == DType::bf16 ? 5e-2 : 1.5e-2; }
  bool train() const { return train_; }
  DType dtype() const { return t_; }
  SdpaBackend backend() const { return backend_; }

 private:
  torch::ScalarType scalar_type() const { return cubench::scalar_type(t_); }
  SdpaBackend backend_;
  bool train_, causal_;
  DType t_;
};

class AttentionCase final : public TorchCase {
 public:
  // The math backend and the float64 reference in IEEE precision, whatever an earlier family
  // (torch/gemm/tf32) left switched on.
  AttentionCase(Attention attention, Shape shape, bool causal)
      : TorchCase(TorchMath{false}), attention_(attention), shape_(shape), causal_(causal) {}

  std::string fault_check() const override { return small_check(attention_.train() ? "dK" : "O"); }

  Work work() const override {
    double flops = 4.0 * shape_.b * shape_.h * double(shape_.s) * shape_.s * shape_.d;
    if (causal_) flops /= 2;
    if (attention_.train()) flops *= 3.5;
    return {flops, attention_.dtype(), 0};
  }

 private:
  void set_up(Env&) override { inputs_ = attention_.inputs(shape_, device()); }

  void timed_run(Env&) override {
    result_ = {};  // freed first, as Python drops the last call's result
    result_ = attention_(inputs_);
  }

  void check(Env&) override {
    const std::string what =
        std::string("torch attention (") + name_of(attention_.backend(), kBackends) + ")";
    // The real size: finite, and O's rows against float64. The last run's result, or a new one
    // where an earlier check dropped it (a second check with no run between: the tests').
    if (!result_.out.defined()) result_ = attention_(inputs_);
    for (const auto* t : {&result_.out, &result_.dq, &result_.dk, &result_.dv})
      if (t->defined() && !Attention::finite(*t))
        throw ValidationError(what + ": NaN/inf in the real size's result",
                              "the real size's result finite");
    out_error_ = attention_.rows_error(inputs_, result_.out);
    require_at_most(what + ": O at 16 positions of the real size, relative L2 error", out_error_,
                    attention_.out_tolerance(), "O at 16 positions of the real size");

    // The small problem, whole, O and the gradients.
    const Shape small{2, 384, 4, shape_.d};
    auto in = attention_.inputs(small, device());
    Result got = attention_(in);
    const Result want = attention_.reference(in);
    if (fault_armed() && attention_.train()) got.dk[0].select(1, 0).neg_();  // (s, d) of head 0
    if (fault_armed() && !attention_.train()) {
      got.out = got.out.detach().clone();
      got.out[0][0].neg_();
    }
    const double small_out = Attention::rel_l2(got.out, want.out);
    out_error_ = std::max(out_error_, small_out);
    require_at_most(what + ": O of the small problem, relative L2 error", small_out,
                    attention_.out_tolerance(), small_check("O"));
    if (attention_.train()) {
      grad_error_ = 0;
      const char* names[] = {"dQ", "dK", "dV"};
      const torch::Tensor* grads[][2] = {
          {&got.dq, &want.dq}, {&got.dk, &want.dk}, {&got.dv, &want.dv}};
      for (int i = 0; i < 3; ++i) {
        const double e = Attention::rel_l2(*grads[i][0], *grads[i][1]);
        if (!(e <= grad_error_)) grad_error_ = e;  // NaN included
        require_at_most(what + ": " + names[i] + " of the small problem, relative L2 error", e,
                        attention_.grad_tolerance(), small_check(names[i]));
      }
    }
    result_ = {};  // the timed runs' peaks start without it
  }

  std::string arm_fault(Env&) override {
    return attention_.train() ? "dK of the small problem's sequence 0, head 0, negated"
                              : "O of the small problem's sequence 0, head 0, negated";
  }

  std::map<std::string, double> own_counters(double) const override {
    std::map<std::string, double> c = {{"out_rel_error", out_error_}};
    if (attention_.train()) c["grad_rel_error"] = grad_error_;
    return c;
  }

  std::string label_detail() const override {
    return std::string(name_of(attention_.backend(), kBackends)) + " attention only";
  }

  // The name of the small problem's check of one output (ValidationError::check).
  static std::string small_check(const std::string& output) {
    return output + " of the small problem";
  }

  Attention attention_;
  Shape shape_;
  bool causal_;
  std::vector<torch::Tensor> inputs_;
  Result result_;
  double out_error_ = 0, grad_error_ = 0;
};

struct Scale {
  int64_t tokens, width;  // per batch, and the model's width: b = tokens / seq, h = width / d
};

// <prefix>attention/<backend>/<pass>/<dtype>/<mask>/<head_dim>/<seq>.
void add_attention_family(const std::string& prefix, std::vector<SdpaBackend> backends,
                          std::vector<DType> dtypes, std::vector<std::int64_t> head_dims,
                          std::vector<std::int64_t> seqs, Scale scale, Timer timer) {
  Family(prefix + "attention",
         "scaled_dot_product_attention with one backend allowed, Q K V (b, s, h, d) as (b, h, s, "
         "d) views; fwd, or fwd and the backward of sum(O * dO)")
      .axis(enum_axis("backend", kBackends, backends))
      .axis(enum_axis("pass", kPasses))
      .axis(dtype_axis(dtypes))
      .axis(enum_axis("mask", kMasks))
      .axis(int_axis("head_dim", head_dims))
      .axis(pow2_axis("seq", seqs))
      .counter({"out_rel_error", "", Better::lower,
                "attention output against float64, relative L2: the worst of a small problem's "
                "and 16 positions of the real size's"})
      .counter({"grad_rel_error", "", Better::lower,
                "worst of dQ, dK, dV against float64 on a small problem, relative L2"})
      .main_counter(timer == Timer::cuda_events ? "TFLOPS" : "")
      .size_axis("seq")
      // Default run: bf16, head_dim 128, causal, seq 1024 and 16384, flash and cuDNN, both
      // passes (8 rows); the rest with --cubench_suite=full.
      .default_suite([timer](const Point& p) {
        if (timer == Timer::host_clock) return true;
        const SdpaBackend b = p.get_enum<SdpaBackend>("backend");
        const std::int64_t s = p.get_int("seq");
        return (b == SdpaBackend::flash || b == SdpaBackend::cudnn) &&
               p.get_dtype() == DType::bf16 && p.get_int("head_dim") == 128 &&
               p.get_enum<Mask>("mask") == Mask::causal && (s == 1024 || s == 16384);
      })
      .timer(timer)
      .sampling(Sampling::runs_per_sample(0))
      .size([](const Point& p) { return double(p.get_int("seq")); })
      // Q, K, V and O of tokens x width elements (T bytes each) and the check's small problem:
      // LibTorch reserved 386 MiB forward and 684 MiB with the backward on the H200 at bf16 (6
      // and 10.7 T): declared as 7 T and 11 T. Flash attention's kernels need compute capability
      // 8.0 in PyTorch. The math backend also holds the b h s^2 scores, in float32 where it
      // softmaxes them: at bf16, 16384 tokens a sequence and head_dim 64, LibTorch held 64.75 GiB
      // and asked 32 GiB more in the backward on an H100, 12 bytes a score: declared as 6 bytes a
      // score forward (its forward ran there) and 14 with the backward.
      .needs([scale](const Point& p) {
        const bool backward = p.get_enum<Pass>("pass") == Pass::fwd_bwd;
        const std::uint64_t t =
            std::uint64_t(scale.tokens) * std::uint64_t(scale.width) * dtype_bytes(p.get_dtype());
        std::uint64_t bytes = (backward ? 11 : 7) * t;
        if (p.get_enum<SdpaBackend>("backend") == SdpaBackend::math)
          bytes += (backward ? 14 : 6) * std::uint64_t(scale.tokens) *
                   std::uint64_t(scale.width / p.get_int("head_dim")) *
                   std::uint64_t(p.get_int("seq"));
        GpuNeeds needs = tensor_core_needs(p.get_dtype(), bytes);
        if (p.get_enum<SdpaBackend>("backend") == SdpaBackend::flash)
          needs = needs + GpuNeeds{80, "PyTorch's flash attention kernels", 0};
        return needs;
      })
      .make([scale](const Point& p) {
        const std::int64_t s = p.get_int("seq"), d = p.get_int("head_dim");
        const bool causal = p.get_enum<Mask>("mask") == Mask::causal;
        Attention attention(p.get_enum<SdpaBackend>("backend"),
                            p.get_enum<Pass>("pass") == Pass::fwd_bwd, causal, p.get_dtype());
        return std::make_unique<AttentionCase>(
            attention, Shape{scale.tokens / s, s, scale.width / d, d}, causal);
      })
      .add();
}

void register_torch_attention() {
  // The CPU: the math backend (torch_compat's definition on LibTorch 1.13), for CI.
  add_attention_family("cpu/torch/", {SdpaBackend::math}, {DType::bf16}, {64}, {128}, {512, 256},
                       Timer::host_clock);
#if CUBENCH_TORCH_CUDA
  // One backend allowed alone needs LibTorch 2.5: before it the build's not_built says why
  // torch/attention is missing (cmake/TorchNotBuilt.cmake).
  if (torch_compat::kHasSdpaBackends)
    add_attention_family(
        "torch/",
        {SdpaBackend::flash, SdpaBackend::efficient, SdpaBackend::cudnn, SdpaBackend::math},
        {DType::bf16, DType::fp16}, {64, 128}, {512, 1024, 2048, 4096, 8192, 16384}, {16384, 2048},
        Timer::cuda_events);
#endif
}
CUBENCH_REGISTER(register_torch_attention);

}  // namespace
}  // namespace cubench
