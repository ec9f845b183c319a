// The multi-process plumbing without MPI or a GPU: a fake world of threads stands in for the
// ranks, to test the NCCL-id bootstrap, the agreed sample time and the quiet ranks' arguments.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "fixtures/process/world.h"

namespace cubench {
namespace {

// Ranks as threads: each collective is a rendezvous on shared state.
struct Room {
  explicit Room(int n) : size(n) {}
  int size;
  std::mutex m;
  std::condition_variable cv;
  int arrived = 0, generation = 0;
  std::vector<char> bytes;
  double max = 0;

  // Everyone calls it; `contribute` runs under the lock, `collect` after the last arrival.
  template <typename Contribute, typename Collect>
  void rendezvous(Contribute contribute, Collect collect) {
    std::unique_lock<std::mutex> lock(m);
    int gen = generation;
    contribute();
    if (++arrived == size) {
      arrived = 0;
      ++generation;
      cv.notify_all();
    } else {
      cv.wait(lock, [&] { return generation != gen; });
    }
    collect();
    // A second barrier so nobody resets shared state before everyone has read it.
    int gen2 = generation;
    if (++arrived == size) {
      arrived = 0;
      ++generation;
      bytes.clear();
      max = 0;
      cv.notify_all();
    } else {
      cv.wait(lock, [&] { return generation != gen2; });
    }
  }
};

class FakeWorld final : public World {
 public:
  FakeWorld(Room& room, int rank) : room_(room), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return room_.size; }
  int local_rank() const override { return rank_; }
  void broadcast(void* data, std::size_t bytes, int root) override {
    room_.rendezvous(
        [&] {
          if (rank_ == root)
            room_.bytes.assign(static_cast<char*>(data), static_cast<char*>(data) + bytes);
        },
        [&] { std::memcpy(data, room_.bytes.data(), bytes); });
  }
  double max(double value) override {
    double out = 0;
    room_.rendezvous([&] { room_.max = std::max(room_.max, value); }, [&] { out = room_.max; });
    return out;
  }

 private:
  Room& room_;
  int rank_;
};

template <typename Body>
void run_ranks(int n, Body body) {
  Room room(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&room, r, &body] {
      FakeWorld w(room, r);
      body(w);
    });
  for (auto& t : threads) t.join();
}

TEST(World, RootMakesTheIdAndEveryRankGetsIt) {
  constexpr int kRanks = 4;
  std::vector<std::array<char, 128>> got(kRanks);
  std::vector<int> made(kRanks, 0);
  run_ranks(kRanks, [&](World& w) {
    std::array<char, 128> id{};
    share_from_root(w, id.data(), id.size(), [&](void* out) {
      ++made[w.rank()];
      std::memset(out, 0, 128);
      std::strcpy(static_cast<char*>(out), "unique id from rank 0");
    });
    got[w.rank()] = id;
  });
  EXPECT_EQ(made, (std::vector<int>{1, 0, 0, 0}));  // only the root makes one
  for (const auto& id : got) EXPECT_STREQ(id.data(), "unique id from rank 0");
}

TEST(World, EveryRankTakesTheSlowestSampleTime) {
  constexpr int kRanks = 3;
  std::vector<double> seen(kRanks);
  run_ranks(kRanks, [&](World& w) { seen[w.rank()] = w.max(1e-3 * (w.rank() + 1)); });
  EXPECT_EQ(seen, (std::vector<double>{3e-3, 3e-3, 3e-3}));
}

TEST(World, ASingleProcessIsAWorldOfOne) {
  EXPECT_EQ(world().size(), 1);
  EXPECT_EQ(world().rank(), 0);
  EXPECT_DOUBLE_EQ(world().max(2.5), 2.5);
  int value = 0;
  share_from_root(world(), &value, sizeof value, [](void* out) { *static_cast<int*>(out) = 42; });
  EXPECT_EQ(value, 42);
}

}  // namespace
}  // namespace cubench
