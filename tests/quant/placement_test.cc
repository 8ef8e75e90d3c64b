// Placement on hand-built graphs: residual Adds found structurally (and not elsewhere),
// weight axes, skip rules with their reasons, pass-through and Concat scale groups, the
// fp8 low-channel guard, LayerNorm/attention rules, recipe rules and target checks.
#include <gtest/gtest.h>

#include "placement_test_util.h"
#include "quant/graph_patterns.h"
#include "quant/residual.h"

namespace qtune::quant {
namespace {

using namespace testing;  // NOLINT

// x -> stem -> relu = h -> conv_a -> relu -> conv_b -> add(conv_b, h) -> relu
std::unique_ptr<ir::Graph> IdentityBlock() {
  ir::GraphBuilder b(17);
  ir::Value* x = b.Input("x", DataType::kFloat32, {1, 16, 8, 8});
  ir::Value* h = Relu(b, Conv(b, x, "stem", 16, 16), "stem_relu");
  ir::Value* a = Relu(b, Conv(b, h, "conv_a", 16, 16), "relu_a");
  ir::Value* c = Conv(b, a, "conv_b", 16, 16);
  b.Output(Relu(b, Add(b, c, h, "add"), "relu_out"));
  return b.Build();
}

// h -> conv_a(stride 2) -> relu -> conv_b ; h -> conv_d (1x1, stride 2) ; add(conv_b, conv_d)
std::unique_ptr<ir::Graph> DownsampleBlock() {
  ir::GraphBuilder b(17);
  ir::Value* x = b.Input("x", DataType::kFloat32, {1, 16, 8, 8});
  ir::Value* h = Relu(b, Conv(b, x, "stem", 16, 16), "stem_relu");
  ir::Value* a = Relu(b, Conv(b, h, "conv_a", 16, 32, 3, 1, 2), "relu_a");
  ir::Value* c = Conv(b, a, "conv_b", 32, 32);
  ir::Value* d = Conv(b, h, "conv_d", 16, 32, 1, 1, 2);
  b.Output(Relu(b, Add(b, c, d, "add"), "relu_out"));
  return b.Build();
}

const InputSizes kBlockSizes = {{"x", {1, 16, 8, 8}}};

TEST(ResidualTest, IdentityShortcutIsFound) {
  auto graph = IdentityBlock();
  std::vector<ResidualAdd> found = FindResidualAdds(*graph);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].add->name(), "add");
  EXPECT_EQ(found[0].branch_input, 0);
  EXPECT_EQ(found[0].shortcut_input, 1);
  EXPECT_EQ(found[0].branch_linear->name(), "conv_b");
  EXPECT_EQ(found[0].downsample_linear, nullptr);
}

TEST(ResidualTest, DownsampleShortcutIsFound) {
  auto graph = DownsampleBlock();
  std::vector<ResidualAdd> found = FindResidualAdds(*graph);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].branch_linear->name(), "conv_b");
  ASSERT_NE(found[0].downsample_linear, nullptr);
  EXPECT_EQ(found[0].downsample_linear->name(), "conv_d");
  EXPECT_EQ(found[0].shortcut_input, 1);
}

TEST(ResidualTest, AddOfTwoSingleConvBranchesIsNotResidual) {
  ir::GraphBuilder b(17);
  ir::Value* x = b.Input("x", DataType::kFloat32, {1, 16, 8, 8});
  ir::Value* h = Relu(b, Conv(b, x, "stem", 16, 16), "stem_relu");
  ir::Value* p = Relu(b, Conv(b, h, "p", 16, 16), "relu_p");
  ir::Value* q = Conv(b, h, "q", 16, 16, 1);
  b.Output(Add(b, p, q, "add"));
  auto graph = b.Build();
  EXPECT_TRUE(FindResidualAdds(*graph).empty());
  QuantPlan plan = PlanOrDie(*graph, Preset("int8"), Target::kCpu, kBlockSizes);
  EXPECT_EQ(CountRole(plan, "residual"), 0);
  EXPECT_EQ(SiteFor(plan, "add", 0), nullptr);
  EXPECT_EQ(SiteFor(plan, "add", 1), nullptr);
}

TEST(ResidualTest, AddOfAConstantOrOfUnrelatedInputsIsNotResidual) {
  ir::GraphBuilder b(17);
  ir::Value* x = b.Input("x", DataType::kFloat32, {1, 16, 8, 8});
  ir::Value* y = b.Input("y", DataType::kFloat32, {1, 16, 8, 8});
  ir::Value* h = Conv(b, x, "stem", 16, 16);
  ir::Value* biased = Add(b, h, Weights(b, "bias", {1, 16, 1, 1}), "add_const");
  ir::Value* merged = Add(b, Conv(b, biased, "lateral", 16, 16), y, "add_unrelated");
  b.Output(merged);
  auto graph = b.Build();
  EXPECT_TRUE(FindResidualAdds(*graph).empty());
}

