// conv/<pass>/<dtype>/<r>/<stride>/<c>/<k>/<hw>, conv_autotune/<same> and
// conv_resnet50/<pass>/bf16: ResNet-50's convolutions through cuDNN's graph API (cudnn-frontend),
// batch 256, NHWC activations and KRSC filters (what PyTorch's channels_last runs).
//   r, stride, c, k, hw: one layer's shape (filter R = S, stride, in channels C, out channels K,
//          input H = W; padding R/2), zipped over the 23 layers below, in the network's order:
//          conv/fwd/bf16/3/2/128/128/56 is 3x3s2_128to128_56 (the label names it so).
//   pass:  fwd (y = conv(x, w)), dgrad (dx from dy and w), wgrad (dw from dy and x)
//   dtype: fp32 (FP32 in/out, no tensor cores: engines with the TENSOR_CORE note deselected),
//          tf32 (FP32 in/out, tensor cores allowed), fp16 and bf16 (16-bit in/out); FP32 compute
//          for every dtype.
// conv takes the heuristic's first plan that builds (mode A's list, then the fallback list);
// conv_autotune builds the first 8 that build and keeps the fastest (3 warm-up runs, then the
// median of 10, during set-up): what PyTorch's cudnn.benchmark does, so its rows, fp32 included,
// are the ones to set against PyTorch's. All leave out engines whose numerical notes break what a
// row claims (deselected_notes()): inputs converted down, reduced-precision reductions, and FFT and
// Winograd, whose transforms make the error norm-wise rather than a dot product's, which the
// check's bound is.
//
// Layers: ResNet-50 v1.5 (torchvision: stride on the bottleneck's 3x3; benchmarks/models/
// resnet50.cpp) at 224x224 has 53 convolutions of 23 distinct shapes. A layer is named (in labels
// and messages) <R>x<S>[s<stride>]_<C>to<K>_<input H=W>; padding is R/2.
//   layer                 where                                              count
//   7x7s2_3to64_224       stem                                                 1
//   1x1_64to64_56         layer1 block 1 reduce                                1
//   3x3_64to64_56         layer1 3x3                                           3
//   1x1_64to256_56        layer1 expand (3) + downsample (stride 1 here, 1)    4
//   1x1_256to64_56        layer1 blocks 2-3 reduce                             2
//   1x1_256to128_56       layer2 block 1 reduce                                1
//   3x3s2_128to128_56     layer2 block 1 3x3, stride 2                         1
//   1x1s2_256to512_56     layer2 downsample, stride 2                          1
//   1x1_128to512_28       layer2 expand                                        4
//   1x1_512to128_28       layer2 blocks 2-4 reduce                             3
//   3x3_128to128_28       layer2 blocks 2-4 3x3                                3
//   1x1_512to256_28       layer3 block 1 reduce                                1
//   3x3s2_256to256_28     layer3 block 1 3x3, stride 2                         1
//   1x1s2_512to1024_28    layer3 downsample, stride 2                          1
//   1x1_256to1024_14      layer3 expand                                        6
//   1x1_1024to256_14      layer3 blocks 2-6 reduce                             5
//   3x3_256to256_14       layer3 blocks 2-6 3x3                                5
//   1x1_1024to512_14      layer4 block 1 reduce                                1
//   3x3s2_512to512_14     layer4 block 1 3x3, stride 2                         1
//   1x1s2_1024to2048_14   layer4 downsample, stride 2                          1
//   1x1_512to2048_7       layer4 expand                                        3
//   1x1_2048to512_7       layer4 blocks 2-3 reduce                             2
//   3x3_512to512_7        layer4 blocks 2-3 3x3                                2
// conv_resnet50: one run is every convolution of the network for the pass, each layer as many
// times as it occurs (53 for fwd and wgrad; 52 for dgrad, as training computes no gradient of the
// input image), on one stream, the heuristic's first plan for each: the network's convolution
// time for that pass, to set against a training step (resnet50_train). bf16 only, the precision
// of the step it is set against (amp_bf16). Not autotuned: conv_autotune per layer
// (--cubench_suite=full) gives the autotuned numbers, and resnet50_train runs cuDNN's benchmark
// mode. Its set-up builds every layer's graph.
//
// Model: 2*N*K*C*R*S*P*Q FLOPs per convolution, for every pass. Check: every element of the
// output, poisoned before the checked run, against a direct convolution in fp64 on the device
// (kernels/conv_reference.cu) from the same stored inputs, within conv_bound() (conv_resnet50:
// every layer, once); the worst element's error over its bound is `max_error_ratio`.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "fixtures/cubench_cudnn.h"
#include "kernels/conv_reference.h"
#include "kernels/fill.h"
#include "kernels/reference.h"

