// resnet50_infer/<precision>/<format>/<mode>/<batch>: one forward of ResNet-50 v1.5
// (benchmarks/models/resnet50.h) in eval mode under InferenceMode, 224x224 images, 1000 classes,
// on a random batch made on the device, with the C++ frontend.
//   precision: fp32 (TF32 off in cuBLAS and cuDNN), tf32 (TF32 allowed in both), fp16 and bf16
//              (the model and the input converted to that type, as Python's model.half() or
//              .to(torch.bfloat16): no autocast); format: nchw or channels_last;
//   mode: eager, graph (the forward captured once in a CUDA graph on a static input and
//         replayed), or compiled (torchvision's resnet50 exported at the configuration's shapes
//         and compiled by AOTInductor, tools/aoti-export, run from C++ with this model's weights
//         handed to it by name: compiled_module.h; fp16 and bf16 channels-last only); batch 1, 8,
//         64, 256.
// cpu/resnet50_infer/fp32/nchw/eager/1: the same forward on the CPU (host clock).
// cuDNN benchmark mode is on; its autotuning happens in the first forward.
// Work: resnet50_forward_flops(224, 1000) per image. Counters: images_per_s; first_forward_ms,
// the first forward after the model is built and moved, host clock with a sync on either side
// (cuDNN's autotuning and the kernels' loading included: what a user waits for), taken in set-up
// before any warm-up — the harness's own first_call_ms is the first timed run after set-up, a
// graph replay in graph mode; the caching allocator's peaks (peak_allocated_bytes, ...) from the
// check on; logits_rel_error and, in graph mode, graph_rel_error.
// Check, once per configuration, of the timed call's logits (poisoned before it): a reference
// model with the same weights (the ones under test, converted up: the weights' rounding is the
// model's, not an error) runs the same images in fp32 with TF32 off, or for fp32 itself in float64
// on the batch's first and last images; the network's part of the logits (the logits less the
// classifier's bias, an exact add that would only dilute the error) must match it within a
// relative L2 error bound per precision (logits_tolerance()) and be finite. Graph mode: the
// replay's logits must also equal an eager forward's on the same images (relative L2 within
// graph_tolerance(): the same kernels on the same data). Faults, each a timed run with a defect:
// the classifier's weight negated; for fp32 on a GPU, TF32 allowed (the bound must tell fp32 from
// TF32). Compiled mode: the package must list exactly this model's weights and buffers by name
// (torchvision's), the logits meet the same bound and stay within it of an eager forward of the
// same weights on the same images (compiled_rel_error); its fault is the package handed a negated
// copy of the fc weight (the model itself untouched).
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "benchmarks/models/resnet50.h"
#include "fixtures/cubench_torch.h"

