// llama_decode/<dtype>/<mode>/<prompt>/<new>/<batch>: greedy generation with the LLaMA-7B
// architecture (benchmarks/models/llama.h: 32 layers, hidden 4096, 32 heads, FFN 11008, vocab
// 32000, RMSNorm, rotary embeddings, a static KV cache), random weights, the C++ frontend; the
// seed articles' "LLaMA-7B generation" (time to first token, total time, memory).
//   dtype: bf16 or fp16 (weights, activations and cache); mode: eager, graph (each decode step
//   a replay of one step captured in a CUDA graph; the prefill stays eager), or compiled (each
//   decode step a call of the step AOTInductor compiled ahead of time from the same arithmetic in
//   Python, tools/aoti-export, handed this model's weights, rotary tables and KV cache by name:
//   compiled_module.h; the prefill stays eager, the argmax and the token's write too);
//   prompt/new: 128/128 (the article's setting) and 1024/256; batch 1, 8, 32.
// cpu/llama_decode/fp32/eager/8/8/2: the same code on the CPU with a tiny configuration (CI).
// One run is one whole generation: a random prompt's prefill (its last position's logits alone,
// as transformers' logits_to_keep=1) gives the first token, then new-1 decode steps, each argmax
// on the device (no host sync). The row's time is the whole generation. CUDA events recorded on
// the case's stream between the steps (read after the run, outside the timed path) give
// ttft_ms (the prefill), token_ms_median and token_ms_p99 (decode steps; the first run after the
// check is left out), tokens_per_s (batch x new over the run); weights_GBps is the weights a
// decode step reads (every parameter but the embedding table, of which it gathers one row) over
// the median step, pct_copy_ceiling its share of the measured copy ceiling and token_floor_ms
// the step time at that ceiling (the floor no decode step can beat: 13.5 GB at the copy rate,
// ~3.2 ms at batch 1).
// weight_bytes, kv_cache_bytes, and the caching allocator's peaks (TorchCase) from the check on.
// Checks, once per configuration:
// - the parameter count equals LLaMA-7B's as transformers counts LlamaForCausalLM's;
// - a small configuration (2 layers, hidden 256, 4 heads, FFN 688, vocab 1000) in the case's
//   dtype on its device: the logits of a prefill and four decode steps through the KV cache equal
//   a full forward of the same tokens without it (cache_logits_rel_error, relative L2 over the
//   five positions, within cache_tolerance());
// - the real model's first tokens: the run before the check (the first call, its generated
//   tokens poisoned to -1 before it) generated them; the first and the last sequence's first four
//   (the prefill's, then three decode steps') must be tokens of the vocabulary, and what an fp32
//   copy of the same weights picks without the KV cache on the same tokens, up to a near tie
//   (tie_tolerance_std; token_gap_std reports the worst);
// - greedy tokens repeat: two generations of the real model from one prompt give the same
//   tokens; in graph mode the second is the graph's, so the replayed steps give an eager step's
//   tokens.
// plant_fault, in turn, each in the generating model and a generation with it (the first-tokens
// check must reject it): layer 0, head 0's attention output 64x; the KV cache written one
// position late (the decode steps' logits then miss the step's own key and value).
// Compiled mode: the package must list exactly this model's tensors by name; one decode step's
// logits from it, after an eager prefill, are no further from an fp32 copy's than an eager step's
// by more than half again (compiled_rel_error: compiled against eager); the first tokens meet the
// fp32 check above; how many generated tokens equal an eager generation's is counted
// (eager_token_agreement: kernels that differ may break a near tie another way, after which the
// sequences part), not required. Its fault: the package handed a negated copy of lm_head (the model
// itself untouched).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "benchmarks/models/llama.h"
#include "fixtures/cubench_torch.h"

