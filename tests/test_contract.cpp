// The contract a family signs (fixtures/case/family.h, counters.h, schema.h): names made
// from declared axes, zipped and filtered configurations, counters declared once, and the schema
// text the tools read. All without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "fixtures/case/family.h"
#include "fixtures/detail/case/registry.h"
#include "fixtures/detail/report/schema.h"
#include "fixtures/detail/run/runner.h"
#include "fixtures/support/status.h"
#include "tests/nothing_case.h"

namespace cubench {
namespace {

using testing_support::nothing;

std::vector<std::string> names_of(const std::string& family) {
  std::vector<std::string> out;
  for (const Spec& s : registered_specs())
    if (s.family == family) out.push_back(s.name);
  return out;
}

TEST(Family, NamesAreTheAxesValuesInDeclarationOrderAsNestedLoops) {
  Family("contract_test/product", "")
      .axis(dtype_axis({DType::fp32, DType::bf16}))
      .axis(int_axis("n", {1, 22}))
      .axis(string_axis("cache", {"cold", "hot"}))
      .make(nothing())
      .add();
  EXPECT_EQ(names_of("contract_test/product"),
            (std::vector<std::string>{
                "contract_test/product/fp32/1/cold", "contract_test/product/fp32/1/hot",
                "contract_test/product/fp32/22/cold", "contract_test/product/fp32/22/hot",
                "contract_test/product/bf16/1/cold", "contract_test/product/bf16/1/hot",
                "contract_test/product/bf16/22/cold", "contract_test/product/bf16/22/hot"}));
}

TEST(Family, ZippedAxesStepTogetherAndWhereLeavesOut) {
  Family("contract_test/zip", "")
      .axis(string_axis("t", {"a", "b"}))
      .axis(int_axis("m", {8, 16, 32}))
      .axis(int_axis("k", {1, 2, 3}))
      .zip({"m", "k"})
      .where([](const Point& p) { return !(p.get_string("t") == "b" && p.get_int("k") == 2); })
      .make(nothing())
      .add();
  EXPECT_EQ(names_of("contract_test/zip"),
            (std::vector<std::string>{"contract_test/zip/a/8/1", "contract_test/zip/a/16/2",
                                      "contract_test/zip/a/32/3", "contract_test/zip/b/8/1",
                                      "contract_test/zip/b/32/3"}));
}

TEST(Family, NoAxesIsOneConfigurationNamedAfterTheFamily) {
  Family("contract_test/single", "").make(nothing()).add();
  EXPECT_EQ(names_of("contract_test/single"), std::vector<std::string>{"contract_test/single"});
}

TEST(Family, ZippedAxesOfDifferentLengthsAreRefused) {
  Family f("contract_test/bad_zip", "");
  f.axis(int_axis("m", {1, 2})).axis(int_axis("k", {1})).zip({"m", "k"}).make(nothing());
  EXPECT_THROW(f.add(), Error);
  EXPECT_TRUE(names_of("contract_test/bad_zip").empty());
}

TEST(Family, SpecCarriesTimerSamplingSizeAndVariant) {
  Family("contract_test/spec", "")
      .axis(string_axis("variant", {"x"}))
      .axis(int_axis("n", {1000}))
      .axis(string_axis("cache", {"cold"}))
      .timer(Timer::host_clock)
      .sampling([](const Point& p) {
        Sampling s = Sampling::runs_per_sample(3);
        s.cold_l2 = p.get_bool("cache", "cold");
        return s;
      })
      .size([](const Point& p) { return 2.0 * p.get_int("n"); })
      .make(nothing())
      .add();
  const Spec* spec = nullptr;
  for (const Spec& s : registered_specs())
    if (s.family == "contract_test/spec") spec = &s;
  ASSERT_NE(spec, nullptr);
  EXPECT_FALSE(spec->needs_gpu());
  EXPECT_TRUE(spec->sampling.cold_l2);
  EXPECT_EQ(spec->sampling.batch, 3);
  EXPECT_EQ(spec->size, 2000.0);
  EXPECT_EQ(spec->variant(), "contract_test/spec/x/cold");
  EXPECT_EQ(spec->point.get_int("n"), 1000);
  EXPECT_THROW(spec->point.get_int("m"), Error);
  EXPECT_NE(spec->make(), nullptr);
}

TEST(Family, DeclarationsTheToolsWouldRejectAreRefused) {
  auto refused = [](Family f) {
    f.make(nothing());
    EXPECT_THROW(f.add(), Error);
  };
  refused(Family("contract_test/text_size", "").axis(string_axis("v", {"a"})).size_axis("v"));
  refused(Family("contract_test/no_size", "").axis(int_axis("n", {1})).size_axis("m"));
  refused(Family("contract_test/twice", "").axis(int_axis("n", {1})).axis(int_axis("n", {2})));
  refused(Family("contract_test/slash", "").axis(string_axis("v", {"a/b"})));
  refused(Family("/contract_test", "").axis(int_axis("n", {1})));
  EXPECT_TRUE(names_of("contract_test/text_size").empty());
}

TEST(Family, AnAxisWithoutValuesRegistersNothing) {
  Family("contract_test/empty", "").axis(string_axis("v", {})).make(nothing()).add();
  EXPECT_TRUE(names_of("contract_test/empty").empty());
}

void throws_at_registration() { throw Error("zipped axes differ in length"); }

TEST(Registry, AThrowingRegistrationIsKeptForMainToReport) {
  const std::size_t before = registration_errors().size();
  EXPECT_TRUE(run_registration(throws_at_registration, "throws_at_registration"));
  ASSERT_EQ(registration_errors().size(), before + 1);
  EXPECT_EQ(registration_errors().back(), "throws_at_registration: zipped axes differ in length");
}

TEST(Env, HostOnlyRefusesGpuMemoryInItsOwnWords) {
  auto env = Env::host_only(1);
  EXPECT_FALSE(env->has_gpu());
  try {
    env->alloc(16);
    FAIL() << "allocated without a GPU";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("host-clock case"), std::string::npos) << e.what();
  }
  EXPECT_THROW(env->stream(), Error);
}

TEST(Axis, PowerOfTwoAxisRefusesOtherNumbers) {
  const Axis bytes = pow2_axis("bytes", {8, 1 << 20});
  ASSERT_EQ(bytes.values.size(), 2u);
  EXPECT_EQ(bytes.values[1].name, "1048576");
  EXPECT_EQ(bytes.values[1].number, 1 << 20);
  EXPECT_THROW(pow2_axis("bytes", {8, 12}), Error);
  EXPECT_THROW(pow2_axis("bytes", {0}), Error);
}

// An enum axis hands out the family's own enum, declared once with its names: no family parses
// its names back. Read as a string, or as another enum, it is refused; the schema calls its
// values names ("string"), as the results hold them.
TEST(Axis, AnEnumAxisIsReadAsItsEnumOnly) {
  enum class Pass { fwd, bwd };
  enum class Other { fwd };
  static constexpr EnumName<Pass> kPasses[] = {{Pass::fwd, "fwd"}, {Pass::bwd, "bwd"}};
  auto axes = std::make_shared<const std::vector<Axis>>(
      std::vector<Axis>{enum_axis("pass", kPasses), int_axis("n", {8})});
  const Point p(axes, {1, 0});
  EXPECT_EQ(p.get_enum<Pass>("pass"), Pass::bwd);
  EXPECT_EQ(Point(axes, {0, 0}).get_enum<Pass>("pass"), Pass::fwd);
  EXPECT_EQ(p.names(), (std::vector<std::string>{"bwd", "8"}));
  try {
    p.get_string("pass");
    FAIL() << "read an enum axis as a string";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "axis pass is an enum axis, read as a string axis");
  }
  EXPECT_THROW(p.get_enum<Other>("pass"), Error);
  EXPECT_THROW(p.get_enum<Pass>("n"), Error);
  FamilyInfo f;
  f.name = "toy";
  f.axes = *axes;
  EXPECT_NE(one_line(schema({f}, {})).find("{\"name\": \"pass\", \"kind\": \"string\"}"),
            std::string::npos);
}

