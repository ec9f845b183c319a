// bert_train/<precision>/<seq>/<batch>: one full training step of BERT-base for masked language
// modelling (benchmarks/models/bert.h, as HF's BertForMaskedLM) with the C++ frontend —
// zero_grad (set to none), forward, MLM loss, backward, AdamW (lr 1e-4, betas 0.9/0.999, eps 1e-8,
// weight decay 0.01; multi-tensor, as Python's default on CUDA, but fused in amp_fp16, below) — on
// synthetic data made on the device: random token ids and token types, no padding (every sequence
// full length, no attention mask), 15% of the positions of each sequence labelled with random
// token ids, the rest -100.
//   precision: fp32 (TF32 off), tf32, amp_fp16 (autocast + dynamic loss scaling decided on the
//              device: DeviceLossScaler and ForeachAdamW::step_unless, the fused AdamW kernel with
//              found_inf, so no host sync a step; PyTorch's reference keeps its default AdamW,
//              whose GradScaler reads the flag on the host), amp_bf16 (autocast); seq 128 or 512;
//              batch 32 or 64.
// cpu/bert_train/fp32/16/2: a tiny BERT (BertConfig::tiny) on the CPU, so CI runs the code.
// Counters: samples_per_s, tokens_per_s, the allocator's peaks (TorchCase) and
// loss_error. Work: bert_train_step_flops (6 x matmul parameters x tokens plus attention's
// matmuls, x3 for forward and backward).
// Check, once per configuration (TrainStep::validate), with dropout off (the model in eval mode)
// for the checked step and its reference, since dropout's masks would make them differ. First the
// reference, in fp32 (TF32 off, no autocast) on the same batch: its loss, every parameter's
// gradient, and the update AdamW would make from those gradients and the optimizer's state
// (ForeachAdamW::update_from). Then the step under test runs, and is set against it:
// - its loss within loss_tolerance() of the reference's;
// - every gradient finite, and per tensor pointing the reference's way (cosine), their norms
//   together in proportion (a mis-scaled gradient: every one halved, or left scaled);
// - every parameter finite, and per tensor its applied update pointing the reference update's
//   way and of its size (a layer the optimizer left out does not move);
// bounds in check_bounds(). The key biases have no direction to compare (a constant added to all
// of a query's scores leaves its softmax as it is, so their true gradient is zero and what is
// computed is rounding): their gradient is held to an absolute bound and their update (Adam makes
// any noise lr-sized) is not compared. Planted faults,
// each through run()'s own step: the loss averaged over every position, one tensor's gradient
// negated, every gradient halved, a layer left out of the update. amp_fp16: a step the loss scaler
// skips is retried.
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks/models/bert.h"
#include "fixtures/cubench_torch.h"

