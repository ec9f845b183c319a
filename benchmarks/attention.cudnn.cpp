// attention/<pass>/<dtype>/<mask>/<head_dim>/<seq>: cuDNN's fused (flash) scaled-dot-product
// attention through cudnn-frontend graphs.
//   Shapes: 16384 tokens a batch (b = 16384 / seq) and model width 2048 (h = 2048 / head_dim:
//     32 heads at 64, 16 at 128), so every seq does the same projections' work and only the
//     attention's s^2 grows. Q, K, V, O (and dO, dQ, dK, dV) in BSHD, as a fused-QKV projection
//     leaves them: element (batch n, query i, head j, e) at ((n * seq + i) * heads + j) *
//     head_dim + e, i.e. strides {s h d, d, h d, 1} for cuDNN's dims (b, h, s, d). attn_scale =
//     1/sqrt(head_dim), no dropout, no bias; causal is cuDNN's top-left causal mask (key j visible
//     to query i when j <= i).
//   fwd: the inference forward (no softmax stats). fwd_bwd: the training forward, which also
//     writes the softmax stats (fp32 log-sum-exp, {b, h, s, 1}), then the backward from them
//     (dO random), in one sample.
//   bf16 and fp16 inputs and outputs, fp32 softmax and accumulation. fp8 is not here yet
//     (docs/attention.md).
// Model: forward 4 b h s^2 d FLOPs (two matrix products of 2 b h s^2 d), half of it causal;
// backward 2.5 times the forward (five products); fwd_bwd 3.5 times. Judged against the dtype's
// tensor-core peak.
// Check (validate): (1) the same graphs (dtype, mask, head_dim, pass) built for b = 2, h = 2,
// s = 256: every element of O (and of dQ, dK, dV for fwd_bwd) against a double-precision
// reference of the same stored inputs (kernels/attention_reference.h), each within 2u |ref| plus
// an allowance from flash attention's error model (u the dtype's unit roundoff); (2) the
// full-size run: every element of O (and dQ, dK, dV) finite, and the rows of O (and dQ) of 8
// queries (0, 1, 2, 3, s/2 - 1, s/2, s - 2, s - 1) in 3 heads recomputed by the reference within
// the same bounds. The worst element's error over its bound is `max_error_ratio`.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "fixtures/cubench_cudnn.h"
#include "kernels/attention_reference.h"
#include "kernels/fill.h"
#include "kernels/reference.h"

