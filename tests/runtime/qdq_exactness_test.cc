// INT8 exactness of the fused QDQ paths (issue 26 item 4): on third-party QDQ layouts
// (ONNX Runtime's quantize_static and ModelOpt/TensorRT, util/qdq_model.h) and a quantized
// detector, qtune's fused int8 output must be no farther from the unfused QDQ reference
// (qtune's reference tier running the QDQ graph node by node) than ONNX Runtime's own fused
// int8 output is. The deviation is measured against the reference, never against ONNX
// Runtime.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>

#include "ir/builder.h"
#include "ir/onnx_io.h"
#include "passes/pipeline.h"
#include "runtime/reference/registry.h"
#include "runtime/session.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"
#include "util/qdq_model.h"
#include "util/random_tensor.h"
#include "util/test_models.h"

namespace qtune::runtime {
namespace {

struct ExactnessCase {
  std::string name;
  std::string path;  // "" = the test ResNet-18
  std::string input;
  std::vector<int64_t> sizes;
  testing::QdqStyle style;
};

void PrintTo(const ExactnessCase& c, std::ostream* os) { *os << c.name; }

testing::QdqStyle Style(bool u8, bool ort_layout, bool per_channel = true) {
  testing::QdqStyle s;
  s.unsigned_activations = u8;
  s.quantize_all_ops = ort_layout;
  s.int32_bias = ort_layout;
  s.per_channel = per_channel;
  return s;
}

std::vector<ExactnessCase> Cases() {
  const std::string models = QTUNE_MODELS_DIR;
  const std::string fmnist = models + "/fmnist/fmnist_resnet.onnx";
  const std::string det = models + "/ppocr/ppocrv4_det.onnx";
  const std::vector<int64_t> fm = {8, 1, 28, 28};
  return {
      {"fmnist_ort_u8", fmnist, "input", fm, Style(true, true)},
      {"fmnist_ort_s8", fmnist, "input", fm, Style(false, true)},
      {"fmnist_trt_s8", fmnist, "input", fm, Style(false, false)},
      // The detector is opset 11: per-tensor weight scales only. In ONNX Runtime's u8
      // layout its SE blocks' GlobalAveragePools run on uint8 between a Q/DQ pair; they
      // compute as the graph does (fusion/quant_ops.h kPoolScaleAttribute): rounding the
      // exact integer mean instead put the output 0.274 from the reference (ORT: 0.226).
      {"ppocrv4_det_trt_s8", det, "x", {1, 3, 96, 128}, Style(false, false, false)},
      {"ppocrv4_det_ort_u8", det, "x", {1, 3, 96, 128}, Style(true, true, false)},
      {"resnet18_ort_u8", "", "input", {1, 3, 224, 224}, Style(true, true)},
      {"resnet18_trt_s8", "", "input", {1, 3, 224, 224}, Style(false, false)},
  };
}

StatusOr<std::unique_ptr<ir::Graph>> Cleaned(const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<ir::Graph> graph, ir::LoadModel(path));
  passes::PassOptions options;
  options.evaluator = [](const ir::Node& node, std::span<const Tensor> inputs, int64_t opset) {
    return EvaluateNode(node, inputs, opset);
  };
  RETURN_IF_ERROR(passes::RunPipeline(*graph, options).status());
  return graph;
}

StatusOr<NamedTensors> RunSession(const ir::Graph& graph, const NamedTensors& inputs,
                                  const SessionOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::Create(graph, options));
  return session->Run(inputs);
}

class QdqExactnessTest : public ::testing::TestWithParam<ExactnessCase> {};

