// transformer_fwd/<mode>/<attention>/<batch>: torch::nn::Transformer with PyTorch's defaults
// (d_model 512, 8 heads, 6 + 6 layers, feed-forward 2048, dropout 0.1), src = tgt of shape
// (512, batch, 512) — the C++ module is sequence-first. mode `inference` runs under NoGradGuard
// in eval mode; `train` keeps the autograd graph and runs backward. Batch 32, 64, 128, 256.
// attention `module` is the C++ frontend's own MultiheadAttention, which materialises the
// batch x heads x S x S score matrix; `sdpa` (LibTorch 2.x) runs the same module's weights and
// layers with Python's attention (benchmarks/models/transformer_sdpa.h), as python's
// nn.Transformer does: the pair shows how much the attention kernel decides peak memory.
// Counters: peak allocated and reserved bytes of PyTorch's caching allocator since the check
// (its cache emptied then), fragmentation, inactive-split bytes, model bytes, what was allocated
// when the peaks restarted, time per forward. An out-of-memory batch is a skipped
// benchmark saying how much it asked for; the run goes on.
// cpu/transformer_fwd/<mode>/<attention>/2/16: the same model on the CPU with 16-token sequences.
// Check: in eval mode (dropout off) the output on the first two sequences matches a float64 copy
// of the module (its own attention) on the same input (relative L2 error under 1e-4, TF32 off).
#include <random>
#include <string>
#include <vector>

#include "benchmarks/models/transformer_sdpa.h"
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

enum class Attention { module, sdpa };
const char* attention_name(Attention a) { return a == Attention::module ? "module" : "sdpa"; }

struct TransformerRun {
  TransformerRun(bool train, Attention attention, int64_t batch, int64_t seq, torch::Device device)
      : train_(train),
        attention_(attention),
        model_(torch::nn::TransformerOptions(kModel, kHeads)
                   .num_encoder_layers(kLayers)
                   .num_decoder_layers(kLayers)
                   .dim_feedforward(kFeedForward)) {
    model_->to(device);
    input_ = torch::randn({seq, batch, kModel}, torch::TensorOptions().device(device));
  }

  torch::Tensor apply(const torch::Tensor& src, const torch::Tensor& tgt) {
    return attention_ == Attention::sdpa ? sdpa_transformer_forward(*model_, src, tgt)
                                         : model_->forward(src, tgt);
  }

  void forward() {
    model_->train(train_);
    if (train_) {
      model_->zero_grad(/*set_to_none=*/true);  // as Python's model.zero_grad(set_to_none=True)
      apply(input_, input_).mean().backward();
    } else {
      torch::NoGradGuard no_grad;
      apply(input_, input_);
    }
  }

  void validate() {
    torch::NoGradGuard no_grad;
    model_->eval();
    auto slice = input_.narrow(1, 0, std::min<int64_t>(2, input_.size(1))).contiguous();
    torch::Tensor got = apply(slice, slice).to(torch::kDouble);
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
  Attention attention_;
  torch::nn::Transformer model_;
  torch::Tensor input_;
};

class CpuTransformer final : public CpuCase {
 public:
  CpuTransformer(bool train, Attention attention, int64_t batch, int64_t seq)
      : train_(train), attention_(attention), batch_(batch), seq_(seq) {}
  void setup() override {
    seed_torch(static_cast<std::uint64_t>(std::random_device{}()));
    run_ = std::make_unique<TransformerRun>(train_, attention_, batch_, seq_, torch::kCPU);
  }
  void run() override { run_->forward(); }
  void validate() override { run_->validate(); }
  Work work() const override { return {}; }
  std::map<std::string, double> counters(double) const override {
    return {{"model_bytes", run_->model_bytes()}};
  }

 private:
  bool train_;
  Attention attention_;
  int64_t batch_, seq_;
  std::unique_ptr<TransformerRun> run_;
};

#if CUBENCH_TORCH_CUDA
class GpuTransformer final : public BenchmarkCase {
 public:
  GpuTransformer(bool train, Attention attention, int64_t batch)
      : train_(train), attention_(attention), batch_(batch) {}

  void setup(GpuEnv& env) override {
    stream_.bind(env.stream(), env.device());
    auto guard = stream_.use();
    seed_torch(env.fresh_seed());
    torch_compat::allow_tf32(false);
    device_ = env.device();
    reset_torch_memory_peaks(device_, LibraryWorkspaces::release);
    run_ = std::make_unique<TransformerRun>(train_, attention_, batch_, 512,
                                            torch::Device(torch::kCUDA, device_));
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
    // The peak counted is the benchmark's, not the check's.
    allocated_at_start_ = reset_torch_memory_peaks(device_, LibraryWorkspaces::release);
  }

  Work work() const override { return {}; }

  std::map<std::string, double> counters(double) const override {
    auto c = torch_memory_counters(device_);
    c["model_bytes"] = run_->model_bytes();
    c["allocated_at_start_bytes"] = allocated_at_start_;
    return c;
  }

  std::string label() const override {
    return "LibTorch " + torch_compat::version() + ", nn::Transformer, " +
           (attention_ == Attention::sdpa ? "scaled_dot_product_attention" : "its own attention");
  }

 private:
  bool train_;
  Attention attention_;
  int64_t batch_;
  int device_ = 0;
  double allocated_at_start_ = 0;
  TorchStream stream_;
  std::unique_ptr<TransformerRun> run_;
};
#endif

void register_transformer() {
  std::vector<Attention> attentions = {Attention::module};
  if (torch_compat::kHasSdpa) attentions.push_back(Attention::sdpa);
  for (Attention attention : attentions)
    for (bool train : {false, true}) {
      const std::string family =
          std::string(train ? "train/" : "inference/") + attention_name(attention) + "/";
      CpuSpec cpu;
      cpu.name = "cpu/transformer_fwd/" + family + "2/16";
      cpu.make = [train, attention] {
        return std::make_unique<CpuTransformer>(train, attention, 2, 16);
      };
      cpu.size = 2;
      register_cpu_case(cpu);
#if CUBENCH_TORCH_CUDA
      for (int64_t batch : {32, 64, 128, 256}) {
        Spec spec;
        spec.name = "transformer_fwd/" + family + std::to_string(batch);
        spec.make = [train, attention, batch] {
          return std::make_unique<GpuTransformer>(train, attention, batch);
        };
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