namespace cubench {
namespace {

namespace fe = cudnn_frontend;

constexpr std::int64_t kTokens = 16384;  // per batch: b = kTokens / seq
constexpr std::int64_t kWidth = 2048;    // model width: heads = kWidth / head_dim

struct Shape {
  std::int64_t b, h, s, d;
  std::int64_t elements() const { return b * h * s * d; }
  double scale() const { return 1.0 / std::sqrt(double(d)); }
};

enum Uid : std::int64_t { kQ = 1, kK, kV, kO, kStats, kDO, kDQ, kDK, kDV };

using GraphPtr = std::shared_ptr<fe::graph::Graph>;
using VariantPack = std::unordered_map<std::int64_t, void*>;

double forward_flops(const Shape& x, bool causal) {
  const double full = 4.0 * x.b * x.h * double(x.s) * x.s * x.d;
  return causal ? full / 2 : full;
}

// cuDNN's dims (b, h, s, d) over BSHD memory.
std::vector<std::int64_t> dims(const Shape& x) { return {x.b, x.h, x.s, x.d}; }
std::vector<std::int64_t> bshd_strides(const Shape& x) {
  return {x.s * x.h * x.d, x.d, x.h * x.d, 1};
}
// Stats: one fp32 per (b, h, query), contiguous in that order (cuDNN's own layout for them).
std::vector<std::int64_t> stats_dims(const Shape& x) { return {x.b, x.h, x.s, 1}; }
std::vector<std::int64_t> stats_strides(const Shape& x) { return {x.h * x.s, x.s, 1, 1}; }

GraphPtr new_graph(DType t) {
  auto g = std::make_shared<fe::graph::Graph>();
  g->set_io_data_type(t == DType::bf16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  return g;
}

std::shared_ptr<fe::graph::Tensor_attributes> bshd_input(fe::graph::Graph& g, const char* name,
                                                         Uid uid, const Shape& x) {
  return g.tensor(
      fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim(dims(x)).set_stride(
          bshd_strides(x)));
}

// validate, build_operation_graph, heuristics A then the fallback list, the first config that
// cuDNN supports here, its plan. An unsupported graph throws NotSupported (CUBENCH_CUDNN_FE).
void build(fe::graph::Graph& g, cudnnHandle_t handle) {
  CUBENCH_CUDNN_FE(g.validate());
  CUBENCH_CUDNN_FE(g.build_operation_graph(handle));
  CUBENCH_CUDNN_FE(g.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}));
  CUBENCH_CUDNN_FE(g.check_support(handle));
  CUBENCH_CUDNN_FE(g.build_plans(handle, fe::BuildPlanPolicy_t::HEURISTICS_CHOICE));
}

// O = softmax(scale Q K^T (masked)) V; training also writes the stats the backward needs.
GraphPtr forward_graph(DType t, const Shape& x, bool causal, bool training, cudnnHandle_t handle) {
  GraphPtr g = new_graph(t);
  auto q = bshd_input(*g, "Q", kQ, x), k = bshd_input(*g, "K", kK, x);
  auto v = bshd_input(*g, "V", kV, x);
  auto options = fe::graph::SDPA_attributes()
                     .set_name("sdpa_forward")
                     .set_is_inference(!training)
                     .set_causal_mask(causal)
                     .set_attn_scale(static_cast<float>(x.scale()));
  auto [o, stats] = g->sdpa(q, k, v, options);
  o->set_output(true).set_uid(kO).set_dim(dims(x)).set_stride(bshd_strides(x));
  if (training)
    stats->set_output(true)
        .set_uid(kStats)
        .set_data_type(fe::DataType_t::FLOAT)
        .set_dim(stats_dims(x))
        .set_stride(stats_strides(x));
  build(*g, handle);
  return g;
}

// dQ, dK, dV from Q, K, V, the forward's O and stats, and dO.
GraphPtr backward_graph(DType t, const Shape& x, bool causal, cudnnHandle_t handle) {
  GraphPtr g = new_graph(t);
  auto q = bshd_input(*g, "Q", kQ, x), k = bshd_input(*g, "K", kK, x);
  auto v = bshd_input(*g, "V", kV, x), o = bshd_input(*g, "O", kO, x);
  auto d_o = bshd_input(*g, "dO", kDO, x);
  auto stats = g->tensor(fe::graph::Tensor_attributes()
                             .set_name("Stats")
                             .set_uid(kStats)
                             .set_dim(stats_dims(x))
                             .set_stride(stats_strides(x))
                             .set_data_type(fe::DataType_t::FLOAT));
  auto options = fe::graph::SDPA_backward_attributes()
                     .set_name("sdpa_backward")
                     .set_causal_mask(causal)
                     .set_attn_scale(static_cast<float>(x.scale()));
  auto [dq, dk, dv] = g->sdpa_backward(q, k, v, o, d_o, stats, options);
  dq->set_output(true).set_uid(kDQ).set_dim(dims(x)).set_stride(bshd_strides(x));
  dk->set_output(true).set_uid(kDK).set_dim(dims(x)).set_stride(bshd_strides(x));
  dv->set_output(true).set_uid(kDV).set_dim(dims(x)).set_stride(bshd_strides(x));
  build(*g, handle);
  return g;
}

std::string plan_name(const fe::graph::Graph& g) {
  std::string name;
  return g.get_plan_name(name).is_good() ? name : "?";
}

// One problem's tensors, graphs and variant packs: the benchmark's full-size one, and the small
// one the check runs in full.
class Problem {
 public:
  Problem(Env& env, DType t, const Shape& x, bool causal, bool backward, cudnnHandle_t handle)
      : t_(t), x_(x), backward_(backward) {
    const std::size_t bytes = std::size_t(x.elements()) * dtype_bytes(t);
    q_ = env.alloc(bytes);
    k_ = env.alloc(bytes);
    v_ = env.alloc(bytes);
    o_ = env.alloc(bytes);
    if (backward) {
      stats_ = env.alloc(std::size_t(x.b * x.h * x.s) * sizeof(float));
      d_o_ = env.alloc(bytes);
      dq_ = env.alloc(bytes);
      dk_ = env.alloc(bytes);
      dv_ = env.alloc(bytes);
    }
    // Inputs uniform in [-1, 1]; the reference's allowances are computed from the values.
    for (DeviceBuffer* in : {&q_, &k_, &v_, &d_o_})
      if (in->get())
        fill_uniform(t, in->get(), std::size_t(x.elements()), env.fresh_seed(), -1.f, 1.f,
                     env.stream());
    CUBENCH_CUDA_LAUNCHED();

    fwd_graph_ = forward_graph(t, x, causal, backward, handle);
    std::int64_t workspace = 0;
    CUBENCH_CUDNN_FE(fwd_graph_->get_workspace_size(workspace));
    forward_pack_ = {{kQ, q_.get()}, {kK, k_.get()}, {kV, v_.get()}, {kO, o_.get()}};
    if (backward) {
      forward_pack_[kStats] = stats_.get();
      bwd_graph_ = backward_graph(t, x, causal, handle);
      std::int64_t backward_workspace = 0;
      CUBENCH_CUDNN_FE(bwd_graph_->get_workspace_size(backward_workspace));
      workspace = std::max(workspace, backward_workspace);  // the two run one after the other
      backward_pack_ = {{kQ, q_.get()},   {kK, k_.get()},    {kV, v_.get()},
                        {kO, o_.get()},   {kDO, d_o_.get()}, {kStats, stats_.get()},
                        {kDQ, dq_.get()}, {kDK, dk_.get()},  {kDV, dv_.get()}};
    }
    workspace_ = env.alloc(std::size_t(std::max<std::int64_t>(workspace, 1)));
  }

