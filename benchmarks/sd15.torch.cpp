// sd15/<what>/<dtype>/<mode>/<images>/<resolution>: Stable Diffusion v1.5 text-to-image as seed
// 001 ran it (512 x 512, 20 DDIM steps, guidance 7.5), with the C++ frontend and random weights
// made on the device in the dtype (no download, no tokenizer: random token ids, as llama_decode):
// CLIP ViT-L/14's text encoder (benchmarks/models/clip_text.h), the UNet
// (benchmarks/models/sd15_unet.h), the VAE decoder (benchmarks/models/sd15_vae.h) and DDIM with
// classifier-free guidance (benchmarks/models/ddim.h).
//   what: image (the whole pipeline: the text encoder on [unconditional, conditional] prompts, 20
//         guided DDIM steps from fixed initial noise, the VAE decode of latents / 0.18215 and
//         (x / 2 + 0.5).clamp(0, 1)), or one stage of it: unet_step (one guided step: the UNet on
//         [latents, latents] at batch 2 x images, guidance and the DDIM update), vae_decode (the
//         decode and the clamp), text_encode (the text encoder at batch 2);
//   dtype: fp16 or bf16 (weights and activations; the scheduler's arithmetic fp32);
//   mode: eager, or graph (each denoising step a replay of one step captured in a CUDA graph, its
//         timestep and coefficients read on the device from a step counter there; the text
//         encoder and the decode stay eager): image and unet_step rows only;
//   images: per prompt, 1 or 4 (the UNet at batch 2 or 8, the decode at 1 or 4; the text encoder
//         runs once either way, so text_encode has 1 only); resolution: 512 (latents 64 x 64) or
//         768 (full suite; text_encode at 512 only).
// cpu/sd15/<what>/fp32/eager/1/128: the same code on the CPU with a tiny configuration (16 x 16
// latents; tiny_models() below), so CI runs every check.
// Work: FLOPs counted analytically from the configurations (convolutions, linear layers and
// attention's two products; sd15_layers.h's flops::): a guided UNet step is 1.61 TFLOP at 64 x 64
// (803.3 GFLOP a sample), the image adds the text encoder and the decode. Counters: ms_per_image,
// images_per_s, it_per_s (denoising steps per second, as diffusers' progress bar reports them),
// step_ms and unet_TFLOPS (the UNet's FLOPs of a guided step over it), the image's stages
// (text_encode_ms, denoise_ms, vae_decode_ms: CUDA events between them, read outside the timed
// run), first_image_ms / first_run_ms (the first run after the models were built, eager, host
// clock synchronised on both sides: module loading, cuDNN's and cuBLAS's set-up included), the
// caching allocator's peaks and fragmentation (TorchCase), weight_bytes, each check's error. The
// harness's energy_per_run_J is the energy of one image in image rows at 1 image per prompt (one
// run's: divide by images for 4).
// Checks, once per configuration (each names itself; the planted faults below meet them in turn):
// - the image of the run before the check (image, vae_decode): finite, every value in [0, 1], of
//   the right shape;
// - the parameter counts: each model's named parameters sum to diffusers' and transformers' counts
//   (859,520,964; 49,490,199; 123,060,480), or for the tiny models to their configuration's own;
// - the text encoding (image, text_encode), one guided step's UNet prediction (image, unet_step:
//   a fresh latent at t = 951, through the graph's replay in graph mode) and one VAE decode
//   (image, vae_decode) against copies of the same weights in fp32 (TF32 off; float64 for the fp32
//   rows), relative L2 within the bounds below;
// - the DDIM update against its formula in float64 on the host: that step's own update (the
//   graph's in graph mode), and every step's on random inputs.
// plant_fault, in turn (after the reference ran, around the computation under test): one latent
// NaN before the decode (an fp16 overflow's), a stray layer's parameters, the text encoder's causal
// mask dropped, the UNet's conv_in reading the latents' channels reversed, the DDIM's a_prev taken
// at the step's own timestep (an off-by-one), the VAE's output channels reversed (BGR for RGB).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "benchmarks/models/clip_text.h"
#include "benchmarks/models/ddim.h"
#include "benchmarks/models/sd15_unet.h"
#include "benchmarks/models/sd15_vae.h"
#include "fixtures/cubench_torch.h"

