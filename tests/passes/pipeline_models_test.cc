// The default pipeline on the bundled real models: node counts before and after, Verify,
// and the outputs before and after on a seeded random input.
#include <gtest/gtest.h>

#include <map>

#include "ir/onnx_io.h"
#include "pass_test_util.h"
#include "passes/pipeline.h"
#include "reference_check.h"

namespace qtune::passes {
namespace {

using testing::CountOps;
using testing::OutputNames;

std::map<std::string, int> OpCounts(const ir::Graph& graph) {
  std::map<std::string, int> counts;
  for (const ir::Node* node : graph.nodes()) ++counts[node->op_type()];
  return counts;
}

struct ModelCase {
  std::string path;
  std::map<std::string, std::vector<int64_t>> input_sizes;
  double tolerance;
};

// Loads, runs the pipeline, and returns (before, after).
void RunOnModel(const ModelCase& model, std::unique_ptr<ir::Graph>& before,
                std::unique_ptr<ir::Graph>& after, PipelineReport& report) {
  auto loaded = ir::LoadModel(model.path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  after = std::move(loaded).value();
  before = after->Clone();
  auto result = RunPipeline(*after, testing::ReferenceOptions());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  report = *result;
  std::cout << model.path << ":\n" << report.ToString();
  EXPECT_TRUE(report.converged);
  EXPECT_EQ(OutputNames(*after), OutputNames(*before));
  EXPECT_VERIFIES(*after);
}

TEST(PipelineModelsTest, PpocrDetectorLosesConstantsAndBatchNorms) {
  ModelCase model{
      std::string(QTUNE_MODELS_DIR) + "/ppocr/ppocrv4_det.onnx", {{"x", {1, 3, 64, 64}}}, 1e-4};
  std::unique_ptr<ir::Graph> before, after;
  PipelineReport report;
  ASSERT_NO_FATAL_FAILURE(RunOnModel(model, before, after, report));
  std::map<std::string, int> ops_before = OpCounts(*before), ops_after = OpCounts(*after);
  EXPECT_GT(ops_before["Constant"], 0);
  EXPECT_EQ(ops_after["Constant"], 0);
  EXPECT_EQ(ops_after["Identity"], 0);
  EXPECT_EQ(ops_after["Conv"], ops_before["Conv"]);
  EXPECT_EQ(ops_after["BatchNormalization"], 0);  // the third one via fold_conv_affine
  EXPECT_LT(after->num_nodes(), before->num_nodes());
  std::cout << "ppocr det: " << before->num_nodes() << " -> " << after->num_nodes()
            << " nodes; BatchNormalization " << ops_before["BatchNormalization"] << " -> "
            << ops_after["BatchNormalization"] << "\n";
  testing::ExpectSameOutputs(*before, *after,
                             {.seed = 11,
                              .rtol = model.tolerance,
                              .atol = model.tolerance,
                              .input_sizes = model.input_sizes});
}

TEST(PipelineModelsTest, FmnistResnetKeepsItsOutputs) {
  ModelCase model{std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx",
                  {{"input", {2, 1, 28, 28}}},
                  1e-5};
  std::unique_ptr<ir::Graph> before, after;
  PipelineReport report;
  ASSERT_NO_FATAL_FAILURE(RunOnModel(model, before, after, report));
  EXPECT_LE(after->num_nodes(), before->num_nodes());
  EXPECT_EQ(CountOps(*after, "Conv"), CountOps(*before, "Conv"));
  std::cout << "fmnist resnet: " << before->num_nodes() << " -> " << after->num_nodes()
            << " nodes\n";
  testing::ExpectSameOutputs(*before, *after,
                             {.seed = 12,
                              .rtol = model.tolerance,
                              .atol = model.tolerance,
                              .input_sizes = model.input_sizes});
}

}  // namespace
}  // namespace qtune::passes
