// Which configurations a GPU can run (run/gpu_fit.h), driven with the profiles of GPUs this
// project has no machine of: what each lacks (compute capability, memory) is left out with its
// reason, once per family; a row that does not fit the memory free at its turn says how much it
// needs and how much there is. No GPU needed.
#include <gtest/gtest.h>

#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "fixtures/detail/run/gpu_fit.h"
#include "fixtures/support/status.h"
#include "tests/nothing_case.h"

namespace cubench {
namespace {

using testing_support::nothing;

// The profiles the driver reports for these GPUs (name, compute capability, total memory).
const GpuProfile kH200{"NVIDIA H200", 90, 150'119'301'120ull};
const GpuProfile kRtx4090{"NVIDIA GeForce RTX 4090", 89, 25'393'692'672ull};
const GpuProfile kA100_40{"NVIDIA A100-SXM4-40GB", 80, 42'505'273'344ull};
const GpuProfile kT4{"Tesla T4", 75, 15'655'829'504ull};

GpuNeeds bytes_only(std::uint64_t bytes) {
  GpuNeeds n;
  n.device_bytes = bytes;
  return n;
}

TEST(GpuFit, TensorCoreMathNeedsItsArchitecture) {
  const GpuNeeds fp8 = tensor_core_needs(DType::fp8_e4m3, kMiB);
  const GpuNeeds bf16 = tensor_core_needs(DType::bf16, kMiB);
  const GpuNeeds tf32 = tensor_core_needs(DType::tf32, kMiB);
  const GpuNeeds fp16 = tensor_core_needs(DType::fp16, kMiB);
  EXPECT_EQ(cannot_run(fp8, kH200, 0), "");
  EXPECT_EQ(cannot_run(fp8, kRtx4090, 0), "");
  EXPECT_EQ(cannot_run(fp8, kA100_40, 0),
            "fp8 tensor cores need compute capability 8.9; this GPU is 8.0");
  EXPECT_EQ(cannot_run(fp8, kT4, 0),
            "fp8 tensor cores need compute capability 8.9; this GPU is 7.5");
  EXPECT_EQ(cannot_run(bf16, kA100_40, 0), "");
  EXPECT_EQ(cannot_run(bf16, kT4, 0),
            "bf16 tensor cores need compute capability 8.0; this GPU is 7.5");
  EXPECT_EQ(cannot_run(tf32, kT4, 0),
            "TF32 tensor cores need compute capability 8.0; this GPU is 7.5");
  for (const GpuProfile& gpu : {kH200, kRtx4090, kA100_40, kT4})
    EXPECT_EQ(cannot_run(fp16, gpu, 0), "") << gpu.name;
  // The stricter of two needs wins, with its reason; their memory adds up.
  const GpuNeeds both = fp16 + GpuNeeds{80, "flash attention", kMiB};
  EXPECT_EQ(both.compute_capability, 80);
  EXPECT_EQ(both.device_bytes, 2 * kMiB);
  EXPECT_NE(cannot_run(both, kT4, 0).find("flash attention need compute capability 8.0"),
            std::string::npos);
}

TEST(GpuFit, MoreMemoryThanTheGpuHasIsLeftOut) {
  // LLaMA-7B at batch 8, 1024 + 256 tokens: weights 12.6 GiB, its cache 5 GiB (x 1.3), LibTorch's
  const GpuNeeds llama_7b_bf16 = bytes_only(20 * kGiB);
  EXPECT_EQ(cannot_run(llama_7b_bf16, kRtx4090, 0), "");
  EXPECT_EQ(cannot_run(llama_7b_bf16, kT4, 0),
            "they need more device memory than this GPU has (14.6 GiB)");
  // --cubench_memory_limit: the H200 as a 24 GiB GPU, and as a 16 GiB one.
  EXPECT_EQ(cannot_run(llama_7b_bf16, kH200, 24 * kGiB), "");
  EXPECT_NE(cannot_run(llama_7b_bf16, kH200, 16 * kGiB), "");
  EXPECT_EQ(cannot_run(bytes_only(30 * kGiB), kH200, 24 * kGiB),
            "they need more device memory than this GPU has (24.0 GiB under "
            "--cubench_memory_limit)");
  // A limit above what the GPU has changes nothing.
  EXPECT_EQ(usable_memory(kT4, 24 * kGiB), kT4.total_memory);
  EXPECT_EQ(usable_memory(kH200, 24 * kGiB), 24 * kGiB);
}

// What the build or install lacks (a compiled row's package) leaves the row out on every GPU, in
// its own words, before memory or capability are weighed; a sum of needs keeps it.
TEST(GpuFit, WhatTheBuildLacksIsLeftOutOnEveryGpu) {
  GpuNeeds compiled = bytes_only(kGiB);
  compiled.missing = "they need an AOTInductor package, and there is no aoti/x.pt2";
  EXPECT_EQ(cannot_run(compiled, kH200, 0), compiled.missing);
  EXPECT_EQ(cannot_run(compiled, kT4, 0), compiled.missing);
  EXPECT_EQ(cannot_run(bytes_only(kGiB) + compiled, kH200, 0), compiled.missing);
  EXPECT_EQ(cannot_run(compiled + bytes_only(kGiB), kH200, 0), compiled.missing);
  EXPECT_EQ(cannot_run(bytes_only(kGiB) + bytes_only(kGiB), kH200, 0), "");
}

TEST(GpuFit, AtItsTurnARowSaysWhatItNeedsAndWhatIsFree) {
  // 10 GiB free of the 4090's 24: a 12 GiB row is not run, an 8 GiB one is.
  EXPECT_EQ(does_not_fit_now(bytes_only(12 * kGiB), 10 * kGiB, 24 * kGiB, 0),
            "needs 12.0 GiB of device memory; 10.0 GiB free of 24.0 GiB");
  EXPECT_EQ(does_not_fit_now(bytes_only(8 * kGiB), 10 * kGiB, 24 * kGiB, 0), "");
  // Under a 24 GiB limit on the H200 with 20 GiB in use, 4 GiB is left whatever is free.
  EXPECT_EQ(does_not_fit_now(bytes_only(5 * kGiB), 120 * kGiB, 140 * kGiB, 24 * kGiB),
            "needs 5.0 GiB of device memory; 4.0 GiB free of 24.0 GiB "
            "(--cubench_memory_limit)");
  EXPECT_EQ(does_not_fit_now(bytes_only(3 * kGiB), 120 * kGiB, 140 * kGiB, 24 * kGiB), "");
  // More in use than the limit: nothing is free.
  EXPECT_NE(
      does_not_fit_now(bytes_only(kMiB), 100 * kGiB, 140 * kGiB, 24 * kGiB).find("0 MiB free"),
      std::string::npos);
  // A configuration that declares no memory is never refused for it.
  EXPECT_EQ(does_not_fit_now(GpuNeeds{}, 0, 24 * kGiB, 0), "");
}

Spec spec_of(const std::string& family, const std::string& rest, GpuNeeds needs,
             Timer timer = Timer::cuda_events) {
  Spec s;
  s.family = family;
  s.name = family + "/" + rest;
  s.gpu_needs = std::move(needs);
  s.timer = timer;
  return s;
}

TEST(GpuFit, WhatAGpuCannotRunIsGroupedOncePerFamilyAndReason) {
  const std::vector<Spec> specs = {
      spec_of("gemm", "fp16/1024", tensor_core_needs(DType::fp16, kMiB)),
      spec_of("gemm", "bf16/1024", tensor_core_needs(DType::bf16, kMiB)),
      spec_of("gemm", "fp8/1024", tensor_core_needs(DType::fp8_e4m3, kMiB)),
      spec_of("gemm", "fp8/4096", tensor_core_needs(DType::fp8_e4m3, kMiB)),
      spec_of("gemm", "fp16/65536", tensor_core_needs(DType::fp16, 48 * kGiB)),
      spec_of("llama_decode", "bf16/128", tensor_core_needs(DType::bf16, 14 * kGiB)),
      spec_of("cpu/bert_train", "fp32/16", tensor_core_needs(DType::fp8_e4m3, 100 * kGiB),
              Timer::host_clock),  // on the host: whatever it declares
  };
  const std::vector<const Spec*> suite = every_spec(specs);

  const Admission on_h200 = admit_on_gpu(suite, kH200, 0);
  EXPECT_EQ(on_h200.admitted.size(), specs.size());
  EXPECT_TRUE(on_h200.not_run.empty());

  const Admission on_4090 = admit_on_gpu(suite, kRtx4090, 0);
  ASSERT_EQ(on_4090.not_run.size(), 1u);
  EXPECT_EQ(on_4090.not_run[0].family, "gemm");
  EXPECT_EQ(not_run_line(on_4090.not_run[0], kRtx4090),
            "gemm: 1 configuration not run on NVIDIA GeForce RTX 4090: they need more device "
            "memory than this GPU has (23.6 GiB)");

  const Admission on_t4 = admit_on_gpu(suite, kT4, 0);
  // fp16 at 1024 and the host row run; bf16, both fp8, the 48 GiB GEMM and LLaMA do not.
  ASSERT_EQ(on_t4.admitted.size(), 2u);
  EXPECT_EQ(on_t4.admitted[0]->name, "gemm/fp16/1024");
  EXPECT_EQ(on_t4.admitted[1]->name, "cpu/bert_train/fp32/16");
  ASSERT_EQ(on_t4.not_run.size(), 4u);
  EXPECT_EQ(not_run_line(on_t4.not_run[1], kT4),
            "gemm: 2 configurations not run on Tesla T4: fp8 tensor cores need compute "
            "capability 8.9; this GPU is 7.5");
  EXPECT_EQ(on_t4.not_run[3].family, "llama_decode");
}

TEST(GpuFit, TheContextSaysWhatWasNotRunAsJson) {
  Spec odd = spec_of("gemm", "a\"b", GpuNeeds{89, "fp8 \\ tensor cores", 0});
  const std::vector<NotRun> groups = {{"gemm", "fp8 needs \"8.9\"", {&odd}}};
  EXPECT_EQ(not_run_json(groups),
            "[{\"family\": \"gemm\", \"reason\": \"fp8 needs \\\"8.9\\\"\", \"configurations\": "
            "[\"gemm/a\\\"b\"]}]");
  EXPECT_EQ(not_run_json({}), "[]");
}

TEST(GpuFit, TheNeedsListingSaysWhatEachConfigurationDeclares) {
  const std::vector<Spec> specs = {
      spec_of("gemm", "fp8/4096", tensor_core_needs(DType::fp8_e4m3, 96 * kMiB)),
      spec_of("gemm", "fp16/1024", tensor_core_needs(DType::fp16, 6 * kMiB)),
      spec_of("cpu/bert_train", "fp32/16", tensor_core_needs(DType::bf16, kGiB),
              Timer::host_clock),  // on the host: it needs nothing of a GPU
  };
  const std::vector<const Spec*> suite = every_spec(specs);
  EXPECT_EQ(needs_listing(suite),
            "name\tdevice_bytes\tcompute_capability\tcapability_for\n"
            "gemm/fp8/4096\t100663296\t8.9\tfp8 tensor cores\n"
            "gemm/fp16/1024\t6291456\t7.5\t\n"
            "cpu/bert_train/fp32/16\t0\thost\t\n");
  EXPECT_EQ(needs_listing({}), "name\tdevice_bytes\tcompute_capability\tcapability_for\n");
}

// A declaration is judged as the pool will hold it: in 32 MiB granules (the sigmoid copy of 10M
// bf16 values, 38 MiB of buffers, reserved 64 MiB on the H100).
TEST(GpuFit, DeclaredBytesRoundUpToThePoolsGranule) {
  EXPECT_EQ(pool_reservation(0), 0u);
  EXPECT_EQ(pool_reservation(1), 32 * kMiB);
  EXPECT_EQ(pool_reservation(32 * kMiB), 32 * kMiB);
  EXPECT_EQ(pool_reservation(38 * kMiB), 64 * kMiB);
  EXPECT_EQ(pool_reservation(15 * kGiB + 1), 15 * kGiB + 32 * kMiB);
}

TEST(GpuFit, MemoryLimitTakesASizeWithAUnit) {
  EXPECT_EQ(parse_memory_size("--cubench_memory_limit", "24GiB"), 24 * kGiB);
  EXPECT_EQ(parse_memory_size("--cubench_memory_limit", "16gib"), 16 * kGiB);
  EXPECT_EQ(parse_memory_size("--cubench_memory_limit", "16GB"), 16'000'000'000ull);
  EXPECT_EQ(parse_memory_size("--cubench_memory_limit", "512MiB"), 512 * kMiB);
  EXPECT_EQ(parse_memory_size("--cubench_memory_limit", "1.5TiB"), 1536 * kGiB);
  EXPECT_EQ(parse_memory_size("--cubench_memory_limit", "1048576"), kMiB);
  for (const char* bad : {"", "GiB", "-1GiB", "0", "24XB", "24 GiB", "nanGiB", "infGiB"}) {
    try {
      parse_memory_size("--cubench_memory_limit", bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("--cubench_memory_limit takes a size such as 24GiB"),
                std::string::npos);
    }
  }
}

TEST(GpuFit, ASuiteFamilyOnTheGpuMustDeclareItsNeeds) {
  // A family registered from a benchmarks/ file: refused without Family::needs, taken with it.
  Family undeclared("gpu_fit_test/undeclared", "", "benchmarks/undeclared.cpp");
  undeclared.make(nothing());
  EXPECT_THROW(undeclared.add(), Error);
  Family declared("gpu_fit_test/declared", "", "benchmarks/declared.cpp");
  declared.needs([](const Point&) { return GpuNeeds{}; }).make(nothing());
  EXPECT_NO_THROW(declared.add());
  // A test family in a checkout that happens to stand under a folder named benchmarks: not the
  // suite's (only the file's own folder counts).
  Family elsewhere("gpu_fit_test/elsewhere", "", "/home/u/benchmarks/cubench/tests/elsewhere.cpp");
  elsewhere.make(nothing());
  EXPECT_NO_THROW(elsewhere.add());
  // On the host it needs nothing of a GPU.
  Family host("gpu_fit_test/host", "", "benchmarks/host.cpp");
  host.timer(Timer::host_clock).make(nothing());
  EXPECT_NO_THROW(host.add());
}

}  // namespace
}  // namespace cubench
