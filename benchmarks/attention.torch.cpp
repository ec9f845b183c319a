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

  // The real size's result at 16 positions (the first and the last among them) of 4 sequences
  // spread over the batch (the first and the last), every head, against float64: O and dQ at
  // those query positions, dK and dV at those key positions (which gather from every query: the
  // rows' log-sum-exp and D = dO . O come from a pass over all of that sequence's queries, in
  // chunks). Relative L2 errors, each over its 64 rows; fwd_bwd's gradients only where trained.
  struct SampledErrors {
    double out = 0, dq = 0, dk = 0, dv = 0;
  };
  SampledErrors sampled_errors(const std::vector<torch::Tensor>& in, const Result& got) const {
    torch::NoGradGuard no_grad;
    const int64_t b = in[0].size(0), s = in[0].size(1);
    const auto device = in[0].device();
    std::vector<int64_t> positions;
    for (int64_t i = 0; i < 16; ++i) positions.push_back(i * (s - 1) / 15);
    const auto at = torch::tensor(positions, torch::kLong).to(device);
    const auto all = torch::arange(s, torch::TensorOptions().dtype(torch::kLong).device(device));
    const double minus_inf = -std::numeric_limits<double>::infinity();
    double diff[4] = {}, norm[4] = {};
    auto add = [&](int k, const torch::Tensor& have, const torch::Tensor& want) {
      diff[k] += (have.to(torch::kDouble) - want).pow(2).sum().item<double>();
      norm[k] += want.pow(2).sum().item<double>();
    };
    // (h, rows, d) of sequence n's rows `rows`: O is (b, h, s, d), the gradients (b, s, h, d).
    auto rows_of = [&](const torch::Tensor& t, int64_t n, const torch::Tensor& rows) {
      const bool heads_first = &t == &got.out;
      return heads_first ? t.detach()[n].index_select(1, rows)
                         : t.detach()[n].index_select(0, rows).transpose(0, 1);
    };
    std::vector<int64_t> sequences;
    for (int64_t k = 0; k < 4; ++k) sequences.push_back(k * (b - 1) / 3);
    sequences.erase(std::unique(sequences.begin(), sequences.end()), sequences.end());
    for (int64_t n : sequences) {
      auto seq = [&](int i) { return in[i].detach()[n].to(torch::kDouble).transpose(0, 1); };
      const auto q = seq(0), key = seq(1), v = seq(2);  // (h, s, d)
      const double scale = 1 / std::sqrt(double(q.size(-1)));
      // Scores of queries `qi` (positions) against keys `kj` (positions), masked.
      auto scores = [&](const torch::Tensor& qs, const torch::Tensor& qi, const torch::Tensor& ks,
                        const torch::Tensor& kj) {
        auto sc = torch::matmul(qs, ks.transpose(-2, -1)) * scale;
        if (causal_) sc = sc.masked_fill(kj.unsqueeze(0) > qi.unsqueeze(1), minus_inf);
        return sc;
      };
      const auto p_rows = torch::softmax(scores(q.index_select(1, at), at, key, all), -1);
      add(0, rows_of(got.out, n, at), torch::matmul(p_rows, v));
      if (!train_) continue;
      const auto dout = seq(3);
      // Every query's log-sum-exp and D, by chunks of queries.
      std::vector<torch::Tensor> lse_parts, d_parts;
      for (int64_t c0 = 0; c0 < s; c0 += 256) {
        const int64_t len = std::min<int64_t>(256, s - c0);
        const auto sc = scores(q.narrow(1, c0, len), all.narrow(0, c0, len), key, all);
        const auto lse = torch::logsumexp(sc, -1, /*keepdim=*/true);
        const auto o = torch::matmul(torch::exp(sc - lse), v);
        lse_parts.push_back(lse.squeeze(-1));
        d_parts.push_back((dout.narrow(1, c0, len) * o).sum(-1));
      }
      const auto lse = torch::cat(lse_parts, 1), d_all = torch::cat(d_parts, 1);  // (h, s)
      // dQ at the sampled queries.
      const auto dp_rows = torch::matmul(dout.index_select(1, at), v.transpose(-2, -1));
      const auto ds_rows = p_rows * (dp_rows - d_all.index_select(1, at).unsqueeze(-1));
      add(1, rows_of(got.dq, n, at), torch::matmul(ds_rows, key) * scale);
      // dK and dV at the sampled keys, from every query.
      const auto p_cols = torch::exp(scores(q, all, key.index_select(1, at), at) -
                                     lse.unsqueeze(-1));  // (h, s, 16), masked to 0
      add(3, rows_of(got.dv, n, at), torch::matmul(p_cols.transpose(-2, -1), dout));
      const auto dp_cols = torch::matmul(dout, v.index_select(1, at).transpose(-2, -1));
      const auto ds_cols = p_cols * (dp_cols - d_all.unsqueeze(-1));
      add(2, rows_of(got.dk, n, at), torch::matmul(ds_cols.transpose(-2, -1), q) * scale);
    }
    auto rel = [&](int k) { return std::sqrt(diff[k]) / std::sqrt(norm[k]); };
    SampledErrors e;
    e.out = rel(0);
    if (train_) e.dq = rel(1), e.dk = rel(2), e.dv = rel(3);
    return e;
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

  // fwd: O; fwd_bwd: O, dQ, dK, dV, each one sampled row of the timed result negated.
  int fault_count() const override { return attention_.train() ? 4 : 1; }
  std::string fault_check() const override { return sampled_check(kOutputs[fault_]); }

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

  void poison_outputs(Env&) override {
    for (torch::Tensor* t : {&result_.out, &result_.dq, &result_.dk, &result_.dv}) poison(*t);
  }

  // The timed call's result: finite, and its rows at sampled positions of the real size against
  // float64 (sampled_errors); then a small problem whole, O and the gradients.
  void check(Env&) override {
    const std::string what =
        std::string("torch attention (") + name_of(attention_.backend(), kBackends) + ")";
    if (!result_.out.defined() || (attention_.train() && !result_.dk.defined()))
      throw ValidationError(what + ": the timed call left no result", sampled_check("O"));
    for (const auto* t : {&result_.out, &result_.dq, &result_.dk, &result_.dv})
      if (t->defined() && !Attention::finite(*t))
        throw ValidationError(what + ": NaN/inf in the real size's result",
                              "the real size's result finite");
    const auto sampled = attention_.sampled_errors(inputs_, result_);
    out_error_ = sampled.out;
    require_at_most(what +
                        ": O at 16 positions of 4 sequences of the real size, relative L2 "
                        "error",
                    sampled.out, attention_.out_tolerance(), sampled_check("O"));
    grad_error_ = 0;
    if (attention_.train()) {
      const double errors[] = {sampled.dq, sampled.dk, sampled.dv};
      for (int i = 0; i < 3; ++i) {
        if (!(errors[i] <= grad_error_)) grad_error_ = errors[i];  // NaN included
        require_at_most(what + ": " + kOutputs[i + 1] +
                            " at 16 positions of 4 sequences of the real size, relative L2 error",
                        errors[i], attention_.grad_tolerance(), sampled_check(kOutputs[i + 1]));
      }
    }

    // The small problem, whole, O and the gradients.
    const Shape small{2, 384, 4, shape_.d};
    auto in = attention_.inputs(small, device());
    Result got = attention_(in);
    const Result want = attention_.reference(in);
    const double small_out = Attention::rel_l2(got.out, want.out);
    out_error_ = std::max(out_error_, small_out);
    require_at_most(what + ": O of the small problem, relative L2 error", small_out,
                    attention_.out_tolerance(), small_check("O"));
    if (attention_.train()) {
      const torch::Tensor* grads[][2] = {
          {&got.dq, &want.dq}, {&got.dk, &want.dk}, {&got.dv, &want.dv}};
      for (int i = 0; i < 3; ++i) {
        const double e = Attention::rel_l2(*grads[i][0], *grads[i][1]);
        if (!(e <= grad_error_)) grad_error_ = e;  // NaN included
        require_at_most(what + ": " + kOutputs[i + 1] + " of the small problem, relative L2 error",
                        e, attention_.grad_tolerance(), small_check(kOutputs[i + 1]));
      }
    }
    result_ = {};  // the timed runs' peaks start without it
  }

  // The next output in turn: a timed run, then one sampled row of it (the middle sequence among
  // the sampled, position s/3 among the sampled, every head) negated, as a kernel that wrote one
  // row's sign wrong would leave it.
  std::string arm_fault(Env& env) override {
    fault_ = planted_++ % fault_count();
    run_again(env);
    torch::NoGradGuard no_grad;
    torch::Tensor* outputs[] = {&result_.out, &result_.dq, &result_.dk, &result_.dv};
    const int64_t b = shape_.b, s = shape_.s;
    const int64_t n = 1 * (b - 1) / 3, position = 5 * (s - 1) / 15;
    // O is (b, h, s, d), the gradients (b, s, h, d): the row at `position`, every head.
    outputs[fault_]->select(0, n).select(fault_ == 0 ? 1 : 0, position).neg_();
    return std::string(kOutputs[fault_]) + " of the timed result negated at sequence " +
           std::to_string(n) + ", position " + std::to_string(position) + ", every head";
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
  // The name of the real size's check of one output at its sampled rows.
  static std::string sampled_check(const std::string& output) {
    return output + " at the real size's sampled rows";
  }
  static constexpr const char* kOutputs[] = {"O", "dQ", "dK", "dV"};

  Attention attention_;
  Shape shape_;
  bool causal_;
  std::vector<torch::Tensor> inputs_;
  Result result_;
  double out_error_ = 0, grad_error_ = 0;
  int fault_ = 0, planted_ = 0;  // the output the fault armed last is in, and how many so far
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