TEST_P(QdqExactnessTest, FusedIsNoFartherFromTheUnfusedReferenceThanOrt) {
  const ExactnessCase& c = GetParam();
  testing::ExpectPresentInCi(testing::OrtAvailable(), "ONNX Runtime (tools/ort)");
  if (!testing::OrtAvailable()) GTEST_SKIP() << "ONNX Runtime (tools/ort) is not installed";
  auto model = Cleaned(c.path.empty() ? testing::ResNet18File() : c.path);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  NamedTensors calib = {{c.input, testing::RandomNormalTensor(c.sizes, 1)}};
  auto qdq = testing::BuildNaiveQdq(**model, calib, c.style);
  ASSERT_TRUE(qdq.ok()) << qdq.status().ToString();
  NamedTensors inputs = {{c.input, testing::RandomNormalTensor(c.sizes, 2)}};

  // The unfused QDQ reference: reference kernels, no passes, no fusions.
  SessionOptions unfused;
  unfused.use_onednn = false;
  unfused.optimize = false;
  auto want = RunSession(**qdq, inputs, unfused);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  // The fused graph on the integer reference kernels, and on the fast kernels.
  SessionOptions fused_reference;
  fused_reference.use_onednn = false;
  auto integer = RunSession(**qdq, inputs, fused_reference);
  ASSERT_TRUE(integer.ok()) << integer.status().ToString();
  auto got = RunSession(**qdq, inputs, SessionOptions{});
  ASSERT_TRUE(got.ok()) << got.status().ToString();

  std::vector<std::string> names;
  for (const ir::Value* out : (*qdq)->outputs()) names.push_back(out->name());
  const std::string file = ::testing::TempDir() + "/" + c.name + "_exactness.onnx";
  ASSERT_TRUE(ir::SaveModel(**qdq, file).ok());
  auto ort = testing::RunOrt(file, inputs, names, 1);  // optimizations on: ORT's QDQ fusion
  ASSERT_TRUE(ort.ok()) << ort.status().ToString();

  for (size_t i = 0; i < names.size(); ++i) {
    const Tensor& reference = (*want)[i].second;
    const double qtune_rel = testing::RelativeL2((*got)[i].second, reference);
    const double integer_rel = testing::RelativeL2((*integer)[i].second, reference);
    const double ort_rel = testing::RelativeL2((*ort)[i].second, reference);
    std::printf(
        "%s %s: relative L2 to the unfused reference: qtune fused %.3g (integer reference "
        "kernels %.3g), ONNX Runtime fused %.3g\n",
        c.name.c_str(), names[i].c_str(), qtune_rel, integer_rel, ort_rel);
    // 1e-6: both agree with the reference to float rounding.
    EXPECT_LE(qtune_rel, std::max(ort_rel, 1e-6)) << "qtune's fused int8 deviates more than "
                                                     "ONNX Runtime's from the QDQ graph";
  }
}

// DQ -> AveragePool / GlobalAveragePool -> Q with one scale and zero point runs on the
// uint8/int8 data (the pass-through fusion) and must give the unfused graph's bytes on both
// tiers: means that are exact ties (91 / 14 = 6.5) or a float rounding away from one are
// where rounding the exact integer mean differs from dequantize, average, quantize.
TEST(QdqAveragePoolTest, PassThroughAveragesRoundAsTheUnfusedGraph) {
  const int64_t h = 2, w = 7;
  const std::vector<int> sums = {91, 175, 203, 315, 105, 119, 77, 133};
  const int64_t channels = static_cast<int64_t>(sums.size());
  for (DataType t : {DataType::kUint8, DataType::kInt8}) {
    for (float scale : {0.1f, 0.0235294f, 0.5f}) {
      for (const char* op : {"GlobalAveragePool", "AveragePool"}) {
        const int32_t zp = t == DataType::kUint8 ? 3 : -2;
        std::vector<uint8_t> u(channels * h * w);
        std::vector<int8_t> s8(channels * h * w);
        for (int64_t c = 0; c < channels; ++c) {
          int remaining = sums[c];  // the plane's q - zp adds up to sums[c]
          for (int64_t i = 0; i < h * w; ++i) {
            const int v = std::min(remaining, 100);
            remaining -= v;
            u[c * h * w + i] = static_cast<uint8_t>(v + zp);
            s8[c * h * w + i] = static_cast<int8_t>(v + zp);
          }
        }
        const std::vector<int64_t> sizes = {1, channels, h, w};
        Tensor x = t == DataType::kUint8 ? Tensor::FromVector<uint8_t>(sizes, u)
                                         : Tensor::FromVector<int8_t>(sizes, s8);
        Tensor zero_point = t == DataType::kUint8
                                ? Tensor::Scalar<uint8_t>(static_cast<uint8_t>(zp))
                                : Tensor::Scalar<int8_t>(static_cast<int8_t>(zp));
        ir::GraphBuilder b(13);
        ir::Value* in = b.Input("x", t, sizes);
        ir::Value* s = b.Initializer("s", Tensor::Scalar<float>(scale));
        ir::Value* z = b.Initializer("z", zero_point);
        std::vector<ir::Attribute> attributes;
        if (std::string(op) == "AveragePool") {
          attributes = {ir::Attribute::Ints("kernel_shape", {1, w})};
        }
        ir::Value* pooled = b.Op(op, {b.Op("DequantizeLinear", {in, s, z})}, attributes);
        b.Output(b.Op("QuantizeLinear", {pooled, s, z}));
        std::unique_ptr<ir::Graph> graph = b.Build();
        const std::string label = std::string(op) + " " + std::string(DataTypeName(t)) + " scale " +
                                  std::to_string(scale);

        SessionOptions unfused;
        unfused.use_onednn = false;
        unfused.optimize = false;
        SessionOptions fused_reference;
        fused_reference.use_onednn = false;
        auto want = RunSession(*graph, {{"x", x}}, unfused);
        ASSERT_TRUE(want.ok()) << want.status().ToString();
        for (const SessionOptions& options : {fused_reference, SessionOptions{}}) {
          auto session = Session::Create(*graph, options);
          ASSERT_TRUE(session.ok()) << session.status().ToString();
          auto plan = (*session)->Prepare({{"x", sizes}});
          ASSERT_TRUE(plan.ok()) << plan.status().ToString();
          ASSERT_EQ((*plan)->steps.size(), 1u) << label << ": not fused\n" << (*plan)->ToString();
          EXPECT_EQ((*plan)->steps[0].op_type, op) << label;
          EXPECT_EQ((*plan)->steps[0].registration,
                    options.use_onednn && std::string(op) == "GlobalAveragePool"
                        ? "native_qdq_average"
                        : "reference")
              << label;
          auto got = (*session)->Run({{"x", x}});
          ASSERT_TRUE(got.ok()) << got.status().ToString();
          const Tensor& a = (*want)[0].second;
          const Tensor& g = (*got)[0].second;
          ASSERT_EQ(a.num_elements(), g.num_elements());
          const auto* wa = static_cast<const uint8_t*>(a.raw_data());
          const auto* ga = static_cast<const uint8_t*>(g.raw_data());
          for (int64_t i = 0; i < a.num_elements(); ++i) {
            EXPECT_EQ(static_cast<int>(ga[i]), static_cast<int>(wa[i]))
                << label << (options.use_onednn ? " fast" : " reference") << " element " << i;
          }
        }
      }
    }
  }
}