namespace cubench {
namespace {

namespace fe = cudnn_frontend;

constexpr std::int64_t kBatch = 256;
constexpr int kCandidates = 8;
// Every layer's check, by name (ValidationError::check): what a planted fault must meet.
constexpr const char* kOutputCheck = "the output against an fp64 convolution";

struct Layer {
  const char* name;
  std::int64_t c, k, r, stride, h;  // in channels, out channels, R = S, stride, input H = W
  int count;                        // convolutions of this shape in the network
  bool stem;                        // reads the image: no data gradient in training
};

// The table above, in the network's order.
constexpr Layer kLayers[] = {
    {"7x7s2_3to64_224", 3, 64, 7, 2, 224, 1, true},
    {"1x1_64to64_56", 64, 64, 1, 1, 56, 1, false},
    {"3x3_64to64_56", 64, 64, 3, 1, 56, 3, false},
    {"1x1_64to256_56", 64, 256, 1, 1, 56, 4, false},
    {"1x1_256to64_56", 256, 64, 1, 1, 56, 2, false},
    {"1x1_256to128_56", 256, 128, 1, 1, 56, 1, false},
    {"3x3s2_128to128_56", 128, 128, 3, 2, 56, 1, false},
    {"1x1s2_256to512_56", 256, 512, 1, 2, 56, 1, false},
    {"1x1_128to512_28", 128, 512, 1, 1, 28, 4, false},
    {"1x1_512to128_28", 512, 128, 1, 1, 28, 3, false},
    {"3x3_128to128_28", 128, 128, 3, 1, 28, 3, false},
    {"1x1_512to256_28", 512, 256, 1, 1, 28, 1, false},
    {"3x3s2_256to256_28", 256, 256, 3, 2, 28, 1, false},
    {"1x1s2_512to1024_28", 512, 1024, 1, 2, 28, 1, false},
    {"1x1_256to1024_14", 256, 1024, 1, 1, 14, 6, false},
    {"1x1_1024to256_14", 1024, 256, 1, 1, 14, 5, false},
    {"3x3_256to256_14", 256, 256, 3, 1, 14, 5, false},
    {"1x1_1024to512_14", 1024, 512, 1, 1, 14, 1, false},
    {"3x3s2_512to512_14", 512, 512, 3, 2, 14, 1, false},
    {"1x1s2_1024to2048_14", 1024, 2048, 1, 2, 14, 1, false},
    {"1x1_512to2048_7", 512, 2048, 1, 1, 7, 3, false},
    {"1x1_2048to512_7", 2048, 512, 1, 1, 7, 2, false},
    {"3x3_512to512_7", 512, 512, 3, 1, 7, 2, false},
};

ConvShape shape_of(const Layer& l) {
  return {kBatch, l.c, l.h, l.h, l.k, l.r, l.r, l.r / 2, l.stride};
}

// How often one training step runs this layer's convolution in `pass`.
int occurrences(const Layer& l, ConvPass pass) {
  return pass == ConvPass::dgrad && l.stem ? 0 : l.count;
}

double conv_flops(const ConvShape& s) { return 2.0 * s.n * s.k * s.c * s.r * s.s * s.p() * s.q(); }

constexpr EnumName<ConvPass> kPasses[] = {
    {ConvPass::fwd, "fwd"}, {ConvPass::dgrad, "dgrad"}, {ConvPass::wgrad, "wgrad"}};

Axis pass_axis() { return enum_axis("pass", kPasses); }

fe::DataType_t io_type(DType t) {
  switch (t) {
    case DType::fp32:
    case DType::tf32:
      return fe::DataType_t::FLOAT;
    case DType::fp16:
      return fe::DataType_t::HALF;
    case DType::bf16:
      return fe::DataType_t::BFLOAT16;
    default:
      throw Error("conv: no cuDNN type for dtype " + std::string(dtype_name(t)));
  }
}

// Engines a row must not run. Every dtype: DOWN_CONVERT_INPUTS (FP32 inputs computed in 16 bits),
// REDUCED_PRECISION_REDUCTION (partial sums kept in 16 bits: not the FP32 compute the row
// claims), FFT and WINOGRAD* (transformed operands: an error bound of the whole tensor's norm, not
// of each element's dot product). fp32: TENSOR_CORE too, since an FP32 tensor-core engine computes
// in TF32 (as PyTorch does with allow_tf32 off).
std::vector<fe::NumericalNote_t> deselected_notes(DType t) {
  std::vector<fe::NumericalNote_t> notes = {fe::NumericalNote_t::DOWN_CONVERT_INPUTS,
                                            fe::NumericalNote_t::REDUCED_PRECISION_REDUCTION,
                                            fe::NumericalNote_t::FFT,
                                            fe::NumericalNote_t::WINOGRAD,
                                            fe::NumericalNote_t::WINOGRAD_TILE_4x4,
                                            fe::NumericalNote_t::WINOGRAD_TILE_6x6,
                                            fe::NumericalNote_t::WINOGRAD_TILE_13x13};
  if (t == DType::fp32) notes.push_back(fe::NumericalNote_t::TENSOR_CORE);
  return notes;
}

// How far an output element may be from the fp64 reference: rel |ref| + abs_sum sum|ab| +
// norm sqrt(sum (ab)^2), over the element's L = conv_terms() products.
//   Output rounding: u_out |ref| (2^-24 FP32, 2^-11 fp16, 2^-8 bf16). 16-bit and FP32 products
//     are exact in FP32.
//   FP32 accumulation: min(L + 1, 8) 2^-24 sum|ab|. L + 1 is the worst case of a sum in any order
//     (Higham 3.1), met only by short sums; it grows to 0.19 sum|ab| at wgrad's L = 3.2M, where it
//     would pass a TF32 result and a planted 10% error alike. With inputs uniform in [-1, 1) the
//     partial sums are a random walk, and the rounding error of a sum in any order stays a few
//     2^-24 sum|ab| at every L: simulated, sequential FP32 sums (with and without FMA) reach 4.9
//     2^-24 sum|ab| at most (L = 1..3.2M, 200 million sums at short L). 8 is an empirical
//     ceiling, not a proof: on the H200 conv/fwd/fp32 rows reach 0.68-0.77 of their bound,
//     i.e. 5.5-6.1 units, above the simulation's 4.9 (tensor-core-free engines need not sum as
//     the simulation did); fp32, tf32 and fp16 dgrad and wgrad at their real layers have not run
//     there yet. bf16 rows sit at 0.995-0.996: the output's own rounding, whose worst
//     case is 1/(1 + 2^-8) = 0.9961 of the bound, so a bf16 element fails only where its
//     accumulation error exceeds about 8 units too.
//   TF32 (tf32 rows): each input keeps 10 of FP32's 23 fraction bits, a relative change below
//     2^-10 (truncation; half that rounding to nearest). Their mean, at most 2^-10 per factor,
//     scales the whole sum: 2 2^-10 |ref|. What is left is independent and zero-mean: its sum has
//     a standard deviation below 0.41 2^-10 sqrt(sum (ab)^2), taken 7 times: 3 2^-10.
// An FP32 result through TF32 fails the fp32 bound: its error is 5.3e-4 sum|ab| / sqrt(L), some
// 3.3 2^-24 sum|ab| on average at L = 3.2M (simulated; 8 and above in a few percent of
// elements) and hundreds of 2^-24 at the forward passes' L <= 4608.
struct ConvBound {
  double rel, abs_sum, norm;
};

constexpr double kAccumulationUnits = 8;

ConvBound conv_bound(DType t, std::int64_t terms) {
  const double u32 = std::ldexp(1.0, -24);
  const double u_out = t == DType::fp16   ? std::ldexp(1.0, -11)
                       : t == DType::bf16 ? std::ldexp(1.0, -8)
                                          : u32;
  const double accumulation = std::min(double(terms) + 1, kAccumulationUnits) * u32;
  if (t != DType::tf32) return {u_out, accumulation, 0};
  const double tf32_step = std::ldexp(1.0, -10);
  return {u_out + 2 * tf32_step, accumulation, 3 * tf32_step};
}

// NHWC strides for dims given in cuDNN's (N, C, H, W) order: C fastest, then W, then H. The same
// for a KRSC filter given as (K, C, R, S).
std::vector<std::int64_t> nhwc_strides(const std::vector<std::int64_t>& d) {
  return {d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]};
}

// One layer's convolution for one pass: its tensors, its graph, its plan.
class LayerConv {
 public:
  LayerConv(const Layer& layer, ConvPass pass, DType t)
      : layer_(layer), pass_(pass), t_(t), s_(shape_of(layer)) {}