  // NaN in both 16-bit formats: an element the next run does not write shows in the check.
  void poison_outputs(Env& env) {
    for (DeviceBuffer* out : {&o_, &dq_, &dk_, &dv_})
      if (out->get()) CUBENCH_CUDA(cudaMemsetAsync(out->get(), 0xff, out->bytes(), env.stream()));
  }

  // Asynchronous on the handle's stream. execute() adds pointers to its own locals (the
  // pass-by-value attn_scale) to the pack it is given and would find them stale in a pack
  // reused, so each call gets a copy.
  void run(cudnnHandle_t handle) {
    VariantPack pack = forward_pack_;
    CUBENCH_CUDNN_FE(fwd_graph_->execute(handle, pack, workspace_.get()));
    if (!backward_) return;
    pack = backward_pack_;
    CUBENCH_CUDNN_FE(bwd_graph_->execute(handle, pack, workspace_.get()));
  }

  std::string plans() const {
    std::string l = plan_name(*fwd_graph_);
    if (backward_) l += " + " + plan_name(*bwd_graph_);
    return l;
  }

  DType t_;
  Shape x_;
  bool backward_;
  DeviceBuffer q_, k_, v_, o_, stats_, d_o_, dq_, dk_, dv_, workspace_;
  GraphPtr fwd_graph_, bwd_graph_;
  VariantPack forward_pack_, backward_pack_;
};

double unit_roundoff(DType t) { return std::ldexp(1.0, t == DType::fp16 ? -11 : -8); }
// Half the smallest subnormal: fp16's 2^-24, bf16's 2^-133.
double half_subnormal(DType t) { return std::ldexp(1.0, t == DType::fp16 ? -25 : -134); }

AttentionProblem reference_problem(DType t, const Shape& x, bool causal) {
  AttentionProblem p;
  p.batch = int(x.b);
  p.heads = int(x.h);
  p.seq = int(x.s);
  p.head_dim = int(x.d);
  p.causal = causal;
  p.scale = x.scale();
  p.t = t;
  p.u = unit_roundoff(t);
  p.eta = half_subnormal(t);
  return p;
}

// Device arrays of doubles, from the case's pool.
struct Doubles {
  DeviceBuffer buffer;
  Doubles(Env& env, std::size_t n) : buffer(env.alloc(std::max<std::size_t>(n, 1) * 8)) {}
  double* get() { return buffer.as<double>(); }
};

class Attention final : public BenchmarkCase {
 public:
  Attention(bool backward, DType t, bool causal, std::int64_t head_dim, std::int64_t seq)
      : backward_(backward),
        t_(t),
        causal_(causal),
        x_{kTokens / seq, kWidth / head_dim, seq, head_dim} {}