// The same on random data wider than a channel block, two images, at 1 and 2 threads; the
// fast tier serves it with native_qdq_average.
TEST(QdqAveragePoolTest, GlobalAverageOfManyChannelsAtTwoThreadsIsTheUnfusedGraph) {
  const std::vector<int64_t> sizes = {2, 150, 9, 11};
  std::mt19937 rng(7);
  std::vector<uint8_t> data(2 * 150 * 9 * 11);
  for (uint8_t& v : data) v = static_cast<uint8_t>(rng() % 256);
  const Tensor x = Tensor::FromVector<uint8_t>(sizes, data);
  ir::GraphBuilder b(13);
  ir::Value* in = b.Input("x", DataType::kUint8, sizes);
  ir::Value* s = b.Initializer("s", Tensor::Scalar<float>(0.0392157f));
  ir::Value* z = b.Initializer("z", Tensor::Scalar<uint8_t>(128));
  ir::Value* pooled = b.Op("GlobalAveragePool", {b.Op("DequantizeLinear", {in, s, z})});
  b.Output(b.Op("QuantizeLinear", {pooled, s, z}));
  std::unique_ptr<ir::Graph> graph = b.Build();
  SessionOptions unfused;
  unfused.use_onednn = false;
  unfused.optimize = false;
  auto want = RunSession(*graph, {{"x", x}}, unfused);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  for (int threads : {1, 2}) {
    SessionOptions fast;
    fast.threads = threads;
    auto session = Session::Create(*graph, fast);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    auto plan = (*session)->Prepare({{"x", sizes}});
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    ASSERT_EQ((*plan)->steps.back().registration, "native_qdq_average") << (*plan)->ToString();
    auto got = (*session)->Run({{"x", x}});
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    const Tensor& a = (*want)[0].second;
    const Tensor& g = (*got)[0].second;
    ASSERT_EQ(a.num_elements(), 300);
    ASSERT_EQ(g.num_elements(), 300);
    for (int64_t i = 0; i < a.num_elements(); ++i) {
      EXPECT_EQ(static_cast<int>(g.data<uint8_t>()[i]), static_cast<int>(a.data<uint8_t>()[i]))
          << "threads " << threads << " element " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, QdqExactnessTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace qtune::runtime
