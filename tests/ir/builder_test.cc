#include "ir/builder.h"

#include <gtest/gtest.h>

#include "ir/constant.h"
#include "ir/onnx_io.h"
#include "ir/verify.h"

namespace qtune::ir {
namespace {

TEST(BuilderTest, BuildsAConvGraph) {
  GraphBuilder b(/*opset=*/17);
  Value* x = b.Input("x", DataType::kFloat32, {1, 3, 224, 224});
  auto weights = Tensor::Allocate(DataType::kFloat32, {8, 3, 3, 3});
  ASSERT_TRUE(weights.ok());
  Value* w = b.Initializer("w", *weights);
  Value* y = b.Op("Conv", {x, w}, {Attribute::Ints("pads", {1, 1, 1, 1})});
  b.Output(y);
  std::unique_ptr<Graph> g = b.Build();
  EXPECT_EQ(g->onnx_opset(), 17);
  EXPECT_EQ(g->info().ir_version, 8);
  ASSERT_EQ(g->num_nodes(), 1u);
  Node* conv = g->nodes()[0];
  EXPECT_EQ(conv->name(), "Conv_0");
  EXPECT_EQ(conv->output(0)->name(), "Conv_0_out");
  EXPECT_EQ(conv->GetInts("pads", {}), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(conv->input(1), g->FindValue("w"));
  EXPECT_TRUE(g->outputs()[0] == conv->output(0));
}

TEST(BuilderTest, MultiOutputOpsAndExplicitNames) {
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {4, 2});
  std::vector<Value*> parts = b.MultiOp("Split", {x}, 2, {Attribute::Int("axis", 0)},
                                        {.name = "split", .output_names = {"top", "bottom"}});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0]->name(), "top");
  EXPECT_EQ(parts[1]->name(), "bottom");
  std::vector<Value*> generated = b.MultiOp("Split", {x}, 3);
  EXPECT_EQ(generated[2]->name(), "Split_0_out2");
  Value* sum = b.Op("Add", {parts[0], parts[1]}, {}, {.name = "add", .output_names = {"sum"}});
  EXPECT_EQ(b.last_node()->name(), "add");
  b.Output(sum);
  for (Value* v : generated) b.Output(v);
  auto g = b.Build();
  EXPECT_EQ(g->FindNode("split")->num_outputs(), 2u);
  EXPECT_EQ(g->outputs().size(), 4u);
}

TEST(BuilderTest, GeneratedNamesSkipExplicitOnes) {
  GraphBuilder b(17);
  Value* x = b.Input("x", DataType::kFloat32, {1});
  Value* a = b.Op("Relu", {x}, {}, {.name = "Relu_0"});
  Value* c = b.Op("Relu", {a});
  EXPECT_EQ(c->producer()->name(), "Relu_1");
  b.Output(c);
  EXPECT_TRUE(Verify(*b.Build()).ok());
}

TEST(BuilderTest, SymbolicDims) {
  GraphBuilder b(17);
  Value* x = b.Input("x", DataType::kFloat32,
                     Shape({Dim::Symbolic("batch"), Dim::Known(3), Dim::Unknown()}));
  b.Output(b.Op("Relu", {x}));
  auto g = b.Build();
  EXPECT_EQ(g->inputs()[0]->type().shape->ToString(), "[batch,3,?]");
}

TEST(BuilderTest, ConstantNodes) {
  GraphBuilder b(11);
  Value* c = b.Constant(Tensor::FromVector<int64_t>({2}, {3, 4}), {.name = "shape"});
  EXPECT_EQ(c->dtype(), DataType::kInt64);
  Value* x = b.Input("x", DataType::kFloat32, {12});
  b.Output(b.Op("Reshape", {x, c}));
  auto g = b.Build();
  auto value = ConstantValue(*g->FindNode("shape"));
  ASSERT_TRUE(value.ok()) << value.status().ToString();
  EXPECT_EQ(value->span<int64_t>()[1], 4);
}

TEST(BuilderTest, NodesAreSortedEvenIfWiredLate) {
  GraphBuilder b(17);
  Value* x = b.Input("x", DataType::kFloat32, {1});
  Value* late = b.Op("Neg", {nullptr}, {}, {.name = "late"});
  Value* early = b.Op("Relu", {x}, {}, {.name = "early"});
  b.graph().SetNodeInput(late->producer(), 0, early);
  b.Output(late);
  auto g = b.Build();
  EXPECT_EQ(g->nodes()[0]->name(), "early");
}

TEST(BuilderTest, BuiltGraphsSaveAndLoad) {
  GraphBuilder b(17);
  Value* x = b.Input("x", DataType::kFloat32, Shape({Dim::Symbolic("N"), Dim::Known(4)}));
  Value* w = b.Initializer("w", Tensor::FromVector<float>({4, 4}, std::vector<float>(16, 0.5f)));
  b.Output(b.Op("Relu", {b.Op("MatMul", {x, w})}));
  auto g = b.Build();
  auto bytes = SerializeModel(*g);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto again = ParseModel(*bytes, "built.onnx", {});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*again)->num_nodes(), 2u);
  EXPECT_EQ((*again)->inputs()[0]->type().shape->ToString(), "[N,4]");
}

TEST(BuilderTest, IrVersionFollowsOpset) {
  EXPECT_EQ(IrVersionForOpset(9), 4);
  EXPECT_EQ(IrVersionForOpset(11), 6);
  EXPECT_EQ(IrVersionForOpset(13), 7);
  EXPECT_EQ(IrVersionForOpset(17), 8);
  EXPECT_EQ(IrVersionForOpset(19), 9);
  EXPECT_EQ(IrVersionForOpset(21), 10);
  EXPECT_EQ(IrVersionForOpset(22), 10);
  EXPECT_EQ(IrVersionForOpset(23), 11);  // float4e2m1
  EXPECT_EQ(IrVersionForOpset(24), 11);  // float8e8m0
}

TEST(BuilderDeathTest, InvalidGraphAbortsBuild) {
  EXPECT_DEATH(
      {
        GraphBuilder b(17);
        Value* x = b.Input("x", DataType::kFloat32, {1});
        Value* a = b.Op("Add", {x, nullptr}, {}, {.name = "a"});
        Value* c = b.Op("Relu", {a}, {}, {.name = "c"});
        b.graph().SetNodeInput(a->producer(), 1, c);  // a cycle
        b.Output(c);
        (void)b.Build();
      },
      "cycle");
}

TEST(BuilderDeathTest, DuplicateNameAborts) {
  EXPECT_DEATH(
      {
        GraphBuilder b(17);
        b.Input("x", DataType::kFloat32, {1});
        b.Input("x", DataType::kFloat32, {1});
      },
      "used twice");
}

}  // namespace
}  // namespace qtune::ir
