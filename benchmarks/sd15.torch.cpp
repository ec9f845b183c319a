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
//   mode: eager, graph (each denoising step a replay of one step captured in a CUDA graph, its
//         timestep and coefficients read on the device from a step counter there; the text
//         encoder and the decode stay eager), or compiled (the UNet a call of diffusers'
//         UNet2DConditionModel exported at the row's shapes and compiled ahead of time by
//         AOTInductor, tools/aoti-export, handed this UNet's weights by name: compiled_module.h;
//         guidance, the scheduler, the text encoder and the decode stay eager, as diffusers'
//         recipe compiles the UNet alone): image and unet_step rows only;
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
// Compiled mode: the same checks on the compiled UNet's output (diffusers' loop in the arithmetic
// check runs the compiled UNet too: the same models), the package must list exactly this UNet's
// weights by name (diffusers'), and its prediction at t = 951 stays within the UNet's bound of an
// eager forward of the same weights (compiled_rel_error); the conv_in fault is handed to the
// package as a weight (a perturbed copy after loading).
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
constexpr const char* kImageCheck = "the image finite, in [0, 1] and the clamp of the decode";
constexpr const char* kParameterCheck = "the parameter counts";
constexpr const char* kStepCountCheck = "the denoising steps taken";
constexpr const char* kTextCheck = "the timed text encoding against an fp32 copy";
constexpr const char* kUNetCheck = "the timed UNet prediction against an fp32 copy";
constexpr const char* kDdimCheck = "the timed DDIM update against float64";
constexpr const char* kDecodeCheck = "the timed decode of the timed latents against an fp32 copy";
constexpr const char* kDecoderInputCheck = "the decoder's input: the latents over 0.18215";
constexpr const char* kArithmeticCheck =
    "the timed image against diffusers' loop on the same models";
constexpr const char* kPipelineCheck = "the timed image against a reference pipeline";

// diffusers' numbers for SD 1.5 as seed 001 ran it (StableDiffusionPipeline's 20 DDIM steps,
// guidance_scale 7.5; the DDIMScheduler config of stable-diffusion-v1-5: 1000 training steps,
// scaled_linear betas 0.00085 to 0.012, steps_offset 1, set_alpha_to_one false; the VAE's
// scaling_factor 0.18215), written here a second time on purpose: the checks' references use these,
// never the code under test's kSteps, kGuidance, DdimConfig or VaeConfig, so a slip there shows.
namespace diffusers_sd15 {
constexpr int64_t kSteps = 20;
constexpr double kGuidance = 7.5;
constexpr double kVaeScalingFactor = 0.18215;
constexpr int64_t kTrainSteps = 1000;
constexpr double kBetaStart = 0.00085, kBetaEnd = 0.012;
constexpr int64_t kStepsOffset = 1;

// Step i's timestep ("leading" spacing: 951, 901, ..., 1) and the one it steps to (-1 after the
// last, whose alpha is alphas_cumprod[0]).
int64_t timestep(int64_t i) { return (kSteps - 1 - i) * (kTrainSteps / kSteps) + kStepsOffset; }
int64_t previous(int64_t t) { return t - kTrainSteps / kSteps; }
// alphas_cumprod[t] in float64: prod over s <= t of 1 - beta_s, beta = linspace(sqrt(start),
// sqrt(end))^2.
double alpha(int64_t t) {
  if (t < 0) t = 0;
  double product = 1;
  for (int64_t s = 0; s <= t; ++s) {
    const double root = std::sqrt(kBetaStart) + (std::sqrt(kBetaEnd) - std::sqrt(kBetaStart)) *
                                                    double(s) / double(kTrainSteps - 1);
    product *= 1 - root * root;
  }
  return product;
}
}  // namespace diffusers_sd15

