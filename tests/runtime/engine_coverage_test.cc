// No real model may spend more than 5% of its time in reference-tier kernels (issue 16):
// the audio front end (STFT as a 1-D Conv) and the ViT-style block built here, and every
// model in models/ plus the C++-built ResNet-18, each run with profiling on the default
// fast tier. The two built models are also checked against ONNX Runtime.
//
// Setting QTUNE_FRONTEND_EXPORT_DIR writes audio_frontend.onnx and vit_block.onnx there
// (for bench/frontend_ort.sh).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <random>

#include "core/check.h"
#include "ir/onnx_io.h"
#include "runtime/frontend_test_models.h"
#include "runtime/session.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"
#include "util/random_tensor.h"
#include "util/test_models.h"

namespace qtune::runtime {
namespace {

namespace fs = std::filesystem;

constexpr double kMaxReferenceShare = 0.05;

// Runs `graph` `runs` times with profiling and returns the share of the profiled time
// spent in reference-tier kernels; the profile is printed and added to `failure` text.
double ReferenceShare(const ir::Graph& graph, const NamedTensors& inputs, std::string* profile) {
  SessionOptions options;
  options.profile = true;
  auto session = Session::Create(graph, options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  if (!session.ok()) return 1.0;
  for (int run = 0; run < 3; ++run) {
    auto outputs = (*session)->Run(inputs);
    EXPECT_TRUE(outputs.ok()) << outputs.status().ToString();
    if (!outputs.ok()) return 1.0;
  }
  std::map<std::string, std::vector<int64_t>> sizes;
  for (const auto& [name, tensor] : inputs) sizes[name] = tensor.sizes();
  auto plan = (*session)->Prepare(sizes);
  EXPECT_TRUE(plan.ok());
  if (!plan.ok()) return 1.0;
  double total = 0, reference = 0;
  for (const PlanStep& step : (*plan)->steps) {
    total += step.profile_ms;
    if (step.kernel->Describe().rfind("reference", 0) == 0) reference += step.profile_ms;
  }
  *profile = (*plan)->ProfileToString();
  return total > 0 ? reference / total : 1.0;
}

struct Case {
  std::string name;
  std::function<std::unique_ptr<ir::Graph>()> build;
  std::string input;
  std::vector<int64_t> sizes;
};

std::unique_ptr<ir::Graph> Load(const std::string& path) {
  auto graph = ir::LoadModel(path);
  QTUNE_CHECK(graph.ok());
  return std::move(*graph);
}

std::vector<Case> Cases() {
  const std::string m = QTUNE_MODELS_DIR;
  return {
      {"audio_frontend", [] { return testing::BuildAudioFrontEnd({}); }, "audio", {1, 1, 16000}},
      {"vit_block", [] { return testing::BuildVitBlock({}); }, "x", {8, 197, 192}},
      {"fmnist_resnet",
       [m] { return Load(m + "/fmnist/fmnist_resnet.onnx"); },
       "input",
       {4, 1, 28, 28}},
      {"ppocr_cls", [m] { return Load(m + "/ppocr/ppocr_cls.onnx"); }, "x", {2, 3, 48, 192}},
      {"ppocrv4_det", [m] { return Load(m + "/ppocr/ppocrv4_det.onnx"); }, "x", {1, 3, 320, 320}},
      {"resnet18", [] { return testing::BuildTestResNet18(); }, "input", {1, 3, 224, 224}},
  };
}

class EngineCoverageTest : public ::testing::TestWithParam<Case> {};

TEST_P(EngineCoverageTest, ReferenceKernelsTakeAtMostFivePercent) {
  const Case& c = GetParam();
  std::unique_ptr<ir::Graph> graph = c.build();
  NamedTensors inputs = {{c.input, testing::RandomUniformTensor(c.sizes, 3)}};
  std::string profile;
  double share = ReferenceShare(*graph, inputs, &profile);
  std::printf("%s: reference tier %.1f%% of the time\n%s", c.name.c_str(), 100 * share,
              profile.c_str());
  EXPECT_LE(share, kMaxReferenceShare) << c.name << "\n" << profile;
}

INSTANTIATE_TEST_SUITE_P(Models, EngineCoverageTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

// The built models against ONNX Runtime, through qtune's fast tier.
TEST(EngineCoverageOrtTest, AudioFrontEndAndVitBlockMatchOnnxRuntime) {
  if (!testing::OrtAvailable()) {
    QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
  }
  for (const Case& c : Cases()) {
    if (c.name != "audio_frontend" && c.name != "vit_block") continue;
    SCOPED_TRACE(c.name);
    std::unique_ptr<ir::Graph> graph = c.build();
    fs::path path =
        fs::temp_directory_path() / ("qtune_" + c.name + "_" + std::to_string(getpid()) + ".onnx");
    ASSERT_TRUE(ir::SaveModel(*graph, path.string()).ok());
    std::vector<int64_t> sizes = c.sizes;
    sizes[0] = 2;  // a smaller batch is enough for values
    NamedTensors inputs = {{c.input, testing::RandomUniformTensor(sizes, 9)}};
    const std::string output = graph->outputs()[0]->name();
    auto ort = testing::RunOrt(path.string(), inputs, {output});
    fs::remove(path);
    ASSERT_TRUE(ort.ok()) << ort.status().ToString();
    auto session = Session::Create(*graph, SessionOptions{});
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    auto ours = (*session)->Run(inputs);
    ASSERT_TRUE(ours.ok()) << ours.status().ToString();
    EXPECT_EQ((*ours)[0].second.sizes(), (*ort)[0].second.sizes());
    EXPECT_LE(testing::RelativeL2((*ours)[0].second, (*ort)[0].second), 1e-4);
  }
}

TEST(EngineCoverageOrtTest, ExportForBenchmarks) {
  const char* dir = std::getenv("QTUNE_FRONTEND_EXPORT_DIR");
  if (dir == nullptr) GTEST_SKIP() << "set QTUNE_FRONTEND_EXPORT_DIR to write the models";
  ASSERT_TRUE(ir::SaveModel(*testing::BuildAudioFrontEnd({}),
                            (fs::path(dir) / "audio_frontend.onnx").string())
                  .ok());
  ASSERT_TRUE(
      ir::SaveModel(*testing::BuildVitBlock({}), (fs::path(dir) / "vit_block.onnx").string()).ok());
}

}  // namespace
}  // namespace qtune::runtime
