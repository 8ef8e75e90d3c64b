// passes::UpgradeOpset: each converted signature, checked for structure and for equal
// outputs before/after through the reference kernels; unconvertible nodes fail by name.
#include "passes/upgrade_opset.h"

#include <gtest/gtest.h>

#include "ir/builder.h"
#include "ir/verify.h"
#include "reference_check.h"

namespace qtune::passes {
namespace {

using ir::Attribute;

std::unique_ptr<ir::Graph> Upgraded(const ir::Graph& g, int64_t target) {
  auto copy = g.Clone();
  auto changed = UpgradeOpset(*copy, {.target_opset = target});
  EXPECT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_TRUE(ir::Verify(*copy).ok());
  EXPECT_EQ(copy->onnx_opset(), target);
  return copy;
}

const ir::Node* Only(const ir::Graph& g, const std::string& op) {
  const ir::Node* found = nullptr;
  for (const ir::Node* n : g.nodes()) {
    if (n->op_type() == op) {
      EXPECT_EQ(found, nullptr) << "two " << op;
      found = n;
    }
  }
  EXPECT_NE(found, nullptr) << "no " << op;
  return found;
}

TEST(UpgradeOpsetTest, AxesAttributesBecomeInputsAt13And18) {
  ir::GraphBuilder b(11);
  ir::Value* x = b.Input("x", DataType::kFloat32, {2, 1, 3, 4});
  ir::Value* s = b.Op("Squeeze", {x}, {Attribute::Ints("axes", {1})});
  ir::Value* u = b.Op("Unsqueeze", {s}, {Attribute::Ints("axes", {0})});
  ir::Value* m =
      b.Op("ReduceMean", {u}, {Attribute::Ints("axes", {3}), Attribute::Int("keepdims", 1)});
  ir::Value* r = b.Op("ReduceSum", {m}, {Attribute::Ints("axes", {2})});
  auto parts =
      b.MultiOp("Split", {r}, 2, {Attribute::Int("axis", 1), Attribute::Ints("split", {1, 1})});
  b.Output(parts[0]);
  b.Output(parts[1]);
  auto g = b.Build();
  auto up = Upgraded(*g, 18);
  for (const char* op : {"Squeeze", "Unsqueeze", "ReduceMean", "ReduceSum", "Split"}) {
    const ir::Node* n = Only(*up, op);
    EXPECT_FALSE(n->HasAttribute("axes")) << op;
    EXPECT_FALSE(n->HasAttribute("split")) << op;
    ASSERT_NE(n->input(1), nullptr) << op;
    EXPECT_EQ(n->input(1)->dtype(), DataType::kInt64) << op;
  }
  testing::ExpectSameOutputs(*g, *up);
}

TEST(UpgradeOpsetTest, ReduceMeanKeepsItsAttributeBelow18) {
  ir::GraphBuilder b(11);
  ir::Value* x = b.Input("x", DataType::kFloat32, {2, 3});
  b.Output(b.Op("ReduceMean", {x}, {Attribute::Ints("axes", {1})}));
  auto up = Upgraded(*b.Build(), 13);
  EXPECT_TRUE(Only(*up, "ReduceMean")->HasAttribute("axes"));
}

TEST(UpgradeOpsetTest, SplitWithoutSizesGetsNumOutputsAt18) {
  ir::GraphBuilder b(13);
  ir::Value* x = b.Input("x", DataType::kFloat32, {2, 6});
  auto parts = b.MultiOp("Split", {x}, 3, {Attribute::Int("axis", 1)});
  for (ir::Value* p : parts) b.Output(p);
  auto g = b.Build();
  auto up = Upgraded(*g, 18);
  EXPECT_EQ(Only(*up, "Split")->GetInt("num_outputs", 0), 3);
  testing::ExpectSameOutputs(*g, *up);
}

TEST(UpgradeOpsetTest, ClipAttributesBecomeInputsAt11) {
  ir::GraphBuilder b(9);
  ir::Value* x = b.Input("x", DataType::kFloat32, {8});
  b.Output(b.Op("Clip", {x}, {Attribute::Float("min", -0.25f), Attribute::Float("max", 0.5f)}));
  auto g = b.Build();
  auto up = Upgraded(*g, 13);
  const ir::Node* clip = Only(*up, "Clip");
  EXPECT_FALSE(clip->HasAttribute("min"));
  ASSERT_NE(clip->input(2), nullptr);
  EXPECT_FLOAT_EQ(clip->input(1)->initializer().data<float>()[0], -0.25f);
  testing::ExpectSameOutputs(*g, *up);
}

TEST(UpgradeOpsetTest, SoftmaxOnANonLastAxisBecomesFlattenSoftmaxReshape) {
  ir::GraphBuilder b(11);
  ir::Value* x = b.Input("x", DataType::kFloat32, {2, 3, 4});
  ir::Value* y = b.Op("Softmax", {x}, {}, {.output_names = {"y"}});  // axis 1: over 3 x 4
  b.Output(y);
  auto g = b.Build();
  auto up = Upgraded(*g, 13);
  EXPECT_EQ(Only(*up, "Softmax")->GetInt("axis", 0), 1);
  Only(*up, "Flatten");
  Only(*up, "Reshape");
  EXPECT_EQ(up->outputs()[0]->name(), "y");
  testing::ExpectSameOutputs(*g, *up);
}

TEST(UpgradeOpsetTest, SoftmaxOnTheLastAxisOnlyGetsAnExplicitAxis) {
  ir::GraphBuilder b(11);
  ir::Value* x = b.Input("x", DataType::kFloat32, {2, 5});
  b.Output(b.Op("Softmax", {x}));
  auto g = b.Build();
  auto up = Upgraded(*g, 13);
  EXPECT_EQ(up->num_nodes(), 1u);
  EXPECT_EQ(Only(*up, "Softmax")->GetInt("axis", 0), 1);
  testing::ExpectSameOutputs(*g, *up);
}

TEST(UpgradeOpsetTest, UpsampleBecomesResize) {
  ir::GraphBuilder b(9);
  ir::Value* x = b.Input("x", DataType::kFloat32, {1, 1, 2, 3});
  ir::Value* scales = b.Initializer("scales", Tensor::FromVector<float>({4}, {1, 1, 2, 2}));
  ir::Value* y = b.Op("Upsample", {x, scales}, {Attribute::String("mode", "nearest")},
                      {.output_names = {"y"}});
  b.Output(y);
  auto g = b.Build();
  auto up = Upgraded(*g, 13);
  const ir::Node* resize = Only(*up, "Resize");
  EXPECT_EQ(resize->GetString("coordinate_transformation_mode", ""), "asymmetric");
  EXPECT_EQ(resize->GetString("nearest_mode", ""), "floor");
  EXPECT_EQ(resize->input(2)->name(), "scales");
  EXPECT_EQ(up->outputs()[0]->name(), "y");
  testing::ExpectSameOutputs(*g, *up);
}

TEST(UpgradeOpsetTest, SliceAndPadAttributesBecomeInputs) {
  ir::GraphBuilder b(9);
  ir::Value* x = b.Input("x", DataType::kFloat32, {4, 5});
  ir::Value* s = b.Op(
      "Slice", {x},
      {Attribute::Ints("starts", {1}), Attribute::Ints("ends", {3}), Attribute::Ints("axes", {0})});
  b.Output(
      b.Op("Pad", {s}, {Attribute::Ints("pads", {0, 1, 0, 1}), Attribute::Float("value", 2.0f)}));
  auto g = b.Build();
  auto up = Upgraded(*g, 13);
  EXPECT_EQ(Only(*up, "Slice")->num_inputs(), 4u);
  EXPECT_EQ(Only(*up, "Pad")->num_inputs(), 3u);
  testing::ExpectSameOutputs(*g, *up);
}

TEST(UpgradeOpsetTest, UnconvertibleNodeIsUnimplementedAndNamed) {
  ir::GraphBuilder b(18);
  ir::Value* x = b.Input("x", DataType::kFloat32, {1, 4, 2});
  ir::Value* scale = b.Initializer("s", Tensor::FromVector<float>({2}, {1, 1}));
  ir::Value* bias = b.Initializer("b", Tensor::FromVector<float>({2}, {0, 0}));
  b.Output(b.Op("GroupNormalization", {x, scale, bias}, {Attribute::Int("num_groups", 2)},
                {.name = "gn7"}));
  auto g = b.Build();
  auto r = UpgradeOpset(*g, {.target_opset = 21});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(r.status().message().find("gn7"), std::string::npos) << r.status().message();
}

TEST(UpgradeOpsetTest, NeverDowngradesAndRaisesIrVersion) {
  ir::GraphBuilder b(13);
  ir::Value* x = b.Input("x", DataType::kFloat32, {2});
  b.Output(b.Op("Relu", {x}));
  auto g = b.Build();
  auto same = UpgradeOpset(*g, {.target_opset = 11});
  ASSERT_TRUE(same.ok());
  EXPECT_FALSE(*same);
  EXPECT_EQ(g->onnx_opset(), 13);
  auto up = UpgradeOpset(*g, {.target_opset = 19});
  ASSERT_TRUE(up.ok());
  EXPECT_EQ(g->info().ir_version, 9);
  EXPECT_FALSE(UpgradeOpset(*g, {.target_opset = 30}).ok());
}

}  // namespace
}  // namespace qtune::passes
