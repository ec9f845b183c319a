// resnet50_train/<precision>/<format>/<res>/<batch>: one full training step of ResNet-50 v1.5
// (benchmarks/models/resnet50.h) with the C++ frontend — zero_grad, forward, cross-entropy,
// backward, SGD (momentum 0.9, lr 0.1; multi-tensor, as Python's default on CUDA) — on synthetic
// data made on the device.
//   precision: fp32 (TF32 off in cuBLAS and cuDNN), tf32, amp_fp16 (autocast + our dynamic loss
//              scaling), amp_bf16 (autocast); format: nchw or channels_last
//   res 224 with 1000 classes (batch 64, 128, 256); res 32 with 10 classes (CIFAR-10, batch 256)
// resnet50_train_graph/...: the whole step captured once in a CUDA graph and replayed (not
// amp_fp16: its loss scaler reads a flag on the host every step).
// cpu/resnet50_train/fp32/nchw/32/8: the same step on the CPU (the seed articles' baseline).
// cuDNN benchmark mode is on; its autotuning happens in the harness's warm-up.
// Model: 3x the forward FLOPs (resnet50_forward_flops) per image. Check, once per configuration:
// the step's loss on its batch equals an fp32 forward of the same model on the same batch within
// the precision's tolerance, it is finite, and the step changed the weights (or, amp_fp16, the
// scaler skipped it for an inf gradient). The graph variant is checked on a replay.
#include <cmath>
#include <functional>
#include <random>
#include <string>

#include "benchmarks/models/resnet50.h"
#include "fixtures/check.h"
#include "fixtures/compat/torch_compat.h"
#include "fixtures/cpu_runner.h"
#include "fixtures/registry.h"
#include "fixtures/torch/foreach_sgd.h"
#include "fixtures/torch/loss_scaler.h"
#include "fixtures/torch/torch_support.h"

#if CUBENCH_TORCH_CUDA
#include <ATen/cuda/CUDAGraph.h>
#endif

namespace cubench {
namespace {

enum class Precision { fp32, tf32, amp_fp16, amp_bf16 };

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::fp32:
      return "fp32";
    case Precision::tf32:
      return "tf32";
    case Precision::amp_fp16:
      return "amp_fp16";
    case Precision::amp_bf16:
      return "amp_bf16";
  }
  return "?";
}

// Relative agreement between the step's loss and an fp32 forward on the same batch.
double loss_tolerance(Precision p) {
  return p == Precision::fp32 ? 1e-3 : p == Precision::tf32 ? 1e-2 : 5e-2;
}

struct Config {
  Precision precision;
  bool channels_last;
  int64_t res, batch;
  int64_t classes() const { return res == 224 ? 1000 : 10; }
  std::string name(const std::string& prefix) const {
    return prefix + "/" + precision_name(precision) +
           (channels_last ? "/channels_last/" : "/nchw/") + std::to_string(res) + "/" +
           std::to_string(batch);
  }
};

// One training step's state: model, optimizer, scaler and a synthetic batch on one device.
class TrainStep {
 public:
  TrainStep(const Config& c, torch::Device device)
      : c_(c), model_(c.classes()), optimizer_(model_->parameters(), /*lr=*/0.1, /*momentum=*/0.9) {
    model_->to(device);
    auto images = torch::randn({c.batch, 3, c.res, c.res}, torch::TensorOptions().device(device));
    labels_ = torch::randint(c.classes(), {c.batch},
                             torch::TensorOptions().device(device).dtype(torch::kLong));
    if (c.channels_last) {
      images = images.contiguous(torch::MemoryFormat::ChannelsLast);
      for (auto& p : model_->parameters())
        if (p.dim() == 4) p.set_data(p.data().contiguous(torch::MemoryFormat::ChannelsLast));
    }
    images_ = images;
  }

  // zero_grad, forward, loss, backward, optimizer step. Returns the loss (not read here: no sync).
  torch::Tensor step() {
    optimizer_.zero_grad();
    torch::Tensor loss;
    {
      const bool amp = c_.precision == Precision::amp_fp16 || c_.precision == Precision::amp_bf16;
      torch_compat::CudaAutocast autocast(
          amp && images_.is_cuda(),
          c_.precision == Precision::amp_bf16 ? at::kBFloat16 : at::kHalf);
      loss = torch::nn::functional::cross_entropy(model_->forward(images_), labels_);
    }
    if (c_.precision == Precision::amp_fp16) {
      scaler_.scale(loss).backward();
      scaler_.step([this] { optimizer_.step(); }, model_->parameters());
    } else {
      loss.backward();
      optimizer_.step();
    }
    return loss;
  }

  // The check described at the top of the file, on the step `run_step` makes (the eager step, or
  // a graph's replay) and the loss tensor it returns.
  void validate(const std::function<torch::Tensor()>& run_step) {
    double reference;
    {
      torch::NoGradGuard
          no_grad;  // fp32, same batch, same weights: BN in train mode uses batch stats
      torch_compat::allow_tf32(false);
      reference =
          torch::nn::functional::cross_entropy(model_->forward(images_.to(torch::kFloat)), labels_)
              .item<double>();
      torch_compat::allow_tf32(c_.precision != Precision::fp32);
    }
    auto before = model_->fc->weight.detach().clone();
    int skipped = scaler_.skipped_steps();
    double loss = run_step().item<double>();
    std::string what =
        "loss " + std::to_string(loss) + " against an fp32 forward's " + std::to_string(reference);
    if (!std::isfinite(loss)) throw ValidationError("the step's loss is not finite: " + what);
    if (std::fabs(loss - reference) > loss_tolerance(c_.precision) * std::fabs(reference))
      throw ValidationError(what + ": off by more than " +
                            std::to_string(loss_tolerance(c_.precision)));
    bool changed = !torch::equal(before, model_->fc->weight.detach());
    if (!changed && scaler_.skipped_steps() == skipped)
      throw ValidationError("the optimizer step left the weights unchanged (" + what + ")");
  }