namespace cubench {
namespace {

using sd15::ClipTextConfig;
using sd15::ClipTextModel;
using sd15::DdimGuidedScheduler;
using sd15::Init;
using sd15::Placement;
using sd15::UNet2DConditionModel;
using sd15::UNetConfig;
using sd15::VaeConfig;
using sd15::VaeDecoder;

constexpr int64_t kSteps = 20;
constexpr double kGuidance = 7.5;

enum class What { image, unet_step, vae_decode, text_encode };
constexpr EnumName<What> kWhats[] = {{What::image, "image"},
                                     {What::unet_step, "unet_step"},
                                     {What::vae_decode, "vae_decode"},
                                     {What::text_encode, "text_encode"}};

// The three models' configurations and the parameter counts each must have.
struct Models {
  UNetConfig unet;
  VaeConfig vae;
  ClipTextConfig text;
  int64_t unet_parameters, vae_parameters, text_parameters;
};

// SD 1.5's, counted against diffusers' and transformers' own counts.
Models sd15_models() {
  return {UNetConfig::sd15(),
          VaeConfig::sd15(),
          ClipTextConfig::vit_l14(),
          sd15::kSd15UNetParameters,
          sd15::kSd15VaeDecoderParameters,
          sd15::kClipVitL14TextParameters};
}

// The CPU rows' (sd15_unet.h, sd15_vae.h and clip_text.h say what each tiny() is), counted against
// their configurations' own counts.
Models tiny_models() {
  Models m{UNetConfig::tiny(), VaeConfig::tiny(), ClipTextConfig::tiny(), 0, 0, 0};
  m.unet_parameters = m.unet.parameter_count();
  m.vae_parameters = m.vae.parameter_count();
  m.text_parameters = m.text.parameter_count();
  return m;
}

// The checks a planted fault must meet, by name (ValidationError::check).
constexpr const char* kImageCheck = "the image finite and in [0, 1]";
constexpr const char* kParameterCheck = "the parameter counts";
constexpr const char* kTextCheck = "the text encoding against an fp32 copy";
constexpr const char* kUNetCheck = "one UNet step against an fp32 copy";
constexpr const char* kDdimCheck = "the DDIM update against float64";
constexpr const char* kVaeCheck = "one VAE decode against an fp32 copy";

// Relative L2 bounds of each check, by the dtype under test (its reference: a copy of the same
// weights in fp32, and in float64 for fp32). Measured on the CPU (LibTorch 1.13, the tiny
// configuration, three seeds; tests/test_torch_sd15.cpp's PrecisionFiguresOnTheTinyConfig prints
// them): fp32 against float64 7e-7 (UNet), 1.4e-6 (VAE), 2.6e-7 (text), bounded at 1e-5 (room for
// another summation order, far under the faults' 0.5-1.3); bf16 against fp32 2.0-2.1e-2 (UNet),
// 2.5-2.8e-2 (VAE), 6.5-7.5e-3 (text) — random weights through ~100 layers, each activation
// rounded to 8 bits, its attention's softmax too — bounded at 4-7x that: 0.1 (UNet, VAE), 0.05
// (text). fp16 is NOT measured (LibTorch 1.13 has no fp16 convolutions on the CPU): its bounds
// take bf16's figures over 8 (3 more bits) with the same margin, 2e-2 and 1e-2. The GPU's
// figures (the rows' *_rel_error counters; cuDNN and SDPA keep more in fp32 than 1.13's CPU
// kernels) are still to be measured there, and are to set these bounds.
struct Bound {
  double fp32, fp16, bf16;
  double of(torch::Dtype t) const {
    return t == torch::kFloat ? fp32 : t == torch::kHalf ? fp16 : bf16;
  }
};
constexpr Bound kUNetBound{1e-5, 2e-2, 0.1};
constexpr Bound kVaeBound{1e-5, 2e-2, 0.1};
constexpr Bound kTextBound{1e-5, 1e-2, 5e-2};
// The update's arithmetic is fp32 with diffusers' fp32 alphas_cumprod, whose product over up to
// 951 factors is off the float64 one by a few 1e-6: the fp32 rows measured 3.0e-6 (the worst of
// the 20 steps, on the CPU), bounded at 3e-5. fp16 and bf16 round the result once more, to
// 2^-11 and 2^-8 (a relative L2 of about a third of that), bounded at 2e-3 and 1.6e-2. A
// misaligned a_prev is off by 0.9.
constexpr Bound kDdimBound{3e-5, 2e-3, 1.6e-2};

struct Config {
  What what;
  torch::Dtype dtype;
  bool graph;
  int64_t images, resolution;
  bool tiny;  // the CPU rows' models instead of SD 1.5's
};

double relative_l2(const torch::Tensor& got, const torch::Tensor& want) {
  const auto w = want.to(torch::kDouble);
  const double norm = w.norm().item<double>();
  return (got.to(torch::kDouble) - w).norm().item<double>() / (norm > 0 ? norm : 1.0);
}

std::vector<double> to_doubles(const torch::Tensor& t) {
  const auto d = t.detach().to(torch::kCPU, torch::kDouble).contiguous();
  return {d.data_ptr<double>(), d.data_ptr<double>() + d.numel()};
}

std::string bound_text(double error, double bound) {
  return "relative L2 error " + std::to_string(error) + " (bound " + std::to_string(bound) + ")";
}

// The image's stages, timed between marks of one run: CUDA events on the case's stream on the
// GPU (read once they completed, outside the timed run), the host clock on the CPU. A run's marks
// are its start, after the text encoder, after each step, after the decode.
class StageClock {
 public:
  explicit StageClock(bool gpu) : gpu_(gpu) {}
  StageClock(const StageClock&) = delete;
  StageClock& operator=(const StageClock&) = delete;
  ~StageClock() {
    for (auto e : events_) cudaEventDestroy(e);
  }