  ~Attention() override {
    problem_.reset();
    small_.reset();
    if (handle_) cudnnDestroy(handle_);
  }

  void setup(Env& env) override {
    CUBENCH_CUDNN(cudnnCreate(&handle_));
    CUBENCH_CUDNN(cudnnSetStream(handle_, env.stream()));
    problem_ = std::make_unique<Problem>(env, t_, x_, causal_, backward_, handle_);
  }

  void run(Env&) override { problem_->run(handle_); }

  void poison_result(Env& env) override { problem_->poison_outputs(env); }

  void validate(Env& env) override {
    max_error_ratio_ = 0;
    check_small_problem(env);
    check_full_size(env);
  }

  // The checked element of the full-size O (fwd) or dQ (fwd_bwd) whose 10% is the most beyond
  // its bound, made 10% larger.
  std::string plant_fault(Env& env) override {
    if (checked_ref_.empty()) return {};
    std::size_t at = 0;
    double best = -1;
    for (std::size_t e = 0; e < checked_ref_.size(); ++e) {
      const double bound = 2 * unit_roundoff(t_) * std::fabs(checked_ref_[e]) + checked_allow_[e];
      const double visible = 0.1 * std::fabs(checked_ref_[e]) / bound;
      if (visible > best) {
        best = visible;
        at = e;
      }
    }
    const std::size_t d = std::size_t(x_.d);
    const std::int64_t row = checked_rows_[at / d], col = std::int64_t(at % d);
    DeviceBuffer& target = backward_ ? problem_->dq_ : problem_->o_;
    perturb_element(t_, target.get(), std::size_t(row * x_.d + col), 1.1, 0, env.stream());
    CUBENCH_CUDA_LAUNCHED();
    std::ostringstream what;
    what << (backward_ ? "dQ" : "O") << " row " << row << " element " << col << " (reference "
         << checked_ref_[at] << ", 10% of it " << best << " times its bound) made 10% larger";
    return what.str();
  }
  std::string fault_check() const override { return rows_check(backward_ ? "dQ" : "O"); }

  Work work() const override {
    return {forward_flops(x_, causal_) * (backward_ ? 3.5 : 1.0), t_, 0};
  }

  std::string label() const override {
    return problem_ ? "cuDNN " + problem_->plans() : std::string();
  }

  std::map<std::string, double> counters(double) const override {
    return {{"max_error_ratio", max_error_ratio_}};
  }

 private:
  // The name of the full-size check of O's or dQ's rows (ValidationError::check).
  static std::string rows_check(const std::string& output) {
    return "the real size's rows of " + output;
  }