namespace cubench {
namespace {

// fixtures/libraries/torch/train_precision.h's, shared with the other training families.
using Precision = TrainPrecision;

// Relative agreement of the step's loss with the fp32 forward's. The loss of a random-init model
// is about ln(30522) = 10.3, a mean over thousands of labelled positions: fp32 differs only in
// the order of its sums (1e-4 is far above that); TF32's 10-bit operands and AMP's 16-bit
// activations move single logits by a few 1e-3 relative, far less the mean (1e-2, 5e-2). The
// planted fault (the loss divided by every position, not the labelled ones) is off by 85%.
double loss_tolerance(Precision p) {
  return p == Precision::fp32 ? 1e-4 : p == Precision::tf32 ? 1e-2 : 5e-2;
}

struct Config {
  Precision precision;
  int64_t seq, batch;
};

// How far the checked step may stand from its fp32 reference, per precision. fp32: the same
// arithmetic (on the CPU, cpu/bert_train with LibTorch 1.13, every cosine and ratio printed as 1
// exactly: tests/test_torch_bert.cpp); the bounds leave room for another summation order. TF32 and
// AMP: not yet measured on the H200 (the check's counters report each figure);
// set so that the planted faults fall outside whatever the noise: a negated gradient gives a
// cosine near -1, halved gradients a norm ratio of 0.5, a frozen layer an update ratio near 0.
struct CheckBounds {
  double min_grad_cosine;      // each tensor's gradient against the reference's
  double min_grad_norm_ratio;  // all gradients' norm against the reference's
  double min_update_cosine;    // each tensor's update against the reference update
  double min_update_ratio;     // each tensor's update norm against the reference update's
};
CheckBounds check_bounds(Precision p) {
  if (p == Precision::fp32) return {0.999, 0.99, 0.999, 0.99};
  return {0.0, 0.8, 0.0, 0.5};
}

enum class Fault {
  none,
  loss_over_every_position,
  negated_gradient,
  halved_gradients,
  frozen_layer
};
// The tensors whose true gradient is zero (the key biases; see the top): their gradient is held
// under kNoiseGradient x the largest reference gradient's norm, their direction not compared. (A
// threshold on the reference's norm would not do: in the CPU row the query weights' real
// gradients are under 1e-4 of the largest.)
bool gradient_is_zero(const std::string& name) {
  return name.size() >= 9 && name.compare(name.size() - 9, 9, ".key.bias") == 0;
}
constexpr double kNoiseGradient = 1e-2;
constexpr const char* kFaultTensor = "layers.0.output.weight";  // whose gradient is negated
constexpr const char* kFrozenLayer = "layers.0.";               // whose update is left out
// The checks' names (ValidationError::check): the loss's, and the per-tensor one of gradients and
// updates with the gradients' norm (which of its figures a fault trips first varies with the
// precision's bounds; the planted faults are in the gradients and updates, so it is theirs).
constexpr const char* kLossCheck = "the loss against an fp32 step's";
constexpr const char* kStepCheck = "the gradients and updates against an fp32 step's";

class TrainStep {
 public:
  TrainStep(const Config& c, const BertConfig& model_config, torch::Device device)
      : c_(c),
        model_(model_config),
        optimizer_(model_->parameters(), AdamWSettings{1e-4, 0.9, 0.999, 1e-8, 0.01}),
        scaler_(device) {
    model_->to(device);
    const auto longs = torch::TensorOptions().device(device).dtype(torch::kLong);
    input_ids_ = torch::randint(model_config.vocab, {c.batch, c.seq}, longs);
    token_types_ = torch::randint(model_config.token_types, {c.batch, c.seq}, longs);
    // round(0.15 seq) labelled positions in every sequence, chosen at random.
    const int64_t labelled = std::max<int64_t>(1, std::llround(0.15 * double(c.seq)));
    auto positions = std::get<1>(
        torch::rand({c.batch, c.seq}, torch::TensorOptions().device(device)).topk(labelled, 1));
    labels_ =
        torch::full({c.batch, c.seq}, -100, longs)
            .scatter(1, positions, torch::randint(model_config.vocab, {c.batch, labelled}, longs));
  }

  // zero_grad, forward, loss, backward, optimizer step, with `fault` in it. Returns the loss (not
  // read: no sync).
  torch::Tensor step(Fault fault = Fault::none) {
    optimizer_.zero_grad();
    torch::Tensor loss;
    {
      const auto autocast = train_autocast(c_.precision, input_ids_.is_cuda());
      torch::Tensor logits = model_->forward(input_ids_, token_types_);
      loss = fault == Fault::loss_over_every_position ? wrong_loss(logits)
                                                      : masked_lm_loss(logits, labels_);
    }  // the logits die here, as HF's output object does in `loss = model(...).loss`
    if (c_.precision == Precision::amp_fp16) {
      scaler_.scale(loss).backward();
      scaler_.step(
          [&](const torch::Tensor& found_inf) {
            faulty_update(fault, [&] { optimizer_.step_unless(found_inf); });
          },
          model_->parameters());
    } else {
      loss.backward();
      faulty_update(fault, [&] { optimizer_.step(); });
    }
    return loss;
  }