namespace cubench {
namespace {

// Relative L2 between the cached and the uncached logits of the small model. fp32: the same
// arithmetic over other lengths (the cache's masked slots add exact zeros to softmax's sum) — 1e-4
// leaves room for a reduction in another order. bf16 and fp16 round every matmul's output and the
// cached keys and values to 8 and 11 bits; the two paths round differently (the uncached forward
// attends over fewer keys), 5e-2 and 1e-2 sit above that and far under a missing key's error.
double cache_tolerance(torch::Dtype dtype) {
  return dtype == torch::kFloat ? 1e-4 : dtype == torch::kHalf ? 1e-2 : 5e-2;
}

LlamaConfig small_config() { return {2, 256, 4, 688, 1000}; }

// Why a LibTorch whose package loader copies what it is handed (2.6) has no compiled decode.
constexpr const char* kLoaderCopies =
    "they need a package loader that uses the tensors it is handed (LibTorch 2.11's does; this "
    "one copies them, so a compiled step would not see the KV cache the eager prefill wrote)";

// The checks the planted faults must meet, by name (ValidationError::check).
constexpr const char* kFirstTokensCheck = "the first tokens against an fp32 copy";
constexpr const char* kCacheCheck = "the KV cache against a full forward";

// The generated tokens set against the fp32 reference without the cache: the first sequence's
// first kCheckedTokens (the prefill's and the decode steps' after it).
constexpr int64_t kCheckedTokens = 4;
// A generated token passes where the fp32 reference ranks it top, or within this many standard
// deviations of that position's reference logits below its top token: a near tie that the
// dtype's rounding may break either way. fp32: none (the same arithmetic). bf16 and fp16: not yet
// measured on the H200 (the counter token_gap_std reports the worst gap). The top two of 32000
// random logits stand about 0.22 standard deviations apart, so a fault that only swaps them may
// pass; one that picks any other token sits standard deviations below the top.
double tie_tolerance_std(torch::Dtype dtype) { return dtype == torch::kFloat ? 1e-3 : 0.1; }
// The planted head fault: layer 0, head 0's attention output 64 times larger, as an attention
// whose softmax was not normalised over some 64 keys would leave it.
constexpr double kHeadFaultFactor = 64;

struct Config {
  torch::Dtype dtype;
  bool graph;
  int64_t prompt, new_tokens, batch;
  bool tiny;      // the CPU row's configuration instead of LLaMA-7B
  bool compiled;  // decode steps from an AOTInductor package
  // tools/aoti-export's name for the package of this configuration.
  std::string package() const {
    return std::string("llama_decode-") + (dtype == torch::kHalf ? "fp16" : "bf16") + "-" +
           std::to_string(prompt) + "-" + std::to_string(new_tokens) + "-" + std::to_string(batch);
  }
};

double relative_l2(const torch::Tensor& got, const torch::Tensor& want) {
  const auto w = want.to(torch::kDouble);
  const double norm = w.norm().item<double>();
  return (got.to(torch::kDouble) - w).norm().item<double>() / (norm > 0 ? norm : 1.0);
}

// The per-step clock: CUDA events on the case's stream on the GPU (read once they completed),
// the host clock on the CPU (where every operation has finished when it returns).
class StepClock {
 public:
  explicit StepClock(bool gpu) : gpu_(gpu) {}
  StepClock(const StepClock&) = delete;
  StepClock& operator=(const StepClock&) = delete;
  ~StepClock() {
    for (auto e : events_) cudaEventDestroy(e);
  }