  void start(cudaStream_t stream, std::size_t marks) {
    collect();
    if (gpu_)
      while (events_.size() < marks) {
        cudaEvent_t e;
        CUBENCH_CUDA(cudaEventCreate(&e));
        events_.push_back(e);
      }
    stream_ = stream;
    used_ = 0;
    host_.clear();
    mark();
  }
  void mark() {
    if (gpu_)
      CUBENCH_CUDA(cudaEventRecord(events_.at(used_), stream_));
    else
      host_.push_back(std::chrono::steady_clock::now());
    ++used_;
  }
  // Keeps the last run's marks (ms from its start), once.
  void collect() {
    if (used_ < 2) return;
    std::vector<double> ms = {0};
    for (std::size_t i = 1; i < used_; ++i) {
      if (gpu_) {
        float t = 0;
        CUBENCH_CUDA(cudaEventSynchronize(events_[i]));
        CUBENCH_CUDA(cudaEventElapsedTime(&t, events_[0], events_[i]));
        ms.push_back(t);
      } else {
        ms.push_back(std::chrono::duration<double, std::milli>(host_[i] - host_[0]).count());
      }
    }
    runs_.push_back(ms);
    used_ = 0;
  }
  // Forgets every run so far (the first call's, the check's).
  void reset() { runs_.clear(), used_ = 0; }
  // The median over the kept runs of the interval from mark `from` to mark `to`, or, with
  // `each`, over every interval between consecutive marks in [from, to].
  double median_ms(std::size_t from, std::size_t to, bool each = false) const {
    std::vector<double> v;
    for (const auto& ms : runs_) {
      if (ms.size() <= to) continue;
      if (!each) v.push_back(ms[to] - ms[from]);
      for (std::size_t i = from; each && i < to; ++i) v.push_back(ms[i + 1] - ms[i]);
    }
    if (v.empty()) return 0;
    std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
    return v[v.size() / 2];
  }

 private:
  bool gpu_;
  cudaStream_t stream_ = nullptr;
  std::vector<cudaEvent_t> events_;
  std::vector<std::chrono::steady_clock::time_point> host_;
  std::size_t used_ = 0;
  std::vector<std::vector<double>> runs_;
};

// The planted faults, each met by one check (fault_check).
enum class Fault { image, parameters, text, unet, ddim, vae };

class StableDiffusion final : public TorchCase {
 public:
  // bf16/fp16 products: TF32 plays no part (the references turn it off for themselves). A graph
  // points into cuBLAS's workspace.
  explicit StableDiffusion(Config c)
      : TorchCase(TorchMath{}, c.graph ? LibraryWorkspaces::keep : LibraryWorkspaces::release),
        c_(c),
        models_(c.tiny ? tiny_models() : sd15_models()),
        latent_(c.resolution / models_.vae.upscale()) {}

  std::string fault_check() const override {
    switch (fault_) {
      case Fault::image:
        return kImageCheck;
      case Fault::parameters:
        return kParameterCheck;
      case Fault::text:
        return kTextCheck;
      case Fault::unet:
        return kUNetCheck;
      case Fault::ddim:
        return kDdimCheck;
      case Fault::vae:
        return kVaeCheck;
    }
    return {};
  }

  Work work() const override { return {flops_of(c_.what), dtype_of(c_.dtype), 0}; }

 private:
  bool uses_text() const { return c_.what == What::image || c_.what == What::text_encode; }
  bool uses_unet() const { return c_.what == What::image || c_.what == What::unet_step; }
  bool uses_vae() const { return c_.what == What::image || c_.what == What::vae_decode; }

  static DType dtype_of(torch::Dtype t) {
    return t == torch::kHalf ? DType::fp16 : t == torch::kBFloat16 ? DType::bf16 : DType::fp32;
  }

  double unet_step_flops() const {
    return models_.unet.forward_flops(2 * c_.images, latent_, latent_, models_.text.tokens);
  }
  double flops_of(What w) const {
    const double text = models_.text.encode_flops(2);
    const double decode = models_.vae.decode_flops(c_.images, latent_, latent_);
    switch (w) {
      case What::image:
        return text + double(kSteps) * unet_step_flops() + decode;
      case What::unet_step:
        return unet_step_flops();
      case What::vae_decode:
        return decode;
      case What::text_encode:
        return text;
    }
    return 0;
  }

