// The datasheet table (fixtures/detail/device/datasheet.cpp): which product each name the driver
// reports finds, the names it must not confuse, what an entry holds, and the counter and context
// field it feeds. CPU only.
#include <gtest/gtest.h>

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "fixtures/case/benchmark_case.h"
#include "fixtures/case/counters.h"
#include "fixtures/detail/device/datasheet.h"
#include "fixtures/detail/report/row_counters.h"
#include "kernels/dtype.h"

namespace cubench {
namespace {

constexpr std::size_t kGiB = std::size_t{1} << 30;

struct Reported {
  const char* name;  // as the driver reports it
  int sm_count;
  std::size_t memory;  // bytes, as cudaDeviceProp::totalGlobalMem has it (a little under the label)
  const char* product;
};

// Every driver name the table knows, with the SM count and memory the part has.
const Reported kKnown[] = {
    {"NVIDIA A100-SXM4-40GB", 108, 40 * kGiB - 1000 * 1000 * 1000, "A100 SXM4 40GB"},
    {"NVIDIA A100-SXM4-80GB", 108, 79 * kGiB, "A100 SXM4 80GB"},
    {"NVIDIA A100-SXM-80GB", 108, 79 * kGiB, "A100 SXM4 80GB"},
    {"NVIDIA A100-PCIE-40GB", 108, 39 * kGiB, "A100 PCIe 40GB"},
    {"NVIDIA A100 80GB PCIe", 108, 79 * kGiB, "A100 PCIe 80GB"},
    {"NVIDIA H100 80GB HBM3", 132, 79 * kGiB, "H100 SXM"},
    {"NVIDIA H100 PCIe", 114, 79 * kGiB, "H100 PCIe"},
    {"NVIDIA H100 NVL", 132, 93 * kGiB, "H100 NVL"},
    {"NVIDIA H200", 132, 139 * kGiB, "H200 SXM"},
    {"NVIDIA H200 NVL", 132, 139 * kGiB, "H200 NVL"},
    {"NVIDIA GH200 480GB", 132, 95 * kGiB, "GH200 96GB HBM3"},
    {"NVIDIA GH200 144G HBM3e", 132, 142 * kGiB, "GH200 144GB HBM3e"},
    {"NVIDIA B200", 148, 178 * kGiB, "B200"},
    {"NVIDIA A10", 72, 22 * kGiB, "A10"},
    {"NVIDIA A40", 84, 44 * kGiB, "A40"},
    {"NVIDIA L4", 58, 22 * kGiB, "L4"},
    {"NVIDIA L40", 142, 44 * kGiB, "L40"},
    {"NVIDIA L40S", 142, 44 * kGiB, "L40S"},
    {"NVIDIA GeForce RTX 3090", 82, 24 * kGiB, "RTX 3090"},
    {"NVIDIA GeForce RTX 4090", 128, 24 * kGiB, "RTX 4090"},
    {"NVIDIA GeForce RTX 5090", 170, 31 * kGiB, "RTX 5090"},
    {"NVIDIA RTX 6000 Ada Generation", 142, 47 * kGiB, "RTX 6000 Ada"},
    {"Tesla T4", 40, 15 * kGiB, "T4"},
    {"Tesla V100-SXM2-16GB", 80, 16 * kGiB, "V100 SXM2"},
    {"Tesla V100-SXM2-32GB", 80, 32 * kGiB, "V100 SXM2"},
    {"Tesla V100-PCIE-32GB", 80, 32 * kGiB, "V100 PCIe"},
    {"Tesla V100S-PCIE-32GB", 80, 32 * kGiB, "V100S PCIe"},
};

TEST(DatasheetPeaks, EveryDriverNameFindsItsProduct) {
  for (const Reported& r : kKnown) {
    SCOPED_TRACE(r.name);
    auto p = datasheet_peaks(r.name, r.sm_count, r.memory);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->product, r.product);
  }
}

TEST(DatasheetPeaks, ExactNamesNeedNeitherSmCountNorMemory) {
  for (const Reported& r : kKnown) {
    SCOPED_TRACE(r.name);
    auto p = datasheet_peaks(r.name, 0, 0);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->product, r.product);
  }
}