  void setup(Env& env, cudnnHandle_t handle, bool autotune) {
    cudaStream_t stream = env.stream();
    const std::size_t bytes = dtype_bytes(t_);
    x_ = env.alloc(std::size_t(s_.n * s_.h * s_.w * s_.c) * bytes);
    w_ = env.alloc(std::size_t(s_.k * s_.r * s_.s * s_.c) * bytes);
    y_ = env.alloc(std::size_t(s_.n * s_.p() * s_.q() * s_.k) * bytes);
    for (DeviceBuffer* in : inputs())
      fill_uniform(t_, in->get(), in->bytes() / bytes, env.fresh_seed(), -1.f, 1.f, stream);
    CUBENCH_CUDA_LAUNCHED();
    pack_ = {{kUidX, x_.get()}, {kUidW, w_.get()}, {kUidY, y_.get()}};

    build_graph(handle);
    std::vector<std::int64_t> built;  // plan indices, in the heuristic's order
    for (std::int64_t i = 0; i < configs_ && int(built.size()) < (autotune ? kCandidates : 1); ++i)
      if (graph_->build_plan_at_index(handle, i).is_good()) built.push_back(i);
    if (built.empty())
      throw NotSupported(describe() + ": none of cuDNN's " + std::to_string(configs_) +
                         " engine configurations builds here (after deselecting " +
                         "engines by numerical note)");
    plan_ = built.front();
    if (autotune) choose_by_timing(env, handle, built);
    CUBENCH_CUDNN_FE(graph_->get_workspace_size_plan_at_index(plan_, workspace_));
    CUBENCH_CUDNN_FE(graph_->get_plan_name_at_index(plan_, engine_));
  }

