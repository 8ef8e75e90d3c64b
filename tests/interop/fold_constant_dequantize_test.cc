// passes::FoldConstantDequantize, alone and as the engine's fallback for weights that did
// not fuse into an int8 kernel: the op then runs on its oneDNN kernel with a float
// constant, not on the reference kernel behind a DequantizeLinear at every inference.
#include "passes/fold_constant_dequantize.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "ir/builder.h"
#include "runtime/reference/reference_executor.h"
#include "runtime/session.h"

namespace qtune::passes {
namespace {

using runtime::NamedTensors;

Tensor Random(DataType type, std::vector<int64_t> sizes, uint32_t seed) {
  std::mt19937 rng(seed);
  Tensor t = *Tensor::Allocate(type, std::move(sizes));
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (type == DataType::kFloat32) t.data<float>()[i] = std::normal_distribution<float>()(rng);
    if (type == DataType::kInt8) t.data<int8_t>()[i] = static_cast<int8_t>(rng() % 255 - 127);
    if (type == DataType::kUint8) t.data<uint8_t>()[i] = static_cast<uint8_t>(rng() % 256);
    if (type == DataType::kInt32) t.data<int32_t>()[i] = static_cast<int32_t>(rng() % 2001) - 1000;
  }
  return t;
}

Tensor Positive(std::vector<int64_t> sizes, uint32_t seed) {
  Tensor t = Random(DataType::kFloat32, std::move(sizes), seed);
  for (float& v : t.span<float>()) v = 0.01f + std::fabs(v) * 0.01f;
  return t;
}

struct ConvGraphOptions {
  DataType weight_type = DataType::kInt8;
  bool per_channel = true;
  bool zero_point = true;
  bool int32_bias = true;
  int64_t block_size = 0;
};

// x (float) -> Conv(DQ(w), DQ(bias)) -> y: a weight-only quantized Conv, which QDQ fusion
// cannot turn into a QConv (its input is not quantized).
std::unique_ptr<ir::Graph> WeightOnlyConv(const ConvGraphOptions& o) {
  ir::GraphBuilder b(13);
  ir::Value* x = b.Input("x", DataType::kFloat32, {1, 4, 9, 9});
  const std::vector<int64_t> scale_sizes =
      o.per_channel ? std::vector<int64_t>{8} : std::vector<int64_t>{};
  ir::Value* w = b.Initializer("w_q", Random(o.weight_type, {8, 4, 3, 3}, 1));
  ir::Value* ws = b.Initializer("w_scale", Positive(scale_sizes, 2));
  std::vector<ir::Value*> w_inputs = {w, ws};
  if (o.zero_point) {
    Tensor zp = Random(o.weight_type, scale_sizes, 3);
    w_inputs.push_back(b.Initializer("w_zp", zp));
  }
  std::vector<ir::Attribute> attrs = {ir::Attribute::Int("axis", 0)};
  if (o.block_size != 0) attrs.push_back(ir::Attribute::Int("block_size", o.block_size));
  ir::Value* w_dq = b.Op("DequantizeLinear", w_inputs, attrs);
  ir::Value* bias = nullptr;
  if (o.int32_bias) {
    ir::Value* bq = b.Initializer("b_q", Random(DataType::kInt32, {8}, 4));
    ir::Value* bs = b.Initializer("b_scale", Positive({8}, 5));
    // ONNX: an int32 DequantizeLinear's zero point must be 0 (ONNX Runtime writes zeros).
    ir::Value* bz = b.Initializer("b_zp", *Tensor::Allocate(DataType::kInt32, {8}));
    bias = b.Op("DequantizeLinear", {bq, bs, bz}, {ir::Attribute::Int("axis", 0)});
  }
  ir::Value* y = b.Op("Conv", {x, w_dq, bias}, {ir::Attribute::Ints("pads", {1, 1, 1, 1})});
  b.Output(y);
  return b.Build();
}

int Count(const ir::Graph& g, const std::string& op) {
  int n = 0;
  for (const ir::Node* node : g.nodes()) n += node->op_type() == op;
  return n;
}

NamedTensors Inputs() { return {{"x", Random(DataType::kFloat32, {1, 4, 9, 9}, 9)}}; }

void ExpectFoldsExactly(const ConvGraphOptions& o) {
  std::unique_ptr<ir::Graph> g = WeightOnlyConv(o);
  auto before = runtime::RunReference(*g, Inputs());
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  auto folded = FoldConstantDequantizeCount(*g);
  ASSERT_TRUE(folded.ok()) << folded.status().ToString();
  EXPECT_EQ(*folded, o.int32_bias ? 2 : 1);
  EXPECT_EQ(Count(*g, "DequantizeLinear"), 0);
  EXPECT_EQ(g->FindValue("w_q"), nullptr) << "the quantized weight is no longer needed";
  ASSERT_TRUE(g->nodes()[0]->input(1)->is_initializer());
  auto after = runtime::RunReference(*g, Inputs());
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  const Tensor& a = (*before)[0].second;
  const Tensor& c = (*after)[0].second;
  ASSERT_EQ(a.num_elements(), c.num_elements());
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    ASSERT_EQ(a.data<float>()[i], c.data<float>()[i]) << "element " << i;
  }
}

