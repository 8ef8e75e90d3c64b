// Whole models through qtune's engine against ONNX Runtime (the external oracle) and
// against qtune's own reference tier, on the bundled real models (and ResNet-18 from
// ../shared/models when it is there).
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "core/npy.h"
#include "ir/onnx_io.h"
#include "runtime/session.h"
#include "util/ort_peer.h"

namespace qtune::runtime {
namespace {

struct ModelCase {
  std::string name;
  std::string path;
  std::string input;
  std::vector<int64_t> sizes;
};

void PrintTo(const ModelCase& c, std::ostream* os) { *os << c.name; }

std::vector<ModelCase> Cases() {
  std::string m = QTUNE_MODELS_DIR;
  std::vector<ModelCase> cases = {
      {"fmnist_resnet", m + "/fmnist/fmnist_resnet.onnx", "input", {4, 1, 28, 28}},
      {"ppocr_cls", m + "/ppocr/ppocr_cls.onnx", "x", {2, 3, 48, 192}},
      {"ppocrv4_det", m + "/ppocr/ppocrv4_det.onnx", "x", {1, 3, 96, 128}},
  };
  std::string resnet = std::string(QTUNE_SHARED_MODELS_DIR) + "/resnet18/resnet18.onnx";
  if (std::filesystem::exists(resnet)) {
    cases.push_back({"resnet18", resnet, "input", {1, 3, 224, 224}});
  }
  return cases;
}

Tensor RandomInput(const std::vector<int64_t>& sizes, uint64_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor t = *Tensor::Allocate(DataType::kFloat32, sizes);
  for (float& v : t.span<float>()) v = dist(rng);
  return t;
}

class EngineModelsTest : public ::testing::TestWithParam<ModelCase> {};

TEST_P(EngineModelsTest, OutputsMatchOnnxRuntimeAndReference) {
  const ModelCase& c = GetParam();
  if (!testing::OrtAvailable()) GTEST_SKIP() << "ONNX Runtime (tools/ort) is not installed";
  auto graph = ir::LoadModel(c.path);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  NamedTensors inputs = {{c.input, RandomInput(c.sizes, 7)}};
  std::vector<std::string> output_names;
  for (const ir::Value* v : (*graph)->outputs()) output_names.push_back(v->name());

  auto ort = testing::RunOrt(c.path, inputs, output_names);
  ASSERT_TRUE(ort.ok()) << ort.status().ToString();
  for (bool use_onednn : {true, false}) {
    SessionOptions options;
    options.use_onednn = use_onednn;
    auto session = Session::Create(**graph, options);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    auto outputs = (*session)->Run(inputs);
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    ASSERT_EQ(outputs->size(), ort->size());
    for (size_t i = 0; i < outputs->size(); ++i) {
      const Tensor& ours = (*outputs)[i].second;
      const Tensor& theirs = (*ort)[i].second;
      EXPECT_EQ(ours.sizes(), theirs.sizes()) << (*outputs)[i].first;
      EXPECT_LE(testing::RelativeL2(ours, theirs), 1e-4)
          << c.name << " output " << (*outputs)[i].first
          << (use_onednn ? " (oneDNN tier)" : " (reference tier)");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, EngineModelsTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace qtune::runtime