  std::string describe(const Shape& x) const {
    std::ostringstream s;
    s << "attention " << (backward_ ? "fwd_bwd " : "fwd ") << dtype_name(t_)
      << (causal_ ? " causal" : " full") << " b=" << x.b << " h=" << x.h << " s=" << x.s
      << " d=" << x.d;
    return s.str();
  }

  // Every element of `got` (device, stored as t) within 2u |ref| + allow; keeps the worst ratio.
  // `check`: the check's name (ValidationError::check).
  void require(Env& env, const std::string& what, DType t, const void* got, const double* ref,
               const double* allow, std::size_t n, const std::string& check) {
    cudaStream_t s = env.stream();
    DeviceBuffer d_result = env.alloc(sizeof(ElementCheck));
    ElementCheck result;
    CUBENCH_CUDA(
        cudaMemcpyAsync(d_result.get(), &result, sizeof result, cudaMemcpyHostToDevice, s));
    check_elements(t, got, ref, allow, n, 2 * unit_roundoff(t_), 1.0, d_result.as<ElementCheck>(),
                   s);
    CUBENCH_CUDA_LAUNCHED();
    CUBENCH_CUDA(
        cudaMemcpyAsync(&result, d_result.get(), sizeof result, cudaMemcpyDeviceToHost, s));
    CUBENCH_CUDA(cudaStreamSynchronize(s));
    max_error_ratio_ = std::max(max_error_ratio_, result.max_ratio);
    if (result.nonfinite == 0 && result.over == 0) return;
    std::ostringstream msg;
    msg << what << ": ";
    if (result.nonfinite > 0) msg << result.nonfinite << " of " << n << " values NaN/inf; ";
    msg << result.over << " of " << n << " elements beyond their bound (2u |ref| + the error "
        << "model's allowance, docs/attention.md), the worst at " << result.max_ratio
        << " times it; first bad element " << result.first_over;
    throw ValidationError(msg.str(), check);
  }

  // (1) The case's graphs on b = 2, h = 2, s = 256: every element against the reference.
  void check_small_problem(Env& env) {
    const Shape x{2, 2, 256, x_.d};
    if (!small_) small_ = std::make_unique<Problem>(env, t_, x, causal_, backward_, handle_);
    small_->poison_outputs(env);
    small_->run(handle_);
    const std::size_t n = std::size_t(x.elements());
    const int rows = int(x.b * x.s * x.h);
    Doubles o(env, n), o_allow(env, n), dq(env, n), dq_allow(env, n);
    Doubles p(env, std::size_t(rows) * x.s), ds(env, std::size_t(rows) * x.s),
        a(env, std::size_t(rows) * x.s), eps(env, rows), err_d(env, rows);
    AttentionRows out{o.get(),  o_allow.get(), dq.get(),  dq_allow.get(), p.get(),
                      ds.get(), a.get(),       eps.get(), err_d.get()};
    const AttentionProblem problem = reference_problem(t_, x, causal_);
    attention_reference_rows(problem, small_->q_.get(), small_->k_.get(), small_->v_.get(),
                             backward_ ? small_->d_o_.get() : nullptr, nullptr, rows, out,
                             env.stream());
    CUBENCH_CUDA_LAUNCHED();
    const std::string what = describe(x);
    require(env, what + ": O", t_, small_->o_.get(), o.get(), o_allow.get(), n,
            "the small problem's O");
    if (!backward_) return;
    Doubles dk(env, n), dk_allow(env, n), dv(env, n), dv_allow(env, n);
    attention_reference_columns(problem, small_->q_.get(), small_->d_o_.get(), out, dk.get(),
                                dk_allow.get(), dv.get(), dv_allow.get(), env.stream());
    CUBENCH_CUDA_LAUNCHED();
    require(env, what + ": dQ", t_, small_->dq_.get(), dq.get(), dq_allow.get(), n,
            "the small problem's dQ");
    require(env, what + ": dK", t_, small_->dk_.get(), dk.get(), dk_allow.get(), n,
            "the small problem's dK");
    require(env, what + ": dV", t_, small_->dv_.get(), dv.get(), dv_allow.get(), n,
            "the small problem's dV");
  }