  void set_up(Env& env) override {
    // cuDNN's autotuner off, as diffusers leaves it (PyTorch's default) and the python reference
    // sets it: a convolution family run before this one may have turned it on (TorchMath only
    // ever turns it on), and the first image would then time the autotuning.
    torch_compat::cudnn_benchmark(false);
    stream_ = on_gpu() ? env.stream() : nullptr;
    clock_ = std::make_unique<StageClock>(on_gpu());
    const auto options = torch::TensorOptions().device(device()).dtype(c_.dtype);
    const Placement at{options, Init::random};
    const int64_t n = c_.images, tokens = models_.text.tokens;
    if (uses_text()) text_ = std::make_shared<ClipTextModel>(models_.text, at);
    if (uses_unet()) {
      unet_ = std::make_shared<UNet2DConditionModel>(models_.unet, at);
      ddim_ = std::make_unique<DdimGuidedScheduler>(kSteps, kGuidance, device());
    }
    if (uses_vae()) vae_ = std::make_shared<VaeDecoder>(models_.vae, at);
    const auto ints = torch::TensorOptions().device(device()).dtype(torch::kLong);
    // [unconditional, conditional] prompts: random ids (no tokenizer); the text encoder's output
    // repeated per image into the UNet's context, as diffusers does for num_images_per_prompt.
    tokens_ = torch::randint(models_.text.vocab, {2, tokens}, ints);
    // Where the UNet has no text encoder before it (unet_step), a context of the text encoder's
    // scale (its final LayerNorm's output: unit variance).
    context_ = torch::randn({2 * n, tokens, models_.unet.context_dim}, options);
    // The initial noise (a fixed generator's, as `generator=` gives diffusers), and the latents a
    // decode starts from in vae_decode rows (of the unit scale a trained model's 20 steps leave).
    noise_ = torch::randn({n, models_.unet.latent_channels, latent_, latent_}, options);
    latents_ = noise_.clone();
    step_ = torch::zeros({1}, ints);

    synchronize(env);
    const auto start = std::chrono::steady_clock::now();
    run_operation(/*replay=*/false);
    synchronize(env);
    first_run_ms_ =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (c_.graph) capture();
  }

  // A step's starting point (unet_step rows); the last image's stage times, read outside the
  // timed run.
  void before_sample(Env&) override {
    clock_->collect();
    if (c_.what == What::unet_step) restart_denoising();
  }

  void timed_run(Env&) override { run_operation(c_.graph); }

  void check(Env& env) override {
    synchronize(env);
    if (c_.what == What::image || c_.what == What::vae_decode) check_image();
    check_parameter_counts();
    if (text_) check_text_encoder();
    if (unet_) check_unet_step_and_ddim();
    if (vae_) check_vae_decode();
    clock_->reset();  // the first call's and the check's runs are not the timed ones
  }

  // In turn, those of the case's checks: the image's (one latent NaN, the image decoded again
  // into the run's result), then the others, which check() plants around the computation under
  // test once its reference has run.
  std::string arm_fault(Env&) override {
    std::vector<Fault> faults;
    if (c_.what == What::image || c_.what == What::vae_decode) faults.push_back(Fault::image);
    faults.push_back(Fault::parameters);
    if (text_) faults.push_back(Fault::text);
    if (unet_) faults.push_back(Fault::unet), faults.push_back(Fault::ddim);
    if (vae_) faults.push_back(Fault::vae);
    fault_ = faults[std::size_t(faults_planted_++) % faults.size()];
    switch (fault_) {
      case Fault::image: {
        auto latents = latents_.clone();
        latents.view({-1})[0].fill_(std::numeric_limits<double>::quiet_NaN());
        image_ = decode(latents);
        return "one latent set to NaN before the decode (an fp16 overflow's), the image decoded "
               "again";
      }
      case Fault::parameters:
        return "a stray 8 x 8 linear layer (72 parameters) registered in the " + first_model_name();
      case Fault::text:
        return "the text encoder's causal mask dropped";
      case Fault::unet:
        return "the UNet's conv_in reading the latents' channels reversed";
      case Fault::ddim:
        return "the DDIM's a_prev taken at the step's own timestep (an off-by-one)";
      case Fault::vae:
        return "the VAE decoder's output channels reversed (BGR for RGB)";
    }
    return {};
  }

  std::map<std::string, double> own_counters(double seconds) const override {
    clock_->collect();
    std::map<std::string, double> c;
    double weights = 0;
    for (const torch::nn::Module* m : models())
      for (const auto& p : m->parameters()) weights += double(p.nbytes());
    c["weight_bytes"] = weights;
    if (c_.what == What::image) {
      c["ms_per_image"] = seconds * 1e3 / double(c_.images);
      c["images_per_s"] = double(c_.images) / seconds;
      c["first_image_ms"] = first_run_ms_;
      const std::size_t text = 1, denoised = 1 + kSteps, decoded = 2 + kSteps;
      c["text_encode_ms"] = clock_->median_ms(0, text);
      const double denoise = clock_->median_ms(text, denoised);
      c["denoise_ms"] = denoise;
      c["vae_decode_ms"] = clock_->median_ms(denoised, decoded);
      const double step = clock_->median_ms(text, denoised, /*each=*/true);
      c["step_ms"] = step;
      if (denoise > 0) c["it_per_s"] = double(kSteps) / (denoise * 1e-3);
      if (step > 0) c["unet_TFLOPS"] = unet_step_flops() / (step * 1e-3) / 1e12;
    } else {
      c["first_run_ms"] = first_run_ms_;
    }
    if (c_.what == What::unet_step) {
      c["step_ms"] = seconds * 1e3;
      c["it_per_s"] = 1 / seconds;
      c["unet_TFLOPS"] = unet_step_flops() / seconds / 1e12;
    }
    if (text_) c["text_rel_error"] = text_error_;
    if (unet_) c["unet_rel_error"] = unet_error_, c["ddim_rel_error"] = ddim_error_;
    if (vae_) c["vae_rel_error"] = vae_error_;
    return c;
  }

