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
// Counters: samples_per_s, tokens_per_s, the allocator's peaks (TorchPlace::memory_counters) and
// loss_error. Work: bert_train_step_flops (6 x matmul parameters x tokens plus attention's
// matmuls, x3 for forward and backward).
// Check, once per configuration (TrainStep::validate), with dropout off (the model in eval mode)
// for the checked step and its reference, since dropout's masks would make them differ: an fp32
// forward (TF32 off, no autocast) on the same batch gives the reference loss; then the step under
// test runs; its loss must match the reference within loss_tolerance(), every gradient and
// every updated parameter must be finite, and the parameters must have moved (the decoder bias by
// at least lr / 10). amp_fp16: a step the loss scaler skips is retried.
#include <cmath>
#include <string>

#include "benchmarks/models/bert.h"
#include "fixtures/cubench_torch.h"

namespace cubench {
namespace {

// fixtures/detail/torch/train_precision.h's, shared with the other training families.
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

  // zero_grad, forward, loss, backward, optimizer step. Returns the loss (not read: no sync).
  torch::Tensor step() {
    optimizer_.zero_grad();
    torch::Tensor loss;
    {
      const auto autocast = train_autocast(c_.precision, input_ids_.is_cuda());
      torch::Tensor logits = model_->forward(input_ids_, token_types_);
      loss = fault_armed_ ? wrong_loss(logits) : masked_lm_loss(logits, labels_);
    }  // the logits die here, as HF's output object does in `loss = model(...).loss`
    if (c_.precision == Precision::amp_fp16) {
      scaler_.scale(loss).backward();
      scaler_.step([this](const torch::Tensor& found_inf) { optimizer_.step_unless(found_inf); },
                   model_->parameters());
    } else {
      loss.backward();
      optimizer_.step();
    }
    return loss;
  }

  std::string arm_fault() {
    fault_armed_ = true;
    return "the MLM loss averaged over every position instead of the labelled ones";
  }

  void validate() {
    model_->eval();  // dropout off in the checked step and its reference
    try {
      for (int attempt = 0;; ++attempt) {
        if (check_one_step()) break;
        if (attempt == 24)
          throw ValidationError("the loss scaler skipped 25 steps in a row (scale " +
                                std::to_string(scaler_.scale_value()) + ")");
      }
    } catch (...) {
      model_->train();
      throw;
    }
    model_->train();
  }

  double loss_error() const { return loss_error_; }
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

  double reference_loss() {
    torch::NoGradGuard no_grad;
    torch_compat::allow_tf32(false);
    const double value =
        masked_lm_loss(model_->forward(input_ids_, token_types_), labels_).item<double>();
    torch_compat::allow_tf32(c_.precision != Precision::fp32);
    return value;
  }

  // False when the loss scaler skipped the step (amp_fp16) and another is needed.
  bool check_one_step() {
    const double reference = reference_loss();
    const int skipped = scaler_.skipped_steps();
    const torch::Tensor bias_before = model_->decoder_bias.detach().clone();
    const double loss = step().item<double>();
    const std::string what = std::string(train_precision_name(c_.precision)) + " loss " +
                             std::to_string(loss) + " against an fp32 forward's " +
                             std::to_string(reference) + " (dropout off in both)";
    loss_error_ = std::fabs(loss - reference) / std::fabs(reference);
    if (!std::isfinite(loss)) throw ValidationError("the step's loss is not finite: " + what);
    if (!(loss_error_ <= loss_tolerance(c_.precision)))
      throw ValidationError(what + ": off by " + std::to_string(loss_error_) + ", more than " +
                            std::to_string(loss_tolerance(c_.precision)));
    if (scaler_.skipped_steps() > skipped) return false;
    torch::NoGradGuard no_grad;
    // Adam moves every element with a gradient by about lr; weight decay alone, by lr wd |p|
    // (1e-10 here): a step that did not update shows up as a bias that stayed put.
    const double lr = optimizer_.settings().lr;
    const double moved = (model_->decoder_bias - bias_before).abs().max().item<double>();
    if (!(moved >= 0.1 * lr))
      throw ValidationError("the step did not move the decoder bias (largest change " +
                            std::to_string(moved) + ", lr " + std::to_string(lr) + "); " + what);
    const auto params = model_->parameters();
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (!params[i].grad().defined() || !torch::isfinite(params[i].grad()).all().item<bool>())
        throw ValidationError("parameter " + std::to_string(i) +
                              "'s gradient is missing or not finite; " + what);
      if (!torch::isfinite(params[i]).all().item<bool>())
        throw ValidationError("parameter " + std::to_string(i) + " is not finite after the step");
    }
    return true;
  }