  // The checks' own test: the steps from here to the end of the next check carry one of four
  // faults, in turn (planted()).
  std::string arm_fault() {
    static constexpr Fault kInTurn[] = {Fault::loss_over_every_position, Fault::negated_gradient,
                                        Fault::halved_gradients, Fault::frozen_layer};
    planted_ = kInTurn[faults_planted_++ % 4];
    switch (planted_) {
      case Fault::loss_over_every_position:
        return "the MLM loss averaged over every position instead of the labelled ones";
      case Fault::negated_gradient:
        return std::string("the gradient of ") + kFaultTensor + " negated";
      case Fault::halved_gradients:
        return "every gradient halved (as a loss scale unscaled twice would leave it)";
      default:
        return std::string("the parameters under ") + kFrozenLayer + " left out of the update";
    }
  }

  Fault planted() const { return planted_; }
  // The check that must reject the fault armed last.
  const char* fault_check() const {
    return planted_ == Fault::loss_over_every_position ? kLossCheck : kStepCheck;
  }

  // Before the timed step and after it: what it must have written (timed_step.h).
  void before_timed_step() {
    witness_.before_step(model_->parameters(),
                         c_.precision == Precision::amp_fp16 ? &scaler_ : nullptr);
  }
  void require_timed_step_written() { witness_.require_written(model_->named_parameters()); }

  // The check described at the top of the file, of steps that carry `fault`.
  void validate(Fault fault) {
    model_->eval();  // dropout off in the checked step and its reference
    try {
      for (int attempt = 0;; ++attempt) {
        if (check_one_step(fault)) break;
        if (attempt == 24)
          throw ValidationError("the loss scaler skipped 25 steps in a row (scale " +
                                    std::to_string(scaler_.scale_value()) + ")",
                                "the loss scaler's skips");
      }
    } catch (...) {
      model_->train();
      throw;
    }
    model_->train();
  }

  // The check's figures, as counters: the worst of each over the tensors.
  std::map<std::string, double> check_counters() const {
    return {{"loss_error", loss_error_},
            {"min_grad_cosine", worst_.min_grad_cosine},
            {"grad_norm_ratio", grad_norm_ratio_},
            {"min_update_cosine", worst_.min_update_cosine},
            {"min_update_ratio", worst_.min_update_ratio}};
  }

  double step_flops() const { return bert_train_step_flops(model_->c, c_.batch, c_.seq); }

 private:
  // A plausible bug: ignore_index honoured in the sum but not in the count.
  torch::Tensor wrong_loss(const torch::Tensor& logits) const {
    namespace F = torch::nn::functional;
    return F::cross_entropy(
               logits.view({-1, logits.size(-1)}), labels_.view({-1}),
               F::CrossEntropyFuncOptions().ignore_index(-100).reduction(torch::kSum)) /
           double(labels_.numel());
  }

  // The optimizer's step as run() takes it, with `fault` applied around it.
  template <typename OptimizerStep>
  void faulty_update(Fault fault, OptimizerStep&& optimizer_step) {
    if (fault == Fault::none || fault == Fault::loss_over_every_position) {
      optimizer_step();  // the timed path: nothing else
      return;
    }
    torch::NoGradGuard no_grad;
    std::vector<std::pair<torch::Tensor, torch::Tensor>> frozen;  // parameter, its value before
    for (auto& p : model_->named_parameters()) {
      if (!p.value().grad().defined()) continue;
      if (fault == Fault::negated_gradient && p.key() == kFaultTensor)
        p.value().mutable_grad().neg_();
      if (fault == Fault::halved_gradients) p.value().mutable_grad().mul_(0.5);
      if (fault == Fault::frozen_layer && p.key().rfind(kFrozenLayer, 0) == 0)
        frozen.emplace_back(p.value(), p.value().detach().clone());
    }
    optimizer_step();
    for (auto& [param, before] : frozen) param.copy_(before);
  }

