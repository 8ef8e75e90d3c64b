// Every bundled and shared real model loads, verifies and survives load -> save -> load.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "ir/onnx_io.h"
#include "ir/onnx_test_util.h"
#include "ir/verify.h"
#include "util/missing_dependency.h"

namespace qtune::ir {
namespace {

using testing::BundledModelPaths;
using testing::ExpectSameGraph;
using testing::SharedModelPaths;
using testing::TempDir;

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

void RoundTrip(const std::string& path) {
  SCOPED_TRACE(path);
  auto start = std::chrono::steady_clock::now();
  auto loaded = LoadModel(path);
  const double load_ms = MillisecondsSince(start);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const Graph& graph = **loaded;
  EXPECT_TRUE(Verify(graph).ok());
  EXPECT_GT(graph.num_nodes(), 0u);

  TempDir dir;
  const std::string saved = dir.File("saved.onnx");
  start = std::chrono::steady_clock::now();
  Status s = SaveModel(graph, saved);
  const double save_ms = MillisecondsSince(start);
  ASSERT_TRUE(s.ok()) << s.ToString();
  auto reloaded = LoadModel(saved);
  ASSERT_TRUE(reloaded.ok()) << reloaded.status().ToString();
  ExpectSameGraph(graph, **reloaded);
  std::printf("[ model ] %s: %zu nodes, %zu initializers, load %.1f ms, save %.1f ms\n",
              std::filesystem::path(path).filename().c_str(), graph.num_nodes(),
              graph.initializers().size(), load_ms, save_ms);
}

TEST(ModelsTest, BundledModelsLoadAndRoundTrip) {
  for (const std::string& path : BundledModelPaths()) RoundTrip(path);
}

TEST(ModelsTest, SharedModelsLoadAndRoundTrip) {
  std::vector<std::string> paths = SharedModelPaths();
  if (paths.empty()) QTUNE_SKIP_OR_FAIL_IN_CI() << "no models under " << QTUNE_SHARED_MODELS_DIR;
  for (const std::string& path : paths) RoundTrip(path);
}

TEST(ModelsTest, FmnistResnetHasExpectedStructure) {
  auto g = LoadModel(std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->onnx_opset(), 13);
  ASSERT_EQ((*g)->inputs().size(), 1u);
  EXPECT_EQ((*g)->inputs()[0]->name(), "input");
  EXPECT_EQ((*g)->inputs()[0]->dtype(), DataType::kFloat32);
  ASSERT_TRUE((*g)->inputs()[0]->type().shape.has_value());
  EXPECT_EQ((*g)->inputs()[0]->type().shape->rank(), 4u);
  int conv = 0, add = 0;
  for (Node* n : (*g)->nodes()) {
    conv += n->op_type() == "Conv";
    add += n->op_type() == "Add";
  }
  EXPECT_GT(conv, 0);
  EXPECT_EQ(add, 3);
  EXPECT_FALSE((*g)->initializers().empty());
}

TEST(ModelsTest, PpocrDetectorKeepsWeightsInConstantNodesAndSymbolicDims) {
  auto g = LoadModel(std::string(QTUNE_MODELS_DIR) + "/ppocr/ppocrv4_det.onnx");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->onnx_opset(), 11);
  EXPECT_TRUE((*g)->initializers().empty());
  int constants = 0, conv = 0;
  for (Node* n : (*g)->nodes()) {
    constants += n->op_type() == "Constant";
    conv += n->op_type() == "Conv";
  }
  EXPECT_GT(constants, 100);
  EXPECT_EQ(conv, 62);
  ASSERT_EQ((*g)->inputs().size(), 1u);
  const Shape& shape = *(*g)->inputs()[0]->type().shape;
  ASSERT_EQ(shape.rank(), 4u);
  EXPECT_FALSE(shape.dim(0).is_known());
  EXPECT_FALSE(shape.dim(0).symbol.empty()) << shape.ToString();
  EXPECT_EQ(shape.dim(1).value, 3);
}

TEST(ModelsTest, PpocrClassifierIsOpset9) {
  auto g = LoadModel(std::string(QTUNE_MODELS_DIR) + "/ppocr/ppocr_cls.onnx");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->onnx_opset(), 9);
  int conv = 0;
  for (Node* n : (*g)->nodes()) conv += n->op_type() == "Conv";
  EXPECT_EQ(conv, 53);
}

}  // namespace
}  // namespace qtune::ir
