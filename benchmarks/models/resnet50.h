#pragma once
// ResNet-50 v1.5 with the C++ frontend: torchvision's resnet50 (stride 2 on the bottleneck's 3x3
// convolution), 25,557,032 parameters at 1000 classes. The same network serves 32x32 inputs (the
// seed articles' CIFAR-10 setting): the adaptive average pool takes any resolution.
#include <torch/torch.h>

#include "fixtures/cubench_torch.h"

namespace cubench {

struct BottleneckImpl : torch::nn::Module {
  BottleneckImpl(int64_t in, int64_t width, int64_t stride, bool downsample);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr}, conv3{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr}, bn3{nullptr};
  torch::nn::Sequential downsample{nullptr};
};
TORCH_MODULE(Bottleneck);

struct ResNet50Impl : torch::nn::Module {
  explicit ResNet50Impl(int64_t classes = 1000);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Conv2d stem{nullptr};
  torch::nn::BatchNorm2d stem_bn{nullptr};
  torch::nn::Sequential layer1{nullptr}, layer2{nullptr}, layer3{nullptr}, layer4{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(ResNet50);

// Forward FLOPs at a square resolution: 2 x multiply-adds of every convolution and of the
// classifier (batch norm, ReLU, pooling and the residual adds are left out, as the usual
// 4.1 GMAC figure at 224 leaves them out). A training step is counted as 3x this.
double resnet50_forward_flops(int64_t resolution, int64_t classes);

int64_t parameter_count(torch::nn::Module& module);

// How the images and the convolution weights lie in memory: NCHW, or channels-last (NHWC, the
// layout cuDNN's tensor-core convolutions read without a transpose).
enum class Format { nchw, channels_last };
constexpr EnumName<Format> kFormats[] = {{Format::nchw, "nchw"},
                                         {Format::channels_last, "channels_last"}};
// The model's convolution weights moved to `format` in place; returns `images` in it.
torch::Tensor to_format(ResNet50& model, const torch::Tensor& images, Format format);

}  // namespace cubench