namespace cubench {
namespace {

constexpr int64_t kResolution = 224, kClasses = 1000;
// The checks a planted fault must meet, by name (ValidationError::check): the fc weight negated
// (the logits), or the package handed a negated copy of it (compiled against eager).
constexpr const char* kLogitsCheck = "the logits against a reference forward";
constexpr const char* kCompiledCheck = "the compiled forward against an eager forward";

enum class Precision { fp32, tf32, fp16, bf16 };
constexpr EnumName<Precision> kPrecisions[] = {{Precision::fp32, "fp32"},
                                               {Precision::tf32, "tf32"},
                                               {Precision::fp16, "fp16"},
                                               {Precision::bf16, "bf16"}};

// The tensors' type and the math of a precision: tf32 stores fp32 (LibTorch's flag picks TF32).
DType math_of(Precision p) {
  return p == Precision::tf32   ? DType::tf32
         : p == Precision::fp16 ? DType::fp16
         : p == Precision::bf16 ? DType::bf16
                                : DType::fp32;
}

// Relative L2 error of the logits (less the bias) against the reference. fp32 against float64:
// the same arithmetic in another order, 4.1e-7 to 8.9e-7 on the H200 (every fp32 configuration,
// cuDNN's benchmark mode picking its algorithms) and 8.3e-7 on the CPU; bounded at 1e-5, which
// TF32's 3.1e-4 to 4.7e-4 (the tf32 rows' own figures against fp32 there) clears 30-fold: an fp32
// row that ran TF32 fails (the H100 showed the former bound, 1e-3, let it pass). TF32 and fp16
// round every convolution's operands to 10 explicit bits (unit roundoff 2^-11 = 4.9e-4), fp16 its
// stored activations too; bf16 to 7 (2^-8 = 3.9e-3). On the CPU (LibTorch 1.13, oneDNN's bf16
// convolutions accumulating in fp32, 224x224, three seeds) bf16 was off by 4.7-4.9e-3, its weights'
// own rounding included; on the H200, tf32 3.1-4.7e-4, fp16 3.5-4.3e-4, bf16 2.9-3.1e-3. The
// bounds are 1e-2 for tf32 and fp16 and 5e-2 for bf16, far under a wrong result's order-1 error
// (the planted fault gives 2). The rows' figures are each row's logits_rel_error.
double logits_tolerance(Precision p) {
  switch (p) {
    case Precision::fp32:
      return 1e-5;
    case Precision::tf32:
    case Precision::fp16:
      return 1e-2;
    case Precision::bf16:
      return 5e-2;
  }
  return 0;
}

// A replay runs the kernels the eager forward chose on the same data: equal, bit for bit, is
// expected. A tenth of the reference's bound lets an algorithm that differs pass, not a replay
// that did not run (the check draws a fresh batch into the static input first: the last batch's
// logits are off by order 1) or that computes something else.
double graph_tolerance(Precision p) { return 0.1 * logits_tolerance(p); }

struct Config {
  Precision precision;
  Format format;
  GraphMode mode;
  int64_t batch;
  bool graph() const { return mode == GraphMode::graph; }
  bool compiled() const { return mode == GraphMode::compiled; }
  // tools/aoti-export's name for the package of this configuration.
  std::string package() const {
    return "resnet50_infer-" + std::string(name_of(precision, kPrecisions)) + "-" +
           name_of(format, kFormats) + "-" + std::to_string(batch);
  }
};

double relative_l2(const torch::Tensor& got, const torch::Tensor& want) {
  const auto w = want.to(torch::kDouble);
  const double norm = w.norm().item<double>();
  return (got.to(torch::kDouble) - w).norm().item<double>() / (norm > 0 ? norm : 1.0);
}

class ResNetInfer final : public TorchCase {
 public:
  explicit ResNetInfer(Config c)
      : TorchCase(TorchMath{c.precision == Precision::tf32, true},
                  c.graph() ? LibraryWorkspaces::keep : LibraryWorkspaces::release),
        c_(c) {}

  // The fc weight negated; fp32 on a GPU, TF32 allowed too (the bound must tell fp32 from it).
  int fault_count() const override {
    return on_gpu() && c_.precision == Precision::fp32 && !c_.compiled() ? 2 : 1;
  }
  // A compiled row's fault is in the package's weights alone, which the compiled-against-eager
  // check (before the logits bound) meets first.
  std::string fault_check() const override { return c_.compiled() ? kCompiledCheck : kLogitsCheck; }

  Work work() const override {
    return {resnet50_forward_flops(kResolution, kClasses) * double(c_.batch), std::nullopt, 0};
  }

 private:
  void set_up(Env& env) override {
    if (c_.compiled()) compiled_.load(c_.package());  // before the model: a missing one says so
    model_ = ResNet50(kClasses);
    model_->eval();
    model_->to(device());
    model_->to(scalar_type(math_of(c_.precision)));
    auto images = torch::randn({c_.batch, 3, kResolution, kResolution},
                               torch::TensorOptions().device(device()));
    images_ = to_format(model_, images, c_.format).to(scalar_type(math_of(c_.precision)));
    synchronize(env);
    const auto start = std::chrono::steady_clock::now();
    forward();
    synchronize(env);
    first_forward_ms_ =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (c_.compiled()) compiled_.hand_constants(module_constants(*model_));
    if (c_.graph()) {
      for (int i = 0; i < 2; ++i) forward();  // the allocator's blocks, cuBLAS's workspace
      graph_.capture([this] { graph_logits_ = forward(); });
    }
  }