  // Starts a generation of `marks` intervals (its stamps are read at the next start or collect).
  void start(cudaStream_t stream, std::size_t marks) {
    collect();
    if (gpu_) {
      while (events_.size() < marks + 1) {
        cudaEvent_t e;
        CUBENCH_CUDA(cudaEventCreate(&e));
        events_.push_back(e);
      }
    }
    stream_ = stream;
    used_ = 0;
    host_.clear();
    mark();
  }
  void mark() {
    if (gpu_)
      CUBENCH_CUDA(cudaEventRecord(events_[used_], stream_));
    else
      host_.push_back(std::chrono::steady_clock::now());
    ++used_;
  }
  // Moves the last generation's intervals (ms) into first_ (the prefill) and steps_.
  void collect() {
    if (used_ < 2 || skip_ > 0) {
      if (used_ >= 2) --skip_;
      used_ = 0;
      return;
    }
    std::vector<double> ms;
    for (std::size_t i = 1; i < used_; ++i) {
      if (gpu_) {
        float t = 0;
        CUBENCH_CUDA(cudaEventSynchronize(events_[i]));
        CUBENCH_CUDA(cudaEventElapsedTime(&t, events_[i - 1], events_[i]));
        ms.push_back(t);
      } else {
        ms.push_back(std::chrono::duration<double, std::milli>(host_[i] - host_[i - 1]).count());
      }
    }
    first_.push_back(ms[0]);
    steps_.insert(steps_.end(), ms.begin() + 1, ms.end());
    used_ = 0;
  }
  // Forgets what was collected and the generation in flight; the next one is not kept either
  // (the first timed run after the check).
  void reset() { first_.clear(), steps_.clear(), used_ = 0, skip_ = 1; }
  const std::vector<double>& prefills() const { return first_; }
  const std::vector<double>& steps() const { return steps_; }

 private:
  bool gpu_;
  int skip_ = 0;
  cudaStream_t stream_ = nullptr;
  std::vector<cudaEvent_t> events_;
  std::vector<std::chrono::steady_clock::time_point> host_;
  std::size_t used_ = 0;
  std::vector<double> first_, steps_;
};

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, std::size_t(q * double(v.size())))];
}

// The planted faults, in turn, both in the generating model (the first-tokens check's to catch):
// one attention head's output, the KV cache's writes.
enum class Fault { head, cache };

class LlamaDecode final : public TorchCase {
 public:
  // bf16/fp16 products: TF32 plays no part. A graph points into cuBLAS's workspace.
  explicit LlamaDecode(Config c)
      : TorchCase(TorchMath{}, c.graph ? LibraryWorkspaces::keep : LibraryWorkspaces::release),
        c_(c) {}

  int fault_count() const override { return c_.compiled ? 1 : 2; }
  // Both faults are in the generating model: its tokens show them.
  std::string fault_check() const override { return kFirstTokensCheck; }

  Work work() const override { return {}; }

 private:
  void set_up(Env& env) override {
    if (c_.compiled) load_package();
    stream_ = on_gpu() ? env.stream() : nullptr;
    clock_ = std::make_unique<StepClock>(on_gpu());
    const auto options = torch::TensorOptions().device(device()).dtype(c_.dtype);
    model_ =
        std::make_unique<LlamaModel>(c_.tiny ? small_config() : LlamaConfig::llama_7b(), options);
    model_->allocate_cache(c_.batch, c_.prompt + c_.new_tokens);
    const auto ints = torch::TensorOptions().device(device()).dtype(torch::kLong);
    tokens_ = torch::zeros({c_.batch, c_.prompt + c_.new_tokens}, ints);
    tokens_.narrow(1, 0, c_.prompt).random_(model_->config().vocab);
    prompt_positions_ = torch::arange(c_.prompt, ints);
    position_ = torch::zeros({1}, ints);
    if (c_.graph) capture();
    if (c_.compiled) compiled_.hand_constants(model_->named_tensors());
  }

  // The step's package, before the model is built (a missing one says so at once). The eager
  // prefill writes the KV cache the compiled steps read: the runner must use the model's tensors
  // as they are, not a copy of them.
  void load_package() {
    if (!CompiledModule::shares_constants() && why_no_compiled_mode().empty())
      throw NotSupported(std::string("compiled mode: ") + kLoaderCopies);
    compiled_.load(c_.package());
  }

  // The last generation's step times are read here, before the sample, not in the timed run.
  void before_sample(Env&) override { clock_->collect(); }

  void timed_run(Env&) override {
    std::optional<torch_compat::SdpaOnly> attention;
    restrict_attention(attention);
    generate(mode());
  }

  GraphMode mode() const {
    return c_.graph ? GraphMode::graph : c_.compiled ? GraphMode::compiled : GraphMode::eager;
  }

