// allreduce/<dtype>/<bytes>/<inplace|outofplace>: ncclAllReduce (sum) from one process driving
// every visible GPU (ncclCommInitAll), or the first --cubench_gpus=N of them, the run's device
// first; under mpirun, one GPU per rank (ncclCommInitRank, the unique id made by rank 0 and
// shared through MPI). Sizes 8 B to 512 MiB by factors of 4, plus the 1 GiB headline.
// Timing: the other GPUs' streams wait on the timed stream before the collective and the timed
// stream waits on theirs after it, so the runner's events bracket the whole collective.
// Figures as nccl-tests defines them: algbw = bytes / time, busbw = algbw * 2(n-1)/n (not
// meaningful on one GPU: nothing crosses a bus, and the label says so).
// Check: each rank's input is a counter-based random fill (seed + rank); a device kernel
// regenerates all inputs, sums them in double and bounds |out - sum| / sum|x| by the dtype's
// tolerance on every element of every rank.
#include <nccl.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "fixtures/cubench_nccl.h"
#include "kernels/fill.h"
#include "kernels/reference.h"

namespace cubench {
namespace {

// The check's name (ValidationError::check).
constexpr const char* kSumCheck = "every rank's result against the sum";

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::fp32:
      return ncclFloat32;
    case DType::fp16:
      return ncclFloat16;
    case DType::bf16:
      return ncclBfloat16;
    default:
      throw Error("allreduce: no NCCL type for dtype " + std::string(dtype_name(t)));
  }
}

// The communicators of this process for the whole run: creating them costs far more than most
// collectives, so they outlive benchmark configurations. Deliberately never destroyed: tearing
// NCCL down during static destruction, after the CUDA runtime has begun to, can hang.
// Single process: one communicator per local GPU, global ranks 0..n-1. Under MPI: one GPU per
// process, global rank = the MPI rank.
class NcclWorld {
 public:
  // gpus: --cubench_gpus (0: all visible), the run's for as long as the communicators live.
  static NcclWorld& get(int primary, int gpus) {
    static NcclWorld* world = new NcclWorld(primary, gpus);
    return *world;
  }
  int local_count() const { return static_cast<int>(devices_.size()); }
  int ranks() const { return ranks_; }
  int first_rank() const { return first_rank_; }
  int device(int local) const { return devices_[local]; }
  ncclComm_t comm(int local) const { return comms_[local]; }

 private:
  NcclWorld(int primary, int gpus) {
    World& w = world();
    devices_.push_back(primary);
    if (w.size() > 1) {
      ncclUniqueId id;
      share_from_root(w, &id, sizeof id, [](void* out) {
        CUBENCH_NCCL(ncclGetUniqueId(static_cast<ncclUniqueId*>(out)));
      });
      comms_.resize(1);
      ranks_ = w.size();
      first_rank_ = w.rank();
      CUBENCH_CUDA(cudaSetDevice(primary));
      CUBENCH_NCCL(ncclCommInitRank(&comms_[0], ranks_, id, first_rank_));
      return;
    }
    int visible = 0;
    CUBENCH_CUDA(cudaGetDeviceCount(&visible));
    int wanted = gpus == 0 ? visible : gpus;
    if (wanted > visible)
      throw Error("--cubench_gpus=" + std::to_string(wanted) + " but only " +
                  std::to_string(visible) + " GPU(s) are visible");
    for (int d = 0; d < visible && static_cast<int>(devices_.size()) < wanted; ++d)
      if (d != primary) devices_.push_back(d);
    comms_.resize(devices_.size());
    ranks_ = local_count();
    CUBENCH_NCCL(ncclCommInitAll(comms_.data(), ranks_, devices_.data()));
  }
  std::vector<int> devices_;
  std::vector<ncclComm_t> comms_;
  int ranks_ = 1, first_rank_ = 0;
};

class AllReduce final : public BenchmarkCase {
 public:
  AllReduce(DType t, std::size_t bytes, bool in_place)
      : t_(t), bytes_(bytes), in_place_(in_place) {}

  ~AllReduce() override {
    for (cudaEvent_t e : done_)
      if (e) cudaEventDestroy(e);
    if (go_) cudaEventDestroy(go_);
  }