  void execute(cudnnHandle_t handle, void* workspace) { run_plan(handle, plan_, workspace); }

  // NaN in every float format: an element the checked run does not write shows.
  void poison_output(cudaStream_t stream) {
    CUBENCH_CUDA(cudaMemsetAsync(output().get(), 0xff, output().bytes(), stream));
  }

  // Every element against the fp64 reference; returns the worst error over its bound.
  double check(Env& env) {
    cudaStream_t stream = env.stream();
    const std::size_t n = std::size_t(conv_output_elements(pass_, s_));
    DeviceBuffer ref = env.alloc(n * 8), abs_sum = env.alloc(n * 8), sq_sum = env.alloc(n * 8);
    CUBENCH_CUDA(conv_reference(pass_, t_, s_, {x_.get(), w_.get(), y_.get()}, ref.as<double>(),
                                abs_sum.as<double>(), sq_sum.as<double>(), stream));
    const ConvBound bound = conv_bound(t_, conv_terms(pass_, s_));
    // One scale array: sum|ab| + (norm / abs_sum) sqrt(sum (ab)^2), times abs_sum.
    if (bound.norm > 0)
      CUBENCH_CUDA(add_weighted_norm(abs_sum.as<double>(), sq_sum.as<double>(), n,
                                     bound.norm / bound.abs_sum, stream));
    const ElementCheck checked =
        require_elements_within(describe(), env, t_, output().get(), ref.as<double>(),
                                abs_sum.as<double>(), n, bound.rel, bound.abs_sum, kOutputCheck);
    return checked.max_ratio;
  }

  // One output element 10% off: the largest in magnitude of the first 256.
  std::string plant_fault(Env& env) {
    cudaStream_t stream = env.stream();
    const std::size_t look = std::min<std::size_t>(256, output().bytes() / dtype_bytes(t_));
    DeviceBuffer head = env.alloc(look * sizeof(double));
    convert_to_double(t_, output().get(), head.as<double>(), look, stream);
    CUBENCH_CUDA_LAUNCHED();
    std::vector<double> values(look);
    CUBENCH_CUDA(cudaMemcpyAsync(values.data(), head.get(), look * sizeof(double),
                                 cudaMemcpyDeviceToHost, stream));
    CUBENCH_CUDA(cudaStreamSynchronize(stream));
    std::size_t at = 0;
    for (std::size_t i = 1; i < look; ++i)
      if (std::fabs(values[i]) > std::fabs(values[at])) at = i;
    perturb_element(t_, output().get(), at, 1.1, 0, stream);
    CUBENCH_CUDA_LAUNCHED();
    return describe() + ": element " + std::to_string(at) + " = " + std::to_string(values[at]) +
           " made 10% larger";
  }

