// If, Loop and Scan models (control_flow_test_models.h) saved as ONNX files and run by
// ONNX Runtime (the external oracle) and by qtune's engine.
//
// Setting QTUNE_VAD_EXPORT_DIR also writes vad.onnx there, for `qtune run`.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "ir/onnx_io.h"
#include "runtime/control_flow_test_models.h"
#include "runtime/session.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"

namespace qtune::runtime {
namespace {

namespace fs = std::filesystem;

// Runs `graph` in ORT and in qtune; every output must match within `tolerance`.
void ExpectMatchesOrt(const ir::Graph& graph, const NamedTensors& inputs, const std::string& tag,
                      float tolerance = 1e-5f) {
  std::vector<std::string> names;
  for (const ir::Value* v : graph.outputs()) names.push_back(v->name());
  fs::path path =
      fs::temp_directory_path() / ("qtune_cf_" + tag + "_" + std::to_string(getpid()) + ".onnx");
  ASSERT_TRUE(ir::SaveModel(graph, path.string()).ok());
  auto ort = testing::RunOrt(path.string(), inputs, names);
  fs::remove(path);
  ASSERT_TRUE(ort.ok()) << ort.status().ToString();
  auto session = Session::Create(graph, SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto ours = (*session)->Run(inputs);
  ASSERT_TRUE(ours.ok()) << ours.status().ToString();
  ASSERT_EQ(ours->size(), ort->size());
  for (size_t i = 0; i < ort->size(); ++i) {
    SCOPED_TRACE(tag + " output " + names[i]);
    EXPECT_EQ((*ours)[i].second.sizes(), (*ort)[i].second.sizes());
    EXPECT_LE(testing::MaxAbsDiff((*ours)[i].second, (*ort)[i].second), tolerance);
  }
}

class ControlFlowOrtTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::OrtAvailable()) {
      QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
    }
  }
};

TEST_F(ControlFlowOrtTest, VadModelMatchesOnnxRuntime) {
  std::unique_ptr<ir::Graph> graph = testing::BuildVadModel();
  std::mt19937 rng(11);
  for (int64_t n : {512, 256}) {
    for (int64_t sr : {16000, 8000}) {
      NamedTensors inputs = {{"x", testing::RandomFloats({1, n}, rng)},
                             {"sr", Tensor::Scalar<int64_t>(sr)},
                             {"state", testing::RandomFloats({2, 1, 128}, rng, 0.5f)}};
      ExpectMatchesOrt(*graph, inputs, "vad_" + std::to_string(n) + "_" + std::to_string(sr));
    }
  }
}

TEST_F(ControlFlowOrtTest, LoopsMatchOnnxRuntime) {
  ExpectMatchesOrt(*testing::BuildLoopAccumulate(false),
                   {{"x", Tensor::FromVector<float>({3}, {0.5f, -2, 3})}}, "loop_accumulate");
  ExpectMatchesOrt(
      *testing::BuildLoopUntil(),
      {{"M", Tensor::Scalar<int64_t>(10)}, {"limit", Tensor::FromVector<float>({1}, {5})}},
      "loop_until");
  ExpectMatchesOrt(*testing::BuildLoopGrowing(false),
                   {{"v0", Tensor::FromVector<float>({1, 2}, {0.25f, -1})}}, "loop_growing");
  ExpectMatchesOrt(*testing::BuildLoopWithIf(),
                   {{"x", Tensor::FromVector<float>({2}, {1.5f, -2})},
                    {"scale", Tensor::FromVector<float>({1}, {0.75f})}},
                   "loop_if");
}

TEST_F(ControlFlowOrtTest, ScansMatchOnnxRuntime) {
  std::mt19937 rng(5);
  Tensor seq = testing::RandomFloats({6, 1, 4}, rng);
  Tensor h0 = testing::RandomFloats({1, 8}, rng, 0.5f);
  for (bool reverse : {false, true}) {
    ExpectMatchesOrt(*testing::BuildScanRnn(0, reverse), {{"seq", seq}, {"h0", h0}},
                     std::string("scan_axis0_") + (reverse ? "rev" : "fwd"));
    ExpectMatchesOrt(*testing::BuildScanRnn(1, reverse),
                     {{"seq", *seq.Reshaped({1, 6, 4})}, {"h0", h0}},
                     std::string("scan_axis1_") + (reverse ? "rev" : "fwd"));
  }
}

TEST(ControlFlowExport, WriteVadModel) {
  const char* dir = std::getenv("QTUNE_VAD_EXPORT_DIR");
  if (dir == nullptr) GTEST_SKIP() << "set QTUNE_VAD_EXPORT_DIR to write vad.onnx";
  ASSERT_TRUE(ir::SaveModel(*testing::BuildVadModel(), (fs::path(dir) / "vad.onnx")).ok());
}

}  // namespace
}  // namespace qtune::runtime
