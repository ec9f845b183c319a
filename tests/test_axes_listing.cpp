// --cubench_list=axes (run/axes_listing.h): each configuration's name, family and axis values as
// the family declares them, one JSON object a line, numbers as numbers. No GPU needed.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "fixtures/detail/run/axes_listing.h"

namespace cubench {
namespace {

enum class Pass { fwd, fwd_bwd };
constexpr EnumName<Pass> kPasses[] = {{Pass::fwd, "fwd"}, {Pass::fwd_bwd, "fwd_bwd"}};

Spec spec_at(const std::string& family, std::shared_ptr<const std::vector<Axis>> axes,
             std::vector<std::size_t> chosen, bool in_default = true) {
  Spec s;
  if (!in_default) s.in_default_suite = [](const RunSettings&) { return false; };
  s.family = family;
  s.point = Point(std::move(axes), std::move(chosen));
  s.name = family;
  for (const std::string& v : s.point.names()) s.name += "/" + v;
  return s;
}

TEST(AxesListing, SaysEachConfigurationsAxesAsDeclared) {
  auto gemm = std::make_shared<const std::vector<Axis>>(std::vector<Axis>{
      dtype_axis({DType::bf16, DType::fp32}), int_axis("m", {1024, 4096}), pow2_axis("n", {2048})});
  auto attention = std::make_shared<const std::vector<Axis>>(
      std::vector<Axis>{enum_axis("pass", kPasses), string_axis("mask", {"causal", "a\"b"})});
  const std::vector<Spec> specs = {spec_at("gemm", gemm, {0, 1, 0}),
                                   spec_at("torch/attention", attention, {1, 1}, false),
                                   spec_at("launch/empty", nullptr, {})};
  const std::vector<const Spec*> suite = every_spec(specs);
  EXPECT_EQ(axes_listing(suite, RunSettings{}),
            "{\"name\": \"gemm/bf16/4096/2048\", \"family\": \"gemm\", \"default_suite\": true, "
            "\"axes\": {\"dtype\": \"bf16\", \"m\": 4096, \"n\": 2048}}\n"
            "{\"name\": \"torch/attention/fwd_bwd/a\\\"b\", \"family\": \"torch/attention\", "
            "\"default_suite\": false, \"axes\": {\"pass\": \"fwd_bwd\", \"mask\": \"a\\\"b\"}}\n"
            "{\"name\": \"launch/empty\", \"family\": \"launch/empty\", \"default_suite\": true, "
            "\"axes\": {}}\n");
  EXPECT_EQ(axes_listing({}, RunSettings{}), "");
}

}  // namespace
}  // namespace cubench