TEST(DatasheetPeaks, NamesThatContainAnotherAreNotConfused) {
  EXPECT_EQ(datasheet_peaks("NVIDIA L40", 142)->product, "L40");
  EXPECT_EQ(datasheet_peaks("NVIDIA L40S", 142)->product, "L40S");
  EXPECT_EQ(datasheet_peaks("NVIDIA L4", 58)->product, "L4");
  EXPECT_EQ(datasheet_peaks("NVIDIA A10", 72)->product, "A10");
  EXPECT_EQ(datasheet_peaks("NVIDIA A100-PCIE-40GB", 108)->product, "A100 PCIe 40GB");
  EXPECT_EQ(datasheet_peaks("NVIDIA H200", 132)->product, "H200 SXM");
  EXPECT_EQ(datasheet_peaks("NVIDIA H200 NVL", 132)->product, "H200 NVL");
  EXPECT_EQ(datasheet_peaks("NVIDIA GH200 480GB", 132)->product, "GH200 96GB HBM3");
  EXPECT_EQ(datasheet_peaks("Tesla V100-PCIE-32GB", 80)->product, "V100 PCIe");
  EXPECT_EQ(datasheet_peaks("Tesla V100S-PCIE-32GB", 80)->product, "V100S PCIe");
  // Neither an H100 rule (its SM count says SXM) nor an H200 one may take a GH200.
  EXPECT_EQ(datasheet_peaks("NVIDIA GH200 999GB", 132, 95 * kGiB)->product, "GH200 96GB HBM3");
}

TEST(DatasheetPeaks, CaseAndSurroundingSpaceDoNotMatter) {
  EXPECT_EQ(datasheet_peaks("NVIDIA H100 PCIE", 114)->product, "H100 PCIe");
  EXPECT_EQ(datasheet_peaks("  nvidia l40s ", 142)->product, "L40S");
}

TEST(DatasheetPeaks, UnknownNamesFindNothing) {
  EXPECT_FALSE(datasheet_peaks("NVIDIA Quadro P1000", 4, 4 * kGiB));
  EXPECT_FALSE(datasheet_peaks("NVIDIA GeForce RTX 3090 Ti", 84, 24 * kGiB));
  EXPECT_FALSE(datasheet_peaks("NVIDIA GeForce RTX 4090 D", 114, 24 * kGiB));
  EXPECT_FALSE(datasheet_peaks("NVIDIA L40G", 142, 44 * kGiB));
  EXPECT_FALSE(datasheet_peaks("NVIDIA A100X", 108, 79 * kGiB));
  EXPECT_FALSE(datasheet_peaks("NVIDIA A10G", 80, 22 * kGiB));
  EXPECT_FALSE(datasheet_peaks("NVIDIA H800", 132, 79 * kGiB));
  EXPECT_FALSE(datasheet_peaks("NVIDIA GB200", 152, 184 * kGiB));
  EXPECT_FALSE(datasheet_peaks("", 0, 0));
  // A MIG slice has a part of the GPU's SMs and memory: the whole GPU's peaks would be wrong.
  EXPECT_FALSE(datasheet_peaks("NVIDIA A100-SXM4-40GB MIG 1g.5gb", 14, 4 * kGiB));
  EXPECT_FALSE(datasheet_peaks("NVIDIA H100 80GB HBM3 MIG 3g.40gb", 60, 40 * kGiB));
}