  void timed_run(Env& env) override {
    if (c_.graph()) {
      graph_.replay();
      logits_ = graph_logits_;
    } else if (c_.compiled()) {
      c10::InferenceMode inference;
      logits_ = compiled_.run({images_}, env.stream()).at(0);
    } else {
      logits_ = forward();
    }
  }

  // The logits are inference tensors (forward() runs under InferenceMode): poisoned there too.
  void poison_outputs(Env&) override {
    c10::InferenceMode inference;
    poison(logits_);
    poison(graph_logits_);
  }

  // The check described at the top of the file, on the timed call's logits.
  void check(Env&) override {
    if (!logits_.defined() || logits_.size(0) != c_.batch)
      throw ValidationError("the timed forward left no logits", "the logits finite");
    const torch::Tensor reference = reference_.defined() ? reference_ : reference_logits();
    torch::Tensor got = logits_.detach().clone();
    if (!torch::isfinite(got).all().item<bool>())
      throw ValidationError("the logits are not all finite", "the logits finite");
    if (c_.graph()) check_replay_against_eager(got);
    if (c_.compiled()) check_compiled_against_eager(got);
    if (c_.precision == Precision::fp32) got = got.index_select(0, float64_images());
    const torch::Tensor bias = model_->fc->bias.detach().to(torch::kDouble);
    logits_error_ = relative_l2(got.to(torch::kDouble) - bias, reference.to(torch::kDouble) - bias);
    if (!(logits_error_ <= logits_tolerance(c_.precision)))
      throw ValidationError(
          std::string("logits (less the fc bias) against ") +
              (c_.precision == Precision::fp32 ? "a float64" : "an fp32 (TF32 off)") +
              " forward of the same weights: relative L2 error " + std::to_string(logits_error_) +
              " (bound " + std::to_string(logits_tolerance(c_.precision)) + " for " +
              name_of(c_.precision, kPrecisions) + ")",
          kLogitsCheck);
  }

  // In turn: the classifier's weight negated, or (fp32 on a GPU) TF32 allowed in cuBLAS and
  // cuDNN; the reference is made first, from the weights as they were, then a timed run with the
  // fault (a graph replays it too: its weights are the model's; TF32 shows in eager runs only).
  std::string arm_fault(Env& env) override {
    fault_ = planted_++ % fault_count();
    reference_ = reference_logits();
    torch::NoGradGuard no_grad;
    std::string what;
    if (c_.compiled()) {
      auto weights = module_constants(*model_);
      weights["fc.weight"] = -weights.at("fc.weight");
      compiled_.hand_constants(weights);
      what = "the package handed a negated copy of the fc weight";
    } else if (fault_ == 0) {
      model_->fc->weight.neg_();
      what = "the fc weight negated";
    } else {
      torch_compat::allow_tf32(true);
      what = "TF32 allowed in cuBLAS and cuDNN for an fp32 forward";
      if (c_.graph()) graph_.capture([this] { graph_logits_ = forward(); });
    }
    run_again(env);
    return what;
  }

  void disarm_fault(Env&) override {
    torch::NoGradGuard no_grad;
    if (c_.compiled()) {
      compiled_.hand_constants(module_constants(*model_));
    } else if (fault_ == 0) {
      model_->fc->weight.neg_();
    } else {
      torch_compat::allow_tf32(false);
      if (c_.graph()) graph_.capture([this] { graph_logits_ = forward(); });
    }
    reference_ = torch::Tensor();
  }

  std::map<std::string, double> own_counters(double seconds) const override {
    std::map<std::string, double> c = {{"images_per_s", double(c_.batch) / seconds},
                                       {"first_forward_ms", first_forward_ms_},
                                       {"logits_rel_error", logits_error_}};
    if (c_.graph()) c["graph_rel_error"] = graph_error_;
    if (c_.compiled()) {
      c["compiled_rel_error"] = compiled_error_;
      c["package_load_ms"] = compiled_.load_ms();
      c["second_copy_bytes"] = compiled_.second_copy_bytes();
      c["package_own_constants"] = compiled_.own_constants();
    }
    return c;
  }

