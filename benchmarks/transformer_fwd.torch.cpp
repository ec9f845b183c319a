// transformer_fwd/<mode>/module/<batch>: torch::nn::Transformer with PyTorch's defaults
// (d_model 512, 8 heads, 6 + 6 layers, feed-forward 2048, dropout 0.1), src = tgt of shape
// (512, batch, 512) — the C++ module is sequence-first. mode `inference` runs under NoGradGuard;
// `train` keeps the autograd graph and runs backward. Batch 32, 64, 128, 256.
// The `module` attention is the C++ frontend's own, which materialises the batch x heads x S x S
// score matrix: what decides peak memory here. (The `sdpa` variant, the same layers on
// at::scaled_dot_product_attention, needs LibTorch 2.x and is not written yet.)
// Counters: peak allocated and reserved bytes of PyTorch's caching allocator, fragmentation,
// inactive-split bytes, model bytes, time per forward. An out-of-memory batch is a skipped
// benchmark saying how much it asked for; the run goes on.
// cpu/transformer_fwd/<mode>/module/2/16: the same model on the CPU with 16-token sequences.
// Check: in eval mode (dropout off) the output on the first two sequences matches a float64 copy
// of the model on the same input (relative L2 error under 1e-4, TF32 off).
#include <random>
#include <string>

#include "fixtures/check.h"
#include "fixtures/compat/torch_compat.h"
#include "fixtures/cpu_runner.h"
#include "fixtures/registry.h"
#include "fixtures/torch/torch_support.h"

#if CUBENCH_TORCH_CUDA
#include <c10/util/Exception.h>
#endif

namespace cubench {
namespace {

constexpr int64_t kModel = 512, kHeads = 8, kLayers = 6, kFeedForward = 2048;

struct TransformerRun {
  TransformerRun(bool train, int64_t batch, int64_t seq, torch::Device device)
      : train_(train),
        model_(torch::nn::TransformerOptions(kModel, kHeads)
                   .num_encoder_layers(kLayers)
                   .num_decoder_layers(kLayers)
                   .dim_feedforward(kFeedForward)) {
    model_->to(device);
    input_ = torch::randn({seq, batch, kModel}, torch::TensorOptions().device(device));
  }

  void forward() {
    model_->train(train_);
    if (train_) {
      model_->zero_grad();
      model_->forward(input_, input_).mean().backward();
    } else {
      torch::NoGradGuard no_grad;
      model_->forward(input_, input_);
    }
  }

  void validate() {
    torch::NoGradGuard no_grad;
    model_->eval();
    auto slice = input_.narrow(1, 0, std::min<int64_t>(2, input_.size(1))).contiguous();
    torch::Tensor got = model_->forward(slice, slice).to(torch::kDouble);
    torch::nn::Transformer reference =
        std::dynamic_pointer_cast<torch::nn::TransformerImpl>(model_->clone());
    reference->to(torch::kDouble);
    reference->eval();
    torch::Tensor want = reference->forward(slice.to(torch::kDouble), slice.to(torch::kDouble));
    double err = ((got - want).norm() / want.norm()).item<double>();
    if (!(err <= 1e-4))
      throw ValidationError("transformer output differs from a float64 copy: relative L2 error " +
                            std::to_string(err));
  }

  double model_bytes() const {
    double bytes = 0;
    for (const auto& p : model_->parameters()) bytes += double(p.numel()) * p.element_size();
    return bytes;
  }

  bool train_;
  torch::nn::Transformer model_;
  torch::Tensor input_;
};

class CpuTransformer final : public CpuCase {
 public:
  CpuTransformer(bool train, int64_t batch, int64_t seq)
      : train_(train), batch_(batch), seq_(seq) {}
  void setup() override {
    seed_torch(static_cast<std::uint64_t>(std::random_device{}()));
    run_ = std::make_unique<TransformerRun>(train_, batch_, seq_, torch::kCPU);
  }
  void run() override { run_->forward(); }
  void validate() override { run_->validate(); }
  Work work() const override { return {}; }
  std::map<std::string, double> counters(double) const override {
    return {{"model_bytes", run_->model_bytes()}};
  }

 private:
  bool train_;
  int64_t batch_, seq_;
  std::unique_ptr<TransformerRun> run_;
};

#if CUBENCH_TORCH_CUDA
class GpuTransformer final : public BenchmarkCase {
 public:
  GpuTransformer(bool train, int64_t batch) : train_(train), batch_(batch) {}

  void setup(GpuEnv& env) override {
    stream_.bind(env.stream(), env.device());
    auto guard = stream_.use();
    seed_torch(env.fresh_seed());
    torch_compat::allow_tf32(false);
    device_ = env.device();
    reset_torch_memory_peaks(device_);
    run_ =
        std::make_unique<TransformerRun>(train_, batch_, 512, torch::Device(torch::kCUDA, device_));
  }

  void run(GpuEnv&) override {
    auto guard = stream_.use();
    try {
      run_->forward();
    } catch (const c10::OutOfMemoryError& e) {
      throw OutOfMemory(std::string("PyTorch's allocator: ") + e.what_without_backtrace(), 0);
    }
  }

  void validate(GpuEnv&) override {
    auto guard = stream_.use();
    run_->validate();
    reset_torch_memory_peaks(device_);  // the peak counted is the benchmark's, not the check's
  }

  Work work() const override { return {}; }

  std::map<std::string, double> counters(double) const override {
    auto c = torch_memory_counters(device_);
    c["model_bytes"] = run_->model_bytes();
    return c;
  }

  std::string label() const override {
    return "LibTorch " + torch_compat::version() + ", nn::Transformer";
  }

 private:
  bool train_;
  int64_t batch_;
  int device_ = 0;
  TorchStream stream_;
  std::unique_ptr<TransformerRun> run_;
};
#endif

void register_transformer() {
  for (bool train : {false, true}) {
    const std::string mode = train ? "train" : "inference";
    CpuSpec cpu;
    cpu.name = "cpu/transformer_fwd/" + mode + "/module/2/16";
    cpu.make = [train] { return std::make_unique<CpuTransformer>(train, 2, 16); };
    cpu.size = 2;
    register_cpu_case(cpu);
#if CUBENCH_TORCH_CUDA
    for (int64_t batch : {32, 64, 128, 256}) {
      Spec spec;
      spec.name = "transformer_fwd/" + mode + "/module/" + std::to_string(batch);
      spec.make = [train, batch] { return std::make_unique<GpuTransformer>(train, batch); };
      spec.batch = 1;
      spec.size = double(batch);
      register_case(spec);
    }
#endif
  }
}
CUBENCH_REGISTER(register_transformer);

}  // namespace
}  // namespace cubench
