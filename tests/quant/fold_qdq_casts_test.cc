// passes::FoldQdqCasts: float-precision Casts next to Q/DQ fold into them; widening,
// non-float and shared Casts do not.
#include "passes/fold_qdq_casts.h"

#include <gtest/gtest.h>

#include "core/float_convert.h"
#include "ir/builder.h"
#include "ir/verify.h"
#include "reference_check.h"

namespace qtune::passes {
namespace {

using ir::Attribute;

int Count(const ir::Graph& g, const std::string& op) {
  int n = 0;
  for (const ir::Node* node : g.nodes()) n += node->op_type() == op;
  return n;
}

Attribute To(DataType t) { return Attribute::Int("to", static_cast<int64_t>(t)); }

Tensor Half(float v) {
  Tensor t = *Tensor::Allocate(DataType::kFloat16, {});
  t.data<uint16_t>()[0] = FloatToHalf(v);
  return t;
}

// x16 -> Cast(f32) -> Q(s32) -> DQ(s32) -> Cast(f16) -> y   (the fp16-model sandwich)
std::unique_ptr<ir::Graph> Sandwich(DataType x_type, DataType back_to) {
  ir::GraphBuilder b(19);
  ir::Value* x = b.Input("x", x_type, {4});
  ir::Value* c = b.Op("Cast", {x}, {To(DataType::kFloat32)});
  ir::Value* s = b.Initializer("s", Tensor::Scalar<float>(0.05f));
  ir::Value* z = b.Initializer("z", Tensor::Scalar<int8_t>(0));
  ir::Value* q = b.Op("QuantizeLinear", {c, s, z});
  ir::Value* dq = b.Op("DequantizeLinear", {q, s, z});
  ir::Value* y = b.Op("Cast", {dq}, {To(back_to)}, {.output_names = {"y"}});
  b.Output(y);
  return b.Build();
}

TEST(FoldQdqCastsTest, Fp16SandwichFoldsBothCasts) {
  auto g = Sandwich(DataType::kFloat16, DataType::kFloat16);
  auto folded = FoldQdqCastsCount(*g);
  ASSERT_TRUE(folded.ok()) << folded.status().ToString();
  EXPECT_EQ(*folded, 2);
  EXPECT_EQ(Count(*g, "Cast"), 0);
  ASSERT_TRUE(ir::Verify(*g).ok());
  const ir::Value* y = g->outputs()[0];
  EXPECT_EQ(y->name(), "y");
  EXPECT_EQ(y->dtype(), DataType::kFloat16);
  const ir::Node* dq = y->producer();
  ASSERT_EQ(dq->op_type(), "DequantizeLinear");
  EXPECT_EQ(dq->input(1)->dtype(), DataType::kFloat16);
  const ir::Node* q = dq->input(0)->producer();
  EXPECT_EQ(q->input(0)->name(), "x");
  EXPECT_EQ(q->input(1)->dtype(), DataType::kFloat16);
  EXPECT_EQ(HalfToFloat(q->input(1)->initializer().data<uint16_t>()[0]),
            HalfToFloat(FloatToHalf(0.05f)));
}

TEST(FoldQdqCastsTest, WideningCastsStay) {
  // x32 -> Cast(f16) -> Q(s16) -> DQ(s16) -> Cast(f32): folding would widen the scales.
  ir::GraphBuilder b(19);
  ir::Value* x = b.Input("x", DataType::kFloat32, {4});
  ir::Value* c = b.Op("Cast", {x}, {To(DataType::kFloat16)});
  ir::Value* s = b.Initializer("s", Half(0.05f));
  ir::Value* z = b.Initializer("z", Tensor::Scalar<int8_t>(0));
  ir::Value* q = b.Op("QuantizeLinear", {c, s, z});
  ir::Value* dq = b.Op("DequantizeLinear", {q, s, z});
  b.Output(b.Op("Cast", {dq}, {To(DataType::kFloat32)}));
  auto g = b.Build();
  auto folded = FoldQdqCastsCount(*g);
  ASSERT_TRUE(folded.ok());
  EXPECT_EQ(*folded, 0);
  EXPECT_EQ(Count(*g, "Cast"), 2);
}

TEST(FoldQdqCastsTest, NonFloatSourceDoesNotFold) {
  auto g = Sandwich(DataType::kUint8, DataType::kFloat32);  // image bytes -> float -> Q
  auto folded = FoldQdqCastsCount(*g);
  ASSERT_TRUE(folded.ok());
  EXPECT_EQ(*folded, 1);  // only the same-precision DQ -> Cast(f32)
  const ir::Node* q = nullptr;
  for (const ir::Node* n : g->nodes()) {
    if (n->op_type() == "QuantizeLinear") q = n;
  }
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->input(0)->producer()->op_type(), "Cast");
  EXPECT_TRUE(ir::Verify(*g).ok());
}

TEST(FoldQdqCastsTest, MissingTypeInformationCountsAsFoldable) {
  auto g = Sandwich(DataType::kUndefined, DataType::kFloat32);
  auto folded = FoldQdqCastsCount(*g);
  ASSERT_TRUE(folded.ok());
  EXPECT_EQ(*folded, 2);
  EXPECT_EQ(Count(*g, "Cast"), 0);
  EXPECT_TRUE(ir::Verify(*g).ok());
}

TEST(FoldQdqCastsTest, CastWithAnotherReaderStaysForIt) {
  ir::GraphBuilder b(19);
  ir::Value* x = b.Input("x", DataType::kFloat16, {4});
  ir::Value* c = b.Op("Cast", {x}, {To(DataType::kFloat32)});
  ir::Value* s = b.Initializer("s", Tensor::Scalar<float>(0.05f));
  ir::Value* z = b.Initializer("z", Tensor::Scalar<int8_t>(0));
  ir::Value* q = b.Op("QuantizeLinear", {c, s, z});
  ir::Value* dq = b.Op("DequantizeLinear", {q, s, z});
  b.Output(b.Op("Add", {dq, c}));
  auto g = b.Build();
  auto before = g->Clone();
  auto folded = FoldQdqCastsCount(*g);
  ASSERT_TRUE(folded.ok());
  EXPECT_EQ(*folded, 1);
  EXPECT_EQ(Count(*g, "Cast"), 1);
  // The DQ keeps its float32 scale (shared with the Q, so the Q got a float16 copy).
  const ir::Node* dq_node = g->outputs()[0]->producer()->input(0)->producer();
  EXPECT_EQ(dq_node->input(1)->dtype(), DataType::kFloat32);
  ASSERT_TRUE(ir::Verify(*g).ok());
}

TEST(FoldQdqCastsTest, Fp32SandwichFoldsAndKeepsValues) {
  // Same-precision casts (f32 -> f32) fold; results stay equal.
  auto g = Sandwich(DataType::kFloat32, DataType::kFloat32);
  auto before = g->Clone();
  auto folded = FoldQdqCasts(*g, {});
  ASSERT_TRUE(folded.ok());
  EXPECT_TRUE(*folded);
  EXPECT_EQ(Count(*g, "Cast"), 0);
  testing::ExpectSameOutputs(*before, *g);
}

}  // namespace
}  // namespace qtune::passes