  std::string label_detail() const override {
    return c_.graph ? "each denoising step a CUDA graph replay" : "";
  }

  std::vector<const torch::nn::Module*> models() const {
    std::vector<const torch::nn::Module*> out;
    if (text_) out.push_back(text_.get());
    if (unet_) out.push_back(unet_.get());
    if (vae_) out.push_back(vae_.get());
    return out;
  }
  std::string first_model_name() const {
    return text_ ? "text encoder" : unet_ ? "UNet" : "VAE decoder";
  }

  // --- the pipeline ---------------------------------------------------------------------------

  // The text encoder on [unconditional, conditional], each repeated per image into the context
  // (one broadcast copy: [2, 1, tokens, width] into [2, images, tokens, width]).
  void encode_prompts() {
    const auto hidden = text_->forward(tokens_);
    context_.view({2, c_.images, hidden.size(1), hidden.size(2)}).copy_(hidden.unsqueeze(1));
  }

  void restart_denoising() {
    step_.zero_();
    latents_.copy_(noise_);
  }

  // One guided step at the device's step counter: the UNet on [latents, latents] under
  // [unconditional, conditional] context, guidance and the DDIM update into latents_, the counter
  // moved on. Returns the UNet's prediction.
  torch::Tensor denoise_step() {
    const auto t = ddim_->timestep_table().index_select(0, step_);
    auto noise = unet_->forward(torch::cat({latents_, latents_}), t, context_);
    latents_.copy_(ddim_->step(latents_, noise, step_));
    step_.add_(1);
    return noise;
  }
  // A step as the mode runs it; returns the UNet's prediction (the graph's output tensor).
  torch::Tensor step(bool replay) {
    if (!replay) return denoise_step();
    graph_.replay();
    return graph_noise_;
  }

  torch::Tensor decode(const torch::Tensor& latents) const {
    return (vae_->forward(latents / models_.vae.scaling_factor) / 2 + 0.5).clamp(0, 1);
  }

  void generate(bool replay) {
    clock_->start(stream_, std::size_t(kSteps) + 3);
    encode_prompts();
    clock_->mark();
    restart_denoising();
    for (int64_t i = 0; i < kSteps; ++i) {
      step(replay);
      clock_->mark();
    }
    image_ = decode(latents_);
    clock_->mark();
  }

  void run_operation(bool replay) {
    switch (c_.what) {
      case What::image:
        generate(replay);
        break;
      case What::unet_step:
        step(replay);
        break;
      case What::vae_decode:
        image_ = decode(latents_);
        break;
      case What::text_encode:
        encode_prompts();
        break;
    }
  }

  // The first run warmed everything up (cuBLAS's workspace, the allocator's blocks); one more
  // eager step from the start, then that step captured.
  void capture() {
    restart_denoising();
    denoise_step();
    restart_denoising();
    graph_.capture([this] { graph_noise_ = denoise_step(); });
  }

  // --- the checks -----------------------------------------------------------------------------

  // A copy of `model` (built by `make` from the configuration) with its weights in fp32, float64
  // for fp32 rows, on the same device.
  torch::Dtype reference_dtype() const {
    return c_.dtype == torch::kFloat ? torch::kDouble : torch::kFloat;
  }
  Placement reference_placement() const {
    return {torch::TensorOptions().device(device()).dtype(reference_dtype()), Init::none};
  }
  template <class Model, class ModelConfig>
  std::shared_ptr<Model> reference_copy(const Model& model, const ModelConfig& config) const {
    auto copy = std::make_shared<Model>(config, reference_placement());
    sd15::copy_parameters(model, *copy);
    return copy;
  }

  void require_bound(double error, double bound, const std::string& what, const char* check) {
    if (!(error <= bound))
      throw ValidationError(what + " against a copy of the same weights in " +
                                (reference_dtype() == torch::kDouble ? "float64" : "fp32") + ": " +
                                bound_text(error, bound),
                            check);
  }

  void require_finite(const torch::Tensor& t, const std::string& what) {
    if (!torch::isfinite(t).all().item<bool>())
      throw ValidationError(what + " are not all finite", what + " finite");
  }

  void check_image() {
    const std::vector<int64_t> want = {c_.images, models_.vae.out_channels, c_.resolution,
                                       c_.resolution};
    if (image_.sizes().vec() != want)
      throw ValidationError("the image has the wrong shape", "the image's shape");
    const bool finite = torch::isfinite(image_).all().item<bool>();
    const double low = image_.min().item<double>(), high = image_.max().item<double>();
    if (!finite || !(low >= 0 && high <= 1))
      throw ValidationError(
          std::string("the image is ") +
              (finite ? "out of [0, 1]: from " + std::to_string(low) + " to " + std::to_string(high)
                      : "not finite"),
          kImageCheck);
  }