TEST(PlacementTest, DefaultQuantizesTheShortcutOnly) {
  auto graph = IdentityBlock();
  QuantPlan plan = PlanOrDie(*graph, Preset("int8"), Target::kCpu, kBlockSizes);
  const QuantSite* shortcut = SiteFor(plan, "add", 1);
  ASSERT_NE(shortcut, nullptr);
  EXPECT_EQ(shortcut->value, "stem_relu_out");
  EXPECT_NE(shortcut->role.find("residual shortcut"), std::string::npos);
  // One site for h: conv_a's input and the shortcut share it.
  EXPECT_EQ(SiteFor(plan, "conv_a", 0), shortcut);
  EXPECT_EQ(SiteFor(plan, "add", 0), nullptr);  // the branch fuses into conv_b
  EXPECT_EQ(CountRole(plan, "residual add"), 0);
  EXPECT_EQ(plan.quantized_nodes, (std::vector<std::string>{"stem", "conv_a", "conv_b", "add"}));
}

TEST(PlacementTest, ResidualAddQuantizersQuantizeBothInputs) {
  auto graph = DownsampleBlock();
  QuantPlan plan = PlanOrDie(*graph, Preset("int8_residual"), Target::kCpu, kBlockSizes);
  const QuantSite* shortcut = SiteFor(plan, "add", 1);
  const QuantSite* branch = SiteFor(plan, "add", 0);
  ASSERT_TRUE(shortcut && branch);
  EXPECT_EQ(shortcut->value, "conv_d_out");
  EXPECT_EQ(branch->value, "conv_b_out");
  EXPECT_EQ(shortcut->role, "residual add");
  EXPECT_EQ(branch->role, "residual add");
  EXPECT_EQ(CountRole(plan, "residual shortcut"), 0);
  // Without the flag there is no branch quantizer.
  QuantPlan plain = PlanOrDie(*graph, Preset("int8"), Target::kCpu, kBlockSizes);
  EXPECT_EQ(SiteFor(plain, "add", 0), nullptr);
  ASSERT_NE(SiteFor(plain, "add", 1), nullptr);
}

TEST(PlacementTest, WeightAxesPerOp) {
  ir::GraphBuilder b(17);
  ir::Value* x = b.Input("x", DataType::kFloat32, {4, 16, 8, 8});
  ir::Value* h = Conv(b, x, "conv", 16, 32);
  ir::Value* up = b.Op("ConvTranspose", {h, Weights(b, "up_w", {32, 16, 2, 2})},
                       {ir::Attribute::Ints("strides", {2, 2})}, {.name = "up"});
  ir::Value* flat = b.Op("Flatten", {up}, {}, {.name = "flat"});  // [4, 16*16*16]
  ir::Value* fc = b.Op("Gemm", {flat, Weights(b, "fc_w", {32, 4096})},
                       {ir::Attribute::Int("transB", 1)}, {.name = "fc"});
  ir::Value* mm = b.Op("MatMul", {fc, Weights(b, "mm_w", {32, 24})}, {}, {.name = "mm"});
  b.Output(mm);
  auto graph = b.Build();
  QuantPlan plan = PlanOrDie(*graph, Preset("int8"), Target::kCpu, {{"x", {4, 16, 8, 8}}});
  for (auto [node, axis] :
       std::vector<std::pair<std::string, int>>{{"conv", 0}, {"up", 1}, {"fc", 0}, {"mm", 1}}) {
    const QuantSite* w = SiteFor(plan, node, 1);
    ASSERT_NE(w, nullptr) << node;
    EXPECT_EQ(w->kind, QuantSite::Kind::kWeight);
    EXPECT_EQ(w->config.axis, axis) << node;
    const QuantSite* in = SiteFor(plan, node, 0);
    ASSERT_NE(in, nullptr) << node;
    EXPECT_EQ(in->config.axis, std::nullopt) << node;
  }
  // cpu: Flatten passes int8 through, in the Gemm input's scale group.
  const QuantSite* flat_in = SiteFor(plan, "flat", 0);
  ASSERT_NE(flat_in, nullptr);
  EXPECT_FALSE(flat_in->scale_group.empty());
  EXPECT_EQ(flat_in->scale_group, SiteFor(plan, "fc", 0)->scale_group);
}