TEST(FoldConstantDequantize, PerChannelInt8WithZeroPointsIsExact) { ExpectFoldsExactly({}); }

TEST(FoldConstantDequantize, PerTensorUint8WithoutZeroPointIsExact) {
  ExpectFoldsExactly({.weight_type = DataType::kUint8, .per_channel = false, .zero_point = false});
}

TEST(FoldConstantDequantize, FloatBiasAndNoZeroPointIsExact) {
  ExpectFoldsExactly({.zero_point = false, .int32_bias = false});
}

TEST(FoldConstantDequantize, BlockedFormWithAScalarScaleIsLeftAlone) {
  std::unique_ptr<ir::Graph> g =
      WeightOnlyConv({.per_channel = false, .zero_point = false, .int32_bias = false});
  // Re-tag the weight DQ as blocked: a scalar scale is no blocked scale; no guessing.
  for (ir::Node* node : g->nodes()) {
    if (node->op_type() == "DequantizeLinear")
      node->SetAttribute(ir::Attribute::Int("block_size", 2));
  }
  auto folded = FoldConstantDequantizeCount(*g);
  ASSERT_TRUE(folded.ok());
  EXPECT_EQ(*folded, 0);
  EXPECT_EQ(Count(*g, "DequantizeLinear"), 1);
}

// x -> Conv(DQ(w INT4 / UINT4 [8, 4, 3, 3], scale [8, 2, 3, 3], axis 1, block 2)): a Conv
// weight blocked along its input channels (quant/conv_weight_blocks.h).
std::unique_ptr<ir::Graph> BlockedInt4Conv(bool zero_point) {
  ir::GraphBuilder b(21);
  ir::Value* x = b.Input("x", DataType::kFloat32, {1, 4, 9, 9});
  const DataType type = zero_point ? DataType::kUint4 : DataType::kInt4;
  Tensor w = *Tensor::Allocate(type, {8, 4, 3, 3});
  std::mt19937 rng(7);
  auto* codes = static_cast<int8_t*>(w.raw_data());  // one element per byte
  for (int64_t i = 0; i < w.num_elements(); ++i) {
    codes[i] = static_cast<int8_t>(zero_point ? rng() % 16 : static_cast<int>(rng() % 16) - 8);
  }
  std::vector<ir::Value*> inputs = {b.Initializer("w_q", std::move(w)),
                                    b.Initializer("w_scale", Positive({8, 2, 3, 3}, 2))};
  if (zero_point) {
    Tensor zp = *Tensor::Allocate(type, {8, 2, 3, 3});
    for (int64_t i = 0; i < zp.num_elements(); ++i) {
      static_cast<uint8_t*>(zp.raw_data())[i] = static_cast<uint8_t>(rng() % 16);
    }
    inputs.push_back(b.Initializer("w_zp", std::move(zp)));
  }
  ir::Value* w_dq = b.Op("DequantizeLinear", inputs,
                         {ir::Attribute::Int("axis", 1), ir::Attribute::Int("block_size", 2)});
  b.Output(b.Op("Conv", {x, w_dq}, {ir::Attribute::Ints("pads", {1, 1, 1, 1})}));
  return b.Build();
}