  void check_parameter_counts() {
    const bool planted = fault_armed() && fault_ == Fault::parameters;
    torch::nn::Module& first = text_   ? static_cast<torch::nn::Module&>(*text_)
                               : unet_ ? static_cast<torch::nn::Module&>(*unet_)
                                       : static_cast<torch::nn::Module&>(*vae_);
    if (planted)
      first.register_module("stray", std::make_shared<sd15::Linear>(
                                         8, 8, Placement{torch::TensorOptions().device(device())}));
    struct Counted {
      const char* name;
      const torch::nn::Module* model;
      int64_t want;
    };
    const Counted counted[] = {{"the text encoder", text_.get(), models_.text_parameters},
                               {"the UNet", unet_.get(), models_.unet_parameters},
                               {"the VAE decoder", vae_.get(), models_.vae_parameters}};
    std::string wrong;
    for (const Counted& m : counted) {
      if (!m.model) continue;
      const int64_t got = sd15::parameter_count(*m.model);
      if (got != m.want)
        wrong += std::string(wrong.empty() ? "" : "; ") + m.name + " has " + std::to_string(got) +
                 " parameters, its architecture " + std::to_string(m.want);
    }
    if (planted) first.unregister_module("stray");
    if (!wrong.empty()) throw ValidationError(wrong, kParameterCheck);
  }

  void check_text_encoder() {
    torch::Tensor want;
    {
      torch_compat::Tf32Off fp32;
      want = reference_copy(*text_, models_.text)->forward(tokens_);
    }
    const bool planted = fault_armed() && fault_ == Fault::text;
    if (planted) text_->drop_causal_mask(true);
    const auto got = text_->forward(tokens_);
    if (planted) text_->drop_causal_mask(false);
    require_finite(got, "the text encoder's outputs");
    text_error_ = relative_l2(got, want);
    require_bound(text_error_, kTextBound.of(c_.dtype), "the text encoder's last hidden state",
                  kTextCheck);
  }

  // Reverses conv_in's input channels in place: the UNet reads the latents' channels the other
  // way round (a layout slip, as the VAE's BGR fault). Subtler faults are weak here: with random
  // weights the time embedding's halves swapped (flip_sin_to_cos the wrong way) moved the tiny
  // UNet's output by 0.07 and GEGLU's halves swapped by 0.19, too near bf16's bound; this one by
  // 1.3 (measured on the CPU, three seeds).
  void reverse_input_channels() {
    torch::NoGradGuard no_grad;
    auto weight = unet_->named_parameters()["conv_in.weight"];
    weight.copy_(weight.flip({1}));
  }

  // One guided step from a fresh latent at the first timestep (951), as the mode runs it (the
  // graph's replay in graph mode): its UNet prediction against the reference copy's, its update
  // against the formula in float64; then every step's update on random inputs.
  void check_unet_step_and_ddim() {
    const int64_t first = 0, n = c_.images;
    torch::NoGradGuard no_grad;
    latents_.normal_();
    step_.fill_(first);
    const auto x = latents_.clone();
    torch::Tensor want;
    {
      torch_compat::Tf32Off fp32;
      torch_compat::CudnnHeuristicPlans heuristics;
      const auto reference = reference_copy(*unet_, models_.unet);
      const auto type = reference_dtype();
      const auto t = ddim_->timestep_table().narrow(0, first, 1);
      want = reference->forward(torch::cat({x, x}).to(type), t, context_.to(type));
    }
    const bool unet_fault = fault_armed() && fault_ == Fault::unet;
    const bool ddim_fault = fault_armed() && fault_ == Fault::ddim;
    if (unet_fault) reverse_input_channels();
    if (ddim_fault) ddim_->misalign_alpha_prev(true);
    const auto noise = step(c_.graph).clone();
    const auto after = latents_.clone();
    if (unet_fault) reverse_input_channels();
    require_finite(noise, "the UNet's predictions");
    unet_error_ = relative_l2(noise, want);
    require_bound(unet_error_, kUNetBound.of(c_.dtype),
                  "the UNet's noise prediction at t = 951 (batch " + std::to_string(2 * n) + ")",
                  kUNetCheck);

    // The step's own update, then every step's on random inputs, against float64.
    const auto eps = noise.chunk(2);
    ddim_error_ = update_error(x, eps[0], eps[1], after, first);
    auto probe = torch::randn_like(x);
    auto probe_noise = torch::randn({2 * n, x.size(1), x.size(2), x.size(3)}, noise.options());
    for (int64_t i = 0; i < kSteps; ++i) {
      const auto at = torch::full({1}, i, step_.options());
      const auto next = ddim_->step(probe, probe_noise, at);
      const auto parts = probe_noise.chunk(2);
      ddim_error_ = std::max(ddim_error_, update_error(probe, parts[0], parts[1], next, i));
    }
    if (ddim_fault) ddim_->misalign_alpha_prev(false);
    const double bound = kDdimBound.of(c_.dtype);
    if (!(ddim_error_ <= bound))
      throw ValidationError("the guided DDIM update against its formula in float64 on the host: " +
                                bound_text(ddim_error_, bound) + " (worst of the 20 steps)",
                            kDdimCheck);
  }