TEST(DatasheetPeaks, SmCountOrMemoryTellUnnamedVariantsApartAndOnlyWhenKnown) {
  EXPECT_EQ(datasheet_peaks("NVIDIA H100", 132)->product, "H100 SXM");
  EXPECT_EQ(datasheet_peaks("NVIDIA H100", 114)->product, "H100 PCIe");
  EXPECT_FALSE(datasheet_peaks("NVIDIA H100", 0));
  EXPECT_FALSE(datasheet_peaks("NVIDIA H100", 66));
  EXPECT_EQ(datasheet_peaks("NVIDIA GH200", 132, 95 * kGiB)->product, "GH200 96GB HBM3");
  EXPECT_EQ(datasheet_peaks("NVIDIA GH200", 132, 142 * kGiB)->product, "GH200 144GB HBM3e");
  EXPECT_FALSE(datasheet_peaks("NVIDIA GH200", 132, 0));
  EXPECT_EQ(datasheet_peaks("NVIDIA A100 PCIe 40GB", 108, 39 * kGiB)->product, "A100 PCIe 40GB");
  EXPECT_EQ(datasheet_peaks("NVIDIA A100-PCIE-80GB", 108, 79 * kGiB)->product, "A100 PCIe 80GB");
  EXPECT_EQ(datasheet_peaks("NVIDIA A100-SXM4-80GB-XYZ", 108, 79 * kGiB)->product,
            "A100 SXM4 80GB");
  EXPECT_FALSE(datasheet_peaks("NVIDIA A100 PCIe", 108, 0));
}

TEST(DatasheetPeaks, SpotValues) {
  auto h100 = datasheet_peaks("NVIDIA H100 80GB HBM3", 132);
  ASSERT_TRUE(h100);
  EXPECT_DOUBLE_EQ(h100->flops(DType::bf16), 989.4e12);
  EXPECT_DOUBLE_EQ(h100->flops(DType::fp8_e4m3), 1978.9e12);
  EXPECT_DOUBLE_EQ(h100->flops(DType::fp64), 66.9e12);  // FP64 tensor cores
  EXPECT_DOUBLE_EQ(h100->bytes_per_s(), 3350e9);

  auto a100 = datasheet_peaks("NVIDIA A100 80GB PCIe", 108);
  ASSERT_TRUE(a100);
  EXPECT_DOUBLE_EQ(a100->flops(DType::tf32), 156e12);
  EXPECT_DOUBLE_EQ(a100->flops(DType::fp64), 19.5e12);
  EXPECT_DOUBLE_EQ(a100->flops(DType::fp8_e4m3), 0.0);
  EXPECT_DOUBLE_EQ(a100->mem_GBps, 1935);
  EXPECT_DOUBLE_EQ(datasheet_peaks("NVIDIA A100-SXM4-80GB", 108)->mem_GBps, 2039);

  // GeForce: FP16 with FP32 accumulation, half the FP16-accumulate rate.
  EXPECT_DOUBLE_EQ(datasheet_peaks("NVIDIA GeForce RTX 4090", 128)->fp16, 165.2);
  EXPECT_DOUBLE_EQ(datasheet_peaks("NVIDIA GeForce RTX 3090", 82)->bf16, 71);

  auto l40s = datasheet_peaks("NVIDIA L40S", 142);
  EXPECT_DOUBLE_EQ(l40s->fp8, 733);
  EXPECT_DOUBLE_EQ(l40s->mem_GBps, 864);
  EXPECT_DOUBLE_EQ(datasheet_peaks("NVIDIA L40", 142)->fp8, 362);

  auto t4 = datasheet_peaks("Tesla T4", 40);
  EXPECT_DOUBLE_EQ(t4->flops(DType::fp16), 65e12);
  EXPECT_DOUBLE_EQ(t4->flops(DType::bf16), 0.0);
  EXPECT_DOUBLE_EQ(t4->flops(DType::tf32), 0.0);

  EXPECT_DOUBLE_EQ(datasheet_peaks("NVIDIA B200", 148)->fp8, 4500);
  EXPECT_DOUBLE_EQ(datasheet_peaks("NVIDIA H200 NVL", 132)->mem_GBps, 4800);
}