  ResNet50& model() { return model_; }
  const Config& config() const { return c_; }
  double step_flops() const {
    return 3.0 * resnet50_forward_flops(c_.res, c_.classes()) * double(c_.batch);
  }

 private:
  Config c_;
  ResNet50 model_;
  ForeachSGD optimizer_;
  LossScaler scaler_;
  torch::Tensor images_, labels_;
};

class CpuTrain final : public CpuCase {
 public:
  explicit CpuTrain(Config c) : c_(c) {}
  void setup() override {
    seed_torch(static_cast<std::uint64_t>(std::random_device{}()));
    step_ = std::make_unique<TrainStep>(c_, torch::kCPU);
  }
  void run() override { step_->step(); }
  void validate() override {
    step_->validate([this] { return step_->step(); });
  }
  Work work() const override { return {step_->step_flops(), std::nullopt, 0}; }
  std::map<std::string, double> counters(double seconds) const override {
    return {{"images_per_s", double(c_.batch) / seconds}};
  }
  std::string label() const override {
    return "LibTorch " + torch_compat::version() + " on the CPU";
  }

 private:
  Config c_;
  std::unique_ptr<TrainStep> step_;
};

#if CUBENCH_TORCH_CUDA
// On the GPU: LibTorch works on the benchmark's own stream, so the harness's events time it.
class GpuTrain final : public BenchmarkCase {
 public:
  GpuTrain(Config c, bool graph) : c_(c), graph_(graph) {}

  void setup(GpuEnv& env) override {
    stream_.bind(env.stream(), env.device());
    auto guard = stream_.use();
    seed_torch(env.fresh_seed());
    torch_compat::allow_tf32(c_.precision != Precision::fp32);
    torch_compat::cudnn_benchmark(true);
    step_ = std::make_unique<TrainStep>(c_, torch::Device(torch::kCUDA, env.device()));
    if (graph_) {
      for (int i = 0; i < 3; ++i) step_->step();  // warm-up before capture: autotuning, buffers
      CUBENCH_CUDA(cudaStreamSynchronize(env.stream()));
      graph_exec_ = std::make_unique<at::cuda::CUDAGraph>();
      graph_exec_->capture_begin();
      graph_loss_ = step_->step();  // lives in the graph's pool: each replay rewrites it
      graph_exec_->capture_end();
    }
  }

  void run(GpuEnv&) override {
    auto guard = stream_.use();
    if (graph_exec_)
      graph_exec_->replay();
    else
      step_->step();
  }

  void validate(GpuEnv&) override {
    auto guard = stream_.use();
    if (graph_exec_)
      step_->validate([this] {
        graph_exec_->replay();
        return graph_loss_;
      });
    else
      step_->validate([this] { return step_->step(); });
    // The peaks counted are the training steps', not the check's.
    allocated_at_start_ = reset_torch_memory_peaks(
        stream_.device(), graph_ ? LibraryWorkspaces::keep : LibraryWorkspaces::release);
  }

  Work work() const override { return {step_->step_flops(), std::nullopt, 0}; }

  std::map<std::string, double> counters(double seconds) const override {
    auto c = torch_memory_counters(stream_.device());
    c["images_per_s"] = double(c_.batch) / seconds;
    c["allocated_at_start_bytes"] = allocated_at_start_;
    return c;
  }

  std::string label() const override {
    return std::string("LibTorch ") + torch_compat::version() +
           (graph_ ? ", CUDA graph replay" : "");
  }

 private:
  Config c_;
  bool graph_;
  TorchStream stream_;
  std::unique_ptr<TrainStep> step_;
  std::unique_ptr<at::cuda::CUDAGraph> graph_exec_;
  torch::Tensor graph_loss_;
  double allocated_at_start_ = 0;
};
#endif

void register_resnet50() {
  CpuSpec cpu;
  Config small{Precision::fp32, false, 32, 8};
  cpu.name = small.name("cpu/resnet50_train");
  cpu.make = [small] { return std::make_unique<CpuTrain>(small); };
  cpu.size = 8;
  register_cpu_case(cpu);
#if CUBENCH_TORCH_CUDA
  std::vector<std::pair<int64_t, int64_t>> shapes = {{224, 64}, {224, 128}, {224, 256}, {32, 256}};
  for (Precision p : {Precision::fp32, Precision::tf32, Precision::amp_fp16, Precision::amp_bf16})
    for (bool cl : {false, true})
      for (auto [res, batch] : shapes)
        for (bool graph : {false, true}) {
          if (graph && (p == Precision::amp_fp16 || res != 32)) continue;
          Config c{p, cl, res, batch};
          Spec spec;
          spec.name = c.name(graph ? "resnet50_train_graph" : "resnet50_train");
          spec.make = [c, graph] { return std::make_unique<GpuTrain>(c, graph); };
          spec.batch = 1;
          spec.size = double(res) * res * batch;
          register_case(spec);
        }
#endif
}
CUBENCH_REGISTER(register_resnet50);

}  // namespace
}  // namespace cubench