  double update_error(const torch::Tensor& x, const torch::Tensor& eps_u,
                      const torch::Tensor& eps_c, const torch::Tensor& got, int64_t step) const {
    const auto want =
        ddim_->reference_step(to_doubles(x), to_doubles(eps_u), to_doubles(eps_c), step);
    const auto have = to_doubles(got);
    double diff = 0, norm = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      diff += (have[i] - want[i]) * (have[i] - want[i]);
      norm += want[i] * want[i];
    }
    return std::sqrt(diff) / (norm > 0 ? std::sqrt(norm) : 1.0);
  }

  // Reverses the decoder's conv_out over its output channels (weight and bias), in place.
  void reverse_output_channels() {
    torch::NoGradGuard no_grad;
    auto params = vae_->named_parameters();
    for (const char* name : {"decoder.conv_out.weight", "decoder.conv_out.bias"}) {
      auto p = params[name];
      p.copy_(p.flip({0}));
    }
  }

  // A decode of fresh latents (of a denoised latent's unit scale, divided by the scaling factor
  // as the pipeline does) against the reference copy's, before the clamp.
  void check_vae_decode() {
    const auto latents = torch::randn({c_.images, models_.vae.latent_channels, latent_, latent_},
                                      latents_.options()) /
                         models_.vae.scaling_factor;
    torch::Tensor want;
    {
      torch_compat::Tf32Off fp32;
      torch_compat::CudnnHeuristicPlans heuristics;
      want = reference_copy(*vae_, models_.vae)->forward(latents.to(reference_dtype()));
    }
    const bool planted = fault_armed() && fault_ == Fault::vae;
    if (planted) reverse_output_channels();
    const auto got = vae_->forward(latents);
    if (planted) reverse_output_channels();
    require_finite(got, "the VAE decoder's outputs");
    vae_error_ = relative_l2(got, want);
    require_bound(vae_error_, kVaeBound.of(c_.dtype), "the VAE decoder's image (before the clamp)",
                  kVaeCheck);
  }

