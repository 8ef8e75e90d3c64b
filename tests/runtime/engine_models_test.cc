// Whole models through qtune's engine against ONNX Runtime (the external oracle) and
// against qtune's own reference tier, on the bundled real models and ResNet-18 (built in
// C++ with random weights, util/test_models.h).
#include <gtest/gtest.h>

#include <random>

#include "core/npy.h"
#include "ir/onnx_io.h"
#include "runtime/session.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"
#include "util/random_tensor.h"
#include "util/test_models.h"

namespace qtune::runtime {
namespace {

// Random inputs drive a text detector into saturation (every probability ~1e-8, where
// only float rounding differs), so it gets a synthetic page of dark text strokes instead.
enum class InputKind { kRandom, kTextPage };

struct ModelCase {
  std::string name;
  std::string path;
  std::string input;
  std::vector<int64_t> sizes;
  InputKind kind = InputKind::kRandom;
};

void PrintTo(const ModelCase& c, std::ostream* os) { *os << c.name; }

std::vector<ModelCase> Cases() {
  std::string m = QTUNE_MODELS_DIR;
  std::vector<ModelCase> cases = {
      {"fmnist_resnet", m + "/fmnist/fmnist_resnet.onnx", "input", {4, 1, 28, 28}},
      {"ppocr_cls", m + "/ppocr/ppocr_cls.onnx", "x", {2, 3, 48, 192}},
      {"ppocrv4_det", m + "/ppocr/ppocrv4_det.onnx", "x", {1, 3, 96, 128}, InputKind::kTextPage},
  };
  cases.push_back({"resnet18", "", "input", {1, 3, 224, 224}});  // path: ResNet18File()
  return cases;
}

// Rows of short dark bars on a light page, normalized like PP-OCR's preprocessing.
Tensor TextPageInput(const std::vector<int64_t>& sizes) {
  Tensor t = *Tensor::Allocate(DataType::kFloat32, sizes);
  const float mean[3] = {0.485f, 0.456f, 0.406f}, stddev[3] = {0.229f, 0.224f, 0.225f};
  int64_t h_size = sizes[2], w_size = sizes[3];
  float* p = t.data<float>();
  for (int64_t n = 0; n < sizes[0]; ++n)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t h = 0; h < h_size; ++h)
        for (int64_t w = 0; w < w_size; ++w) {
          bool ink = h % 24 > 8 && h % 24 < 16 && w % 10 < 6 && w > 10 && w < w_size - 10;
          float pixel = ink ? 0.1f : 0.9f;
          p[((n * 3 + c) * h_size + h) * w_size + w] = (pixel - mean[c]) / stddev[c];
        }
  return t;
}

class EngineModelsTest : public ::testing::TestWithParam<ModelCase> {};

TEST_P(EngineModelsTest, OutputsMatchOnnxRuntimeAndReference) {
  const ModelCase& c = GetParam();
  if (!testing::OrtAvailable()) {
    QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
  }
  const std::string& path = c.path.empty() ? testing::ResNet18File() : c.path;
  auto graph = ir::LoadModel(path);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  Tensor x = c.kind == InputKind::kTextPage ? TextPageInput(c.sizes)
                                            : testing::RandomUniformTensor(c.sizes, 7);
  NamedTensors inputs = {{c.input, x}};
  std::vector<std::string> output_names;
  for (const ir::Value* v : (*graph)->outputs()) output_names.push_back(v->name());

  auto ort = testing::RunOrt(path, inputs, output_names);
  ASSERT_TRUE(ort.ok()) << ort.status().ToString();
  struct Config {
    bool use_onednn, optimize;
    const char* name;
  };
  for (Config config : {Config{true, true, "oneDNN tier"}, Config{false, true, "reference tier"},
                        Config{false, false, "reference tier, unoptimized graph"}}) {
    SessionOptions options;
    options.use_onednn = config.use_onednn;
    options.optimize = config.optimize;
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
          << c.name << " output " << (*outputs)[i].first << " (" << config.name << ")";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, EngineModelsTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace qtune::runtime