// Every product a driver name finds (the table's 25).
TEST(DatasheetPeaks, EveryEntryHasBandwidthSourceAndSaneRates) {
  std::set<std::string_view> products;
  for (const Reported& r : kKnown) {
    const std::optional<DatasheetPeaks> found = datasheet_peaks(r.name, r.sm_count, r.memory);
    ASSERT_TRUE(found) << r.name;
    const DatasheetPeaks& p = *found;
    SCOPED_TRACE(std::string(p.product));
    if (!products.insert(p.product).second) continue;  // a product more than one name finds
    EXPECT_GT(p.mem_GBps, 0);
    EXPECT_GE(p.source.size(), 20u);
    EXPECT_NE(p.source.find("NVIDIA"), std::string_view::npos);
    EXPECT_NE(p.source.find("https://"), std::string_view::npos);
    EXPECT_GT(p.fp64, 0);
    EXPECT_GT(p.fp32, 0);
    EXPECT_GT(p.fp16, 0);
    // Tensor rates are at least the FP32 rate where the math exists; fp8 doubles fp16 or is
    // absent (to 2%: the L40S datasheet's own figures, 362.05 and 733, are 1.2% apart).
    if (p.tf32 > 0) {
      EXPECT_GE(p.tf32, p.fp32);
    }
    if (p.bf16 > 0) {
      EXPECT_DOUBLE_EQ(p.bf16, p.fp16);
    }
    if (p.fp8 > 0) {
      EXPECT_NEAR(p.fp8, 2 * p.fp16, 0.02 * p.fp8);
    }
  }
  EXPECT_EQ(products.size(), 25u);
}

TEST(DatasheetPeaks, ContextNamesTheProductOrSaysWhatIsLeftOut) {
  EXPECT_EQ(datasheet_context(datasheet_peaks("NVIDIA L40S", 142)), "L40S");
  const std::string unknown = datasheet_context(datasheet_peaks("NVIDIA Quadro P1000", 4));
  EXPECT_NE(unknown.find("not in cubench's datasheet table"), std::string::npos);
  EXPECT_NE(unknown.find("pct_peak"), std::string::npos);
  EXPECT_NE(unknown.find("pct_datasheet_bw"), std::string::npos);
}

TEST(DatasheetPeaksCounters, BandwidthAgainstTheDatasheetBesideTheCopyCeiling) {
  ASSERT_TRUE(find_counter("pct_datasheet_bw"));
  EXPECT_EQ(find_counter("pct_datasheet_bw")->unit, "%");
  auto h200 = datasheet_peaks("NVIDIA H200", 132);
  Work w{0, std::nullopt, 2.4e9};  // 2.4 GB in 1 ms: 2400 GB/s
  Counters c = rate_counters(w, 1e-3, h200, 4000e9);
  EXPECT_NEAR(c.at("GBps"), 2400, 1e-9);
  EXPECT_NEAR(c.at("pct_datasheet_bw"), 50.0, 1e-9);  // of 4800 GB/s
  EXPECT_NEAR(c.at("pct_copy_ceiling"), 60.0, 1e-9);
  EXPECT_EQ(c.count("pct_peak"), 0u);
  // No datasheet entry: no percentage of it, the measured one stays.
  c = rate_counters(w, 1e-3, std::nullopt, 4000e9);
  EXPECT_EQ(c.count("pct_datasheet_bw"), 0u);
  EXPECT_NEAR(c.at("pct_copy_ceiling"), 60.0, 1e-9);
  // No bytes in the work model: no bandwidth at all.
  EXPECT_EQ(rate_counters({1e12, DType::bf16, 0}, 1e-3, h200, 4000e9).count("pct_datasheet_bw"),
            0u);
}

}  // namespace
}  // namespace cubench