// Axes are typed: a point hands out each value as its axis's kind, and refuses to read it as
// another (a dtype is no string, a name no number), naming both kinds.
TEST(Axis, APointReadsEachAxisAsItsOwnKind) {
  auto axes = std::make_shared<const std::vector<Axis>>(
      std::vector<Axis>{dtype_axis({DType::fp32, DType::bf16}), int_axis("n", {-3, 4096}),
                        string_axis("pass", {"fwd", "bwd"})});
  const Point p(axes, {1, 1, 0});
  EXPECT_EQ(p.get_dtype(), DType::bf16);
  EXPECT_EQ(p.get_int("n"), 4096);
  EXPECT_EQ(p.get_string("pass"), "fwd");
  EXPECT_EQ(p.names(), (std::vector<std::string>{"bf16", "4096", "fwd"}));
  EXPECT_EQ((*axes)[0].kind, AxisKind::dtype);
  try {
    p.get_string("dtype");
    FAIL() << "read a dtype axis as a string";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "axis dtype is a dtype axis, read as a string axis");
  }
  EXPECT_THROW(p.get_int("pass"), Error);
  EXPECT_THROW(p.get_dtype("n"), Error);
  EXPECT_THROW(p.get_int("no_such_axis"), Error);
  EXPECT_EQ(Point(axes, {0, 0, 1}).get_int("n"), -3);
}