  struct Reference {
    double loss;
    std::vector<torch::Tensor> grads, updates;
  };

  // The step's fp32 reference (TF32 off, no autocast, model as it is): loss, gradients, and the
  // update AdamW would make from them. The model's gradients are left cleared.
  Reference reference_step() {
    Reference r;
    {
      torch_compat::Tf32Off fp32;
      optimizer_.zero_grad();
      torch::Tensor loss = masked_lm_loss(model_->forward(input_ids_, token_types_), labels_);
      loss.backward();
      r.loss = loss.item<double>();
      for (const auto& p : model_->parameters())
        r.grads.push_back(p.grad().defined() ? p.grad().detach().clone() : torch::zeros_like(p));
      optimizer_.zero_grad();
    }
    r.updates = optimizer_.update_from(r.grads);
    return r;
  }

  static double cosine(const torch::Tensor& a, const torch::Tensor& b) {
    const auto a64 = a.to(torch::kDouble), b64 = b.to(torch::kDouble);
    const double denominator = (a64.norm() * b64.norm()).item<double>();
    return denominator > 0 ? (a64 * b64).sum().item<double>() / denominator
                           : (a64.norm().item<double>() == b64.norm().item<double>() ? 1.0 : 0.0);
  }

  // False when the loss scaler skipped the step (amp_fp16) and another is needed.
  bool check_one_step(Fault fault) {
    const Reference ref = reference_step();
    const int skipped = scaler_.skipped_steps();
    std::vector<torch::Tensor> before;
    for (const auto& p : model_->parameters()) before.push_back(p.detach().clone());
    const double loss = step(fault).item<double>();
    const std::string what = std::string(name_of(c_.precision, kTrainPrecisions)) + " loss " +
                             std::to_string(loss) + " against an fp32 step's " +
                             std::to_string(ref.loss) + " (dropout off in both)";
    loss_error_ = std::fabs(loss - ref.loss) / std::fabs(ref.loss);
    if (!std::isfinite(loss))
      throw ValidationError("the step's loss is not finite: " + what, "the loss finite");
    if (!(loss_error_ <= loss_tolerance(c_.precision)))
      throw ValidationError(what + ": off by " + std::to_string(loss_error_) + ", more than " +
                                std::to_string(loss_tolerance(c_.precision)),
                            kLossCheck);
    if (scaler_.skipped_steps() > skipped) return false;
    torch::NoGradGuard no_grad;
    const CheckBounds bound = check_bounds(c_.precision);
    const auto named = model_->named_parameters();
    worst_ = {1.0, 0.0, 1.0, std::numeric_limits<double>::infinity()};
    double grad_sq = 0, ref_grad_sq = 0;
    std::string failure;
    auto fail = [&](const std::string& text) {
      if (failure.empty()) failure = text;
    };
    double largest_ref = 0;
    for (const auto& g : ref.grads)
      largest_ref = std::max(largest_ref, g.to(torch::kDouble).norm().item<double>());
    for (std::size_t i = 0; i < named.size(); ++i) {
      const std::string& name = named[i].key();
      const torch::Tensor& p = named[i].value();
      const double ref_grad_norm = ref.grads[i].to(torch::kDouble).norm().item<double>();
      if (!p.grad().defined() || !torch::isfinite(p.grad()).all().item<bool>()) {
        fail(name + "'s gradient is missing or not finite");
        continue;
      }
      if (!torch::isfinite(p).all().item<bool>()) {
        fail(name + " is not finite after the step");
        continue;
      }
      grad_sq += p.grad().to(torch::kDouble).pow(2).sum().item<double>();
      ref_grad_sq += ref_grad_norm * ref_grad_norm;
      if (gradient_is_zero(name)) {
        const double norm = p.grad().to(torch::kDouble).norm().item<double>();
        if (!(norm <= kNoiseGradient * largest_ref))
          fail(name + "'s gradient, zero in exact arithmetic, is " +
               std::to_string(norm / largest_ref) + " of the largest reference gradient");
        continue;
      }
      const double g_cos = cosine(p.grad(), ref.grads[i]);
      const torch::Tensor update = p.detach() - before[i];
      const double u_cos = cosine(update, ref.updates[i]);
      const double ref_norm = ref.updates[i].to(torch::kDouble).norm().item<double>();
      const double u_ratio =
          ref_norm > 0 ? update.to(torch::kDouble).norm().item<double>() / ref_norm : 1.0;
      worst_.min_grad_cosine = std::min(worst_.min_grad_cosine, g_cos);
      worst_.min_update_cosine = std::min(worst_.min_update_cosine, u_cos);
      // the ratio furthest from 1, either way
      if (std::fabs(std::log(u_ratio)) > std::fabs(std::log(worst_.min_update_ratio)) ||
          !std::isfinite(worst_.min_update_ratio))
        worst_.min_update_ratio = u_ratio;
      if (!(g_cos >= bound.min_grad_cosine))
        fail(name + "'s gradient points away from the reference's (cosine " +
             std::to_string(g_cos) + ", at least " + std::to_string(bound.min_grad_cosine) + ")");
      if (!(u_cos >= bound.min_update_cosine))
        fail(name + "'s update points away from the reference update (cosine " +
             std::to_string(u_cos) + ", at least " + std::to_string(bound.min_update_cosine) + ")");
      if (!(u_ratio >= bound.min_update_ratio && u_ratio <= 1 / bound.min_update_ratio))
        fail(name + "'s update is " + std::to_string(u_ratio) +
             " x the reference update's size (within " + std::to_string(bound.min_update_ratio) +
             " and its inverse)");
    }
    grad_norm_ratio_ = ref_grad_sq > 0 ? std::sqrt(grad_sq / ref_grad_sq) : 1.0;
    if (!(grad_norm_ratio_ >= bound.min_grad_norm_ratio &&
          grad_norm_ratio_ <= 1 / bound.min_grad_norm_ratio))
      fail("the gradients' norm is " + std::to_string(grad_norm_ratio_) +
           " x the reference's (within " + std::to_string(bound.min_grad_norm_ratio) +
           " and its inverse)");
    if (!failure.empty()) throw ValidationError(failure + "; " + what, kStepCheck);
    return true;
  }