  std::string label_detail() const override {
    return c_.graph()      ? "CUDA graph replay"
           : c_.compiled() ? "AOTInductor package " + c_.package()
                           : "";
  }

  torch::Tensor forward() {
    c10::InferenceMode inference;
    return model_->forward(images_);
  }

  // The model's weights and buffers, converted to fp32 (float64 for fp32, on the first images),
  // run in NCHW with TF32 off and cuDNN's heuristics (no autotuning of a model used once).
  torch::Tensor reference_logits() {
    const bool float64 = c_.precision == Precision::fp32;
    const auto type = float64 ? torch::kDouble : torch::kFloat;
    ResNet50 reference(kClasses);
    reference->eval();
    reference->to(device(), type);
    {
      torch::NoGradGuard no_grad;
      const auto from = model_->parameters(), to = reference->parameters();
      for (std::size_t i = 0; i < to.size(); ++i) to[i].copy_(from[i]);
      const auto from_buffers = model_->buffers(), to_buffers = reference->buffers();
      for (std::size_t i = 0; i < to_buffers.size(); ++i) to_buffers[i].copy_(from_buffers[i]);
    }
    auto images = images_.to(type).contiguous();
    if (float64) images = images.index_select(0, float64_images());
    // The flags as they were come back after it (on the CPU they change nothing).
    torch_compat::Tf32Off fp32;
    torch_compat::CudnnHeuristicPlans heuristics;
    c10::InferenceMode inference;
    return reference->forward(images);
  }

  // The images the float64 reference runs (fp32 rows): the batch's first and last.
  torch::Tensor float64_images() const {
    std::vector<int64_t> at = {0};
    if (c_.batch > 1) at.push_back(c_.batch - 1);
    return torch::tensor(at, torch::kLong).to(device());
  }

  // A replay runs the kernels an eager forward on the same images chose: their logits agree.
  void check_replay_against_eager(const torch::Tensor& replayed) {
    const torch::Tensor eager = forward().clone();
    graph_error_ = relative_l2(replayed, eager);
    if (!(graph_error_ <= graph_tolerance(c_.precision)))
      throw ValidationError("the graph's replay gave other logits than an eager forward: " +
                                std::string("relative L2 error ") + std::to_string(graph_error_) +
                                " (bound " + std::to_string(graph_tolerance(c_.precision)) + ")",
                            "the graph's replay against an eager forward");
  }

  // The compiled forward's logits against an eager forward of the same weights on the same images:
  // other kernels (Inductor's fusions, its own choice of convolutions), the same arithmetic in the
  // same dtype, so within the reference's bound of each other.
  void check_compiled_against_eager(const torch::Tensor& compiled) {
    const torch::Tensor eager = forward().clone();
    compiled_error_ = relative_l2(compiled, eager);
    require_at_most(
        "the compiled forward's logits against an eager forward of the same weights: relative L2 "
        "error",
        compiled_error_, logits_tolerance(c_.precision), kCompiledCheck);
  }