  // The queries whose rows of O (and dQ) the full-size check recomputes, as BSHD row indices.
  std::vector<std::int64_t> checked_rows() const {
    const std::int64_t s = x_.s;
    std::set<std::int64_t> rows;
    const std::pair<std::int64_t, std::int64_t> heads[] = {
        {0, 0}, {x_.b / 2, x_.h / 2}, {x_.b - 1, x_.h - 1}};
    for (auto [b, h] : heads)
      for (std::int64_t i : {std::int64_t{0}, std::int64_t{1}, std::int64_t{2}, std::int64_t{3},
                             s / 2 - 1, s / 2, s - 2, s - 1})
        rows.insert((b * s + i) * x_.h + h);
    return {rows.begin(), rows.end()};
  }

  // (2) The full-size run: everything finite, and the checked rows against the reference.
  void check_full_size(Env& env) {
    cudaStream_t s = env.stream();
    const std::size_t n = std::size_t(x_.elements());
    DeviceBuffer nonfinite = env.alloc(sizeof(unsigned long long));
    CUBENCH_CUDA(cudaMemsetAsync(nonfinite.get(), 0, nonfinite.bytes(), s));
    Problem& f = *problem_;
    for (DeviceBuffer* out : {&f.o_, &f.dq_, &f.dk_, &f.dv_})
      if (out->get()) count_nonfinite(t_, out->get(), n, nonfinite.as<unsigned long long>(), s);
    CUBENCH_CUDA_LAUNCHED();
    unsigned long long bad = 0;
    CUBENCH_CUDA(cudaMemcpyAsync(&bad, nonfinite.get(), sizeof bad, cudaMemcpyDeviceToHost, s));
    CUBENCH_CUDA(cudaStreamSynchronize(s));
    const std::string what = describe(x_);
    if (bad > 0)
      throw ValidationError(
          what + ": " + std::to_string(bad) + " elements of the outputs NaN/inf or never written",
          "the real size's outputs finite");

    checked_rows_ = checked_rows();
    const int count = int(checked_rows_.size());
    const std::size_t m = std::size_t(count) * x_.d, scratch = std::size_t(count) * x_.s;
    DeviceBuffer rows = env.alloc(checked_rows_.size() * sizeof(std::int64_t));
    CUBENCH_CUDA(
        cudaMemcpyAsync(rows.get(), checked_rows_.data(), rows.bytes(), cudaMemcpyHostToDevice, s));
    Doubles o(env, m), o_allow(env, m), dq(env, m), dq_allow(env, m), got(env, m);
    Doubles p(env, scratch), ds(env, scratch), a(env, scratch), eps(env, count), err_d(env, count);
    AttentionRows out{o.get(),  o_allow.get(), dq.get(),  dq_allow.get(), p.get(),
                      ds.get(), a.get(),       eps.get(), err_d.get()};
    attention_reference_rows(reference_problem(t_, x_, causal_), f.q_.get(), f.k_.get(), f.v_.get(),
                             backward_ ? f.d_o_.get() : nullptr, rows.as<std::int64_t>(), count,
                             out, s);
    CUBENCH_CUDA_LAUNCHED();
    auto check = [&](const char* name, DeviceBuffer& result, Doubles& ref, Doubles& allow) {
      gather_rows_as_double(t_, result.get(), rows.as<std::int64_t>(), count, int(x_.d), got.get(),
                            s);
      CUBENCH_CUDA_LAUNCHED();
      require(env, what + ": " + name + ", " + std::to_string(count) + " rows", DType::fp64,
              got.get(), ref.get(), allow.get(), m, rows_check(name));
    };
    check("O", f.o_, o, o_allow);
    if (backward_) check("dQ", f.dq_, dq, dq_allow);
    // What plant_fault corrupts: the last of these checked.
    Doubles& ref = backward_ ? dq : o;
    Doubles& allow = backward_ ? dq_allow : o_allow;
    checked_ref_.resize(m);
    checked_allow_.resize(m);
    CUBENCH_CUDA(cudaMemcpyAsync(checked_ref_.data(), ref.get(), m * 8, cudaMemcpyDeviceToHost, s));
    CUBENCH_CUDA(
        cudaMemcpyAsync(checked_allow_.data(), allow.get(), m * 8, cudaMemcpyDeviceToHost, s));
    CUBENCH_CUDA(cudaStreamSynchronize(s));
  }