  void check(Env& env) override {
    std::optional<torch_compat::SdpaOnly> attention;
    restrict_attention(attention);
    check_parameter_count();
    check_first_tokens_against_fp32(env);  // reads the run before the check: first
    check_cache_against_full_forward();
    if (c_.compiled) check_compiled_step_against_eager();
    check_greedy_repeats();
    clock_->reset();  // the check's generations and the first timed one are not counted
  }

  // The generated tokens (the prompt's stay): -1, no token.
  void poison_outputs(Env&) override {
    torch::NoGradGuard no_grad;
    tokens_.narrow(1, c_.prompt, c_.new_tokens).fill_(-1);
  }

  // In turn, planted in the model the benchmark times, then a generation run with it (the run the
  // first-tokens check reads): one attention head's output 64x; the KV cache written one position
  // late.
  std::string arm_fault(Env& env) override {
    if (c_.compiled) {
      auto tensors = model_->named_tensors();
      tensors["lm_head.weight"] = -tensors.at("lm_head.weight");
      compiled_.hand_constants(tensors);
      run_again(env);
      return "the compiled step's package handed a negated copy of lm_head";
    }
    fault_ = faults_planted_++ % 2 == 0 ? Fault::head : Fault::cache;
    if (fault_ == Fault::head)
      model_->scale_head_output(0, 0, kHeadFaultFactor);
    else
      model_->misplace_cache_writes(1);
    if (c_.graph) capture();
    run_again(env);
    return fault_ == Fault::head
               ? "layer 0, head 0's attention output made 64x larger in the generating model"
               : "the generating model's KV cache written one position late";
  }

  // The model as it was (a graph captured anew).
  void disarm_fault(Env&) override {
    if (c_.compiled) {
      compiled_.hand_constants(model_->named_tensors());
      return;
    }
    if (fault_ == Fault::head)
      model_->scale_head_output(0, 0, 1);
    else
      model_->misplace_cache_writes(0);
    if (c_.graph) capture();
  }

  std::map<std::string, double> own_counters(double seconds) const override {
    clock_->collect();
    std::map<std::string, double> c;
    c["tokens_per_s"] = double(c_.batch * c_.new_tokens) / seconds;
    c["ttft_ms"] = quantile(clock_->prefills(), 0.5);
    const double step_ms = quantile(clock_->steps(), 0.5);
    c["token_ms_median"] = step_ms;
    c["token_ms_p99"] = quantile(clock_->steps(), 0.99);
    // A decode step reads every weight but the embedding table (one row of it).
    const auto& cfg = model_->config();
    const double read = model_->weight_bytes() *
                        double(cfg.parameter_count() - cfg.vocab * cfg.hidden) /
                        double(cfg.parameter_count());
    if (step_ms > 0) c["weights_GBps"] = read / (step_ms * 1e-3) / 1e9;
    if (copy_ceiling() > 0 && step_ms > 0) {
      c["pct_copy_ceiling"] = 100.0 * read / (step_ms * 1e-3) / copy_ceiling();
      c["token_floor_ms"] = read / copy_ceiling() * 1e3;
    }
    c["weight_bytes"] = model_->weight_bytes();
    c["kv_cache_bytes"] = model_->cache_bytes();
    c["cache_logits_rel_error"] = cache_error_;
    c["token_gap_std"] = token_gap_std_;
    if (c_.compiled) {
      c["compiled_rel_error"] = compiled_error_;
      c["eager_token_agreement"] = eager_token_agreement_;
      c["package_load_ms"] = compiled_.load_ms();
      c["second_copy_bytes"] = compiled_.second_copy_bytes();
      c["package_own_constants"] = compiled_.own_constants();
    }
    return c;
  }

  std::string label_detail() const override {
    return c_.graph      ? "decode steps replayed from a CUDA graph"
           : c_.compiled ? "decode steps from AOTInductor package " + c_.package()
                         : "";
  }

