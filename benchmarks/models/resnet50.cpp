#include "benchmarks/models/resnet50.h"

namespace cubench {
namespace {

torch::nn::Conv2d conv(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad) {
  return torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, k).stride(stride).padding(pad).bias(false));
}

constexpr int64_t kExpansion = 4;
constexpr int64_t kBlocks[] = {3, 4, 6, 3};
constexpr int64_t kWidths[] = {64, 128, 256, 512};

}  // namespace

BottleneckImpl::BottleneckImpl(int64_t in, int64_t width, int64_t stride, bool down) {
  conv1 = register_module("conv1", conv(in, width, 1, 1, 0));
  bn1 = register_module("bn1", torch::nn::BatchNorm2d(width));
  conv2 = register_module("conv2", conv(width, width, 3, stride, 1));  // v1.5: stride here
  bn2 = register_module("bn2", torch::nn::BatchNorm2d(width));
  conv3 = register_module("conv3", conv(width, width * kExpansion, 1, 1, 0));
  bn3 = register_module("bn3", torch::nn::BatchNorm2d(width * kExpansion));
  if (down)
    downsample = register_module("downsample",
                                 torch::nn::Sequential(conv(in, width * kExpansion, 1, stride, 0),
                                                       torch::nn::BatchNorm2d(width * kExpansion)));
}

// In-place ReLUs and residual add, as torchvision's Bottleneck (ReLU(inplace=True), out +=
// identity): the same kernels and the same saved tensors as the Python model we are compared with.
// One layer a statement, each result replacing the last, as torchvision's `out = self.conv3(out)`
// then `out = self.bn3(out)`: a chained `y = bn3(conv3(y))` keeps the old y (bn2's output) alive
// through bn3 as well, where Python has let it go once conv3 returned. By our count that puts one
// 64 x 56 x 56 activation more than PyTorch holds at the inference peak (bn3 in layer1's second
// and third blocks, where the layer's input, the block's input and conv3's and bn3's outputs are
// alive too): the size of the gap measured on the H200 (+205.6 MB at fp32 NCHW batch 256, such
// a tensor being 205.5 MB; +51.3 at batch 64, 51.4; +25.7 in fp16 channels-last at 64, 25.7).
// The downsample path runs last, as torchvision's does.
torch::Tensor BottleneckImpl::forward(torch::Tensor x) {
  torch::Tensor y = conv1(x);
  y = bn1(y).relu_();
  y = conv2(y);
  y = bn2(y).relu_();
  y = conv3(y);
  y = bn3(y);
  y += downsample ? downsample->forward(x) : x;
  return y.relu_();
}

ResNet50Impl::ResNet50Impl(int64_t classes) {
  stem = register_module("conv1", conv(3, 64, 7, 2, 3));
  stem_bn = register_module("bn1", torch::nn::BatchNorm2d(64));
  int64_t in = 64;
  torch::nn::Sequential* layers[] = {&layer1, &layer2, &layer3, &layer4};
  for (int i = 0; i < 4; ++i) {
    torch::nn::Sequential seq;
    for (int64_t b = 0; b < kBlocks[i]; ++b) {
      int64_t stride = (b == 0 && i > 0) ? 2 : 1;
      seq->push_back(Bottleneck(in, kWidths[i], stride, b == 0));
      in = kWidths[i] * kExpansion;
    }
    *layers[i] = register_module("layer" + std::to_string(i + 1), seq);
  }
  fc = register_module("fc", torch::nn::Linear(in, classes));
}

torch::Tensor ResNet50Impl::forward(torch::Tensor x) {
  x = stem(x);
  x = stem_bn(x).relu_();
  x = torch::max_pool2d(x, 3, 2, 1);
  // Sequential's forward is a template: name the return type.
  for (auto* layer : {&layer1, &layer2, &layer3, &layer4}) x = (*layer)->forward<torch::Tensor>(x);
  x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
  return fc(x);
}

double resnet50_forward_flops(int64_t resolution, int64_t classes) {
  auto out_size = [](int64_t s, int64_t k, int64_t stride, int64_t pad) {
    return (s + 2 * pad - k) / stride + 1;
  };
  double macs = 0;
  auto conv_macs = [&](int64_t s_out, int64_t cin, int64_t cout, int64_t k) {
    macs += double(s_out) * s_out * cout * cin * k * k;
  };
  int64_t s = out_size(resolution, 7, 2, 3);
  conv_macs(s, 3, 64, 7);
  s = out_size(s, 3, 2, 1);  // max pool
  int64_t in = 64;
  for (int i = 0; i < 4; ++i)
    for (int64_t b = 0; b < kBlocks[i]; ++b) {
      int64_t stride = (b == 0 && i > 0) ? 2 : 1, width = kWidths[i];
      int64_t s_out = out_size(s, 3, stride, 1);
      conv_macs(s, in, width, 1);
      conv_macs(s_out, width, width, 3);
      conv_macs(s_out, width, width * kExpansion, 1);
      if (b == 0) conv_macs(s_out, in, width * kExpansion, 1);
      s = s_out;
      in = width * kExpansion;
    }
  macs += double(in) * classes;
  return 2 * macs;
}

int64_t parameter_count(torch::nn::Module& module) {
  int64_t n = 0;
  for (const auto& p : module.parameters()) n += p.numel();
  return n;
}

torch::Tensor to_format(ResNet50& model, const torch::Tensor& images, Format format) {
  if (format == Format::nchw) return images;
  for (auto& p : model->parameters())
    if (p.dim() == 4) p.set_data(p.data().contiguous(torch::MemoryFormat::ChannelsLast));
  return images.contiguous(torch::MemoryFormat::ChannelsLast);
}

}  // namespace cubench
