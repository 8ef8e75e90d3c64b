// An STFT front end built with ir::GraphBuilder, run by qtune's engine (both tiers) and by
// ONNX Runtime: a [1, 4000] signal, unsqueezed to [1, 4000, 1], 256-sample frames every 128
// samples, weighed by a periodic Hann window (HannWindow of a constant size, so qtune folds
// it into a constant), one-sided: [1, 30, 129, 2].
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "ir/builder.h"
#include "ir/onnx_io.h"
#include "runtime/session.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"

namespace qtune::runtime {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<ir::Graph> BuildStftModel() {
  ir::GraphBuilder b(17);
  ir::Value* signal = b.Input("signal", DataType::kFloat32, {1, 4000});
  ir::Value* axes = b.Initializer("axes", Tensor::FromVector<int64_t>({1}, {2}));
  ir::Value* step = b.Initializer("frame_step", Tensor::Scalar<int64_t>(128));
  ir::Value* size = b.Initializer("window_size", Tensor::Scalar<int64_t>(256));
  ir::Value* signal3 = b.Op("Unsqueeze", {signal, axes});
  ir::Value* window = b.Op("HannWindow", {size});
  ir::Value* spectrum =
      b.Op("STFT", {signal3, step, window}, {}, {.name = "stft", .output_names = {"spectrum"}});
  b.Output(spectrum);
  return b.Build();
}

Tensor RandomSignal(uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> values(4000);
  for (float& v : values) v = dist(rng);
  return Tensor::FromVector<float>({1, 4000}, values);
}

TEST(SignalOrtTest, StftMatchesOnnxRuntime) {
  if (!testing::OrtAvailable()) {
    QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
  }
  std::unique_ptr<ir::Graph> graph = BuildStftModel();
  fs::path path = fs::temp_directory_path() / ("qtune_stft_" + std::to_string(getpid()) + ".onnx");
  ASSERT_TRUE(ir::SaveModel(*graph, path.string()).ok());
  NamedTensors inputs = {{"signal", RandomSignal(17)}};
  auto ort = testing::RunOrt(path.string(), inputs, {"spectrum"});
  fs::remove(path);
  ASSERT_TRUE(ort.ok()) << ort.status().ToString();
  const Tensor& expected = (*ort)[0].second;
  ASSERT_EQ(expected.sizes(), (std::vector<int64_t>{1, 30, 129, 2}));
  for (bool use_onednn : {true, false}) {
    SCOPED_TRACE(use_onednn ? "onednn tier" : "reference tier");
    SessionOptions options;
    options.use_onednn = use_onednn;
    auto session = Session::Create(*graph, options);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    auto ours = (*session)->Run(inputs);
    ASSERT_TRUE(ours.ok()) << ours.status().ToString();
    const Tensor& got = (*ours)[0].second;
    EXPECT_EQ(got.sizes(), expected.sizes());
    // Bins reach ~|sum of 256 windowed samples|; float32 FFTs differ in the last bits.
    EXPECT_LE(testing::MaxAbsDiff(got, expected), 1e-3);
    EXPECT_LE(testing::RelativeL2(got, expected), 1e-5);
  }
}

}  // namespace
}  // namespace qtune::runtime
