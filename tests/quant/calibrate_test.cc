// CalibrateActivations (calibrate.h) on the bundled Fashion-MNIST ResNet with its 512
// calibration images: ranges of every Conv input, independence from the batch size, and
// errors naming bad requests.
#include "quant/calibrate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/npy.h"
#include "ir/builder.h"
#include "ir/onnx_io.h"
#include "runtime/session.h"

namespace qtune::quant {
namespace {

constexpr const char* kModel = QTUNE_MODELS_DIR "/fmnist/fmnist_resnet.onnx";
constexpr const char* kCalib = QTUNE_MODELS_DIR "/fmnist/calib_512.npy";

std::map<std::string, CalibrationRequest> ConvInputRequests(const ir::Graph& graph,
                                                            CalibratorKind kind) {
  std::map<std::string, CalibrationRequest> requests;
  for (const ir::Node* node : graph.nodes()) {
    if (node->op_type() != "Conv") continue;
    CalibrationRequest request;
    request.calibrator.kind = kind;
    requests[node->input(0)->name()] = request;
  }
  return requests;
}

std::map<std::string, TensorRange> Calibrate(
    const ir::Graph& graph, const std::map<std::string, CalibrationRequest>& requests,
    int64_t batch_size, int64_t max_samples = 0, int threads = 1) {
  auto source = OpenCalibrationData({kCalib}, "", graph);
  EXPECT_TRUE(source.ok()) << source.status().ToString();
  CalibrateOptions options;
  options.batch_size = batch_size;
  options.max_samples = max_samples;
  options.threads = threads;
  options.show_progress = false;
  auto ranges = CalibrateActivations(graph, requests, **source, options);
  EXPECT_TRUE(ranges.ok()) << ranges.status().ToString();
  return ranges.ok() ? *ranges : std::map<std::string, TensorRange>{};
}

class CalibrateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto graph = ir::LoadModel(kModel);
    ASSERT_TRUE(graph.ok()) << graph.status().ToString();
    graph_ = std::move(graph).value();
  }
  std::unique_ptr<ir::Graph> graph_;
};

TEST_F(CalibrateTest, MaxRangesOfEveryConvInputMatchAFullBatchRun) {
  auto requests = ConvInputRequests(*graph_, CalibratorKind::kMax);
  ASSERT_EQ(requests.size(), 7u);  // 9 Conv nodes; 2 shortcut convs share an input
  auto ranges = Calibrate(*graph_, requests, 32);
  ASSERT_EQ(ranges.size(), requests.size());

  // The oracle: one run over all 512 samples with the Conv inputs as outputs.
  auto clone = graph_->Clone();
  for (const auto& [name, request] : requests) {
    ir::Value* value = clone->FindValue(name);
    if (!value->is_graph_input()) {
      ASSERT_TRUE(clone->AddOutput(value).ok());
    }
  }
  auto session = runtime::Session::Create(*clone, runtime::SessionOptions{});
  ASSERT_TRUE(session.ok());
  Tensor data = ReadNpy(kCalib).value();
  auto outputs = (*session)->Run({{"input", data}});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  outputs->push_back({"input", data});
  int checked = 0;
  for (const auto& [name, tensor] : *outputs) {
    auto it = ranges.find(name);
    if (it == ranges.end()) continue;
    auto span = tensor.span<float>();
    auto [mn, mx] = std::minmax_element(span.begin(), span.end());
    const TensorRange& range = it->second;
    float tolerance = 1e-4f * std::max(std::fabs(*mn), std::fabs(*mx));
    EXPECT_NEAR(range.min, *mn, tolerance) << name;
    EXPECT_NEAR(range.max, *mx, tolerance) << name;
    EXPECT_NEAR(range.amax, std::max(-*mn, *mx), tolerance) << name;
    EXPECT_EQ(range.samples, tensor.num_elements()) << name;
    EXPECT_GT(range.amax, 0.0f) << name;
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(ranges.size()));
  // The graph input is read as is: exactly the data's extremes, (0 - 0.286) / 0.353 and
  // (1 - 0.286) / 0.353.
  EXPECT_NEAR(ranges.at("input").min, -0.8102f, 1e-3f);
  EXPECT_NEAR(ranges.at("input").max, 2.0227f, 1e-3f);
}