  Config c_;
  BertForMaskedLM model_;
  ForeachAdamW optimizer_;
  DeviceLossScaler scaler_;  // amp_fp16's; its state is read on the host only by the check
  torch::Tensor input_ids_, token_types_, labels_;
  Fault planted_ = Fault::none;  // the fault armed last
  int faults_planted_ = 0;
  double loss_error_ = 0, grad_norm_ratio_ = 1;
  CheckBounds worst_{1, 1, 1, 1};  // the checked step's worst figures (min_update_ratio: furthest)
  TimedStepWitness witness_;
};

class BertTrain final : public TorchCase {
 public:
  BertTrain(Config c, BertConfig model)
      : TorchCase(TorchMath{c.precision != Precision::fp32}), c_(c), model_(model) {}

  std::string fault_check() const override { return step_->fault_check(); }

  Work work() const override { return {step_->step_flops(), std::nullopt, 0}; }

 private:
  void set_up(Env&) override { step_ = std::make_unique<TrainStep>(c_, model_, device()); }
  void timed_run(Env&) override { step_->step(fault()); }
  void poison_outputs(Env&) override { step_->before_timed_step(); }
  void check(Env&) override {
    step_->require_timed_step_written();
    step_->validate(fault());
  }
  std::string arm_fault(Env&) override { return step_->arm_fault(); }
  int fault_count() const override { return 4; }  // TrainStep::arm_fault's, in turn

  // The fault run()'s steps and the check's carry.
  Fault fault() const { return fault_armed() ? step_->planted() : Fault::none; }