TEST(PlacementTest, SmallLayersAreSkippedWithReasons) {
  ir::GraphBuilder b(17);
  ir::Value* x = b.Input("x", DataType::kFloat32, {1, 3, 16, 16});
  ir::Value* stem = Relu(b, Conv(b, x, "stem", 3, 16), "r0");         // first layer: kept
  ir::Value* narrow = Relu(b, Conv(b, stem, "narrow", 16, 8), "r1");  // 8 outputs
  ir::Value* back = Relu(b, Conv(b, narrow, "back", 8, 16), "r2");    // 8 inputs
  ir::Value* dw = Conv(b, back, "dw", 16, 16, 3, 16);                 // 16 x 1 channels
  ir::Value* gap = b.Op("GlobalAveragePool", {dw}, {}, {.name = "gap"});
  ir::Value* flat = b.Op("Flatten", {gap}, {}, {.name = "flat"});
  ir::Value* gemv = b.Op("Gemm", {flat, Weights(b, "fc_w", {64, 16})},
                         {ir::Attribute::Int("transB", 1)}, {.name = "fc"});
  ir::Value* small_k =
      b.Op("MatMul", {b.Input("y", DataType::kFloat32, {32, 8}), Weights(b, "k_w", {8, 32})}, {},
           {.name = "small_k"});
  ir::Value* small_n =
      b.Op("MatMul", {small_k, Weights(b, "n_w", {32, 10})}, {}, {.name = "small_n"});
  b.Output(gemv);
  b.Output(small_n);
  auto graph = b.Build();
  QuantPlan plan =
      PlanOrDie(*graph, Preset("int8"), Target::kCpu, {{"x", {1, 3, 16, 16}}, {"y", {32, 8}}});
  EXPECT_EQ(Skipped(plan, "stem"), nullptr);
  ASSERT_NE(SiteFor(plan, "stem", 0), nullptr);
  ASSERT_NE(Skipped(plan, "narrow"), nullptr);
  EXPECT_EQ(Skipped(plan, "narrow")->reason, "output channels = 8 < 16");
  ASSERT_NE(Skipped(plan, "back"), nullptr);
  EXPECT_EQ(Skipped(plan, "back")->reason, "input channels = 8 < 16");
  EXPECT_EQ(Skipped(plan, "dw"), nullptr);  // groups x per-group channels = 16
  ASSERT_NE(SiteFor(plan, "dw", 1), nullptr);
  ASSERT_NE(Skipped(plan, "fc"), nullptr);
  EXPECT_EQ(Skipped(plan, "fc")->reason, "GEMV shape (M = 1)");
  ASSERT_NE(Skipped(plan, "small_k"), nullptr);
  EXPECT_EQ(Skipped(plan, "small_k")->reason, "K = 8 < 16");
  ASSERT_NE(Skipped(plan, "small_n"), nullptr);
  EXPECT_EQ(Skipped(plan, "small_n")->reason, "N = 10 < 16");
  EXPECT_EQ(plan.skipped.size(), 5u);
  // Nothing quantized reads gap/flat: no pass-through quantizers there.
  EXPECT_EQ(SiteFor(plan, "gap", 0), nullptr);
}

TEST(PlacementTest, Fp8LowChannelStemKeepsFloatInputButQuantizedWeight) {
  ir::GraphBuilder b(17);
  ir::Value* x = b.Input("x", DataType::kFloat32, {1, 3, 16, 16});
  ir::Value* h = Relu(b, Conv(b, x, "stem", 3, 16), "r0");
  b.Output(Conv(b, h, "conv", 16, 16));
  auto graph = b.Build();
  const InputSizes sizes = {{"x", {1, 3, 16, 16}}};
  QuantPlan fp8 = PlanOrDie(*graph, Preset("fp8"), Target::kTrt, sizes);
  const QuantSite* input = SiteFor(fp8, "stem", 0);
  const QuantSite* weight = SiteFor(fp8, "stem", 1);
  ASSERT_TRUE(input && weight);
  EXPECT_FALSE(input->enabled);
  EXPECT_NE(input->disabled_reason.find("3 input channels"), std::string::npos);
  EXPECT_TRUE(weight->enabled);
  EXPECT_EQ(weight->config.format, QuantFormat::kFp8E4M3);
  ASSERT_EQ(fp8.guard_hits.size(), 1u);
  EXPECT_EQ(fp8.guard_hits[0].guard, "fp8_low_channel_input");
  EXPECT_EQ(fp8.guard_hits[0].site, "x");
  EXPECT_TRUE(SiteFor(fp8, "conv", 0)->enabled);
  QuantPlan int8 = PlanOrDie(*graph, Preset("int8"), Target::kTrt, sizes);
  EXPECT_TRUE(SiteFor(int8, "stem", 0)->enabled);
  EXPECT_TRUE(int8.guard_hits.empty());
}