  void setup(Env& env) override {
    world_ = &NcclWorld::get(env.device(), env.settings().gpus);
    count_ = bytes_ / dtype_bytes(t_);
    // Every rank must regenerate every rank's input for the check: one seed for the run.
    std::uint64_t seed = env.fresh_seed();
    share_from_root(world(), &seed, sizeof seed,
                    [&](void* out) { *static_cast<std::uint64_t*>(out) = seed; });
    seed_ = seed;
    CUBENCH_CUDA(cudaEventCreateWithFlags(&go_, cudaEventDisableTiming));
    for (int r = 0; r < world_->local_count(); ++r) {
      int dev = world_->device(r);
      send_.push_back(env.alloc_on(dev, bytes_));
      recv_.push_back(in_place_ ? DeviceBuffer() : env.alloc_on(dev, bytes_));
      CUBENCH_CUDA(cudaSetDevice(dev));
      cudaEvent_t done;
      CUBENCH_CUDA(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
      done_.push_back(done);
      fill_uniform(t_, send_[r].get(), count_, seed_ + world_->first_rank() + r, -1.f, 1.f,
                   env.stream_on(dev));
      CUBENCH_CUDA_LAUNCHED();
    }
    CUBENCH_CUDA(cudaSetDevice(env.device()));
    env.synchronize_all();
  }

  // Out of place: the results NaN. In place the result overwrites the input, which cannot be
  // poisoned: it is drawn again (a run before it summed it into itself).
  void poison_result(Env& env) override {
    for (int r = 0; r < world_->local_count(); ++r) {
      const int dev = world_->device(r);
      CUBENCH_CUDA(cudaSetDevice(dev));
      if (in_place_) {
        fill_uniform(t_, send_[r].get(), count_, seed_ + world_->first_rank() + r, -1.f, 1.f,
                     env.stream_on(dev));
        CUBENCH_CUDA_LAUNCHED();
      } else {
        CUBENCH_CUDA(cudaMemsetAsync(recv_[r].get(), 0xff, bytes_, env.stream_on(dev)));
      }
    }
    CUBENCH_CUDA(cudaSetDevice(env.device()));
    env.synchronize_all();
  }
  std::string why_unwritten_result_passes() const override {
    return in_place_ && world_ && world_->ranks() == 1
               ? "in place on one GPU the sum is the input itself: an all-reduce that wrote "
                 "nothing cannot be told from one that did"
               : "";
  }

  void run(Env& env) override {
    cudaStream_t timed = env.stream();
    CUBENCH_CUDA(cudaEventRecord(go_, timed));
    for (int r = 1; r < world_->local_count(); ++r)
      CUBENCH_CUDA(cudaStreamWaitEvent(env.stream_on(world_->device(r)), go_, 0));
    CUBENCH_NCCL(ncclGroupStart());
    for (int r = 0; r < world_->local_count(); ++r) {
      void* out = in_place_ ? send_[r].get() : recv_[r].get();
      CUBENCH_NCCL(ncclAllReduce(send_[r].get(), out, count_, nccl_type(t_), reduction_,
                                 world_->comm(r), env.stream_on(world_->device(r))));
    }
    CUBENCH_NCCL(ncclGroupEnd());
    for (int r = 1; r < world_->local_count(); ++r) {
      cudaStream_t s = env.stream_on(world_->device(r));
      CUBENCH_CUDA(cudaEventRecord(done_[r], s));
      CUBENCH_CUDA(cudaStreamWaitEvent(timed, done_[r], 0));
    }
  }

  void validate(Env& env) override {
    env.synchronize_all();
    double worst = 0;
    for (int r = 0; r < world_->local_count(); ++r) {
      int dev = world_->device(r);
      cudaStream_t s = env.stream_on(dev);
      CUBENCH_CUDA(cudaSetDevice(dev));
      DeviceBuffer err = env.alloc_on(dev, sizeof(double));
      CUBENCH_CUDA(cudaMemsetAsync(err.get(), 0, sizeof(double), s));
      const void* out = in_place_ ? send_[r].get() : recv_[r].get();
      allreduce_max_error(t_, out, count_, seed_, world_->ranks(), -1.f, 1.f, err.as<double>(), s);
      CUBENCH_CUDA_LAUNCHED();
      double e = 0;
      CUBENCH_CUDA(cudaMemcpyAsync(&e, err.get(), sizeof e, cudaMemcpyDeviceToHost, s));
      CUBENCH_CUDA(cudaStreamSynchronize(s));
      worst = std::max(worst, e);
    }
    CUBENCH_CUDA(cudaSetDevice(env.device()));
    worst = world().max(worst);  // every rank reaches the same verdict, or the others would hang
    if (!(worst <= dtype_tolerance(t_)))
      throw ValidationError(
          "allreduce " + std::string(dtype_name(t_)) + " " + std::to_string(bytes_) + " B over " +
              std::to_string(world_->ranks()) + " GPU(s): worst |out - sum| / sum|x| = " +
              std::to_string(worst) + " exceeds " + std::to_string(dtype_tolerance(t_)),
          kSumCheck);
  }

  // In turn: one element of the first local GPU's result off by 0.5 (the inputs are in [-1, 1]);
  // with more than one GPU (where the two differ), a run that averages instead of summing.
  int fault_count() const override { return world_ && world_->ranks() > 1 ? 2 : 1; }
  std::string plant_fault(Env& env) override {
    if (planted_++ % fault_count() == 1) {
      poison_result(env);  // the inputs as they were drawn (in place), the output NaN
      reduction_ = ncclAvg;
      run(env);
      env.synchronize_all();
      reduction_ = ncclSum;
      return "the all-reduce averaging instead of summing (ncclAvg)";
    }
    void* out = in_place_ ? send_[0].get() : recv_[0].get();
    CUBENCH_CUDA(cudaSetDevice(world_->device(0)));
    perturb_element(t_, out, count_ / 2, 1, 0.5, env.stream_on(world_->device(0)));
    CUBENCH_CUDA_LAUNCHED();
    CUBENCH_CUDA(cudaSetDevice(env.device()));
    return "element " + std::to_string(count_ / 2) + " of GPU " +
           std::to_string(world_->device(0)) + "'s result off by 0.5";
  }
  std::string fault_check() const override { return kSumCheck; }

  Work work() const override { return {}; }  // bandwidths are nccl-tests' own, below

  std::map<std::string, double> counters(double seconds) const override {
    double algbw = bytes_ / seconds;
    return {{"algbw_GBps", algbw / 1e9},
            {"busbw_GBps", algbw * model::allreduce_bus_factor(world_->ranks()) / 1e9},
            {"gpus", static_cast<double>(world_->ranks())}};
  }

  std::string label() const override {
    std::string l = std::to_string(world_->ranks()) + " GPU(s)";
    if (world().size() > 1) l += " in " + std::to_string(world().size()) + " processes";
    if (world_->ranks() == 1) l += "; 1 GPU: busbw is not meaningful (nothing crosses a bus)";
    if (world_->ranks() == 1 && in_place_)
      l += "; in place on 1 GPU NCCL moves nothing: the time is its call overhead, algbw means "
           "nothing";
    return l;
  }

 private:
  DType t_;
  std::size_t bytes_;
  bool in_place_;
  ncclRedOp_t reduction_ = ncclSum;  // ncclAvg only for the planted fault
  int planted_ = 0;
  std::size_t count_ = 0;
  std::uint64_t seed_ = 0;
  NcclWorld* world_ = nullptr;
  std::vector<DeviceBuffer> send_, recv_;
  std::vector<cudaEvent_t> done_;
  cudaEvent_t go_ = nullptr;
};

// The GPUs a collective of this run spans: one per rank under MPI, else --cubench_gpus (`gpus`, 0:
// all visible). Asked when the run is planned; 1 where no GPU can be counted (listing without a
// driver).
int collective_gpus(int gpus) {
  if (world().size() > 1) return world().size();
  int visible = 0;
  if (cudaGetDeviceCount(&visible) != cudaSuccess) {
    cudaGetLastError();  // clear it: this was a question, not a failure
    return 1;
  }
  return gpus == 0 ? visible : std::min(gpus, visible);
}

void register_allreduce() {
  std::vector<std::int64_t> sizes;
  for (std::int64_t b = 8; b <= (std::int64_t{512} << 20); b *= 4) sizes.push_back(b);
  sizes.push_back(std::int64_t{1} << 30);
  Family("allreduce", "ncclAllReduce (sum) over the run's GPUs, as nccl-tests times it")
      .axis(dtype_axis({DType::fp32, DType::fp16, DType::bf16}))
      .axis(pow2_axis("bytes", sizes))
      .axis(string_axis("placement", {"outofplace", "inplace"}))
      .counter({"algbw_GBps", "GB/s", Better::higher, "bytes / time (nccl-tests' algbw)"})
      .counter({"busbw_GBps", "GB/s", Better::higher,
                "algbw * 2(n-1)/n (nccl-tests' busbw); 0 on one GPU"})
      .counter({"gpus", "", Better::none, "GPUs taking part"})
      .main_counter("busbw_GBps")
      .size_axis("bytes")
      // Default run on one GPU, where NCCL moves no data between GPUs: its latency (8 B) and its
      // copy (1 GiB), bf16 out of place. Across GPUs, the whole sweep.
      .default_suite([](const Point& p, const RunSettings& run) {
        if (collective_gpus(run.gpus) > 1) return true;
        const std::int64_t bytes = p.get_int("bytes");
        return p.get_dtype() == DType::bf16 && !p.get_bool("placement", "inplace") &&
               (bytes == 8 || bytes == std::int64_t{1} << 30);
      })
      .size([](const Point& p) { return double(p.get_int("bytes")); })
      // Per GPU: the send and receive buffers (one in place), and NCCL's own buffers, about
      // 32 MiB a communicator at its defaults (what the H200's pool-less peak showed beside 8 B).
      .needs([](const Point& p) {
        const std::uint64_t bytes = p.get_int("bytes");
        GpuNeeds needs;
        needs.device_bytes = bytes * (p.get_bool("placement", "inplace") ? 1 : 2) + 32 * kMiB;
        return needs;
      })
      .make([](const Point& p) {
        return std::make_unique<AllReduce>(p.get_dtype(), std::size_t(p.get_int("bytes")),
                                           p.get_bool("placement", "inplace"));
      })
      .add();
}
CUBENCH_REGISTER(register_allreduce);

}  // namespace
}  // namespace cubench