TEST_F(CalibrateTest, BatchSizeAndThreadsDoNotChangeTheRanges) {
  for (CalibratorKind kind : {CalibratorKind::kMax, CalibratorKind::kEntropy,
                              CalibratorKind::kPercentile, CalibratorKind::kMse}) {
    auto requests = ConvInputRequests(*graph_, kind);
    auto by32 = Calibrate(*graph_, requests, 32);
    auto by64 = Calibrate(*graph_, requests, 64, 0, /*threads=*/2);
    ASSERT_EQ(by32.size(), requests.size());
    ASSERT_EQ(by64.size(), requests.size());
    float worst = 0.0f;  // largest |amax(32) - amax(64)| / amax(32), printed
    for (const auto& [name, a] : by32) {
      worst = std::max(worst, std::fabs(a.amax - by64.at(name).amax) / a.amax);
      const TensorRange& b = by64.at(name);
      // The histograms are identical up to the engine's float rounding with another batch
      // size, so the choice may move by a bin or so: bins are at most 2 amax / 2048 wide.
      float bin = 2.0f * std::max(std::fabs(a.min), std::fabs(a.max)) / 2048.0f;
      EXPECT_NEAR(a.amax, b.amax, 2.0f * bin) << CalibratorName(kind) << " " << name;
      EXPECT_NEAR(a.min, b.min, 1e-4f * bin * 2048) << name;
      EXPECT_NEAR(a.max, b.max, 1e-4f * bin * 2048) << name;
      EXPECT_EQ(a.samples, b.samples) << name;
      if (kind != CalibratorKind::kMax) {
        EXPECT_LE(a.amax, std::max(-a.min, a.max)) << CalibratorName(kind) << " " << name;
      }
    }
    std::printf("%s: largest relative amax change from batch 32 to batch 64 on 2 threads: %.2e\n",
                CalibratorName(kind), worst);
  }
}

TEST(AutoCalibrationBatchTest, FollowsTheMemoryBudget) {
  const int64_t mib = int64_t{1} << 20;
  EXPECT_EQ(AutoCalibrationBatch(128 * mib, 1024 * mib), 2);   // det at 640x640
  EXPECT_EQ(AutoCalibrationBatch(600 * mib, 1024 * mib), 1);   // over budget: still one
  EXPECT_EQ(AutoCalibrationBatch(10 * 1024, 1024 * mib), 32);  // small model: capped
  EXPECT_EQ(AutoCalibrationBatch(0, 1024 * mib), 32);
}

TEST_F(CalibrateTest, AutoBatchGivesTheRangesOfAFixedBatch) {
  auto requests = ConvInputRequests(*graph_, CalibratorKind::kMax);
  auto source = OpenCalibrationData({kCalib}, "", *graph_);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  CalibrateOptions options;
  options.batch_size = 0;                          // auto: one sample, then from the budget
  options.memory_budget_bytes = int64_t{1} << 20;  // small: batches of a few samples
  options.show_progress = false;
  auto by_budget = CalibrateActivations(*graph_, requests, **source, options);
  ASSERT_TRUE(by_budget.ok()) << by_budget.status().ToString();
  auto by32 = Calibrate(*graph_, requests, 32);
  ASSERT_EQ(by_budget->size(), by32.size());
  for (const auto& [name, range] : by32) {
    EXPECT_EQ(range.min, by_budget->at(name).min) << name;
    EXPECT_EQ(range.max, by_budget->at(name).max) << name;
    EXPECT_EQ(range.samples, by_budget->at(name).samples) << name;
  }
}

