// A family that exists only for tests/CMakeLists.txt's contract.* cases: two axes (a string and
// an int) and a counter no tool has seen, on the host clock so it runs on CI's GPU-less machine.
// It is linked into its own binary (cubench_throwaway) with the harness and main, never into
// cubench. Its point: this file is the whole of a new family — the tools table and chart it from
// the schema the harness writes, with no edit anywhere else.
#include <cmath>
#include <string>

#include "fixtures/cubench.h"

namespace cubench {
namespace {

// Sums i over [0, n) the slow way, `spin` times: work a host clock can time.
class Widgets final : public BenchmarkCase {
 public:
  Widgets(bool square, std::int64_t n) : square_(square), n_(n) {}
  void setup(Env&) override {}
  void run(Env&) override {
    volatile double sum = 0;
    for (std::int64_t i = 0; i < n_; ++i) sum = sum + (square_ ? double(i) * i : double(i));
    sum_ = sum + fault_;
  }
  void validate(Env&) override {
    const double n = double(n_);
    const double expected = square_ ? (n - 1) * n * (2 * n - 1) / 6 : n * (n - 1) / 2;
    if (std::fabs(sum_ - expected) > 1e-9 * expected)
      throw ValidationError("widgets: sum " + std::to_string(sum_) + " is not " +
                            std::to_string(expected));
    fault_ = 0;
  }
  std::string plant_fault(Env&) override {
    fault_ = 1;
    sum_ += 1;
    return "the sum one too large";
  }
  Work work() const override { return {}; }
  std::map<std::string, double> counters(double seconds) const override {
    return {{"widgets_per_s", double(n_) / seconds}};
  }

 private:
  bool square_;
  std::int64_t n_;
  double sum_ = 0, fault_ = 0;
};

void register_widgets() {
  Family("throwaway/widgets", "a test-only family: sums of n numbers on the host")
      .axis(string_axis("shape", {"flat", "square"}))
      .axis(int_axis("n", {100000, 400000, 1600000}))
      .counter({"widgets_per_s", "widget/s", Better::higher, "numbers summed per second"})
      .main_counter("widgets_per_s")
      .size_axis("n")
      .default_suite([](const Point& p) { return p.get_int("n") != 400000; })
      .timer(Timer::host_clock)
      .size([](const Point& p) { return double(p.get_int("n")); })
      .make([](const Point& p) {
        return std::make_unique<Widgets>(p.get_bool("shape", "square"), p.get_int("n"));
      })
      .add();
}
CUBENCH_REGISTER(register_widgets);

}  // namespace
}  // namespace cubench