  Config c_;
  Models models_;
  int64_t latent_;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<StageClock> clock_;
  std::shared_ptr<ClipTextModel> text_;
  std::shared_ptr<UNet2DConditionModel> unet_;
  std::shared_ptr<VaeDecoder> vae_;
  std::unique_ptr<DdimGuidedScheduler> ddim_;
  torch::Tensor tokens_, context_, noise_, latents_, step_, image_;
  TorchGraph graph_;
  torch::Tensor graph_noise_;  // the graph's UNet prediction, rewritten by each replay
  double first_run_ms_ = 0;
  double text_error_ = 0, unet_error_ = 0, ddim_error_ = 0, vae_error_ = 0;
  Fault fault_ = Fault::image;  // the fault armed last
  int faults_planted_ = 0;
};

// What a configuration holds on the device, estimated from the parameters and the activations (to
// be replaced by the GPU's measured peaks, peak_reserved_bytes with the check's copy): the
// weights in the dtype; the check's fp32 copy of the largest model beside them (the UNet's 3.4
// GB); the UNet's activations at batch 2 x images (0.25 GiB a sample at 64 x 64, fp32, an
// over-estimate: its largest tensors are the first transformer's GEGLU, 42 MB a sample); the
// decode's (1.25 GiB an image at 512 x 512 in fp32: the last up block's 256-channel input, its
// GroupNorm and convolutions at 512 x 512, 268 MB each); 1 GiB of LibTorch's own (workspaces,
// the allocator's rounding). SD 1.5's default rows come to 7.9 GiB (image, fp16, 1 image, 512),
// the largest (image, 4 images, 768) to 21.9 GiB: a 24 GiB GPU runs the default rows.
std::uint64_t device_bytes(const Config& c) {
  const Models m = c.tiny ? tiny_models() : sd15_models();
  const bool text = c.what == What::image || c.what == What::text_encode;
  const bool unet = c.what == What::image || c.what == What::unet_step;
  const bool vae = c.what == What::image || c.what == What::vae_decode;
  const double e = c.dtype == torch::kFloat ? 4 : 2;
  const double parameters = (text ? double(m.text_parameters) : 0) +
                            (unet ? double(m.unet_parameters) : 0) +
                            (vae ? double(m.vae_parameters) : 0);
  const double largest = unet  ? double(m.unet_parameters)
                         : vae ? double(m.vae_parameters)
                               : double(m.text_parameters);
  const double pixels = double(c.resolution * c.resolution) / (512.0 * 512.0);
  double bytes = parameters * e + largest * 4 * (e == 4 ? 2 : 1) + double(kGiB);
  if (unet) bytes += double(2 * c.images) * pixels * double(kGiB) / 4;
  if (vae) bytes += double(c.images) * pixels * 1.25 * double(kGiB);
  return std::uint64_t(bytes);
}

void add_sd15_family(const std::string& name, std::vector<DType> dtypes,
                     std::vector<GraphMode> modes, std::vector<std::int64_t> images,
                     std::vector<std::int64_t> resolutions, Timer timer) {
  const bool tiny = timer == Timer::host_clock;
  const int64_t first_resolution = resolutions.front();
  Family(name, tiny ? "Stable Diffusion v1.5's pipeline and stages, a tiny configuration"
                    : "Stable Diffusion v1.5 text-to-image (20 DDIM steps, guidance 7.5) and its "
                      "stages")
      .axis(enum_axis("what", kWhats))
      .axis(dtype_axis(dtypes))
      .axis(enum_axis("mode", kGraphModes, modes))
      .axis(int_axis("images", images))
      .axis(int_axis("resolution", resolutions))
      // A graph holds the denoising step: image and unet_step rows. The text encoder runs once
      // per prompt whatever the images and resolution: one row.
      .where([first_resolution](const Point& p) {
        const What w = p.get_enum<What>("what");
        if (p.get_enum<GraphMode>("mode") == GraphMode::graph &&
            !(w == What::image || w == What::unet_step))
          return false;
        return w != What::text_encode ||
               (p.get_int("images") == 1 && p.get_int("resolution") == first_resolution);
      })
      .counter({"ms_per_image", "ms", Better::lower, "the run's time over its images (image rows)"})
      .counter({"images_per_s", "img/s", Better::higher, "images made per second"})
      .counter({"it_per_s", "it/s", Better::higher,
                "denoising steps per second: the steps over the denoising loop's time (image "
                "rows, as diffusers' progress bar), one over the step (unet_step rows)"})
      .counter(
          {"step_ms", "ms", Better::lower,
           "a guided denoising step (the UNet at batch 2 x images, guidance, the DDIM update), "
           "median over every step of the timed runs"})
      .counter({"unet_TFLOPS", "TFLOP/s", Better::higher,
                "the UNet's FLOPs of a guided step (counted from its configuration) over step_ms"})
      .counter({"text_encode_ms", "ms", Better::lower, "image rows: the text encoder, median"})
      .counter({"denoise_ms", "ms", Better::lower, "image rows: the 20 denoising steps, median"})
      .counter({"vae_decode_ms", "ms", Better::lower,
                "image rows: the VAE decode and the clamp, median"})
      .counter({"first_image_ms", "ms", Better::lower,
                "the first image after the models were built, eager, host clock synchronised on "
                "both sides (module loading, cuDNN's and cuBLAS's set-up included)"})
      .counter({"first_run_ms", "ms", Better::lower,
                "the stage's first run after its model was built, eager, host clock synchronised "
                "on both sides (module loading, cuDNN's and cuBLAS's set-up included)"})
      .counter({"weight_bytes", "B", Better::lower, "the model's parameters"})
      .counter({"text_rel_error", "", Better::lower,
                "text encoder against an fp32 copy (fp32 rows: float64), relative L2"})
      .counter({"unet_rel_error", "", Better::lower,
                "one guided step's UNet prediction against an fp32 copy (fp32 rows: float64), "
                "relative L2"})
      .counter({"ddim_rel_error", "", Better::lower,
                "the guided DDIM update against its formula in float64, relative L2, worst step"})
      .counter({"vae_rel_error", "", Better::lower,
                "a VAE decode against an fp32 copy (fp32 rows: float64), relative L2"})
      .main_counter("images_per_s")
      .size_axis("images")
      // Default run: seed 001's image at fp16, 512 x 512, one image per prompt, eager and graph,
      // and its stages beside it (a few seconds each); the rest with --cubench_suite=full.
      .default_suite([tiny](const Point& p) {
        if (tiny) return true;
        return p.get_dtype() == DType::fp16 && p.get_int("images") == 1 &&
               p.get_int("resolution") == 512;
      })
      .timer(timer)
      .sampling(Sampling::runs_per_sample(1))
      .size([](const Point& p) {
        return double(p.get_int("images")) *
               double(p.get_int("resolution") * p.get_int("resolution"));
      })
      .needs([tiny](const Point& p) {
        const Config c{p.get_enum<What>("what"),
                       scalar_type(p.get_dtype()),
                       p.get_enum<GraphMode>("mode") == GraphMode::graph,
                       p.get_int("images"),
                       p.get_int("resolution"),
                       tiny};
        return tensor_core_needs(p.get_dtype(), device_bytes(c));
      })
      .make([tiny](const Point& p) {
        const Config c{p.get_enum<What>("what"),
                       scalar_type(p.get_dtype()),
                       p.get_enum<GraphMode>("mode") == GraphMode::graph,
                       p.get_int("images"),
                       p.get_int("resolution"),
                       tiny};
        return std::make_unique<StableDiffusion>(c);
      })
      .add();
}

void register_sd15() {
  add_sd15_family("cpu/sd15", {DType::fp32}, {GraphMode::eager}, {1}, {128}, Timer::host_clock);
#if CUBENCH_TORCH_CUDA
  add_sd15_family("sd15", {DType::fp16, DType::bf16}, {GraphMode::eager, GraphMode::graph}, {1, 4},
                  {512, 768}, Timer::cuda_events);
#endif
}
CUBENCH_REGISTER(register_sd15);

}  // namespace
}  // namespace cubench
