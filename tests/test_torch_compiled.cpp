// Compiled mode's CPU side: a package's names against a model's (match_constants), and the names
// each family's model hands a package, against the Python library's own for the same module:
// torchvision's resnet50 state_dict and the decode step of tools/cubench_tools/compiled_modules.py
// (transformers' LlamaForCausalLM names), each written out here from the library's structure. A
// package made by tools/aoti-export lists these names; a model that hands another name fails its
// row's check on the GPU, this test says so on the CPU first.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "benchmarks/models/llama.h"
#include "benchmarks/models/resnet50.h"
#include "benchmarks/models/sd15_unet.h"
#include "fixtures/cubench_torch.h"

namespace cubench {
namespace {

std::set<std::string> keys_of(const std::map<std::string, torch::Tensor>& m) {
  std::set<std::string> out;
  for (const auto& entry : m) out.insert(entry.first);
  return out;
}

TEST(CompiledConstants, EveryListedNameMustBeHandedAndTheRestAreSaid) {
  const ConstantMatch m =
      match_constants({"fc.weight", "fc.bias", "conv1.weight", "_tensor_constant0"},
                      {"fc.weight", "conv1.weight", "bn1.num_batches_tracked"});
  EXPECT_FALSE(m.complete());
  EXPECT_EQ(m.missing, std::vector<std::string>{"fc.bias"});
  EXPECT_EQ(m.unused, std::vector<std::string>{"bn1.num_batches_tracked"});
  EXPECT_EQ(m.describe(),
            "1 the package lists that the model lacks (fc.bias); 1 the model has that the "
            "package does not list (bn1.num_batches_tracked)");
  const ConstantMatch all = match_constants({"a", "b"}, {"b", "a"});
  EXPECT_TRUE(all.complete());
  EXPECT_EQ(all.describe(), "every name matches");
}

TEST(CompiledConstants, ADescriptionNamesTheFirstFewOfMany) {
  std::vector<std::string> many;
  for (int i = 0; i < 9; ++i) many.push_back("w" + std::to_string(i));
  const ConstantMatch m = match_constants(many, {});
  EXPECT_EQ(m.describe(), "9 the package lists that the model lacks (w0, w1, w2, w3, ...)");
}

// torchvision's resnet50 (Bottleneck blocks 3, 4, 6, 3; a downsample Sequential of a convolution
// and a batch norm in each layer's first block) state_dict, batch norm's buffers included.
std::set<std::string> torchvision_resnet50_names() {
  std::set<std::string> out;
  const auto batch_norm = [&](const std::string& at) {
    for (const char* n : {"weight", "bias", "running_mean", "running_var", "num_batches_tracked"})
      out.insert(at + "." + n);
  };
  out.insert("conv1.weight");
  batch_norm("bn1");
  const int blocks[] = {3, 4, 6, 3};
  for (int layer = 0; layer < 4; ++layer)
    for (int b = 0; b < blocks[layer]; ++b) {
      const std::string at = "layer" + std::to_string(layer + 1) + "." + std::to_string(b) + ".";
      for (int i = 1; i <= 3; ++i) {
        out.insert(at + "conv" + std::to_string(i) + ".weight");
        batch_norm(at + "bn" + std::to_string(i));
      }
      if (b == 0) {
        out.insert(at + "downsample.0.weight");
        batch_norm(at + "downsample.1");
      }
    }
  out.insert("fc.weight");
  out.insert("fc.bias");
  return out;
}

TEST(CompiledConstants, ResNet50HandsTorchvisionsNames) {
  ResNet50 model(1000);
  EXPECT_EQ(keys_of(module_constants(*model)), torchvision_resnet50_names());
}

// compiled_modules.py's decode step at `layers`: transformers' LlamaForCausalLM weight names, the
// rotary tables and each layer's cache as buffers.
std::set<std::string> decode_step_names(int64_t layers) {
  std::set<std::string> out = {"model.embed_tokens.weight", "model.norm.weight", "lm_head.weight",
                               "model.rotary_emb.cos", "model.rotary_emb.sin"};
  for (int64_t i = 0; i < layers; ++i) {
    const std::string at = "model.layers." + std::to_string(i) + ".";
    for (const char* n :
         {"input_layernorm.weight", "post_attention_layernorm.weight", "self_attn.q_proj.weight",
          "self_attn.k_proj.weight", "self_attn.v_proj.weight", "self_attn.o_proj.weight",
          "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight", "self_attn.k_cache",
          "self_attn.v_cache"})
      out.insert(at + n);
  }
  return out;
}

TEST(CompiledConstants, LlamaHandsTheDecodeStepsNamesItsOwnTensorsAndShapes) {
  const LlamaConfig config{2, 64, 4, 96, 100};
  LlamaModel model(config, torch::TensorOptions().dtype(torch::kFloat));
  model.allocate_cache(3, 10);
  const auto tensors = model.named_tensors();
  EXPECT_EQ(keys_of(tensors), decode_step_names(config.layers));
  // The weights are every parameter once, in nn.Linear's [out, in] layout.
  int64_t weights = 0;
  for (const auto& [name, t] : tensors)
    if (name.find("_cache") == std::string::npos && name.find("rotary") == std::string::npos)
      weights += t.numel();
  EXPECT_EQ(weights, config.parameter_count());
  EXPECT_EQ(tensors.at("model.layers.1.mlp.down_proj.weight").sizes(),
            (std::vector<int64_t>{config.hidden, config.ffn}));
  EXPECT_EQ(tensors.at("model.layers.0.self_attn.k_cache").sizes(),
            (std::vector<int64_t>{3, config.heads, 10, config.head_dim()}));
  EXPECT_EQ(tensors.at("model.rotary_emb.cos").sizes(),
            (std::vector<int64_t>{config.max_positions, config.head_dim()}));
  // The tensors themselves: a compiled step handed the cache writes the model's.
  tensors.at("model.layers.1.self_attn.v_cache").fill_(3);
  EXPECT_EQ(model.named_tensors().at("model.layers.1.self_attn.v_cache").sum().item<double>(),
            3.0 * 3 * double(config.heads) * 10 * double(config.head_dim()));
}

// The constants a real package listed: tools/aoti-export's record of the package it made on an
// H100 (PyTorch 2.11; docs/results/h100/compiled/packages/), its names one a line.
std::set<std::string> package_names(const std::string& family) {
  std::ifstream in(std::string(CUBENCH_TEST_DATA_DIR) + "/compiled/" + family + ".names");
  std::set<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.insert(line);
  return out;
}

// Each family's model hands exactly what the package made from the Python module listed: the
// weight-name maps held against the modules themselves, not a list written here.
TEST(CompiledConstants, EachFamilysModelHandsWhatItsRealPackageListed) {
  const auto resnet = package_names("resnet50_infer");
  ASSERT_EQ(resnet.size(), 320u);
  EXPECT_EQ(keys_of(module_constants(*ResNet50(1000))), resnet);

  const auto llama = package_names("llama_decode");
  ASSERT_EQ(llama.size(), 357u);
  EXPECT_EQ(decode_step_names(32), llama);
  // LLaMA-7B's names, from a model of its layer count (the widths change no name).
  LlamaModel model({32, 8, 2, 8, 10}, torch::TensorOptions().dtype(torch::kFloat));
  model.allocate_cache(1, 4);
  EXPECT_EQ(keys_of(model.named_tensors()), llama);

  const auto unet = package_names("sd15_unet");
  ASSERT_EQ(unet.size(), 686u);
  const sd15::Placement meta{torch::TensorOptions().device(torch::kMeta), sd15::Init::random};
  EXPECT_EQ(keys_of(module_constants(sd15::UNet2DConditionModel(sd15::UNetConfig::sd15(), meta),
                                     "unet.")),
            unet);
}

TEST(CompiledConstants, ABuildWithoutTheLoaderLeavesCompiledRowsOutSayingWhy) {
  const std::string why = compiled_package_missing("resnet50_infer-bf16-channels_last-1");
  ASSERT_FALSE(why.empty());
  if (why_no_compiled_mode().empty()) {
    // A LibTorch with the loader: the package is what is missing, and how to make it is said.
    EXPECT_NE(why.find("tools/aoti-export"), std::string::npos) << why;
    EXPECT_NE(why.find("resnet50_infer-bf16-channels_last-1"), std::string::npos) << why;
  } else {
    EXPECT_NE(why.find("LibTorch " + torch_compat::version()), std::string::npos) << why;
  }
  EXPECT_EQ(why.rfind("they need ", 0), 0u) << why;
}

TEST(CompiledConstants, PackagesAreLookedForWhereCubenchAotiDirSays) {
  ASSERT_EQ(setenv("CUBENCH_AOTI_DIR", "/nonexistent/aoti", 1), 0);
  EXPECT_EQ(compiled_package_dir(), "/nonexistent/aoti");
  ASSERT_EQ(unsetenv("CUBENCH_AOTI_DIR"), 0);
  const std::string beside = compiled_package_dir();
  EXPECT_EQ(beside.substr(beside.size() - 5), "/aoti") << beside;
}

}  // namespace
}  // namespace cubench