  // scaled_dot_product_attention restricted to the memory-efficient kernel on the GPU: left to
  // choose, LibTorch 2.11 takes cuDNN's for masked attention at batch 32, whose output differs
  // between two calls on the same inputs (in 15 pairs of 20 on the H200), and greedy tokens
  // then do not repeat (measured at batch 8 and 32, and batch 1 with a 1024-token prompt); the
  // memory-efficient kernel repeats at every shape tried. The python reference restricts its
  // attention the same way, so both run the same kernel.
  // (a guard in place: SdpaOnly neither copies nor moves)
  void restrict_attention(std::optional<torch_compat::SdpaOnly>& only) const {
    if (on_gpu()) only.emplace(torch_compat::SdpaBackend::efficient);
  }

  // The prefill: the prompt's logits at its last position give token `prompt`.
  void prefill() {
    auto logits = model_->forward(tokens_.narrow(1, 0, c_.prompt), prompt_positions_,
                                  /*use_cache=*/true, /*last_only=*/true);
    tokens_.narrow(1, c_.prompt, 1).copy_(logits.argmax(-1));
    position_.fill_(c_.prompt);
  }

  // One decode step: the token at position_ goes in, the next lands at position_ + 1, and the
  // position moves on — all on the device, so a graph replays it as it is.
  void decode_step() {
    take_greedy_token(model_->forward(tokens_.index_select(1, position_), position_,
                                      /*use_cache=*/true, /*last_only=*/true));
  }

  // The compiled decode step: the package's logits, then as decode_step().
  void compiled_step() {
    take_greedy_token(
        compiled_.run({tokens_.index_select(1, position_), position_}, stream_).at(0));
  }

  // A decode step's end: its logits' argmax lands at position_ + 1 and the position moves on.
  void take_greedy_token(const torch::Tensor& logits) {
    tokens_.index_copy_(1, position_ + 1, logits.argmax(-1));
    position_.add_(1);
  }

  void generate(GraphMode steps) {
    clock_->start(stream_, std::size_t(c_.new_tokens));
    prefill();
    clock_->mark();
    for (int64_t i = 1; i < c_.new_tokens; ++i) {
      if (steps == GraphMode::graph)
        graph_.replay();
      else if (steps == GraphMode::compiled)
        compiled_step();
      else
        decode_step();
      clock_->mark();
    }
  }

  // Two eager generations' worth of warm-up is the check's; here one eager step after a prefill
  // (allocator blocks, cuBLAS's workspace), then one step captured in a new graph.
  void capture() {
    std::optional<torch_compat::SdpaOnly> attention;
    restrict_attention(attention);
    prefill();
    decode_step();
    prefill();
    graph_.capture([this] { decode_step(); });
  }

  void check_parameter_count() const {
    const int64_t counted = model_->parameter_count();
    const int64_t want = c_.tiny ? small_config().parameter_count() : kLlama7bParameters;
    if (counted != want)
      throw ValidationError("the model has " + std::to_string(counted) +
                                " parameters; the reference architecture has " +
                                std::to_string(want),
                            "the parameter count");
  }

  // The small model's cached logits (a prefill of 8 tokens, then 4 decode steps) against a full
  // forward of the same 12 tokens without the cache.
  void check_cache_against_full_forward() {
    const auto options = torch::TensorOptions().device(device()).dtype(c_.dtype);
    const auto ints = options.dtype(torch::kLong);
    LlamaModel small(small_config(), options);
    const int64_t prompt = 8, steps = 4, batch = 2;
    small.allocate_cache(batch, prompt + steps);
    auto tokens = torch::randint(small.config().vocab, {batch, prompt + steps}, ints);
    std::vector<torch::Tensor> cached = {
        small.forward(tokens.narrow(1, 0, prompt), torch::arange(prompt, ints), true, true)};
    for (int64_t p = prompt; p < prompt + steps; ++p)
      cached.push_back(
          small.forward(tokens.narrow(1, p, 1), torch::full({1}, p, ints), true, true));
    auto full = small.forward(tokens, torch::arange(prompt + steps, ints), false, false)
                    .narrow(1, prompt - 1, steps + 1);
    auto got = torch::cat(cached, 1);
    if (!torch::isfinite(got).all().item<bool>())
      throw ValidationError("the cached logits are not all finite", "the cached logits finite");
    cache_error_ = relative_l2(got, full);
    require_at_most(
        "the logits through the KV cache against a full forward without it (small "
        "configuration): relative L2 error",
        cache_error_, cache_tolerance(c_.dtype), kCacheCheck);
  }

