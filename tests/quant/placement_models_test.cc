// Placement on real models after the default pass pipeline: residual Adds found on the
// ResNets (ResNet-18 built in C++, util/test_models.h), and the PP-OCR models place
// without error.
#include <gtest/gtest.h>

#include "ir/onnx_io.h"
#include "passes/pipeline.h"
#include "placement_test_util.h"
#include "quant/residual.h"
#include "runtime/reference/registry.h"
#include "util/test_models.h"

namespace qtune::quant {
namespace {

using namespace testing;  // NOLINT

// `graph` after the default pass pipeline; null (and a test failure) if the pipeline fails.
std::unique_ptr<ir::Graph> Pipelined(std::unique_ptr<ir::Graph> graph) {
  passes::PassOptions options;
  options.evaluator = runtime::EvaluateNode;
  auto report = passes::RunPipeline(*graph, options);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  return report.ok() ? std::move(graph) : nullptr;
}

std::unique_ptr<ir::Graph> LoadPipelined(const std::string& path) {
  auto loaded = ir::LoadModel(path);
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  if (!loaded.ok()) return nullptr;
  return Pipelined(std::move(loaded).value());
}

int CountOps(const ir::Graph& graph, const std::string& op) {
  int n = 0;
  for (const ir::Node* node : graph.nodes()) n += node->op_type() == op;
  return n;
}

int EnabledSites(const QuantPlan& plan) {
  int n = 0;
  for (const QuantSite& s : plan.sites) n += s.enabled;
  return n;
}

TEST(PlacementModelsTest, FmnistResnetHasThreeResidualAdds) {
  auto graph = LoadPipelined(std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx");
  ASSERT_NE(graph, nullptr);
  std::vector<ResidualAdd> residuals = FindResidualAdds(*graph);
  EXPECT_EQ(residuals.size(), 3u);
  EXPECT_EQ(CountOps(*graph, "Add"), 3);
  const InputSizes sizes = {{"input", {32, 1, 28, 28}}};
  QuantPlan plan = PlanOrDie(*graph, Preset("int8"), Target::kCpu, sizes);
  QuantPlan residual = PlanOrDie(*graph, Preset("int8_residual"), Target::kCpu, sizes);
  std::cout << "fmnist: " << plan.sites.size() << " sites, " << plan.skipped.size()
            << " skipped, residual shortcut sites " << CountRole(plan, "residual shortcut")
            << ", int8_residual: residual add sites " << CountRole(residual, "residual add")
            << "\n";
  for (const SkippedLayer& s : plan.skipped) {
    std::cout << "  skipped " << s.node << " (" << s.op_type << "): " << s.reason << "\n";
  }
  for (const ResidualAdd& r : residuals) {
    EXPECT_NE(SiteFor(residual, r.add->name(), 0), nullptr) << r.add->name();
    EXPECT_NE(SiteFor(residual, r.add->name(), 1), nullptr) << r.add->name();
    EXPECT_EQ(SiteFor(plan, r.add->name(), r.branch_input), nullptr) << r.add->name();
  }
  EXPECT_EQ(CountRole(residual, "residual add"), 6);
  int convs = CountOps(*graph, "Conv");
  int weights = 0;
  for (const QuantSite& s : plan.sites) weights += s.kind == QuantSite::Kind::kWeight;
  int skipped_convs = 0;
  for (const SkippedLayer& s : plan.skipped) skipped_convs += s.op_type == "Conv";
  EXPECT_EQ(weights, convs - skipped_convs);  // the Gemm (N = 10) is skipped
  ASSERT_NE(Skipped(plan, graph->nodes().back()->name()), nullptr);
}

TEST(PlacementModelsTest, Resnet18HasEightResidualAddsThreeWithDownsample) {
  auto graph = Pipelined(::qtune::testing::BuildTestResNet18());
  ASSERT_NE(graph, nullptr);
  std::vector<ResidualAdd> residuals = FindResidualAdds(*graph);
  ASSERT_EQ(residuals.size(), 8u);
  int downsample = 0;
  for (const ResidualAdd& r : residuals) downsample += r.downsample_linear != nullptr;
  EXPECT_EQ(downsample, 3);
  QuantPlan plan = PlanOrDie(*graph, Preset("int8"), Target::kTrt, {{"input", {1, 3, 224, 224}}});
  EXPECT_EQ(CountRole(plan, "residual shortcut"), 8);
  // Every conv quantized (the stem by the first-layer exception); fc is a GEMV at batch 1.
  EXPECT_EQ(plan.skipped.size(), 1u);
  EXPECT_EQ(plan.skipped[0].reason, "GEMV shape (M = 1)");
  int weights = 0;
  for (const QuantSite& s : plan.sites) weights += s.kind == QuantSite::Kind::kWeight;
  EXPECT_EQ(weights, 20);
}

struct PpocrCase {
  const char* file;
  InputSizes sizes;
};

TEST(PlacementModelsTest, PpocrModelsPlaceWithoutError) {
  for (const PpocrCase& c : {PpocrCase{"ppocrv4_det.onnx", {{"x", {1, 3, 64, 64}}}},
                             PpocrCase{"ppocr_cls.onnx", {{"x", {1, 3, 48, 192}}}}}) {
    auto graph = LoadPipelined(std::string(QTUNE_MODELS_DIR) + "/ppocr/" + c.file);
    ASSERT_NE(graph, nullptr) << c.file;
    for (const char* recipe : {"int8", "int8_residual", "fp8"}) {
      for (Target target : {Target::kCpu, Target::kTrt}) {
        StatusOr<QuantPlan> plan = PlanQuantization(*graph, Preset(recipe), target, c.sizes);
        ASSERT_TRUE(plan.ok()) << c.file << " " << recipe << ": " << plan.status().ToString();
        EXPECT_GT(EnabledSites(*plan), 20) << c.file << " " << recipe;
        std::cout << c.file << " " << recipe << "/" << TargetName(target) << ": "
                  << plan->sites.size() << " sites (" << EnabledSites(*plan) << " enabled), "
                  << plan->skipped.size() << " skipped, " << CountRole(*plan, "residual")
                  << " residual, " << plan->guard_hits.size() << " guard hits, "
                  << FindResidualAdds(*graph).size() << " residual adds of "
                  << CountOps(*graph, "Add") << " Adds\n";
      }
    }
  }
}

}  // namespace
}  // namespace qtune::quant