TEST(Runner, HostClockSamplesAreOneRunEach) {
  Spec host;
  host.timer = Timer::host_clock;
  EXPECT_EQ(choose_batch(host, 1e-6), 1);
  EXPECT_FALSE(host.needs_gpu());
  host.gpu = true;  // Family::needs_gpu(true): a child process that starts CUDA
  EXPECT_TRUE(host.needs_gpu());
  EXPECT_EQ(choose_batch(host, 1e-6), 1);
}

TEST(Counters, DeclaredOnceWithOneMeaning) {
  const CounterDef widgets{"contract_test_widgets", "widget/s", Better::higher, "test"};
  EXPECT_TRUE(declare_counter(widgets));
  EXPECT_TRUE(declare_counter(widgets));  // the same declaration again: no conflict
  ASSERT_NE(find_counter("contract_test_widgets"), nullptr);
  EXPECT_EQ(find_counter("contract_test_widgets")->unit, "widget/s");
  EXPECT_THROW(declare_counter({"contract_test_widgets", "s", Better::lower, "other"}), Error);
  EXPECT_EQ(find_counter("no_such_counter"), nullptr);
  // The harness's own, whatever the order of static initialisation.
  for (const char* name : {"TFLOPS", "GBps", "peak_mem_bytes", "first_call_ms", "sample_cv"})
    EXPECT_NE(find_counter(name), nullptr) << name;
}

TEST(Schema, DescribesFamiliesAxesAndCountersAsJsonText) {
  FamilyInfo f;
  f.name = "toy/\"quoted\"";
  f.description = "back\\slash\nnewline";
  f.axes = {dtype_axis({DType::fp32}), pow2_axis("bytes", {8})};
  f.counters = {"widgets"};
  f.main_counter = "widgets";
  f.size_axis = "bytes";
  f.library = "nccl";
  f.timer = Timer::host_clock;
  const std::string json =
      one_line(schema({f}, {{"widgets", "widget/s", Better::higher, "how many"}}));
  EXPECT_EQ(json,
            "{\"version\": 3, \"counters\": {\"widgets\": {\"unit\": \"widget/s\", \"better\": "
            "\"higher\", \"description\": \"how many\"}}, \"families\": {\"toy/\\\"quoted\\\"\": "
            "{\"description\": \"back\\\\slash\\nnewline\", \"axes\": [{\"name\": \"dtype\", "
            "\"kind\": \"dtype\"}, {\"name\": \"bytes\", \"kind\": \"pow2\"}], "
            "\"main_counter\": \"widgets\", \"size_axis\": \"bytes\", \"library\": \"nccl\", "
            "\"timer\": \"host_clock\", \"counters\": [\"widgets\"]}}}");
}

// A family's library is read from the name of the file that registers it, as the build reads it
// to leave the file out (cmake/OptionalSources.cmake), so a comparison can say why it is missing.
TEST(Schema, FamilyLibraryComesFromItsSourceName) {
  EXPECT_EQ(library_of_source("/src/benchmarks/allreduce.nccl.cpp"), "nccl");
  EXPECT_EQ(library_of_source("benchmarks/resnet50_train.torch.cpp"), "torch");
  EXPECT_EQ(library_of_source("/src/benchmarks/gemm.cpp"), "");
  EXPECT_EQ(library_of_source("fixtures/detail/process/world.no_mpi.cpp"), "");  // a stand-in
  EXPECT_EQ(library_of_source("l2_evict.cu"), "");
  EXPECT_EQ(library_of_source(".hidden"), "");
  EXPECT_EQ(library_of_source(""), "");
  // The constructor reads its caller's file: this one needs nothing; one named so needs NCCL.
  Family("contract_test/here", "").make(nothing()).add();
  Family("contract_test/there", "", "benchmarks/there.nccl.cpp")
      .needs([](const Point&) { return GpuNeeds{}; })  // a suite file's GPU family must say
      .make(nothing())
      .add();
  std::map<std::string, std::string> library;
  for (const FamilyInfo& info : registered_families()) library[info.name] = info.library;
  EXPECT_EQ(library.at("contract_test/here"), "");
  EXPECT_EQ(library.at("contract_test/there"), "nccl");
}

}  // namespace
}  // namespace cubench