  const Layer& layer() const { return layer_; }
  double flops() const { return conv_flops(s_); }
  std::int64_t workspace_bytes() const { return workspace_; }
  const std::string& engine() const { return engine_; }
  int chosen() const { return chosen_; }
  int timed() const { return timed_; }
  std::int64_t configs() const { return configs_; }
  double first_seconds() const { return first_seconds_; }
  double best_seconds() const { return best_seconds_; }

 private:
  static constexpr std::int64_t kUidX = 1, kUidW = 2, kUidY = 3;  // y: y for fwd, else dy

  std::string describe() const {
    return std::string("conv ") + name_of(pass_, kPasses) + " " + std::string(dtype_name(t_)) +
           " " + layer_.name;
  }

  std::vector<DeviceBuffer*> inputs() {
    switch (pass_) {
      case ConvPass::fwd:
        return {&x_, &w_};
      case ConvPass::dgrad:
        return {&y_, &w_};
      case ConvPass::wgrad:
        return {&x_, &y_};
    }
    return {};
  }
  DeviceBuffer& output() {
    return pass_ == ConvPass::fwd ? y_ : pass_ == ConvPass::dgrad ? x_ : w_;
  }

  // x: (N, C, H, W), w: (K, C, R, S), y and dy: (N, K, P, Q) in cuDNN's dimension order, each
  // with NHWC strides; the output's dims and strides are set, never inferred (dgrad and wgrad
  // cannot infer them).
  void build_graph(cudnnHandle_t handle) {
    graph_ = std::make_unique<fe::graph::Graph>();
    graph_->set_io_data_type(io_type(t_))
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    const std::vector<std::int64_t> x_dims = {s_.n, s_.c, s_.h, s_.w},
                                    w_dims = {s_.k, s_.c, s_.r, s_.s},
                                    y_dims = {s_.n, s_.k, s_.p(), s_.q()};
    auto tensor = [&](const char* name, std::int64_t uid, const std::vector<std::int64_t>& dims) {
      return graph_->tensor(
          fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim(dims).set_stride(
              nhwc_strides(dims)));
    };
    auto set_output = [&](const std::shared_ptr<fe::graph::Tensor_attributes>& out,
                          std::int64_t uid, const std::vector<std::int64_t>& dims) {
      out->set_output(true).set_uid(uid).set_dim(dims).set_stride(nhwc_strides(dims));
    };
    const std::vector<std::int64_t> pad = {s_.pad, s_.pad}, stride = {s_.stride, s_.stride},
                                    dilation = {1, 1};
    switch (pass_) {
      case ConvPass::fwd: {
        auto y = graph_->conv_fprop(
            tensor("x", kUidX, x_dims), tensor("w", kUidW, w_dims),
            fe::graph::Conv_fprop_attributes().set_padding(pad).set_stride(stride).set_dilation(
                dilation));
        set_output(y, kUidY, y_dims);
        break;
      }
      case ConvPass::dgrad: {
        auto dx = graph_->conv_dgrad(
            tensor("dy", kUidY, y_dims), tensor("w", kUidW, w_dims),
            fe::graph::Conv_dgrad_attributes().set_padding(pad).set_stride(stride).set_dilation(
                dilation));
        set_output(dx, kUidX, x_dims);
        break;
      }
      case ConvPass::wgrad: {
        auto dw = graph_->conv_wgrad(
            tensor("dy", kUidY, y_dims), tensor("x", kUidX, x_dims),
            fe::graph::Conv_wgrad_attributes().set_padding(pad).set_stride(stride).set_dilation(
                dilation));
        set_output(dw, kUidW, w_dims);
        break;
      }
    }
    CUBENCH_CUDNN_FE(graph_->validate());
    CUBENCH_CUDNN_FE(graph_->build_operation_graph(handle));
    // Mode A's list, then the fallback list (as PyTorch does): an fp32 row still finds an FP32
    // engine where mode A offers only tensor-core ones.
    CUBENCH_CUDNN_FE(graph_->create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}));
    graph_->deselect_numeric_notes(deselected_notes(t_));
    CUBENCH_CUDNN_FE(graph_->check_support(handle));
    configs_ = graph_->get_execution_plan_count();
  }

  void run_plan(cudnnHandle_t handle, std::int64_t plan, void* workspace) {
    CUBENCH_CUDNN_FE(graph_->execute_plan_at_index(handle, pack_, workspace, plan));
  }

  // Times each built candidate (3 warm-up runs, then the median of 10) and keeps the fastest; a
  // candidate that fails to run is skipped. Part of set-up: no sample sees it.
  void choose_by_timing(Env& env, cudnnHandle_t handle, const std::vector<std::int64_t>& built) {
    std::int64_t most = 0;
    for (std::int64_t plan : built) {
      std::int64_t bytes = 0;
      if (graph_->get_workspace_size_plan_at_index(plan, bytes).is_good())
        most = std::max(most, bytes);
    }
    DeviceBuffer scratch = env.alloc(std::size_t(std::max<std::int64_t>(most, 1)));
    for (std::size_t i = 0; i < built.size(); ++i) {
      double t = 0;
      try {
        t = median_seconds_on_stream(
            env.stream(), [&] { run_plan(handle, built[i], scratch.get()); }, 3, 10);
      } catch (const Error&) {
        continue;  // a plan that built but does not run here
      }
      ++timed_;
      if (i == 0) first_seconds_ = t;
      if (best_seconds_ == 0 || t < best_seconds_) {
        best_seconds_ = t;
        chosen_ = int(i);
        plan_ = built[i];
      }
    }
    if (timed_ == 0)
      throw Error(describe() + ": none of the " + std::to_string(built.size()) +
                  " built plans ran");
  }

  const Layer& layer_;
  ConvPass pass_;
  DType t_;
  ConvShape s_;
  DeviceBuffer x_, w_, y_;  // y_: y for fwd, dy for dgrad and wgrad
  std::unique_ptr<fe::graph::Graph> graph_;
  std::unordered_map<std::int64_t, void*> pack_;
  std::int64_t configs_ = 0, plan_ = -1, workspace_ = 0;
  std::string engine_;
  int chosen_ = 0, timed_ = 0;  // autotune: the winner's rank among the built plans; plans timed
  double first_seconds_ = 0, best_seconds_ = 0;
};

