// startup/nccl/comm_init/<loading>: what a job's first NCCL communicator costs, a fresh process
// per sample (child_stage_case.h): ncclCommInitAll over this GPU alone, the context already made,
// timed inside the child. Built only where NCCL was found. <loading>: CUDA_MODULE_LOADING in the
// child, as for startup/cuda.
// Check: once per configuration (and for the planted fault) the child all-reduces a buffer of
// known integers over its one-GPU communicator into a zeroed buffer, whose sum is the input
// itself, and counts the elements that differ.
#include <vector>

#include "fixtures/cubench_nccl.h"

namespace cubench {
namespace {

constexpr const char* kChildEntry = "startup/nccl";
constexpr int kCount = 1 << 16;

double allreduce_mismatches(ncclComm_t comm, bool fault) {
  std::vector<float> h(kCount);
  for (int i = 0; i < kCount; ++i) h[i] = static_cast<float>(i % 1000);
  // Out of place into zeros: a one-rank all-reduce that did nothing would leave them.
  float *in = nullptr, *out_d = nullptr;
  CUBENCH_CUDA(cudaMalloc(&in, sizeof(float) * kCount));
  CUBENCH_CUDA(cudaMalloc(&out_d, sizeof(float) * kCount));
  CUBENCH_CUDA(cudaMemcpy(in, h.data(), sizeof(float) * kCount, cudaMemcpyHostToDevice));
  CUBENCH_CUDA(cudaMemset(out_d, 0, sizeof(float) * kCount));
  CUBENCH_NCCL(ncclAllReduce(in, out_d, kCount, ncclFloat, ncclSum, comm, nullptr));
  CUBENCH_CUDA(cudaDeviceSynchronize());
  std::vector<float> out(kCount);
  CUBENCH_CUDA(cudaMemcpy(out.data(), out_d, sizeof(float) * kCount, cudaMemcpyDeviceToHost));
  cudaFree(in);
  cudaFree(out_d);
  if (fault) out[kCount / 2] += 1;
  double wrong = 0;
  for (int i = 0; i < kCount; ++i) wrong += out[i] != h[i];
  return wrong;
}

int startup_nccl_child(const std::vector<std::string>& args, double main_entered) {
  const ChildStageArgs a = ChildStageArgs::parse(args);
  if (a.stage != "comm_init")
    return child_fail("startup/nccl child: unknown stage '" + a.stage + "'");
  CUBENCH_CUDA(cudaSetDevice(a.device));
  CUBENCH_CUDA(cudaFree(nullptr));
  ncclComm_t comm = nullptr;
  int device = a.device;
  const double t0 = monotonic_seconds();
  CUBENCH_NCCL(ncclCommInitAll(&comm, 1, &device));
  const double stage_seconds = monotonic_seconds() - t0;
  std::optional<double> wrong;
  if (a.check) wrong = allreduce_mismatches(comm, a.fault);
  ncclCommDestroy(comm);
  return report_child_stage(main_entered, stage_seconds, wrong);
}
CUBENCH_CHILD_ENTRY(kChildEntry, startup_nccl_child);

void register_startup_nccl() {
  child_stage_family("startup/nccl",
                     "start-up costs, a fresh process per sample: the first NCCL communicator "
                     "(this GPU alone), under each CUDA_MODULE_LOADING",
                     kChildEntry, {"comm_init"})
      .default_suite([](const Point& p) { return p.get_string("loading") == "default"; })
      .add();
}
CUBENCH_REGISTER(register_startup_nccl);

}  // namespace
}  // namespace cubench