  // The generation before the check (the first call's, or the planted fault's): the first and
  // the last sequence's first kCheckedTokens tokens, each a token of the vocabulary, against an
  // fp32 copy of the same weights evaluated without the KV cache on the same tokens
  // (teacher-forced): each must be the reference's top token, or within tie_tolerance_std() of it.
  void check_first_tokens_against_fp32(Env& env) {
    synchronize(env);
    const int64_t k = std::min(kCheckedTokens, c_.new_tokens);
    const auto ints = torch::TensorOptions().device(device()).dtype(torch::kLong);
    std::vector<int64_t> rows = {0};
    if (c_.batch > 1) rows.push_back(c_.batch - 1);
    const auto sequences = tokens_.index_select(0, torch::tensor(rows, torch::kLong).to(device()))
                               .narrow(1, 0, c_.prompt + k)
                               .clone();
    const auto generated = sequences.narrow(1, c_.prompt, k);
    const int64_t vocab = model_->config().vocab;
    if (!(generated.min().item<int64_t>() >= 0 && generated.max().item<int64_t>() < vocab))
      throw ValidationError(
          "the generated tokens are not all tokens of the vocabulary (the "
          "timed generation wrote none, or not all)",
          kFirstTokensCheck);
    torch::Tensor logits;
    {
      torch_compat::Tf32Off fp32;  // whatever the run's flags (a tf32 row before this one)
      LlamaModel reference =
          model_->converted(torch::TensorOptions().device(device()).dtype(torch::kFloat));
      logits = reference
                   .forward(sequences.narrow(1, 0, c_.prompt + k - 1),
                            torch::arange(c_.prompt + k - 1, ints), false, false)
                   .narrow(1, c_.prompt - 1, k)
                   .to(torch::kDouble);
    }  // the fp32 copy (27 GB at 7B) goes before the next check
    token_gap_std_ = 0;
    for (std::size_t r = 0; r < rows.size(); ++r)
      for (int64_t j = 0; j < k; ++j) {
        const torch::Tensor row = logits[int64_t(r)][j];
        const int64_t got = sequences[int64_t(r)][c_.prompt + j].item<int64_t>();
        const int64_t top = row.argmax().item<int64_t>();
        const double gap = ((row[top] - row[got]) / row.std()).item<double>();
        token_gap_std_ = std::max(token_gap_std_, gap);
        if (!(gap <= tie_tolerance_std(c_.dtype)))
          throw ValidationError(
              "sequence " + std::to_string(rows[r]) + "'s generated token " +
                  std::to_string(j + 1) + " (" + std::to_string(got) +
                  ") is not what an fp32 copy of the weights without the KV cache picks there (" +
                  std::to_string(top) + "): " + std::to_string(gap) +
                  " standard deviations of its logits below it (a tie within " +
                  std::to_string(tie_tolerance_std(c_.dtype)) + " passes)",
              kFirstTokensCheck);
      }
  }