// A layer's convolution run `repeats` times in one run().
struct Scheduled {
  const Layer* layer;
  int repeats;
};

// The layers one run() executes, one after another on one stream: one layer once (conv,
// conv_autotune), or the whole network for the pass (conv_resnet50).
class Conv final : public BenchmarkCase {
 public:
  Conv(ConvPass pass, DType t, std::vector<Scheduled> schedule, bool autotune)
      : pass_(pass), t_(t), schedule_(std::move(schedule)), autotune_(autotune) {
    if (schedule_.empty()) throw Error("conv: no layer to run");
    if (autotune_ && schedule_.size() != 1) throw Error("conv: autotuning is per layer");
  }

  ~Conv() override {
    layers_.clear();  // plans before the handle they were built with
    if (handle_) cudnnDestroy(handle_);
  }

  void setup(Env& env) override {
    CUBENCH_CUDNN(cudnnCreate(&handle_));
    CUBENCH_CUDNN(cudnnSetStream(handle_, env.stream()));
    for (const Scheduled& s : schedule_) {
      layers_.push_back(std::make_unique<LayerConv>(*s.layer, pass_, t_));
      layers_.back()->setup(env, handle_, autotune_);
    }
    std::int64_t most = 1;
    for (const auto& l : layers_) most = std::max(most, l->workspace_bytes());
    workspace_ = env.alloc(std::size_t(most));
  }

  void poison_result(Env& env) override {
    for (const auto& l : layers_) l->poison_output(env.stream());
  }

  void run(Env&) override {
    for (std::size_t i = 0; i < layers_.size(); ++i)
      for (int r = 0; r < schedule_[i].repeats; ++r) layers_[i]->execute(handle_, workspace_.get());
  }

  // Every layer once: a layer's repeats rewrite the same output from the same inputs.
  void validate(Env& env) override {
    max_error_ratio_ = 0;
    for (const auto& l : layers_) max_error_ratio_ = std::max(max_error_ratio_, l->check(env));
  }