TEST(FoldConstantDequantize, BlockedInt4AlongInputChannelsIsExact) {
  for (bool zero_point : {false, true}) {
    SCOPED_TRACE(zero_point ? "uint4 with zero points" : "int4");
    std::unique_ptr<ir::Graph> g = BlockedInt4Conv(zero_point);
    auto before = runtime::RunReference(*g, Inputs());
    ASSERT_TRUE(before.ok()) << before.status().ToString();
    auto folded = FoldConstantDequantizeCount(*g);
    ASSERT_TRUE(folded.ok()) << folded.status().ToString();
    EXPECT_EQ(*folded, 1);
    EXPECT_EQ(Count(*g, "DequantizeLinear"), 0);
    EXPECT_EQ(g->FindValue("w_q"), nullptr);
    auto after = runtime::RunReference(*g, Inputs());
    ASSERT_TRUE(after.ok()) << after.status().ToString();
    const Tensor& a = (*before)[0].second;
    const Tensor& c = (*after)[0].second;
    ASSERT_EQ(a.num_elements(), c.num_elements());
    for (int64_t i = 0; i < a.num_elements(); ++i) {
      ASSERT_EQ(a.data<float>()[i], c.data<float>()[i]) << "element " << i;
    }
  }
}

TEST(FoldConstantDequantize, DequantizeOfAGraphInputIsLeftAlone) {
  ir::GraphBuilder b(13);
  ir::Value* q = b.Input("q", DataType::kUint8, {4});
  ir::Value* s = b.Initializer("s", Positive({}, 1));
  b.Output(b.Op("DequantizeLinear", {q, s}));
  std::unique_ptr<ir::Graph> g = b.Build();
  auto folded = FoldConstantDequantizeCount(*g);
  ASSERT_TRUE(folded.ok());
  EXPECT_EQ(*folded, 0);
}

// The engine: the weight-only Conv cannot fuse into QConv; after the QDQ fusions its
// DequantizeLinear nodes fold, and the Conv runs on oneDNN.
TEST(FoldConstantDequantize, UnfusedWeightRunsOnOnednnConvNotReference) {
  std::unique_ptr<ir::Graph> g = WeightOnlyConv({});
  auto session = runtime::Session::Create(*g, runtime::SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto plan = (*session)->Prepare({{"x", {1, 4, 9, 9}}});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  std::map<std::string, int> ops;
  for (const runtime::PlanStep& step : (*plan)->steps) {
    ++ops[step.op_type];
    if (step.op_type == "Conv" || step.op_type == "FusedConv") {
      EXPECT_EQ(step.kernel->Describe().find("reference"), std::string::npos)
          << (*plan)->ToString();
    }
  }
  EXPECT_EQ(ops["DequantizeLinear"], 0) << (*plan)->ToString();
  EXPECT_EQ(ops["Conv"] + ops["FusedConv"], 1) << (*plan)->ToString();
  // The plan names why the Conv is not int8.
  EXPECT_NE((*plan)->ToString().find("not int8: input 0 is float"), std::string::npos)
      << (*plan)->ToString();
  auto got = (*session)->Run(Inputs());
  auto want = runtime::RunReference(*g, Inputs());
  ASSERT_TRUE(got.ok() && want.ok());
  const Tensor& a = (*got)[0].second;
  const Tensor& c = (*want)[0].second;
  double err = 0, norm = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    err += (a.data<float>()[i] - c.data<float>()[i]) * (a.data<float>()[i] - c.data<float>()[i]);
    norm += c.data<float>()[i] * c.data<float>()[i];
  }
  EXPECT_LE(std::sqrt(err / norm), 1e-5);
}

}  // namespace
}  // namespace qtune::passes