// Relative L2 bounds of each check, by the dtype under test (its reference: a copy of the same
// weights in fp32, and in float64 for fp32), each about twice the worst clean figure measured, so
// a right result stands at half its bound or less:
// - fp32 against float64, on the CPU (LibTorch 1.13, the tiny configuration, three seeds;
//   tests/test_torch_sd15.cpp's PrecisionFiguresOnTheTinyConfig prints them): 7e-7 (UNet), 1.4e-6
//   (VAE), 2.6e-7 (text), bounded at 1e-5, far under the faults' 0.05-1.3;
// - fp16 and bf16 against fp32 on an H100 (LibTorch 2.11, cuDNN 9.19; every configuration of the
//   full suite, the rows' *_rel_error counters): UNet 1.1-1.7e-3 and 0.96-1.36e-2, VAE 2.0-2.8e-3
//   and 1.6-2.0e-2, text 1.04-1.11e-3 and 0.84-0.89e-2, bounded at 4e-3 and 3e-2, 6e-3 and 4e-2,
//   2.5e-3 and 2e-2. (On the CPU, bf16 against fp32: 2.0-2.1e-2, 2.5-2.8e-2 and 6.5-7.5e-3.)
// bf16 on the CPU has bounds of its own: LibTorch 1.13's CPU kernels round more than cuDNN's.
struct Bound {
  double fp32, fp16, bf16, cpu_bf16;
  double of(torch::Dtype t, bool gpu) const {
    return t == torch::kFloat ? fp32 : t == torch::kHalf ? fp16 : gpu ? bf16 : cpu_bf16;
  }
};
constexpr Bound kUNetBound{1e-5, 4e-3, 3e-2, 5e-2};
constexpr Bound kVaeBound{1e-5, 6e-3, 4e-2, 6e-2};
constexpr Bound kTextBound{1e-5, 2.5e-3, 2e-2, 1.5e-2};
// The update's arithmetic is fp32 with diffusers' fp32 alphas_cumprod, whose product over up to
// 951 factors is off the float64 one by a few 1e-6: the fp32 rows measured 3.0e-6 (the worst of
// the 20 steps, on the CPU), bounded at 3e-5. fp16 and bf16 round the result once more: 2.1e-4
// and 1.7e-3 on the H100 (every configuration), bounded at 5e-4 and 4e-3.
constexpr Bound kDdimBound{3e-5, 5e-4, 4e-3, 4e-3};
// The whole pipeline against the reference pipeline (the same weights in fp32, float64 for fp32
// rows; diffusers' numbers above): every stage's rounding, carried through 20 steps. On the CPU
// (the tiny configuration, three seeds) fp32 against float64 5.6e-7 and bf16 against fp32
// 6.9-8.7e-3; bounded at 1e-5 and 2e-2 (a wrong conv_in moved the image by 0.15, a misaligned
// a_prev by 0.33). fp16 and bf16 on the GPU: the bf16 CPU figure's rounding through cuDNN's
// kernels, taken at the UNet's own ratio (its GPU error a half and a tenth of the CPU's).
constexpr Bound kPipelineBound{1e-5, 6e-3, 3e-2, 2e-2};
// The whole pipeline against diffusers' loop on the same models in the same dtype: only the
// arithmetic of the steps differs (diffusers' alphas in float64 against the scheduler's fp32
// tables), rounded to the dtype once a step. On the CPU: fp32 3.9e-7; bf16 0 to 5.1e-3 (three
// seeds: a rounding that tips one way early carries through the steps); a guidance scale of 5 for
// 7.5 moved the bf16 image by 1.8e-2 and the fp32 one by 1.2e-2.
constexpr Bound kArithmeticBound{1e-5, 4e-3, 1e-2, 1e-2};

struct Config {
  What what;
  torch::Dtype dtype;
  bool graph;
  int64_t images, resolution;
  bool tiny;      // the CPU rows' models instead of SD 1.5's
  bool compiled;  // the UNet from an AOTInductor package
  // tools/aoti-export's name for the UNet's package of this configuration (image and unet_step
  // rows share it: the same UNet at the same shapes).
  std::string package() const {
    return std::string("sd15_unet-") + (dtype == torch::kHalf ? "fp16" : "bf16") + "-" +
           std::to_string(images) + "-" + std::to_string(resolution);
  }
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

// The planted faults: defects of the code under test, armed before a run as the runner makes it
// (TorchCase::run_again), each met by one check (fault_check) reading that run's outputs.
enum class Fault {
  latent_nan,       // one latent NaN before the decode (an fp16 overflow's)
  parameters,       // a stray layer registered in a model
  text_mask,        // the text encoder's causal mask dropped
  unet_channels,    // the UNet's conv_in reading the latents' channels reversed
  ddim_misaligned,  // the DDIM's a_prev taken at the step's own timestep
  vae_bgr,          // the VAE's output channels reversed
  guidance,         // a guidance scale of 5 for 7.5
  skipped_step,     // the denoising loop one step short
  vae_scale,        // the latents divided by 0.2 for 0.18215 before the decode
  context_tiled,    // the per-image context tiled ([u, c, u, c]) for repeated ([u, u, c, c])
};

class StableDiffusion final : public TorchCase {
 public:
  // bf16/fp16 products: TF32 plays no part (the references turn it off for themselves). A graph
  // points into cuBLAS's workspace.
  explicit StableDiffusion(Config c)
      : TorchCase(TorchMath{}, c.graph ? LibraryWorkspaces::keep : LibraryWorkspaces::release),
        c_(c),
        models_(c.tiny ? tiny_models() : sd15_models()),
        latent_(c.resolution / models_.vae.upscale()) {}

  int fault_count() const override { return int(faults().size()); }