  std::string plant_fault(Env& env) override { return layers_.front()->plant_fault(env); }
  std::string fault_check() const override { return kOutputCheck; }

  Work work() const override {
    double flops = 0;
    for (std::size_t i = 0; i < layers_.size(); ++i)
      flops += schedule_[i].repeats * layers_[i]->flops();
    return {flops, t_, 0};
  }

  std::string label() const override {
    if (layers_.size() == 1) {
      const LayerConv& l = *layers_.front();
      std::string label = std::string(l.layer().name) + ", " + l.engine();
      if (!autotune_)
        return label + ", the heuristic's first of " + std::to_string(l.configs()) + " configs";
      label += ", autotuned: candidate " + std::to_string(l.chosen() + 1) + " of " +
               std::to_string(l.timed()) + " timed";
      if (l.chosen() > 0) label += " (" + percent_faster(l.first_seconds(), l.best_seconds()) + ")";
      return label;
    }
    int convolutions = 0;
    for (const Scheduled& s : schedule_) convolutions += s.repeats;
    return std::to_string(layers_.size()) + " layers, " + std::to_string(convolutions) +
           " convolutions: the heuristic's first plan for each";
  }

  std::map<std::string, double> counters(double) const override {
    return {{"max_error_ratio", max_error_ratio_}};
  }

 private:
  static std::string percent_faster(double first, double best) {
    char text[64];
    std::snprintf(text, sizeof text, "%.1f%% faster than the first",
                  best > 0 && first > 0 ? (first / best - 1) * 100 : 0.0);
    return text;
  }

  ConvPass pass_;
  DType t_;
  std::vector<Scheduled> schedule_;  // parallel to layers_
  bool autotune_;
  cudnnHandle_t handle_ = nullptr;
  std::vector<std::unique_ptr<LayerConv>> layers_;
  DeviceBuffer workspace_;
  double max_error_ratio_ = 0;
};

// The shape axes of conv and conv_autotune, zipped over kLayers (network order), in the order of
// a layer's name: <R>x<S>[s<stride>]_<C>to<K>_<H=W>.
std::vector<Axis> layer_axes() {
  std::vector<std::int64_t> r, stride, c, k, hw;
  for (const Layer& l : kLayers) {
    r.push_back(l.r);
    stride.push_back(l.stride);
    c.push_back(l.c);
    k.push_back(l.k);
    hw.push_back(l.h);
  }
  return {int_axis("r", r), int_axis("stride", stride), int_axis("c", c), int_axis("k", k),
          int_axis("hw", hw)};
}

const Layer& layer_at(const Point& p) {
  for (const Layer& l : kLayers)
    if (l.r == p.get_int("r") && l.stride == p.get_int("stride") && l.c == p.get_int("c") &&
        l.k == p.get_int("k") && l.h == p.get_int("hw"))
      return l;
  throw Error("conv: no ResNet-50 layer has this shape");
}

bool is_layer(const Point& p, const char* name) { return std::string(layer_at(p).name) == name; }

// Every convolution of the network for `pass`, each as often as one training step runs it.
std::vector<Scheduled> network_schedule(ConvPass pass) {
  std::vector<Scheduled> schedule;
  for (const Layer& l : kLayers)
    if (occurrences(l, pass) > 0) schedule.push_back({&l, occurrences(l, pass)});
  return schedule;
}

double schedule_flops(const std::vector<Scheduled>& schedule) {
  double flops = 0;
  for (const Scheduled& s : schedule) flops += s.repeats * conv_flops(shape_of(*s.layer));
  return flops;
}

// What a case of `schedule` holds on the GPU: every layer's x, w and y at once, the check's three
// fp64 arrays of the largest checked output (one layer at a time: y forward, dx for dgrad, dw for
// wgrad), and 256 MiB for the plans' workspace, which only the plans know (an allowance; the
// H200's pool held 5.3 to 10.1 GiB for the bf16 stem and whole-network rows, which this covers).
GpuNeeds conv_needs(ConvPass pass, DType t, const std::vector<Scheduled>& schedule) {
  std::uint64_t tensors = 0, largest_output = 0;
  for (const Scheduled& s : schedule) {
    const ConvShape c = shape_of(*s.layer);
    const std::uint64_t x = c.n * c.h * c.w * c.c, w = c.k * c.r * c.s * c.c,
                        y = c.n * c.p() * c.q() * c.k;
    tensors += (x + w + y) * dtype_bytes(t);
    const std::uint64_t out = pass == ConvPass::fwd ? y : pass == ConvPass::dgrad ? x : w;
    largest_output = std::max(largest_output, out);
  }
  return tensor_core_needs(t, tensors + 3 * 8 * largest_output + 256 * kMiB);
}