TEST_F(CalibrateTest, EntropyClipsReluOutputsBelowTheirMax) {
  auto ranges = Calibrate(*graph_, ConvInputRequests(*graph_, CalibratorKind::kEntropy), 64);
  int clipped = 0;
  for (const auto& [name, range] : ranges) {
    if (name == "input") continue;
    EXPECT_GE(range.min, 0.0f) << name << " follows a Relu";
    EXPECT_GT(range.amax, 0.1f * range.max) << name;
    if (range.amax < 0.9f * range.max) ++clipped;
    std::printf("%-24s min %8.4f max %8.4f entropy amax %8.4f\n", name.c_str(), range.min,
                range.max, range.amax);
  }
  EXPECT_GE(clipped, 4) << "entropy should clip the long tails of most ReLU outputs";
}

TEST_F(CalibrateTest, MaxSamplesLimitsTheData) {
  std::map<std::string, CalibrationRequest> requests = {{"input", {}}};
  auto ranges = Calibrate(*graph_, requests, 32, 100);
  EXPECT_EQ(ranges.at("input").samples, 100 * 28 * 28);
}

TEST_F(CalibrateTest, BadRequestsAreNamedTogether) {
  auto source = OpenCalibrationData({kCalib}, "", *graph_);
  ASSERT_TRUE(source.ok());
  std::string weight;
  for (const ir::Node* node : graph_->nodes()) {
    if (node->op_type() == "Conv") weight = node->input(1)->name();
  }
  std::map<std::string, CalibrationRequest> requests = {{"no_such_tensor", {}}, {weight, {}}};
  CalibrateOptions options;
  options.show_progress = false;
  auto ranges = CalibrateActivations(*graph_, requests, **source, options);
  ASSERT_FALSE(ranges.ok());
  EXPECT_NE(ranges.status().message().find("'no_such_tensor' not in the graph"), std::string::npos)
      << ranges.status().message();
  EXPECT_NE(ranges.status().message().find(weight), std::string::npos) << ranges.status().message();

  CalibrationRequest fp8_entropy;
  fp8_entropy.calibrator.kind = CalibratorKind::kEntropy;
  fp8_entropy.format = QuantFormat::kFp8E4M3;
  auto fp8 = CalibrateActivations(*graph_, {{"input", fp8_entropy}}, **source, options);
  ASSERT_FALSE(fp8.ok());
  EXPECT_NE(fp8.status().message().find("'input'"), std::string::npos) << fp8.status().message();
}

TEST(CalibrateSmallGraphTest, IntegerValuesAreRefused) {
  ir::GraphBuilder b(17);
  ir::Value* x = b.Input("x", DataType::kFloat32, Shape({Dim::Symbolic("N"), Dim::Known(4)}));
  ir::Value* cast = b.Op("Cast", {x}, {ir::Attribute::Int("to", 7)}, {.output_names = {"as_int"}});
  b.SetType(cast, DataType::kInt64, Shape({Dim::Symbolic("N"), Dim::Known(4)}));
  b.Output(cast);
  auto graph = b.Build();
  RandomDataOptions random;
  random.num_samples = 8;
  auto source = MakeRandomCalibrationData(*graph, random);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  CalibrateOptions options;
  options.show_progress = false;
  auto ranges = CalibrateActivations(*graph, {{"as_int", {}}, {"x", {}}}, **source, options);
  ASSERT_FALSE(ranges.ok());
  EXPECT_NE(ranges.status().message().find("'as_int' (int64) not floating point"),
            std::string::npos)
      << ranges.status().message();
  auto inputs_only = CalibrateActivations(*graph, {{"x", {}}}, **source, options);
  ASSERT_TRUE(inputs_only.ok()) << inputs_only.status().ToString();
  EXPECT_EQ(inputs_only->at("x").samples, 32);
  EXPECT_GE(inputs_only->at("x").min, 0.0f);
  EXPECT_LT(inputs_only->at("x").max, 1.0f);
}

}  // namespace
}  // namespace qtune::quant