  // After an eager prefill, one decode step's logits from the package and from the eager model on
  // the same cache (both write the same key and value into it), each against an fp32 copy of the
  // weights without the cache on the same prompt and token: the compiled step may be no further
  // from fp32 than half again the eager step's distance (and 1e-3). A bound on compiled against
  // eager alone would be the dtype's arithmetic over 32 layers: 0.054 in bf16 on the H100, where
  // both steps' tokens met the fp32 check.
  void check_compiled_step_against_eager() {
    prefill();
    const auto token = tokens_.index_select(1, position_);
    const auto compiled = compiled_.run({token, position_}, stream_).at(0).clone();
    const auto eager = model_->forward(token, position_, /*use_cache=*/true, /*last_only=*/true);
    torch::Tensor reference;
    {
      torch_compat::Tf32Off fp32;
      const auto ints = torch::TensorOptions().device(device()).dtype(torch::kLong);
      LlamaModel copy =
          model_->converted(torch::TensorOptions().device(device()).dtype(torch::kFloat));
      reference =
          copy.forward(tokens_.narrow(1, 0, c_.prompt + 1), torch::arange(c_.prompt + 1, ints),
                       /*use_cache=*/false, /*last_only=*/true)
              .to(torch::kDouble);
    }  // the fp32 copy (27 GB at 7B) goes before the next check
    compiled_error_ = relative_l2(compiled, eager);
    const double compiled_off = relative_l2(compiled, reference);
    const double eager_off = relative_l2(eager, reference);
    require_at_most("the compiled decode step's logits against an fp32 copy's (the eager step's " +
                        std::to_string(eager_off) + ", the bound 1.5 x that + 0.001; compiled " +
                        "against eager " + std::to_string(compiled_error_) + "): relative L2 error",
                    compiled_off, 1.5 * eager_off + 1e-3,
                    "the compiled step against an eager step");
  }

  // Greedy generation repeats: an eager generation, then one in the row's mode from the same
  // prompt. A graph replays an eager step's kernels: its tokens must be the same. A compiled
  // step's kernels are others: its agreement with eager's is counted.
  void check_greedy_repeats() {
    generate(GraphMode::eager);
    const auto first = tokens_.clone();
    generate(mode());
    if (c_.compiled) {
      const auto generated = [&](const torch::Tensor& t) {
        return t.narrow(1, c_.prompt, c_.new_tokens);
      };
      eager_token_agreement_ =
          generated(first).eq(generated(tokens_)).to(torch::kDouble).mean().item<double>();
      return;
    }
    if (!torch::equal(first, tokens_))
      throw ValidationError(std::string("greedy generation gave other tokens the second time") +
                                (c_.graph ? " (the CUDA graph's replay against eager steps)" : ""),
                            "greedy tokens repeat");
  }

  Config c_;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<StepClock> clock_;
  std::unique_ptr<LlamaModel> model_;
  torch::Tensor tokens_, prompt_positions_, position_;
  double cache_error_ = 0, token_gap_std_ = 0, compiled_error_ = 0, eager_token_agreement_ = 0;
  CompiledModule compiled_;
  Fault fault_ = Fault::head;  // the fault armed last
  int faults_planted_ = 0;
  TorchGraph graph_;
};

