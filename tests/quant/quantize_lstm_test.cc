// Quantizing a model that contains an LSTM (Conv -> Reshape -> LSTM -> Reshape -> MatMul):
// calibration runs through the LSTM, the Conv and the MatMul are quantized, the LSTM stays
// float (no DequantizeLinear feeds it, its weights stay float32 initializers), and the
// quantized model runs in qtune, close to the float model, and in ONNX Runtime.
#include <gtest/gtest.h>

#include <random>

#include "core/shape.h"
#include "export_test_util.h"
#include "ir/builder.h"
#include "ir/verify.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"
#include "util/random_tensor.h"

namespace qtune::quant {
namespace {

using ir::Attribute;

// x [1, 1, 8, 16] -> Conv 4x3x3 -> [1, 4, 8, 16] -> Reshape [8, 1, 64] -> LSTM hidden 16
// -> Y [8, 1, 1, 16] -> Reshape [8, 16] -> MatMul [16, 32] -> [8, 32].
std::unique_ptr<ir::Graph> ConvLstmMatMul(std::mt19937& rng) {
  ir::GraphBuilder b(14);
  ir::Value* x = b.Input("input", DataType::kFloat32, {1, 1, 8, 16});
  ir::Value* conv =
      b.Op("Conv",
           {x, b.Initializer("conv_w", qtune::testing::UniformTensor({4, 1, 3, 3}, rng, 0.5f)),
            b.Initializer("conv_b", qtune::testing::UniformTensor({4}, rng, 0.1f))},
           {Attribute::Ints("pads", {1, 1, 1, 1})});
  ir::Value* seq = b.Op(
      "Reshape", {conv, b.Initializer("seq_shape", Tensor::FromVector<int64_t>({3}, {8, 1, 64}))});
  ir::OpOptions lstm_options;
  lstm_options.name = "lstm";
  std::vector<ir::Value*> lstm = b.MultiOp(
      "LSTM",
      {seq, b.Initializer("lstm_w", qtune::testing::UniformTensor({1, 64, 64}, rng, 0.2f)),
       b.Initializer("lstm_r", qtune::testing::UniformTensor({1, 64, 16}, rng, 0.3f)),
       b.Initializer("lstm_b", qtune::testing::UniformTensor({1, 128}, rng, 0.1f))},
      1, {Attribute::Int("hidden_size", 16)}, lstm_options);
  ir::Value* rows = b.Op(
      "Reshape", {lstm[0], b.Initializer("rows_shape", Tensor::FromVector<int64_t>({2}, {8, 16}))});
  ir::OpOptions out_options;
  out_options.output_names = {"logits"};
  ir::Value* y = b.Op(
      "MatMul", {rows, b.Initializer("fc_w", qtune::testing::UniformTensor({16, 32}, rng, 0.5f))},
      {}, out_options);
  b.Output(y);
  return b.Build();
}

TEST(QuantizeLstmTest, LstmStaysFloatAndTheModelRuns) {
  std::mt19937 rng(2340);
  std::unique_ptr<ir::Graph> model = ConvLstmMatMul(rng);
  auto result =
      testing::QuantizeOn(*model, qtune::testing::UniformTensor({32, 1, 8, 16}, rng, 1.0f), "lstm");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_NE(result->quantized, nullptr);
  ASSERT_TRUE(ir::Verify(*result->quantized).ok());
  EXPECT_GE(result->summary.quantized_layers, 2) << SummaryToText(result->summary);
  EXPECT_GE(testing::CountOps(*result->quantized, "QuantizeLinear"), 1);

  // The LSTM is still there, in float: nothing it reads comes out of a DequantizeLinear.
  const ir::Node* lstm = result->quantized->FindNode("lstm");
  ASSERT_NE(lstm, nullptr);
  EXPECT_EQ(lstm->op_type(), "LSTM");
  for (size_t i = 0; i < lstm->num_inputs(); ++i) {
    const ir::Value* in = lstm->input(i);
    if (in == nullptr) continue;
    const ir::Node* producer = in->producer();
    EXPECT_TRUE(producer == nullptr || producer->op_type() != "DequantizeLinear")
        << "LSTM input " << i << " is dequantized";
  }

  Tensor x = qtune::testing::UniformTensor({1, 1, 8, 16}, rng, 1.0f);
  auto fp = testing::RunQtune(*model, "input", x);
  auto q = testing::RunQtune(*result->quantized, "input", x);
  ASSERT_TRUE(fp.ok()) << fp.status().ToString();
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_LT(qtune::testing::RelativeL2(*q, *fp), 0.05);

  if (!qtune::testing::OrtAvailable()) {
    QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
  }
  auto ort_q = testing::RunOrtOn(*result->quantized, "lstm_int8", "input", x);
  ASSERT_TRUE(ort_q.ok()) << ort_q.status().ToString();
  EXPECT_LT(qtune::testing::RelativeL2(*q, *ort_q), 0.02);
}

}  // namespace
}  // namespace qtune::quant