  Config c_;
  BertForMaskedLM model_;
  ForeachAdamW optimizer_;
  DeviceLossScaler scaler_;  // amp_fp16's; its state is read on the host only by the check
  torch::Tensor input_ids_, token_types_, labels_;
  bool fault_armed_ = false;
  double loss_error_ = 0;
};

class BertTrain final : public BenchmarkCase {
 public:
  BertTrain(Config c, BertConfig model) : c_(c), model_(model) {}

  void setup(Env& env) override {
    place_.bind(env);
    auto guard = place_.use();
    seed_torch(env.fresh_seed());
    if (place_.on_gpu()) torch_compat::allow_tf32(c_.precision != Precision::fp32);
    step_ = std::make_unique<TrainStep>(c_, model_, place_.device());
  }

  std::string plant_fault(Env&) override { return step_->arm_fault(); }

  void run(Env&) override {
    auto guard = place_.use();
    step_->step();
  }

  void validate(Env&) override {
    auto guard = place_.use();
    step_->validate();
    place_.restart_memory_peaks(LibraryWorkspaces::release);  // the steps' peaks, not the check's
  }

  Work work() const override { return {step_->step_flops(), std::nullopt, 0}; }

  std::map<std::string, double> counters(double seconds) const override {
    std::map<std::string, double> c = place_.memory_counters();
    c["samples_per_s"] = double(c_.batch) / seconds;
    c["tokens_per_s"] = double(c_.batch * c_.seq) / seconds;
    c["loss_error"] = step_->loss_error();
    return c;
  }

  std::string label() const override {
    return std::string("LibTorch ") + torch_compat::version() + place_.where() +
           ", checked with dropout off";
  }

 private:
  Config c_;
  BertConfig model_;
  TorchPlace place_;
  std::unique_ptr<TrainStep> step_;
};

void add_bert_family(const std::string& name, std::vector<std::string> precisions,
                     std::vector<std::int64_t> seq, std::vector<std::int64_t> batch,
                     BertConfig model, Timer timer) {
  Family(name, "one BERT masked-LM training step (forward, loss, backward, AdamW)")
      .axis(string_axis("precision", precisions))
      .axis(int_axis("seq", seq))
      .axis(int_axis("batch", batch))
      .counter({"samples_per_s", "seq/s", Better::higher, "sequences trained per second"})
      .counter({"tokens_per_s", "tok/s", Better::higher, "tokens trained per second"})
      .counter({"loss_error", "", Better::lower,
                "checked step's loss against an fp32 forward's (relative; dropout off)"})
      .main_counter("samples_per_s")
      .size_axis("batch")
      // Default run: amp_bf16 at seq 128, batch 32 (and the CPU step); the rest with
      // --cubench_suite=full.
      .default_suite([timer](const Point& p) {
        if (timer == Timer::host_clock) return true;
        return p.get_string("precision") == "amp_bf16" && p.get_int("seq") == 128 &&
               p.get_int("batch") == 32;
      })
      .timer(timer)
      .sampling(Sampling::runs_per_sample(1))
      .size([](const Point& p) { return double(p.get_int("seq")) * p.get_int("batch"); })
      .make([model](const Point& p) {
        Config c{parse_train_precision("bert_train", p.get_string("precision")), p.get_int("seq"),
                 p.get_int("batch")};
        return std::make_unique<BertTrain>(c, model);
      })
      .add();
}

void register_bert_train() {
  add_bert_family("cpu/bert_train", {"fp32"}, {16}, {2}, BertConfig::tiny(), Timer::host_clock);
#if CUBENCH_TORCH_CUDA
  add_bert_family("bert_train", {"fp32", "tf32", "amp_fp16", "amp_bf16"}, {128, 512}, {32, 64},
                  BertConfig(), Timer::cuda_events);
#endif
}
CUBENCH_REGISTER(register_bert_train);

}  // namespace
}  // namespace cubench
