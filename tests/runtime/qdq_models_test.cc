// QDQ models through qtune's int8 engine: naive QDQ versions of the real models (laid out
// like ONNX Runtime's quantize_static and like ModelOpt/TensorRT, see util/qdq_model.h)
// must fuse into int8 kernels and match (a) the unfused reference execution of the same
// QDQ graph and (b) ONNX Runtime on the same QDQ model.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "core/npy.h"
#include "ir/onnx_io.h"
#include "passes/pipeline.h"
#include "runtime/fused_run.h"
#include "runtime/kernels/onednn_context.h"
#include "runtime/reference/registry.h"
#include "runtime/session.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"
#include "util/qdq_model.h"
#include "util/random_tensor.h"
#include "util/test_models.h"

namespace qtune::runtime {
namespace {

struct QdqCase {
  std::string name;
  std::string path;
  std::string input;
  std::vector<int64_t> sizes;
  testing::QdqStyle style;
};

void PrintTo(const QdqCase& c, std::ostream* os) { *os << c.name; }

testing::QdqStyle Style(bool u8, bool all_ops, bool int_weights = true, bool per_channel = true) {
  testing::QdqStyle s;
  s.unsigned_activations = u8;
  s.quantize_all_ops = all_ops;
  s.quantized_weights = int_weights;
  s.per_channel = per_channel;
  s.int32_bias = all_ops;
  return s;
}

std::vector<QdqCase> Cases() {
  std::string fmnist = std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx";
  std::string det = std::string(QTUNE_MODELS_DIR) + "/ppocr/ppocrv4_det.onnx";
  std::vector<int64_t> fm = {8, 1, 28, 28};
  std::vector<QdqCase> cases = {
      {"fmnist_ort_u8", fmnist, "input", fm, Style(true, true)},
      {"fmnist_ort_s8", fmnist, "input", fm, Style(false, true)},
      {"fmnist_trt_s8", fmnist, "input", fm, Style(false, false)},
      {"fmnist_float_weights", fmnist, "input", fm, Style(true, true, false)},
      {"ppocrv4_det_u8", det, "x", {1, 3, 64, 96}, Style(true, true, true, false)},
  };
  // ResNet-18 built in C++ (util/test_models.h); its file is written on first use.
  cases.push_back({"resnet18_ort_u8", "", "input", {1, 3, 224, 224}, Style(true, true)});
  cases.push_back({"resnet18_trt_s8", "", "input", {1, 3, 224, 224}, Style(false, false)});
  return cases;
}

std::unique_ptr<ir::Graph> Cleaned(const std::string& path) {
  auto graph = ir::LoadModel(path);
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  passes::PassOptions options;
  options.evaluator = [](const ir::Node& node, std::span<const Tensor> inputs, int64_t opset) {
    return EvaluateNode(node, inputs, opset);
  };
  auto report = passes::RunPipeline(**graph, options);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  return std::move(*graph);
}

class QdqModelTest : public ::testing::TestWithParam<QdqCase> {};

TEST_P(QdqModelTest, FusesAndMatchesReferenceAndOrt) {
  const QdqCase& c = GetParam();
  const std::string& path = c.path.empty() ? testing::ResNet18File() : c.path;
  std::unique_ptr<ir::Graph> model = Cleaned(path);
  NamedTensors calib = {{c.input, testing::RandomNormalTensor(c.sizes, 1)}};
  auto qdq = testing::BuildNaiveQdq(*model, calib, c.style);
  ASSERT_TRUE(qdq.ok()) << qdq.status().ToString();
  NamedTensors inputs = {{c.input, testing::RandomNormalTensor(c.sizes, 2)}};

  auto run = RunFusedAndReference(**qdq, inputs);
  ASSERT_TRUE(run.ok()) << run.status().ToString();

  // Every Conv/Gemm/MatMul runs as an int8 kernel.
  auto& ops = run->ops;
  if (std::getenv("QTUNE_PRINT_PLAN")) std::printf("%s\n", run->plan.c_str());
  EXPECT_EQ(ops["Conv"] + ops["FusedConv"] + ops["Gemm"] + ops["MatMul"], 0) << run->plan;
  EXPECT_GT(ops["QConv"], 0);

  // Fused int8 kernels round exactly like quantize(op(dequantize(x))) except at ties that
  // float accumulation order decides (a few elements per million, tested per kernel in
  // onednn_qconv_test); in a deep network such 1-LSB flips propagate. So whole models are
  // held to: no farther from the unfused reference than ONNX Runtime's own int8 execution
  // is (or 2%, whichever is larger), and close to ONNX Runtime.
  NamedTensors ort;
  std::vector<std::string> names;
  for (const ir::Value* out : (*qdq)->outputs()) names.push_back(out->name());
  testing::ExpectPresentInCi(testing::OrtAvailable(), "ONNX Runtime (tools/ort)");
  if (testing::OrtAvailable()) {
    std::string path = ::testing::TempDir() + "/" + c.name + "_qdq.onnx";
    ASSERT_TRUE(ir::SaveModel(**qdq, path).ok());
    auto run = testing::RunOrt(path, inputs, names, 1);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    ort = std::move(*run);
  }
  for (size_t i = 0; i < run->want.size(); ++i) {
    const Tensor& want = run->want[i].second;
    const Tensor& got = run->got[i].second;
    double rel = testing::RelativeL2(got, want);
    double ort_rel = ort.empty() ? 0.0 : testing::RelativeL2(ort[i].second, want);
    double vs_ort = ort.empty() ? 0.0 : testing::RelativeL2(got, ort[i].second);
    std::printf("%s %s: relative L2 qtune-reference %.3g, ORT-reference %.3g, qtune-ORT %.3g\n",
                c.name.c_str(), names[i].c_str(), rel, ort_rel, vs_ort);
    EXPECT_LE(rel, std::max(0.02, 2 * ort_rel)) << "drifted from the unfused reference";
    if (!ort.empty()) {
      EXPECT_LE(vs_ort, std::max(0.03, 2 * ort_rel));
    }
  }
}

// Without an 8-bit dot product (no VNNI/AMX) oneDNN's u8 x s8 kernels saturate pair sums in
// int16; full-range 8-bit weights then stay in the float path (DQ -> Conv -> Q), which
// still computes the QDQ model exactly.
TEST(QdqSafePath, WithoutInt8DotProductFullRangeWeightsStayFloat) {
  std::unique_ptr<ir::Graph> model =
      Cleaned(std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx");
  std::vector<int64_t> sizes = {4, 1, 28, 28};
  NamedTensors calib = {{"input", testing::RandomNormalTensor(sizes, 1)}};
  auto qdq = testing::BuildNaiveQdq(*model, calib, Style(true, true));
  ASSERT_TRUE(qdq.ok()) << qdq.status().ToString();
  onednn::ForceNoInt8DotProductForTesting(true);
  auto session = Session::Create(**qdq, SessionOptions{});
  ASSERT_TRUE(session.ok());
  auto plan = (*session)->Prepare({{"input", sizes}});
  onednn::ForceNoInt8DotProductForTesting(false);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  std::map<std::string, int> ops;
  for (const PlanStep& step : (*plan)->steps) ++ops[step.op_type];
  EXPECT_EQ(ops["QConv"], 0) << (*plan)->ToString();
  EXPECT_GT(ops["Conv"] + ops["FusedConv"], 0);
  NamedTensors inputs = {{"input", testing::RandomNormalTensor(sizes, 2)}};
  auto got = (*session)->Run(inputs);
  auto want = RunReference(**qdq, inputs);
  ASSERT_TRUE(got.ok() && want.ok());
  EXPECT_LE(testing::RelativeL2((*got)[0].second, (*want)[0].second), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Models, QdqModelTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace qtune::runtime
