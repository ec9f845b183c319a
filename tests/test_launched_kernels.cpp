// Naming the kernels a run launches (launched_kernels.h): names as a person reads them, the label
// text, and the hand-declared CUPTI interface held against CUPTI's own headers where the toolkit
// ships them. The watch itself, on a GPU, is Kernels.LaunchWatchNamesWhatARunLaunched
// (test_gpu.cpp).
#include <gtest/gtest.h>

#include <cstddef>

#include "fixtures/detail/report/launched_kernels.h"
#include "fixtures/detail/report/cupti_abi.h"

#if __has_include(<cupti_callbacks.h>)
#include <cuda_runtime_api.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#define CUBENCH_TEST_HAS_CUPTI_HEADERS 1
#endif

namespace cubench {
namespace {

TEST(LaunchedKernels, NamesReadAsTheirFunctionWithoutParameters) {
  // nvcc's mangling of `template <typename T> __global__ void add_kernel(T*, T*, int)`
  EXPECT_EQ(readable_kernel_name("_Z10add_kernelIfEvPT_S1_i"), "add_kernel<float>");
  EXPECT_EQ(readable_kernel_name("_ZN7cubench12_GLOBAL__N_15emptyEv"),
            "cubench::(anonymous namespace)::empty");
  // cuBLAS's Hopper kernels are C names: kept whole
  const std::string cublas =
      "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
      "segment_k_off_kernel__5x_cublas";
  EXPECT_EQ(readable_kernel_name(cublas), cublas);
  // a parenthesis inside template arguments is not the parameter list
  EXPECT_EQ(readable_kernel_name("void k<(Op)1>(int)"), "k<(Op)1>");
  const std::string cut = readable_kernel_name(std::string(300, 'k'), 40);
  EXPECT_EQ(cut.size(), 40u);
  EXPECT_EQ(cut.substr(37), "...");
}

TEST(LaunchedKernels, LabelSaysTheKernelsTheirCountsAndGraphs) {
  EXPECT_EQ(describe_launches({}), "no kernel launched");
  EXPECT_EQ(describe_launches({{{"gemm_kernel", 1}}, 0}), "kernel: gemm_kernel");
  EXPECT_EQ(describe_launches({{{"gemm_kernel", 3}}, 0}), "kernel: gemm_kernel x3");
  EXPECT_EQ(describe_launches({{{"gemm", 1}, {"splitk_reduce", 1}}, 0}),
            "kernels: gemm, splitk_reduce (2 kernels, 2 launches)");
  EXPECT_EQ(describe_launches({{{"a", 4}, {"b", 1}, {"c", 2}, {"d", 1}, {"e", 1}}, 0}),
            "kernels: a x4, b, c x2 and 2 more (5 kernels, 9 launches)");
  EXPECT_EQ(describe_launches({{}, 1}), "1 CUDA graph launch");
  EXPECT_EQ(describe_launches({{{"copy", 1}}, 2}), "kernel: copy, and 2 CUDA graph launches");
}

#ifdef CUBENCH_TEST_HAS_CUPTI_HEADERS
TEST(LaunchedKernels, HandDeclaredCuptiMatchesItsHeaders) {
  static_assert(sizeof(cupti::CallbackData) == sizeof(CUpti_CallbackData));
  static_assert(offsetof(cupti::CallbackData, symbol_name) ==
                offsetof(CUpti_CallbackData, symbolName));
  static_assert(offsetof(cupti::CallbackData, callback_site) ==
                offsetof(CUpti_CallbackData, callbackSite));
  static_assert(static_cast<int>(cupti::driver_api) ==
                static_cast<int>(CUPTI_CB_DOMAIN_DRIVER_API));
  static_assert(static_cast<int>(cupti::runtime_api) ==
                static_cast<int>(CUPTI_CB_DOMAIN_RUNTIME_API));
  static_assert(static_cast<int>(cupti::api_enter) == static_cast<int>(CUPTI_API_ENTER));
  const cupti::CallbackId driver[] = {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                                      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
                                      CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
                                      CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz};
  const cupti::CallbackId runtime[] = {
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060};
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(cupti::kDriverLaunches[i], driver[i]) << i;
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(cupti::kRuntimeLaunches[i], runtime[i]) << i;
#if CUDART_VERSION >= 12000  // cuLaunchKernelEx came with CUDA 12.0
  EXPECT_EQ(cupti::kDriverLaunches[4], CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx);
  EXPECT_EQ(cupti::kDriverLaunches[5], CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz);
#endif
  EXPECT_EQ(cupti::kDriverGraphLaunches[0], CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch);
  EXPECT_EQ(cupti::kDriverGraphLaunches[1], CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz);
  EXPECT_EQ(cupti::kRuntimeGraphLaunches[0], CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000);
  EXPECT_EQ(cupti::kRuntimeGraphLaunches[1], CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000);
}
#else
TEST(LaunchedKernels, HandDeclaredCuptiMatchesItsHeaders) {
  GTEST_SKIP() << "this toolkit ships no cupti_callbacks.h to hold the declarations against";
}
#endif

}  // namespace
}  // namespace cubench