CounterDef max_error_ratio() {
  return {"max_error_ratio", "", Better::lower,
          "worst element's error over its bound (conv_bound); above 1 fails the check"};
}

void register_conv() {
  // No size axis: the layers are the network's, not a curve along one dimension.
  for (bool autotune : {false, true}) {
    const std::vector<DType> dtypes{DType::fp16, DType::bf16, DType::tf32, DType::fp32};
    Family family(autotune ? "conv_autotune" : "conv",
                  autotune ? "A ResNet-50 convolution through cuDNN, the fastest of the "
                             "heuristic's top 8"
                           : "A ResNet-50 convolution through cuDNN, the heuristic's first plan");
    family.axis(pass_axis()).axis(dtype_axis(dtypes));
    for (Axis& a : layer_axes()) family.axis(std::move(a));
    family.zip({"r", "stride", "c", "k", "hw"})
        .counter(max_error_ratio())
        .main_counter("TFLOPS")
        // Default run: the stem, a 3x3 and its strided form, and the most frequent 1x1, forward
        // in bf16 and fp32. Autotuning (8 plans timed per case): bf16 forward of a 3x3 and a 1x1,
        // and fp32 forward of the strided 3x3 (the layer set against PyTorch's cudnn.benchmark).
        .default_suite([autotune](const Point& p) {
          const bool bf16 = p.get_dtype() == DType::bf16,
                     fwd = p.get_enum<ConvPass>("pass") == ConvPass::fwd;
          if (autotune)
            return fwd &&
                   ((bf16 && (is_layer(p, "3x3_64to64_56") || is_layer(p, "1x1_1024to256_14"))) ||
                    (p.get_dtype() == DType::fp32 && is_layer(p, "3x3s2_256to256_28")));
          return fwd && (bf16 || p.get_dtype() == DType::fp32) &&
                 (is_layer(p, "7x7s2_3to64_224") || is_layer(p, "3x3_64to64_56") ||
                  is_layer(p, "3x3s2_256to256_28") || is_layer(p, "1x1_1024to256_14"));
        })
        .sampling(Sampling::launches_only())
        .size([](const Point& p) { return conv_flops(shape_of(layer_at(p))); })
        .needs([](const Point& p) {
          return conv_needs(p.get_enum<ConvPass>("pass"), p.get_dtype(), {{&layer_at(p), 1}});
        })
        .make([autotune](const Point& p) {
          return std::make_unique<Conv>(p.get_enum<ConvPass>("pass"), p.get_dtype(),
                                        std::vector<Scheduled>{{&layer_at(p), 1}}, autotune);
        })
        .add();
  }

  // The whole network, per pass, in bf16: the precision of the training step it is set against
  // (resnet50_train's amp_bf16). No autotuned row: conv_autotune's layers (full suite) give the
  // autotuned numbers, and resnet50_train runs cuDNN's benchmark mode.
  Family("conv_resnet50",
         "Every ResNet-50 convolution of one training step's pass through cuDNN, the heuristic's "
         "first plan for each")
      .axis(pass_axis())
      .axis(dtype_axis({DType::bf16}))
      .counter(max_error_ratio())
      .main_counter("TFLOPS")
      .sampling(Sampling::launches_only())
      .size([](const Point& p) {
        return schedule_flops(network_schedule(p.get_enum<ConvPass>("pass")));
      })
      .needs([](const Point& p) {
        const ConvPass pass = p.get_enum<ConvPass>("pass");
        return conv_needs(pass, p.get_dtype(), network_schedule(pass));
      })
      .make([](const Point& p) {
        const ConvPass pass = p.get_enum<ConvPass>("pass");
        return std::make_unique<Conv>(pass, p.get_dtype(), network_schedule(pass), false);
      })
      .add();
}
CUBENCH_REGISTER(register_conv);

}  // namespace
}  // namespace cubench
