// Third-party-layout QDQ models through qtune's engine: the bundled fmnist ResNet and
// ResNet-18 written in ONNX Runtime quantize_static's layout (quant/ort_layout.h) and its
// ONNX-legal variations. Each must
//   - fuse every Conv into qtune::QConv and every Gemm into qtune::QMatMul (counts pinned
//     per model, so a fusion regression fails here instead of running 20x slower),
//   - run no Conv on a reference kernel and no DequantizeLinear of a weight at run time,
//   - match the unfused reference execution of the same QDQ graph and ONNX Runtime.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <random>

#include "core/npy.h"
#include "ir/onnx_io.h"
#include "quant/quantize_model.h"
#include "runtime/fused_run.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"
#include "util/random_tensor.h"
#include "util/test_models.h"

namespace qtune::quant {
namespace {

using runtime::NamedTensors;

struct InteropCase {
  std::string name;
  std::string model;  // "fmnist" or "resnet18"
  OrtLayoutOptions layout;
  // ONNX Runtime's QDQ -> QLinear* fusion types a zero point that QuantizeLinear omits
  // (opset 21's output_dtype form) as uint8 and rejects the model; such cases run ORT at
  // the "basic" level (no QDQ fusion), which still checks the graph's meaning.
  bool ort_basic = false;
};

void PrintTo(const InteropCase& c, std::ostream* os) { *os << c.name; }

struct ModelSpec {
  std::string path;
  std::string input;
  std::vector<int64_t> sizes;
  std::vector<std::string> calib;  // empty: random calibration
  int convs = 0;                   // pinned: every Conv fuses into QConv
  int matmuls = 0;                 // pinned: every Gemm/MatMul fuses into QMatMul
};

ModelSpec Spec(const std::string& model) {
  if (model == "fmnist") {
    const std::string dir = std::string(QTUNE_MODELS_DIR) + "/fmnist/";
    return {dir + "fmnist_resnet.onnx", "input", {4, 1, 28, 28}, {dir + "calib_512.npy"}, 9, 1};
  }
  return {testing::ResNet18File(), "input", {1, 3, 224, 224}, {}, 20, 1};
}

OrtLayoutOptions Layout(OrtActivationType activations, bool per_channel, bool zero_points,
                        int64_t opset) {
  OrtLayoutOptions o;
  o.activations = activations;
  o.per_channel = per_channel;
  o.zero_points = zero_points;
  o.opset = opset;
  return o;
}

std::vector<InteropCase> Cases() {
  using T = OrtActivationType;
  std::vector<InteropCase> cases = {
      {"fmnist_ort_default", "fmnist", OrtLayoutOptions{}},
      {"fmnist_no_zero_points", "fmnist", Layout(T::kUint8, true, false, 0)},
      {"fmnist_per_tensor", "fmnist", Layout(T::kUint8, false, true, 0)},
      {"fmnist_int8_asymmetric", "fmnist", Layout(T::kInt8, true, true, 0)},
      {"fmnist_int8_symmetric", "fmnist", Layout(T::kInt8Symmetric, true, true, 0)},
      {"fmnist_opset10", "fmnist", Layout(T::kUint8, false, true, 10)},
      {"fmnist_opset19", "fmnist", Layout(T::kUint8, true, true, 19)},
      {"fmnist_opset21_no_zero_points", "fmnist", Layout(T::kInt8Symmetric, true, false, 21), true},
      {"resnet18_ort_default", "resnet18", OrtLayoutOptions{}},
      {"resnet18_int8_no_zero_points", "resnet18", Layout(T::kInt8, true, false, 0)},
  };
  OrtLayoutOptions keep_relu;
  keep_relu.remove_activations = false;
  cases.push_back({"fmnist_relu_kept", "fmnist", keep_relu});
  OrtLayoutOptions float_bias;
  float_bias.int32_bias = false;
  cases.push_back({"fmnist_float_bias", "fmnist", float_bias});
  return cases;
}

StatusOr<std::unique_ptr<ir::Graph>> OrtLayoutModel(const ModelSpec& spec,
                                                    const OrtLayoutOptions& layout) {
  ASSIGN_OR_RETURN(std::unique_ptr<ir::Graph> model, ir::LoadModel(spec.path));
  QuantizeModelOptions options;
  options.target = Target::kOrt;
  options.ort_layout = layout;
  options.show_progress = false;
  options.calib_batch = 8;
  if (spec.calib.empty()) {
    options.random_calibration = true;
    options.random_samples = 2;
  } else {
    options.calib_specs = spec.calib;
    options.max_calib_samples = 64;
  }
  ASSIGN_OR_RETURN(QuantizeModelResult result, QuantizeModel(*model, options));
  return std::move(result.quantized);
}

class OrtLayoutModelTest : public ::testing::TestWithParam<InteropCase> {};

TEST_P(OrtLayoutModelTest, EveryConvFusesAndOutputsMatchReferenceAndOrt) {
  const InteropCase& c = GetParam();
  const ModelSpec spec = Spec(c.model);
  auto qdq = OrtLayoutModel(spec, c.layout);
  ASSERT_TRUE(qdq.ok()) << qdq.status().ToString();
  NamedTensors inputs = {{spec.input, testing::RandomNormalTensor(spec.sizes, 7)}};
  if (c.model == "fmnist") {  // real images: a few of the calibration set
    auto images = ReadNpy(spec.calib[0]);
    ASSERT_TRUE(images.ok()) << images.status().ToString();
    auto batch = images->Reshaped({images->size(0), 1, 28, 28});
    ASSERT_TRUE(batch.ok());
    Tensor first = *Tensor::Allocate(DataType::kFloat32, spec.sizes);
    std::copy_n(batch->data<float>() + 100 * 28 * 28, first.num_elements(), first.data<float>());
    inputs = {{spec.input, first}};
  }

  auto run = runtime::RunFusedAndReference(**qdq, inputs);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  if (std::getenv("QTUNE_PRINT_PLAN")) std::printf("%s\n", run->plan.c_str());
  EXPECT_EQ(run->ops["QConv"], spec.convs) << run->plan;
  EXPECT_EQ(run->ops["QMatMul"], spec.matmuls) << run->plan;
  EXPECT_EQ(run->ops["Conv"] + run->ops["FusedConv"] + run->ops["Gemm"] + run->ops["MatMul"], 0)
      << run->plan;
  EXPECT_EQ(run->plan.find("not int8:"), std::string::npos) << run->plan;
  EXPECT_EQ(run->plan.find(" reference"), std::string::npos)
      << "a step runs on a reference kernel:\n"
      << run->plan;

  std::vector<std::string> names;
  for (const ir::Value* out : (*qdq)->outputs()) names.push_back(out->name());
  NamedTensors ort;
  testing::ExpectPresentInCi(testing::OrtAvailable(), "ONNX Runtime (tools/ort)");
  if (testing::OrtAvailable()) {
    const std::string path = ::testing::TempDir() + "/" + c.name + "_ort_layout.onnx";
    ASSERT_TRUE(ir::SaveModel(**qdq, path).ok());
    setenv("QTUNE_ORT_OPT_LEVEL", c.ort_basic ? "basic" : "all", 1);
    auto ort_run = testing::RunOrt(path, inputs, names, 1);
    ASSERT_TRUE(ort_run.ok()) << ort_run.status().ToString();
    ort = std::move(*ort_run);
  }
  for (size_t i = 0; i < run->want.size(); ++i) {
    const Tensor& want = run->want[i].second;
    const Tensor& got = run->got[i].second;
    const double rel = testing::RelativeL2(got, want);
    const double ort_rel = ort.empty() ? 0.0 : testing::RelativeL2(ort[i].second, want);
    const double vs_ort = ort.empty() ? 0.0 : testing::RelativeL2(got, ort[i].second);
    std::printf("%s %s: relative L2 qtune-reference %.3g, ORT-reference %.3g, qtune-ORT %.3g\n",
                c.name.c_str(), names[i].c_str(), rel, ort_rel, vs_ort);
    // As in tests/runtime/qdq_models_test.cc: 1-LSB rounding ties propagate through a deep
    // int8 network, so whole models are held to ONNX Runtime's own distance (or 2-3%).
    EXPECT_LE(rel, std::max(0.02, 2 * ort_rel)) << "drifted from the unfused reference";
    if (!ort.empty()) {
      EXPECT_LE(vs_ort, std::max(0.03, 2 * ort_rel)) << "differs from ORT";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, OrtLayoutModelTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace qtune::quant