  std::map<std::string, double> own_counters(double seconds) const override {
    std::map<std::string, double> c = step_->check_counters();
    c["samples_per_s"] = double(c_.batch) / seconds;
    c["tokens_per_s"] = double(c_.batch * c_.seq) / seconds;
    return c;
  }

  std::string label_detail() const override { return "checked with dropout off"; }

  Config c_;
  BertConfig model_;
  std::unique_ptr<TrainStep> step_;
};

// A BERT-base step's device memory, from LibTorch's reserved peak on the H200
// (peak_reserved_bytes of the timed step): per sequence about 27 MiB + seq x 1.04 MiB in fp32 and
// tf32 (0.85 MiB with autocast), measured at seq 128 and 512, batch 32 and 64; and 1 GiB for the
// model, its optimizer state and LibTorch's own. Every precision's check runs an fp32 step of the
// same batch, so the fp32 figure is every precision's.
std::uint64_t bert_step_bytes(TrainPrecision, std::int64_t seq, std::int64_t batch) {
  const double per_sequence_mib = 26.7 + double(seq) * 1.04;
  return static_cast<std::uint64_t>(double(batch) * per_sequence_mib * double(kMiB)) + kGiB;
}

void add_bert_family(const std::string& name, std::vector<Precision> precisions,
                     std::vector<std::int64_t> seq, std::vector<std::int64_t> batch,
                     BertConfig model, Timer timer) {
  // Default run: amp_bf16 at seq 128, batch 32; the rest with --cubench_suite=full.
  model_family(name, "one BERT masked-LM training step (forward, loss, backward, AdamW)", timer,
               [](const Point& p) {
                 return p.get_enum<Precision>("precision") == Precision::amp_bf16 &&
                        p.get_int("seq") == 128 && p.get_int("batch") == 32;
               })
      .axis(enum_axis("precision", kTrainPrecisions, precisions))
      .axis(int_axis("seq", seq))
      .axis(int_axis("batch", batch))
      .counter({"samples_per_s", "seq/s", Better::higher, "sequences trained per second"})
      .counter({"tokens_per_s", "tok/s", Better::higher, "tokens trained per second"})
      .counter({"loss_error", "", Better::lower,
                "checked step's loss against an fp32 step's (relative; dropout off)"})
      .counter({"min_grad_cosine", "", Better::higher,
                "checked step: the least cosine of a tensor's gradient with the fp32 reference's"})
      .counter({"grad_norm_ratio", "", Better::none,
                "checked step: all gradients' norm over the fp32 reference's"})
      .counter({"min_update_cosine", "", Better::higher,
                "checked step: the least cosine of a tensor's update with the fp32 reference "
                "update"})
      .counter({"min_update_ratio", "", Better::none,
                "checked step: a tensor's update norm over the reference update's, the one "
                "furthest from 1"})
      .main_counter("samples_per_s")
      .size_axis("batch")
      .size([](const Point& p) { return double(p.get_int("seq")) * p.get_int("batch"); })
      .needs([](const Point& p) {
        const Precision precision = p.get_enum<Precision>("precision");
        return train_precision_needs(
            precision, bert_step_bytes(precision, p.get_int("seq"), p.get_int("batch")));
      })
      .make([model](const Point& p) {
        Config c{p.get_enum<Precision>("precision"), p.get_int("seq"), p.get_int("batch")};
        return std::make_unique<BertTrain>(c, model);
      })
      .add();
}

void register_bert_train() {
  add_bert_family("cpu/bert_train", {Precision::fp32}, {16}, {2}, BertConfig::tiny(),
                  Timer::host_clock);
#if CUBENCH_TORCH_CUDA
  add_bert_family("bert_train",
                  {Precision::fp32, Precision::tf32, Precision::amp_fp16, Precision::amp_bf16},
                  {128, 512}, {32, 64}, BertConfig(), Timer::cuda_events);
#endif
}
CUBENCH_REGISTER(register_bert_train);

}  // namespace
}  // namespace cubench