  std::string fault_check() const override {
    switch (fault_) {
      case Fault::latent_nan:
        return kImageCheck;
      case Fault::parameters:
        return kParameterCheck;
      case Fault::skipped_step:
        return kStepCountCheck;
      case Fault::text_mask:
        return kTextCheck;
      case Fault::unet_channels:
        return c_.what == What::unet_step ? kUNetCheck : kPipelineCheck;
      case Fault::ddim_misaligned:
      case Fault::guidance:
        return c_.what == What::unet_step ? kDdimCheck : kArithmeticCheck;
      case Fault::vae_bgr:
        return kDecodeCheck;
      case Fault::vae_scale:
        return kDecoderInputCheck;
      case Fault::context_tiled:
        return kTextCheck;  // the timed context itself, against the check's repeat per image
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
    if (c_.compiled) compiled_.load(c_.package());  // before the models: a missing one says so
    stream_ = on_gpu() ? env.stream() : nullptr;
    clock_ = std::make_unique<StageClock>(on_gpu());
    const auto options = torch::TensorOptions().device(device()).dtype(c_.dtype);
    const Placement at{options, Init::random};
    const int64_t n = c_.images, tokens = models_.text.tokens;
    if (uses_text()) text_ = std::make_shared<ClipTextModel>(models_.text, at);
    if (uses_unet()) {
      unet_ = std::make_shared<UNet2DConditionModel>(models_.unet, at);
      ddim_ = std::make_unique<DdimGuidedScheduler>(kSteps, kGuidance, device());
      if (c_.compiled) compiled_.hand_constants(unet_constants());
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

  // Every tensor a timed run writes and the checks read: the image and the decode before its
  // clamp, the context, the last step's prediction. The latents and the step counter are written
  // from noise_ and 0 by each run (before_sample for unet_step rows, generate for images).
  void poison_outputs(Env&) override {
    for (torch::Tensor* t : {&image_, &raw_, &eps_, &decoder_input_}) poison(*t);
    if (uses_text()) poison(context_);
    if (c_.what == What::image) poison(latents_), poison(step_);
  }

  // What the last timed run wrote, against references of the check's own (diffusers' numbers,
  // copies of the same weights in fp32, float64 for fp32 rows).
  void check(Env& env) override {
    synchronize(env);
    torch::NoGradGuard no_grad;
    if (c_.what == What::image || c_.what == What::vae_decode) check_image();
    check_parameter_counts();
    if (uses_unet()) check_step_count();
    if (uses_text()) check_text_encoding();
    if (c_.what == What::unet_step) check_unet_step();
    if (c_.compiled) check_compiled_against_eager();
    if (uses_vae()) check_decoder_input(), check_decode();
    if (c_.what == What::image) check_arithmetic(), check_pipeline();
    clock_->reset();  // the first call's and the check's runs are not the timed ones
  }

  // The faults of this row's code, in the order arm_fault plants them.
  std::vector<Fault> faults() const {
    std::vector<Fault> f;
    if (uses_vae()) f.push_back(Fault::latent_nan);
    f.push_back(Fault::parameters);
    if (uses_text()) f.push_back(Fault::text_mask);
    if (uses_unet())
      for (Fault u : {Fault::unet_channels, Fault::ddim_misaligned, Fault::guidance})
        f.push_back(u);
    if (c_.what == What::image) f.push_back(Fault::skipped_step);
    if (uses_vae()) f.push_back(Fault::vae_bgr), f.push_back(Fault::vae_scale);
    // With one image per prompt tiling and repeating give the same context.
    if (uses_text() && c_.images > 1) f.push_back(Fault::context_tiled);
    return f;
  }

  // The next fault in turn, planted in the code under test, and one run made with it. The
  // references a check makes from the models' weights are made first, from the clean weights
  // (a fault may change them in place), and held until the fault is disarmed.
  std::string arm_fault(Env& env) override {
    const auto all = faults();
    fault_ = all[std::size_t(faults_planted_++) % all.size()];
    hold_reference_models();
    std::string what;
    switch (fault_) {
      case Fault::latent_nan:
        latent_nan_ = true;
        what = "one latent set to NaN before the decode (an fp16 overflow's)";
        break;
      case Fault::parameters:
        first_model().register_module(
            "stray", std::make_shared<sd15::Linear>(
                         8, 8, Placement{torch::TensorOptions().device(device())}));
        what = "a stray 8 x 8 linear layer (72 parameters) registered in the " + first_model_name();
        break;
      case Fault::text_mask:
        text_->drop_causal_mask(true);
        what = "the text encoder's causal mask dropped";
        break;
      case Fault::unet_channels:
        reverse_input_channels();
        what = "the UNet's conv_in reading the latents' channels reversed";
        break;
      case Fault::ddim_misaligned:
        ddim_->misalign_alpha_prev(true);
        what = "the DDIM's a_prev taken at the step's own timestep (an off-by-one)";
        break;
      case Fault::vae_bgr:
        reverse_output_channels();
        what = "the VAE decoder's output channels reversed (BGR for RGB)";
        break;
      case Fault::guidance:
        ddim_->set_guidance(5.0);
        what = "a guidance scale of 5 for 7.5";
        break;
      case Fault::skipped_step:
        steps_ = kSteps - 1;
        what = "the denoising loop one step short (19 of 20)";
        break;
      case Fault::vae_scale:
        vae_scale_ = 0.2;
        what = "the latents divided by 0.2 for the VAE's 0.18215 before the decode";
        break;
      case Fault::context_tiled:
        context_tiled_ = true;
        what = "the per-image context tiled ([u, c, u, c]) for repeated ([u, u, c, c])";
        break;
    }
    if (c_.graph) capture();                                      // the step as the fault leaves it
    if (c_.compiled) compiled_.hand_constants(unet_constants());  // its weights as left
    run_again(env);
    return what;
  }

  void disarm_fault(Env&) override {
    switch (fault_) {
      case Fault::parameters:
        first_model().unregister_module("stray");
        break;
      case Fault::text_mask:
        text_->drop_causal_mask(false);
        break;
      case Fault::unet_channels:
        reverse_input_channels();
        break;
      case Fault::ddim_misaligned:
        ddim_->misalign_alpha_prev(false);
        break;
      case Fault::vae_bgr:
        reverse_output_channels();
        break;
      case Fault::guidance:
        ddim_->set_guidance(kGuidance);
        break;
      default:
        break;
    }
    latent_nan_ = context_tiled_ = false;
    steps_ = kSteps;
    vae_scale_ = models_.vae.scaling_factor;
    reference_text_.reset(), reference_unet_.reset(), reference_vae_.reset();
    if (c_.graph) capture();
    if (c_.compiled) compiled_.hand_constants(unet_constants());
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
    // The errors of the checks this row runs (check()).
    if (c_.what == What::text_encode) c["text_rel_error"] = text_error_;
    if (c_.what == What::unet_step)
      c["unet_rel_error"] = unet_error_, c["ddim_rel_error"] = ddim_error_;
    if (uses_vae()) c["vae_rel_error"] = vae_error_;
    if (c_.what == What::image)
      c["pipeline_rel_error"] = pipeline_error_, c["arithmetic_rel_error"] = arithmetic_error_;
    if (c_.what == What::image) c["text_rel_error"] = text_error_;
    if (c_.compiled) {
      c["compiled_rel_error"] = compiled_error_;
      c["package_load_ms"] = compiled_.load_ms();
      c["second_copy_bytes"] = compiled_.second_copy_bytes();
      c["package_own_constants"] = compiled_.own_constants();
    }
    return c;
  }

  std::string label_detail() const override {
    return c_.graph      ? "each denoising step a CUDA graph replay"
           : c_.compiled ? "the UNet from AOTInductor package " + c_.package()
                         : "";
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
    if (context_tiled_)  // the fault: [n, 2, tokens, width], [u, c] per image
      context_.view({c_.images, 2, hidden.size(1), hidden.size(2)}).copy_(hidden.unsqueeze(0));
    else
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
    auto noise = predict_noise(torch::cat({latents_, latents_}), t, context_);
    latents_.copy_(ddim_->step(latents_, noise, step_));
    step_.add_(1);
    return noise;
  }
  // The UNet's weights as the package names them: diffusers' names under the exported module's
  // "unet." (compiled_modules.py's UNetNoise holds diffusers' UNet2DConditionModel as `unet`).
  std::map<std::string, torch::Tensor> unet_constants() const {
    return module_constants(*unet_, "unet.");
  }

  // The UNet's prediction, from the eager UNet or (compiled rows) the package.
  torch::Tensor predict_noise(const torch::Tensor& sample, const torch::Tensor& t,
                              const torch::Tensor& context) {
    if (c_.compiled) return compiled_.run({sample, t, context}, stream_).at(0);
    return unet_->forward(sample, t, context);
  }

  // A step as the mode runs it; keeps the UNet's prediction (the graph's output tensor).
  void step(bool replay) {
    if (!replay) {
      eps_ = denoise_step();
      return;
    }
    graph_.replay();
    eps_ = graph_noise_;
  }

  // The decode and the clamp: raw_ (the decoder's image mapped to [0, 1], before the clamp) is
  // kept for the checks, image_ is the pipeline's output.
  void decode(const torch::Tensor& latents) {
    auto in = latents;
    if (latent_nan_) {  // the fault: an fp16 overflow's NaN in one latent
      in = latents.clone();
      in.view({-1})[0].fill_(std::numeric_limits<double>::quiet_NaN());
    }
    decoder_input_ = in / vae_scale_;
    raw_ = vae_->forward(decoder_input_) / 2 + 0.5;
    image_ = raw_.clamp(0, 1);
  }

  void generate(bool replay) {
    clock_->start(stream_, std::size_t(kSteps) + 3);
    encode_prompts();
    clock_->mark();
    restart_denoising();
    for (int64_t i = 0; i < steps_; ++i) {
      step(replay);
      clock_->mark();
    }
    decode(latents_);
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
        decode(latents_);
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
  // The reference models: those held while a fault is armed (copied before it changed a weight),
  // else fresh copies of the weights as they are.
  std::shared_ptr<ClipTextModel> reference_text() const {
    return reference_text_ ? reference_text_ : reference_copy(*text_, models_.text);
  }
  std::shared_ptr<UNet2DConditionModel> reference_unet() const {
    return reference_unet_ ? reference_unet_ : reference_copy(*unet_, models_.unet);
  }
  std::shared_ptr<VaeDecoder> reference_vae() const {
    return reference_vae_ ? reference_vae_ : reference_copy(*vae_, models_.vae);
  }
  void hold_reference_models() {
    if (text_) reference_text_ = reference_copy(*text_, models_.text);
    if (unet_) reference_unet_ = reference_copy(*unet_, models_.unet);
    if (vae_) reference_vae_ = reference_copy(*vae_, models_.vae);
  }
  torch::nn::Module& first_model() {
    return text_   ? static_cast<torch::nn::Module&>(*text_)
           : unet_ ? static_cast<torch::nn::Module&>(*unet_)
                   : static_cast<torch::nn::Module&>(*vae_);
  }

  void require_bound(double error, double bound, const std::string& what, const char* check) {
    if (!(error <= bound))
      throw ValidationError(what + " against the same weights in " +
                                (reference_dtype() == torch::kDouble ? "float64" : "fp32") + ": " +
                                bound_text(error, bound),
                            check);
  }

  // A timed output's shape and finiteness (a tensor the run never wrote is undefined or NaN).
  void require_written(const torch::Tensor& t, const std::vector<int64_t>& shape,
                       const std::string& what, const char* check) {
    if (!t.defined() || t.sizes().vec() != shape)
      throw ValidationError(what + " was not written, or has the wrong shape", check);
    if (!torch::isfinite(t).all().item<bool>())
      throw ValidationError(what + " is not all finite", check);
  }

  std::vector<int64_t> image_shape() const {
    return {c_.images, models_.vae.out_channels, c_.resolution, c_.resolution};
  }

  // The timed image: finite, in [0, 1], and the clamp of the decode it came from (raw_).
  void check_image() {
    require_written(image_, image_shape(), "the image", kImageCheck);
    require_written(raw_, image_shape(), "the decode before the clamp", kImageCheck);
    const double low = image_.min().item<double>(), high = image_.max().item<double>();
    if (!(low >= 0 && high <= 1))
      throw ValidationError(
          "the image is out of [0, 1]: from " + std::to_string(low) + " to " + std::to_string(high),
          kImageCheck);
    if (!torch::equal(image_, raw_.clamp(0, 1)))
      throw ValidationError("the image is not the decode clamped to [0, 1]", kImageCheck);
  }

  void check_parameter_counts() {
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
    if (!wrong.empty()) throw ValidationError(wrong, kParameterCheck);
  }

  // The device's step counter after the run: diffusers' 20 steps for an image, one for a step.
  void check_step_count() {
    const int64_t want = c_.what == What::image ? diffusers_sd15::kSteps : 1;
    const int64_t got = step_.item<int64_t>();
    if (got != want)
      throw ValidationError(
          "the run took " + std::to_string(got) + " denoising steps, not " + std::to_string(want),
          kStepCountCheck);
  }

  // The context for the UNet as diffusers makes it from the text encoder's [unconditional,
  // conditional] outputs: each repeated per image, [u x images, c x images].
  torch::Tensor reference_context(const ClipTextModel& text) const {
    return text.forward(tokens_).repeat_interleave(c_.images, 0);
  }

  // text_encode rows: the timed context.
  void check_text_encoding() {
    torch::Tensor want;
    {
      torch_compat::Tf32Off fp32;
      want = reference_context(*reference_text());
    }
    require_written(context_, want.sizes().vec(), "the text encoder's context", kTextCheck);
    text_error_ = relative_l2(context_, want);
    require_bound(text_error_, kTextBound.of(c_.dtype, on_gpu()),
                  "the text encoder's last hidden state", kTextCheck);
  }

  // One guided DDIM update (eta 0) in float64 on the host with diffusers' numbers: x the latents
  // before, eps the UNet's prediction at batch 2n, unconditional first; t the step's timestep.
  static std::vector<double> diffusers_update(const std::vector<double>& x,
                                              const std::vector<double>& eps, int64_t t) {
    const double a = diffusers_sd15::alpha(t);
    const double a_prev = diffusers_sd15::alpha(diffusers_sd15::previous(t));
    std::vector<double> out(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double u = eps[i], c = eps[i + x.size()];
      const double guided = u + diffusers_sd15::kGuidance * (c - u);
      const double x0 = (x[i] - std::sqrt(1 - a) * guided) / std::sqrt(a);
      out[i] = std::sqrt(a_prev) * x0 + std::sqrt(1 - a_prev) * guided;
    }
    return out;
  }

  // unet_step rows: the timed step from noise_ at diffusers' first timestep (951): its prediction
  // against the reference UNet's; its update against the formula on that very prediction.
  void check_unet_step() {
    const int64_t t = diffusers_sd15::timestep(0);
    torch::Tensor want;
    {
      torch_compat::Tf32Off fp32;
      torch_compat::CudnnHeuristicPlans heuristics;
      const auto type = reference_dtype();
      const auto x = noise_.to(type);
      const auto at = torch::full({1}, double(t), x.options().dtype(torch::kFloat));
      want = reference_unet()->forward(torch::cat({x, x}), at, context_.to(type));
    }
    require_written(eps_, want.sizes().vec(), "the UNet's prediction", kUNetCheck);
    unet_error_ = relative_l2(eps_, want);
    require_bound(unet_error_, kUNetBound.of(c_.dtype, on_gpu()),
                  "the UNet's prediction at t = 951 (batch " + std::to_string(2 * c_.images) + ")",
                  kUNetCheck);
    require_written(latents_, noise_.sizes().vec(), "the latents after the step", kDdimCheck);
    const auto update = diffusers_update(to_doubles(noise_), to_doubles(eps_), t);
    const ErrorStats e = compare(to_doubles(latents_), update);  // validate.h
    ddim_error_ = e.nonfinite > 0 ? std::numeric_limits<double>::infinity() : e.rel_l2;
    const double bound = kDdimBound.of(c_.dtype, on_gpu());
    if (!(ddim_error_ <= bound))
      throw ValidationError(
          "the latents after the timed step against diffusers' guided DDIM "
          "update of its own prediction, in float64: " +
              bound_text(ddim_error_, bound),
          kDdimCheck);
  }

  // image and vae_decode rows: the timed decode (before its clamp) against the reference VAE's
  // decode of the latents the run decoded (the timed latents, for an image), divided by
  // diffusers' scaling factor; compared as the decoder's output (x / 2 + 0.5 undone).
  void check_decode() {
    torch::Tensor want;
    {
      torch_compat::Tf32Off fp32;
      torch_compat::CudnnHeuristicPlans heuristics;
      want = reference_vae()->forward(latents_.to(reference_dtype()) /
                                      diffusers_sd15::kVaeScalingFactor);
    }
    require_written(raw_, want.sizes().vec(), "the decode", kDecodeCheck);
    vae_error_ = relative_l2(raw_.to(reference_dtype()) * 2 - 1, want);
    require_bound(vae_error_, kVaeBound.of(c_.dtype, on_gpu()),
                  "the decoder's image (before the clamp)", kDecodeCheck);
  }

  // image and vae_decode rows: what the decoder was handed, the latents it decoded over diffusers'
  // scaling factor (the decoder's GroupNorms make its image nearly blind to the input's scale:
  // 0.2 for 0.18215 moved the tiny decoder's image by 2-10%, under bf16's bounds).
  void check_decoder_input() {
    require_written(decoder_input_, latents_.sizes().vec(), "the decoder's input",
                    kDecoderInputCheck);
    const double error = relative_l2(
        decoder_input_, latents_.to(torch::kDouble) / diffusers_sd15::kVaeScalingFactor);
    // The division rounds once to the dtype: 2^-8 at most in bf16.
    const double bound = c_.dtype == torch::kFloat ? 1e-6 : 8e-3;
    if (!(error <= bound))
      throw ValidationError("the decoder's input against the latents over diffusers' 0.18215: " +
                                bound_text(error, bound),
                            kDecoderInputCheck);
  }

  // image rows: the timed image (before its clamp) against diffusers' loop written in the check,
  // run on the models under test themselves in the row's dtype: the context repeated per image,
  // 20 guided DDIM steps at diffusers' timesteps with diffusers' alphas (fp32 arithmetic, the
  // result in the dtype, as DDIMScheduler), the decode of latents / 0.18215. The models' kernels
  // are the same on both sides, so what differs is the pipeline's own arithmetic (guidance, the
  // scheduler's tables, the context's order), which the 20 steps' rounding in fp16 and bf16 would
  // hide from a comparison with fp32 models (check_pipeline).
  void check_arithmetic() {
    torch::Tensor want;
    {
      const auto float32 = torch::TensorOptions().device(device()).dtype(torch::kFloat);
      const auto context = reference_context(*text_);
      auto x = noise_.clone();
      for (int64_t i = 0; i < diffusers_sd15::kSteps; ++i) {
        const int64_t t = diffusers_sd15::timestep(i);
        const auto at = torch::full({1}, double(t), float32);
        const auto eps = predict_noise(torch::cat({x, x}), at, context).to(torch::kFloat).chunk(2);
        const auto guided = eps[0] + diffusers_sd15::kGuidance * (eps[1] - eps[0]);
        const double a = diffusers_sd15::alpha(t);
        const double a_prev = diffusers_sd15::alpha(diffusers_sd15::previous(t));
        const auto x0 = (x.to(torch::kFloat) - std::sqrt(1 - a) * guided) / std::sqrt(a);
        x = (std::sqrt(a_prev) * x0 + std::sqrt(1 - a_prev) * guided).to(c_.dtype);
      }
      want = vae_->forward(x / diffusers_sd15::kVaeScalingFactor) / 2 + 0.5;
    }
    arithmetic_error_ = relative_l2(raw_, want);
    const double bound = kArithmeticBound.of(c_.dtype, on_gpu());
    if (!(arithmetic_error_ <= bound))
      throw ValidationError(
          "the image before the clamp against diffusers' loop (its guidance, "
          "timesteps, alphas and context order) on the same models: " +
              bound_text(arithmetic_error_, bound),
          kArithmeticCheck);
  }

  // image rows: the timed image (before its clamp) against diffusers' pipeline run on the
  // reference models from the same prompt ids and initial noise: the context repeated per image,
  // 20 guided DDIM steps at diffusers' timesteps, the decode of latents / 0.18215. Computed once
  // (the same inputs and weights every run).
  void check_pipeline() {
    if (!reference_image_.defined()) {
      torch_compat::Tf32Off fp32;
      torch_compat::CudnnHeuristicPlans heuristics;
      const auto type = reference_dtype();
      const auto unet = reference_unet();
      const auto context = reference_context(*reference_text());
      auto x = noise_.to(type);
      for (int64_t i = 0; i < diffusers_sd15::kSteps; ++i) {
        const int64_t t = diffusers_sd15::timestep(i);
        const auto at = torch::full({1}, double(t), x.options().dtype(torch::kFloat));
        const auto eps = unet->forward(torch::cat({x, x}), at, context).chunk(2);
        const auto guided = eps[0] + diffusers_sd15::kGuidance * (eps[1] - eps[0]);
        const double a = diffusers_sd15::alpha(t);
        const double a_prev = diffusers_sd15::alpha(diffusers_sd15::previous(t));
        const auto x0 = (x - std::sqrt(1 - a) * guided) / std::sqrt(a);
        x = std::sqrt(a_prev) * x0 + std::sqrt(1 - a_prev) * guided;
      }
      reference_image_ = reference_vae()->forward(x / diffusers_sd15::kVaeScalingFactor) / 2 + 0.5;
    }
    pipeline_error_ = relative_l2(raw_, reference_image_);
    require_bound(pipeline_error_, kPipelineBound.of(c_.dtype, on_gpu()),
                  "the image before the clamp against diffusers' pipeline on the same prompt ids, "
                  "initial noise and weights",
                  kPipelineCheck);
  }

  // Compiled rows: the package's prediction at t = 951 on the initial noise against an eager
  // forward of the same UNet on the same inputs (other kernels, the same dtype: within the UNet's
  // bound against fp32 of each other).
  void check_compiled_against_eager() {
    const auto float32 = torch::TensorOptions().device(device()).dtype(torch::kFloat);
    const auto at = torch::full({1}, double(diffusers_sd15::timestep(0)), float32);
    const auto sample = torch::cat({noise_, noise_});
    const auto compiled = predict_noise(sample, at, context_).clone();
    compiled_error_ = relative_l2(compiled, unet_->forward(sample, at, context_));
    // Compiled against eager in the row's own dtype: require_bound would name an fp32 reference.
    require_at_most(
        "the compiled UNet's prediction at t = 951 against an eager forward of the same weights: "
        "relative L2 error",
        compiled_error_, kUNetBound.of(c_.dtype, on_gpu()),
        "the compiled UNet against an eager forward");
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

  // Reverses the decoder's conv_out over its output channels (weight and bias), in place.
  void reverse_output_channels() {
    torch::NoGradGuard no_grad;
    auto params = vae_->named_parameters();
    for (const char* name : {"decoder.conv_out.weight", "decoder.conv_out.bias"}) {
      auto p = params[name];
      p.copy_(p.flip({0}));
    }
  }

  Config c_;
  Models models_;
  int64_t latent_;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<StageClock> clock_;
  std::shared_ptr<ClipTextModel> text_;
  std::shared_ptr<UNet2DConditionModel> unet_;
  CompiledModule compiled_;
  std::shared_ptr<VaeDecoder> vae_;
  std::unique_ptr<DdimGuidedScheduler> ddim_;
  // Inputs (prompt ids, initial noise); the state a run moves (latents, the device's step
  // counter); its outputs (context, the last step's prediction, the decode before and after its
  // clamp).
  torch::Tensor tokens_, noise_, latents_, step_, context_, eps_, decoder_input_, raw_, image_;
  TorchGraph graph_;
  torch::Tensor graph_noise_;  // the graph's UNet prediction, rewritten by each replay
  double first_run_ms_ = 0;
  double text_error_ = 0, unet_error_ = 0, ddim_error_ = 0, vae_error_ = 0, pipeline_error_ = 0,
         arithmetic_error_ = 0, compiled_error_ = 0;
  // The code under test as a fault leaves it (arm_fault; disarm_fault puts it back).
  int64_t steps_ = kSteps;
  double vae_scale_ = models_.vae.scaling_factor;
  bool latent_nan_ = false, context_tiled_ = false;
  Fault fault_ = Fault::latent_nan;  // the fault armed last
  int faults_planted_ = 0;
  // Held while a fault is armed: the reference models, copied from the clean weights.
  std::shared_ptr<ClipTextModel> reference_text_;
  std::shared_ptr<UNet2DConditionModel> reference_unet_;
  std::shared_ptr<VaeDecoder> reference_vae_;
  torch::Tensor reference_image_;  // the reference pipeline's, once
};

// What a configuration holds on the device, estimated from the parameters and the activations (to
// be replaced by the GPU's measured peaks, peak_reserved_bytes with the check's copy): the
// weights in the dtype; the check's fp32 copies of the models beside them (the reference
// pipeline's: the UNet's 3.4 GB, the text encoder's 0.5, the VAE decoder's 0.2); the UNet's
// activations at batch 2 x images (0.25 GiB a sample at 64 x 64, fp32, an over-estimate: its
// largest tensors are the first transformer's GEGLU, 42 MB a sample); the decode's (1.25 GiB an
// image at 512 x 512 in fp32: the last up block's 256-channel input, its GroupNorm and convolutions
// at 512 x 512, 268 MB each); 1 GiB of LibTorch's own (workspaces, the allocator's rounding).
// SD 1.5's default rows come to 8.5 GiB (image, fp16, 1 image, 512), the largest (image, 4 images,
// 768) to 22.5 GiB: a 24 GiB GPU runs the default rows.
std::uint64_t device_bytes(const Config& c) {
  const Models m = c.tiny ? tiny_models() : sd15_models();
  const bool text = c.what == What::image || c.what == What::text_encode;
  const bool unet = c.what == What::image || c.what == What::unet_step;
  const bool vae = c.what == What::image || c.what == What::vae_decode;
  const double e = c.dtype == torch::kFloat ? 4 : 2;
  const double parameters = (text ? double(m.text_parameters) : 0) +
                            (unet ? double(m.unet_parameters) : 0) +
                            (vae ? double(m.vae_parameters) : 0);
  const double pixels = double(c.resolution * c.resolution) / (512.0 * 512.0);
  // The check's copies of every model the row runs (the reference pipeline's), in fp32 (float64
  // for fp32 rows).
  double bytes = parameters * e + parameters * 4 * (e == 4 ? 2 : 1) + double(kGiB);
  if (unet) bytes += double(2 * c.images) * pixels * double(kGiB) / 4;
  if (vae) bytes += double(c.images) * pixels * 1.25 * double(kGiB);
  // A compiled UNet: its runner's copy of the weights where it copies them, and its own buffers.
  if (c.compiled)
    bytes +=
        (CompiledModule::shares_constants() ? 0 : double(m.unet_parameters) * e) + double(kGiB) / 2;
  return std::uint64_t(bytes);
}

void add_sd15_family(const std::string& name, std::vector<DType> dtypes,
                     std::vector<GraphMode> modes, std::vector<std::int64_t> images,
                     std::vector<std::int64_t> resolutions, Timer timer) {
  const bool tiny = timer == Timer::host_clock;
  const int64_t first_resolution = resolutions.front(), first_images = images.front();
  // Default run: seed 001's image at fp16, 512 x 512, one image per prompt, eager, graph and
  // compiled, and its stages beside it (a few seconds each); the rest with --cubench_suite=full.
  model_family(name,
               tiny ? "Stable Diffusion v1.5's pipeline and stages, a tiny configuration"
                    : "Stable Diffusion v1.5 text-to-image (20 DDIM steps, guidance 7.5) and its "
                      "stages",
               timer,
               [](const Point& p) {
                 return p.get_dtype() == DType::fp16 && p.get_int("images") == 1 &&
                        p.get_int("resolution") == 512;
               })
      .axis(enum_axis("what", kWhats))
      .axis(dtype_axis(dtypes))
      .axis(enum_axis("mode", kGraphModes, modes))
      .axis(int_axis("images", images))
      .axis(int_axis("resolution", resolutions))
      // A graph holds the denoising step: image and unet_step rows. The text encoder runs once
      // per prompt whatever the images and resolution: one row.
      .where([tiny, first_resolution, first_images](const Point& p) {
        const What w = p.get_enum<What>("what");
        const GraphMode mode = p.get_enum<GraphMode>("mode");
        if (mode != GraphMode::eager && !(w == What::image || w == What::unet_step)) return false;
        // The CPU rows at one image, the text encoder's at two (the per-image context's order
        // shows only with more than one, and there at the cost of a text encoder): an image at
        // two is twice the cost, and LibTorch 1.13's CPU bf16 VAE decode is wrong at batch 2 (1.45
        // off fp32 by relative L2 in each image, where batch 1 is 0.021), a library's fault no
        // check should excuse.
        if (tiny) return p.get_int("images") == (w == What::text_encode ? 2 : 1);
        return w != What::text_encode ||
               (p.get_int("images") == first_images && p.get_int("resolution") == first_resolution);
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
                "text_encode and image rows: the timed context against an fp32 copy (fp32 rows: "
                "float64), relative L2"})
      .counter({"unet_rel_error", "", Better::lower,
                "unet_step rows: the timed step's UNet prediction against an fp32 copy (fp32 "
                "rows: float64), relative L2"})
      .counter({"ddim_rel_error", "", Better::lower,
                "unet_step rows: the timed step's latents against diffusers' guided DDIM update "
                "of its own prediction in float64, relative L2"})
      .counter({"vae_rel_error", "", Better::lower,
                "the timed decode of the timed latents against an fp32 copy (fp32 rows: "
                "float64), relative L2"})
      .counter({"arithmetic_rel_error", "", Better::lower,
                "image rows: the timed image before its clamp against diffusers' loop written in "
                "the check, on the same models in the same dtype, relative L2"})
      .counter(compiled_error_counter("the same inputs (the UNet at t = 951)"))
      .counter(package_load_counter())
      .counter(second_copy_counter())
      .counter(own_constants_counter())
      .counter({"pipeline_rel_error", "", Better::lower,
                "image rows: the timed image before its clamp against diffusers' pipeline on fp32 "
                "copies of the weights (fp32 rows: float64), relative L2"})
      .main_counter("images_per_s")
      .size_axis("images")
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
                       tiny,
                       p.get_enum<GraphMode>("mode") == GraphMode::compiled};
        GpuNeeds needs = tensor_core_needs(p.get_dtype(), device_bytes(c));
        if (c.compiled) needs.missing = compiled_package_missing(c.package());
        return needs;
      })
      .make([tiny](const Point& p) {
        const Config c{p.get_enum<What>("what"),
                       scalar_type(p.get_dtype()),
                       p.get_enum<GraphMode>("mode") == GraphMode::graph,
                       p.get_int("images"),
                       p.get_int("resolution"),
                       tiny,
                       p.get_enum<GraphMode>("mode") == GraphMode::compiled};
        return std::make_unique<StableDiffusion>(c);
      })
      .add();
}

void register_sd15() {
  // fp32 against float64 and bf16 against fp32 (the GPU rows' precision, its bounds measured here
  // too).
  add_sd15_family("cpu/sd15", {DType::fp32, DType::bf16}, {GraphMode::eager}, {1, 2}, {128},
                  Timer::host_clock);
#if CUBENCH_TORCH_CUDA
  add_sd15_family("sd15", {DType::fp16, DType::bf16},
                  {GraphMode::eager, GraphMode::graph, GraphMode::compiled}, {1, 4}, {512, 768},
                  Timer::cuda_events);
#endif
}
CUBENCH_REGISTER(register_sd15);

}  // namespace
}  // namespace cubench