TEST(PlacementTest, PoolPassThroughAndConcatShareOneScale) {
  ir::GraphBuilder b(17);
  ir::Value* x = b.Input("x", DataType::kFloat32, {1, 16, 16, 16});
  ir::Value* h = Relu(b, Conv(b, x, "stem", 16, 16), "r0");
  ir::Value* pool =
      b.Op("MaxPool", {h},
           {ir::Attribute::Ints("kernel_shape", {2, 2}), ir::Attribute::Ints("strides", {2, 2})},
           {.name = "pool"});
  ir::Value* p = Conv(b, pool, "p", 16, 16);
  ir::Value* q = Conv(b, pool, "q", 16, 16, 1);
  ir::Value* cat = b.Op("Concat", {p, q}, {ir::Attribute::Int("axis", 1)}, {.name = "cat"});
  b.Output(Conv(b, cat, "head", 32, 16));
  auto graph = b.Build();
  for (Target target : {Target::kCpu, Target::kTrt}) {
    QuantPlan plan = PlanOrDie(*graph, Preset("int8"), target, {{"x", {1, 16, 16, 16}}});
    const QuantSite* head = SiteFor(plan, "head", 0);
    const QuantSite* cat0 = SiteFor(plan, "cat", 0);
    const QuantSite* cat1 = SiteFor(plan, "cat", 1);
    ASSERT_TRUE(head && cat0 && cat1) << TargetName(target);
    EXPECT_FALSE(head->scale_group.empty());
    EXPECT_EQ(cat0->scale_group, head->scale_group);
    EXPECT_EQ(cat1->scale_group, head->scale_group);
    EXPECT_EQ(cat0->role, "Concat input");
    const QuantSite* pool_in = SiteFor(plan, "pool", 0);
    ASSERT_NE(pool_in, nullptr) << TargetName(target);
    EXPECT_EQ(pool_in->scale_group, SiteFor(plan, "p", 0)->scale_group);
    EXPECT_NE(pool_in->scale_group, head->scale_group);
  }
}

TEST(PlacementTest, RecipeRulesRemoveQuantizersAndLayers) {
  auto graph = IdentityBlock();
  StatusOr<Recipe> recipe = ParseRecipe(R"(
imports: {base: int8}
quantizers:
  - $import: base
  - op: "Conv"
    name: "*input_quantizer"
    calibrator: entropy
  - name: "conv_b/*"
    enable: false
)",
                                        "r.yaml");
  ASSERT_TRUE(recipe.ok()) << recipe.status().ToString();
  QuantPlan plan = PlanOrDie(*graph, *recipe, Target::kCpu, kBlockSizes);
  ASSERT_NE(Skipped(plan, "conv_b"), nullptr);
  EXPECT_EQ(Skipped(plan, "conv_b")->reason, "every quantizer removed by the recipe");
  // conv_b stays float, so the shortcut quantizer would buy nothing.
  EXPECT_EQ(SiteFor(plan, "add", 1), nullptr);
  EXPECT_EQ(SiteFor(plan, "conv_a", 0)->config.calibrator.kind, CalibratorKind::kEntropy);
}

TEST(PlacementTest, AsymmetricActivationsOnCpuOnly) {
  auto graph = IdentityBlock();
  StatusOr<Recipe> recipe =
      ParseRecipe("quantizers:\n  - name: '*'\n    symmetric: false\n", "asym.yaml");
  ASSERT_TRUE(recipe.ok());
  QuantPlan plan = PlanOrDie(*graph, *recipe, Target::kCpu, kBlockSizes);
  EXPECT_FALSE(SiteFor(plan, "conv_a", 0)->config.symmetric);
  EXPECT_TRUE(SiteFor(plan, "conv_a", 1)->config.symmetric);  // weights stay symmetric
  StatusOr<QuantPlan> trt = PlanQuantization(*graph, *recipe, Target::kTrt, kBlockSizes);
  ASSERT_FALSE(trt.ok());
  EXPECT_NE(trt.status().message().find("asym.yaml:2"), std::string::npos)
      << trt.status().message();
  EXPECT_NE(trt.status().message().find("--target trt"), std::string::npos);
}

TEST(PlacementTest, BadInputSizesAreAnError) {
  auto graph = IdentityBlock();
  StatusOr<QuantPlan> plan =
      PlanQuantization(*graph, Preset("int8"), Target::kCpu, {{"x", {1, 7, 8, 8}}});
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("calibration"), std::string::npos);
}

}  // namespace
}  // namespace qtune::quant
