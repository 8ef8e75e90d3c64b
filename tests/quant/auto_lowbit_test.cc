// `quantize --auto` with the weight-only block formats (auto_block_formats.h) on the
// bundled Fashion-MNIST ResNet: which groups can take int4 / nvfp4 / mxfp8 and why not,
// what a block format does to a group's quantizers and the exported model, the bits it
// counts, and the 4.5-to-8-bit frontier measured on held-out images.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "auto_fmnist_plan.h"
#include "core/npy.h"
#include "export_test_util.h"
#include "ir/onnx_io.h"
#include "quant/auto_quantize.h"
#include "quant/auto_sensitivity.h"
#include "quant/quantize_model.h"

namespace qtune::quant {
namespace {

using testing::Prepared;
Prepared Prepare(const std::string& recipe) { return testing::PrepareFmnist(recipe); }

const std::vector<AutoFormat> kLowBit = {AutoFormat::kInt4, AutoFormat::kNvfp4, AutoFormat::kInt8,
                                         AutoFormat::kMxfp8, AutoFormat::kFp32};

std::pair<AutoReport, QuantPlan> Search(const Prepared& p, std::vector<AutoFormat> formats,
                                        double bits) {
  AutoOptions o;
  o.candidate_formats = std::move(formats);
  o.score_size = 16;
  o.frontier_points = 5;
  o.bf16_available = false;
  o.show_progress = false;
  o.effective_bits = bits;
  QuantPlan plan = p.result.plan;
  auto source = OpenCalibrationData({testing::FmnistCalibPath()}, "", *p.result.float_graph);
  EXPECT_TRUE(source.ok());
  auto report = RunAutoSearch(*p.result.float_graph, plan, p.recipe, p.sizes, **source, o);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  return {report.ok() ? *report : AutoReport{}, plan};
}

const AutoGroupResult& GroupOf(const AutoReport& report, const std::string& node) {
  for (const AutoGroupResult& g : report.groups) {
    if (std::count(g.nodes.begin(), g.nodes.end(), node) > 0) return g;
  }
  ADD_FAILURE() << "no group holds " << node;
  return report.groups.front();
}

bool HasNote(const AutoGroupResult& g, const std::string& text) {
  return std::any_of(g.notes.begin(), g.notes.end(),
                     [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

TEST(AutoLowBitTest, BlockFormatsAreCandidatesWhereTheirBlocksFitAndCountTheirScales) {
  Prepared p = Prepare("int8_residual");
  auto [report, plan] = Search(p, kLowBit, 8.0);
  // The stem conv has 1 input channel: no block fits, each format says why.
  const AutoGroupResult& stem = GroupOf(report, "/stem/stem.0/Conv");
  EXPECT_EQ(stem.formats, (std::vector<AutoFormat>{AutoFormat::kInt8, AutoFormat::kFp32}));
  EXPECT_TRUE(HasNote(stem, "int4 not a candidate: /stem/stem.0/Conv (Conv): input channels = 1"));
  EXPECT_TRUE(HasNote(stem, "nvfp4 not a candidate"));
  // /l1 has 16 input channels: nvfp4 (blocks of 16) fits, int4 and mxfp8 (32) do not.
  const AutoGroupResult& l1 = GroupOf(report, "/l1/c1/Conv");
  EXPECT_EQ(l1.formats,
            (std::vector<AutoFormat>{AutoFormat::kNvfp4, AutoFormat::kInt8, AutoFormat::kFp32}));
  EXPECT_DOUBLE_EQ(l1.bits[0], 4.5);  // E2M1 + an E4M3 scale per 16 (+ 32 bits per tensor)
  // /l3 (64 input channels, and its 32-channel shortcut): every format.
  const AutoGroupResult& l3 = GroupOf(report, "/l3/c1/Conv");
  ASSERT_EQ(l3.formats, kLowBit);
  EXPECT_DOUBLE_EQ(l3.bits[4], 32.0);
  EXPECT_DOUBLE_EQ(l3.bits[3], 8.25);  // E4M3 + an E8M0 scale per 32
  EXPECT_DOUBLE_EQ(l3.bits[2], 8.0);   // int8 counted as ModelOpt counts it
  // int4: the largest block of 128, 64, 32 dividing each conv's input channels, fp32
  // scales: 4 + 32 / block, averaged over the group's weights (so between 4.25 and 5).
  EXPECT_GT(l3.bits[0], 4.25);
  EXPECT_LT(l3.bits[0], 5.0);
  // Each sensitivity is a real measurement: finite, and block formats noisier than int8.
  for (size_t k = 0; k + 1 < l3.formats.size(); ++k)
    EXPECT_TRUE(std::isfinite(l3.sensitivity_db[k]));
  EXPECT_LT(l3.sensitivity_db[0], l3.sensitivity_db[2]);
  EXPECT_LT(l3.sensitivity_db[1], l3.sensitivity_db[2]);
}

TEST(AutoLowBitTest, ABlockFormatMakesTheGroupWeightOnlyInTheExport) {
  Prepared p = Prepare("int8_residual");
  // Only /l3 (75% of the weights) can take int4; the rest stays fp32: 11.5 bits at least.
  auto [report, plan] = Search(p, {AutoFormat::kInt4, AutoFormat::kFp32}, 12.0);
  ASSERT_TRUE(report.reached);
  EXPECT_LE(report.effective_bits, 12.0);
  const AutoGroupResult& l3 = GroupOf(report, "/l3/c1/Conv");
  ASSERT_EQ(l3.chosen, AutoFormat::kInt4);
  for (const QuantSite& site : plan.sites) {
    const bool l3_reads = std::any_of(site.consumers.begin(), site.consumers.end(), [&](auto& c) {
      return std::count(l3.nodes.begin(), l3.nodes.end(), c.first) > 0;
    });
    if (!l3_reads) continue;
    if (site.kind == QuantSite::Kind::kActivation) {
      EXPECT_FALSE(site.enabled) << site.value;
      EXPECT_NE(site.disabled_reason.find("auto: int4 weight-only"), std::string::npos);
    } else {
      EXPECT_TRUE(site.enabled && site.weight_only) << site.value;
      EXPECT_EQ(site.config.format, QuantFormat::kInt4);
      EXPECT_EQ(site.config.axis, 1) << "blocks run along a conv weight's input channels";
      EXPECT_GE(site.config.block_size, 32);
    }
  }
  // The export: INT4 weights behind DequantizeLinear(block_size), run by qtune's engine
  // close to fp32 on held-out images.
  auto graph = ExportApplied(*p.result.float_graph, AppliedFormats{plan, {}});
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  int blocked = 0;
  for (const auto& node : (*graph)->nodes()) {
    if (node->op_type() == "DequantizeLinear" && node->GetInt("block_size", 0) > 0) ++blocked;
  }
  EXPECT_EQ(blocked, 3) << "the 3 convs of /l3 (c1, c2 and the shortcut)";
  auto x = ReadNpy(testing::FmnistTestPath());
  ASSERT_TRUE(x.ok());
  const Tensor images = testing::Rows(*x, 0, 500);
  auto logits = testing::RunQtune(**graph, "input", images, 2);
  auto reference = testing::RunQtune(*p.result.float_graph, "input", images, 2);
  ASSERT_TRUE(logits.ok() && reference.ok());
  EXPECT_GE(testing::Agreement(testing::Top1(*logits), testing::Top1(*reference)), 0.97);
}

TEST(AutoLowBitTest, AWeightOnlyRecipeIsSearchedNotPinned) {
  // The int4 preset quantizes, weight-only, the layers whose K a block of 64 divides (the
  // Gemm head and /l3/c2): int8 there means int8 weights per output channel, and fp8
  // (which quantizes activations) is no candidate.
  Prepared p = Prepare("int4");
  auto [report, plan] =
      Search(p, {AutoFormat::kInt4, AutoFormat::kInt8, AutoFormat::kFp8, AutoFormat::kFp32}, 8.0);
  ASSERT_GE(report.groups.size(), 1u);
  GroupOf(report, "/fc/Gemm");
  for (const AutoGroupResult& g : report.groups) {
    EXPECT_FALSE(g.pinned) << g.nodes.front();
    EXPECT_EQ(g.formats,
              (std::vector<AutoFormat>{AutoFormat::kInt4, AutoFormat::kInt8, AutoFormat::kFp32}));
    EXPECT_TRUE(HasNote(g, "fp8 not a candidate: the group is weight-only"));
    EXPECT_EQ(g.chosen, AutoFormat::kInt8) << "the most accurate choice within 8 bits";
  }
  int weights = 0;
  for (const QuantSite& site : plan.sites) {
    if (!site.enabled) continue;
    ASSERT_EQ(site.kind, QuantSite::Kind::kWeight) << site.value;
    EXPECT_EQ(site.config.format, QuantFormat::kInt8);
    EXPECT_EQ(site.config.block_size, 0);
    EXPECT_EQ(site.config.axis, 0) << "output channels (a conv's axis 0, the Gemm's with transB)";
    ++weights;
  }
  EXPECT_EQ(weights, static_cast<int>(report.groups.size()));
}

// The frontier docs/quantize.md shows: budgets 4.6 to 8 bits (the cheapest choice is 4.51:
// the stem conv, one input channel, can only be int8), each choice within its budget, its
// held-out top-1 printed, and more bits never much less accurate.
TEST(AutoLowBitTest, FrontierFromFourAndAHalfToEightBits) {
  Prepared p = Prepare("int8_residual");
  auto x = ReadNpy(testing::FmnistTestPath());
  auto labels = ReadNpy(testing::FmnistLabelsPath());
  ASSERT_TRUE(x.ok() && labels.ok());
  const Tensor images = testing::Rows(*x, 0, 1000);
  auto reference = testing::RunQtune(*p.result.float_graph, "input", images, 2);
  ASSERT_TRUE(reference.ok());
  double previous_agreement = 0;
  for (double bits : {4.6, 5.0, 6.0, 7.0, 8.0}) {
    auto [report, plan] = Search(p, kLowBit, bits);
    EXPECT_TRUE(report.reached) << bits;
    EXPECT_LE(report.effective_bits, bits + 1e-9);
    auto graph = ExportApplied(*p.result.float_graph, AppliedFormats{plan, {}});
    ASSERT_TRUE(graph.ok()) << graph.status().ToString();
    auto logits = testing::RunQtune(**graph, "input", images, 2);
    ASSERT_TRUE(logits.ok());
    const double agreement = testing::Agreement(testing::Top1(*logits), testing::Top1(*reference));
    const double accuracy = testing::Agreement(testing::Top1(*logits),
                                               testing::Labels(testing::Rows(*labels, 0, 1000)));
    std::printf(
        "budget %.1f bits: chose %.2f bits, measured %.1f dB, top-1 agreement %.3f, "
        "accuracy %.3f\n",
        bits, report.effective_bits, report.measured_db, agreement, accuracy);
    EXPECT_GE(agreement, previous_agreement - 0.01) << bits << " bits";
    previous_agreement = agreement;
  }
  EXPECT_GE(previous_agreement, 0.98) << "8 bits";
}

}  // namespace
}  // namespace qtune::quant