  bool backward_;
  DType t_;
  bool causal_;
  Shape x_;
  cudnnHandle_t handle_ = nullptr;
  std::unique_ptr<Problem> problem_, small_;
  std::vector<std::int64_t> checked_rows_;
  std::vector<double> checked_ref_, checked_allow_;
  double max_error_ratio_ = 0;
};

void register_attention() {
  Family("attention",
         "cuDNN fused scaled-dot-product attention (cudnn-frontend sdpa): Q, K, V, O in BSHD, "
         "16384 tokens a batch (b = 16384 / seq), model width 2048 (heads = 2048 / head_dim); "
         "fwd the inference forward, fwd_bwd the training forward (with softmax stats) and "
         "backward")
      .axis(string_axis("pass", {"fwd", "fwd_bwd"}))
      .axis(dtype_axis({DType::bf16, DType::fp16}))
      .axis(string_axis("mask", {"causal", "full"}))
      .axis(int_axis("head_dim", {64, 128}))
      .axis(pow2_axis("seq", {512, 1024, 2048, 4096, 8192, 16384}))
      .counter({"max_error_ratio", "", Better::lower,
                "worst checked element's error over its bound; above 1 fails the check"})
      .main_counter("TFLOPS")
      .size_axis("seq")
      // Default run: bf16 at head_dim 128, seq 1024, 4096 and 16384, both masks and passes
      // (12 rows; a sample is 0.1 to 15 ms).
      .default_suite([](const Point& p) {
        const std::int64_t seq = p.get_int("seq");
        return p.get_dtype() == DType::bf16 && p.get_int("head_dim") == 128 &&
               (seq == 1024 || seq == 4096 || seq == 16384);
      })
      .sampling(Sampling::launches_only())
      .size([](const Point& p) {
        const std::int64_t seq = p.get_int("seq"), d = p.get_int("head_dim");
        return forward_flops({kTokens / seq, kWidth / d, seq, d}, p.get_string("mask") == "causal");
      })
      // Every tensor is kTokens x kWidth elements (T bytes): Q, K, V, O, and for the training pass
      // dO, dQ, dK, dV and cuDNN's fp32 dQ accumulator (2T); 32 MiB for the softmax statistics,
      // the workspace and the check's small problem. The H200's pool held 288 and 672 MiB at
      // bf16, as this says.
      .needs([](const Point& p) {
        const std::uint64_t t = std::uint64_t{kTokens} * kWidth * dtype_bytes(p.get_dtype());
        const bool backward = p.get_string("pass") == "fwd_bwd";
        // cuDNN's fused flash attention runs on 8.0 and newer, in fp16 as in bf16.
        return tensor_core_needs(p.get_dtype(), (backward ? 10 : 4) * t + 32 * kMiB) +
               GpuNeeds{80, "cuDNN's fused attention", 0};
      })
      .make([](const Point& p) {
        return std::make_unique<Attention>(p.get_string("pass") == "fwd_bwd", p.get_dtype(),
                                           p.get_string("mask") == "causal", p.get_int("head_dim"),
                                           p.get_int("seq"));
      })
      .add();
}
CUBENCH_REGISTER(register_attention);

}  // namespace
}  // namespace cubench