  Config c_;
  CompiledModule compiled_;
  ResNet50 model_{nullptr};
  torch::Tensor images_;
  double first_forward_ms_ = 0, logits_error_ = 0, graph_error_ = 0, compiled_error_ = 0;
  TorchGraph graph_;
  torch::Tensor graph_logits_;  // the graph's output, rewritten by each replay
  torch::Tensor logits_;        // the timed call's
  torch::Tensor reference_;     // made before a fault was armed, until it is disarmed
  int fault_ = 0, planted_ = 0;
};

void add_infer_family(const std::string& name, std::vector<Precision> precisions,
                      std::vector<Format> formats, std::vector<GraphMode> modes,
                      std::vector<std::int64_t> batches, Timer timer) {
  // Default run: bf16 channels-last, the usual deployment, at batch 1 (launch-bound: where the
  // graph pays) and 256 (throughput), eager, graph and compiled; the rest with
  // --cubench_suite=full.
  model_family(name, "one ResNet-50 forward in eval mode (224x224, 1000 classes)", timer,
               [](const Point& p) {
                 const std::int64_t b = p.get_int("batch");
                 return p.get_enum<Precision>("precision") == Precision::bf16 &&
                        p.get_enum<Format>("format") == Format::channels_last &&
                        (b == 1 || b == 256);
               })
      .axis(enum_axis("precision", kPrecisions, precisions))
      .axis(enum_axis("format", kFormats, formats))
      .axis(enum_axis("mode", kGraphModes, modes))
      .axis(int_axis("batch", batches))
      // Compiled: the deployment's precisions in the deployment's layout, one package each.
      .where([](const Point& p) {
        const Precision precision = p.get_enum<Precision>("precision");
        return p.get_enum<GraphMode>("mode") != GraphMode::compiled ||
               ((precision == Precision::fp16 || precision == Precision::bf16) &&
                p.get_enum<Format>("format") == Format::channels_last);
      })
      .counter({"images_per_s", "img/s", Better::higher, "images inferred per second"})
      .counter({"first_forward_ms", "ms", Better::lower,
                "the first forward after the model was built and moved, host clock (cuDNN's "
                "autotuning and kernel loading included)"})
      .counter({"logits_rel_error", "", Better::lower,
                "logits less the fc bias against an fp32 (TF32 off) forward of the same weights "
                "(fp32: float64), relative L2"})
      .counter({"graph_rel_error", "", Better::lower,
                "a graph replay's logits against an eager forward's, relative L2"})
      .counter(compiled_error_counter("the same images"))
      .counter(package_load_counter())
      .counter(second_copy_counter())
      .counter(own_constants_counter())
      .main_counter("images_per_s")
      .size_axis("batch")
      .size([](const Point& p) { return double(p.get_int("batch")); })
      // LibTorch's reserved peak on the H200 (peak_reserved_bytes of the timed forward), eager and
      // graph, both layouts: at most 1.25 GiB + 18 MiB an image in fp32 and tf32 (10 MiB in fp16
      // and bf16), at batch 1 to 256. The check runs an fp32 forward of the whole batch, so the
      // fp32 figure is every precision's.
      // Compiled rows: a second copy of the weights (51 MB in fp16) where the runner copies them,
      // and Inductor's own buffers, within another quarter GiB.
      // A compiled row whose package is not there is left out saying how to make it.
      .needs([](const Point& p) {
        const Config c{p.get_enum<Precision>("precision"), p.get_enum<Format>("format"),
                       p.get_enum<GraphMode>("mode"), p.get_int("batch")};
        GpuNeeds needs = tensor_core_needs(
            math_of(c.precision),
            kGiB + kGiB / 4 + (c.compiled() ? kGiB / 4 : 0) + std::uint64_t(c.batch) * 18 * kMiB);
        if (c.compiled()) needs.missing = compiled_package_missing(c.package());
        return needs;
      })
      .make([](const Point& p) {
        Config c{p.get_enum<Precision>("precision"), p.get_enum<Format>("format"),
                 p.get_enum<GraphMode>("mode"), p.get_int("batch")};
        return std::make_unique<ResNetInfer>(c);
      })
      .add();
}

void register_resnet50_infer() {
  add_infer_family("cpu/resnet50_infer", {Precision::fp32}, {Format::nchw}, {GraphMode::eager}, {1},
                   Timer::host_clock);
#if CUBENCH_TORCH_CUDA
  add_infer_family("resnet50_infer",
                   {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16},
                   {Format::nchw, Format::channels_last},
                   {GraphMode::eager, GraphMode::graph, GraphMode::compiled}, {1, 8, 64, 256},
                   Timer::cuda_events);
#endif
}
CUBENCH_REGISTER(register_resnet50_infer);

}  // namespace
}  // namespace cubench