void add_llama_family(const std::string& name, std::vector<DType> dtypes,
                      std::vector<GraphMode> modes, std::vector<std::int64_t> prompts,
                      std::vector<std::int64_t> new_tokens, std::vector<std::int64_t> batches,
                      Timer timer) {
  const bool tiny = timer == Timer::host_clock;
  // Default run: bf16, the article's 128 + 128 at batch 1, eager and graph (the launch-bound
  // case a graph is for) and compiled; the rest with --cubench_suite=full.
  model_family(name,
               tiny ? "greedy generation, a tiny LLaMA configuration"
                    : "greedy generation with LLaMA-7B (prefill, then one token per step)",
               timer,
               [](const Point& p) {
                 return p.get_dtype() == DType::bf16 && p.get_int("prompt") == 128 &&
                        p.get_int("batch") == 1;
               })
      .axis(dtype_axis(dtypes))
      .axis(enum_axis("mode", kGraphModes, modes))
      .axis(int_axis("prompt", prompts))
      .axis(int_axis("new", new_tokens))
      .axis(int_axis("batch", batches))
      .zip({"prompt", "new"})
      .counter({"tokens_per_s", "tok/s", Better::higher, "generated tokens per second"})
      .counter({"ttft_ms", "ms", Better::lower, "time to first token: the prompt's prefill"})
      .counter({"token_ms_median", "ms", Better::lower, "a decode step, median"})
      .counter({"token_ms_p99", "ms", Better::lower, "a decode step, 99th percentile"})
      .counter({"weights_GBps", "GB/s", Better::higher,
                "weights a decode step reads over the median step"})
      .counter({"pct_copy_ceiling", "%", Better::higher,
                "weights_GBps against the measured copy ceiling"})
      .counter({"token_floor_ms", "ms", Better::lower,
                "a decode step reading the weights at the copy ceiling"})
      .counter({"weight_bytes", "B", Better::lower, "the model's parameters"})
      .counter({"kv_cache_bytes", "B", Better::lower, "the static KV cache"})
      .counter({"cache_logits_rel_error", "", Better::lower,
                "small model: cached logits against a full forward, relative L2"})
      .counter({"token_gap_std", "", Better::lower,
                "first generated tokens: the worst one's fp32 logit below the fp32 top token's, "
                "in standard deviations of the logits (0: every one the top)"})
      .counter(compiled_error_counter("the same cache (one decode step's logits)"))
      .counter({"eager_token_agreement", "", Better::higher,
                "compiled rows: the share of generated tokens equal to an eager generation's "
                "from the same prompt"})
      .counter(package_load_counter())
      .counter(second_copy_counter())
      .counter(own_constants_counter())
      .main_counter("tokens_per_s")
      .size_axis("batch")
      .size([](const Point& p) {
        return double(p.get_int("batch")) * double(p.get_int("prompt") + p.get_int("new"));
      })
      // LLaMA-7B's weights, its static KV cache (batch x (prompt + new) positions, 2 x layers x
      // hidden elements each), and LibTorch's own: the H200's reserved peaks (peak_reserved_bytes,
      // the check not included) were weights + 1.25 x the cache + under 1 GiB at batch 1 to 32,
      // prompt 128 and 1024; declared as weights + 1.3 x cache + 1 GiB, and the check's fp32 copy
      // of the weights beside them (check_first_tokens_against_fp32: 27 GB at 7B), so a GPU that
      // cannot hold both leaves the row out rather than running out of memory in its check.
      .needs([tiny](const Point& p) {
        const LlamaConfig model = tiny ? small_config() : LlamaConfig::llama_7b();
        const std::uint64_t e = dtype_bytes(p.get_dtype());
        const std::uint64_t positions = std::uint64_t(p.get_int("batch")) *
                                        std::uint64_t(p.get_int("prompt") + p.get_int("new"));
        const std::uint64_t cache = positions * 2 * model.layers * model.hidden * e;
        GpuNeeds needs = tensor_core_needs(
            p.get_dtype(), model.parameter_count() * (e + 4) + cache + cache * 3 / 10 + kGiB);
        // A compiled row: its package, and a loader that shares the KV cache with the prefill.
        if (p.get_enum<GraphMode>("mode") == GraphMode::compiled) {
          const Config c{scalar_type(p.get_dtype()),
                         false,
                         p.get_int("prompt"),
                         p.get_int("new"),
                         p.get_int("batch"),
                         tiny,
                         true};
          needs.missing = compiled_package_missing(c.package());
          if (needs.missing.empty() && !CompiledModule::shares_constants())
            needs.missing = kLoaderCopies;
        }
        return needs;
      })
      .make([tiny](const Point& p) {
        const GraphMode mode = p.get_enum<GraphMode>("mode");
        Config c{scalar_type(p.get_dtype()), mode == GraphMode::graph, p.get_int("prompt"),
                 p.get_int("new"),           p.get_int("batch"),       tiny,
                 mode == GraphMode::compiled};
        return std::make_unique<LlamaDecode>(c);
      })
      .add();
}

void register_llama_decode() {
  add_llama_family("cpu/llama_decode", {DType::fp32}, {GraphMode::eager}, {8}, {8}, {2},
                   Timer::host_clock);
#if CUBENCH_TORCH_CUDA
  add_llama_family("llama_decode", {DType::bf16, DType::fp16},
                   {GraphMode::eager, GraphMode::graph, GraphMode::compiled}, {128, 1024},
                   {128, 256}, {1, 8, 32}, Timer::cuda_events);
#endif
}
CUBENCH_REGISTER(register_llama_decode);

}  // namespace
}  // namespace cubench
