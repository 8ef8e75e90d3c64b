// The runtime fusions on small graphs: which patterns fuse (and which must not), and that
// the fused graph computes what the original did (both through the reference kernels).
#include <gtest/gtest.h>

#include <random>

#include "ir/builder.h"
#include "runtime/fusion/fusion_pipeline.h"
#include "runtime/reference/reference_executor.h"
#include "runtime/shape/infer_shapes.h"

namespace qtune::runtime {
namespace {

using ir::Attribute;
using ir::GraphBuilder;
using ir::Value;

Tensor Random(std::vector<int64_t> sizes, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor t = *Tensor::Allocate(DataType::kFloat32, sizes);
  for (float& v : t.span<float>()) v = dist(rng);
  return t;
}

Value* Scalar(GraphBuilder& b, const std::string& name, float v) {
  return b.Initializer(name, Tensor::FromVector<float>({}, {v}));
}

int Count(const ir::Graph& g, const std::string& op) {
  int n = 0;
  for (const ir::Node* node : g.nodes()) n += node->op_type() == op;
  return n;
}

// Fuses a copy of `graph` and checks the outputs agree with the original's.
std::unique_ptr<ir::Graph> FuseAndCompare(const ir::Graph& graph, const Tensor& x) {
  auto fused = graph.Clone();
  auto infos = InferShapes(*fused, {{"x", x.sizes()}}, ShapeInferenceOptions{});
  EXPECT_TRUE(infos.ok()) << infos.status().ToString();
  SizesByName sizes;
  for (const auto& [value, info] : *infos) sizes[value->name()] = {info.dtype, info.sizes};
  auto report = RunFusions(*fused, sizes);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  auto before = RunReference(graph, {{"x", x}});
  auto after = RunReference(*fused, {{"x", x}});
  EXPECT_TRUE(before.ok() && after.ok());
  if (before.ok() && after.ok()) {
    const Tensor& a = (*before)[0].second;
    const Tensor& b = (*after)[0].second;
    EXPECT_EQ(a.sizes(), b.sizes());
    for (int64_t i = 0; i < a.num_elements(); ++i) {
      EXPECT_NEAR(a.data<float>()[i], b.data<float>()[i], 1e-5) << "element " << i;
    }
    EXPECT_EQ((*after)[0].first, (*before)[0].first) << "output names stay";
  }
  return fused;
}

TEST(FusionTest, ConvResidualAddAndReluBecomeOneFusedConv) {
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {1, 8, 6, 6});
  Value* conv = b.Op(
      "Conv", {x, b.Initializer("w", Random({8, 8, 3, 3}, 1)), b.Initializer("b", Random({8}, 2))},
      {Attribute::Ints("pads", {1, 1, 1, 1})});
  Value* sum = b.Op("Add", {conv, x});
  b.Output(b.Op("Relu", {sum}));
  auto fused = FuseAndCompare(*b.Build(), Random({1, 8, 6, 6}, 3));
  EXPECT_EQ(Count(*fused, "FusedConv"), 1);
  EXPECT_EQ(fused->num_nodes(), 1u);
}

TEST(FusionTest, BroadcastingAddIsNotTakenAsAResidual) {
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {1, 4, 5, 5});
  Value* conv = b.Op("Conv", {x, b.Initializer("w", Random({4, 4, 1, 1}, 1))});
  Value* pooled = b.Op("GlobalAveragePool", {x});  // [1,4,1,1] broadcasts over the conv
  b.Output(b.Op("Add", {conv, pooled}));
  auto fused = FuseAndCompare(*b.Build(), Random({1, 4, 5, 5}, 4));
  EXPECT_EQ(Count(*fused, "FusedConv"), 0);
  EXPECT_EQ(Count(*fused, "Add"), 1);
}

TEST(FusionTest, ConvOutputReadTwiceKeepsItsActivationSeparate) {
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {1, 2, 4, 4});
  Value* conv = b.Op("Conv", {x, b.Initializer("w", Random({2, 2, 1, 1}, 1))});
  Value* relu = b.Op("Relu", {conv});
  b.Output(b.Op("Add", {relu, conv}));
  auto fused = FuseAndCompare(*b.Build(), Random({1, 2, 4, 4}, 5));
  EXPECT_EQ(Count(*fused, "Relu"), 1);
}

TEST(FusionTest, ClipWithConstantBoundsAndAScalarAffineFuse) {
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {1, 3, 5, 5});
  Value* conv = b.Op("Conv", {x, b.Initializer("w", Random({6, 3, 3, 3}, 1))});
  Value* clip = b.Op("Clip", {conv, Scalar(b, "lo", 0.0f), Scalar(b, "hi", 6.0f)});
  Value* scaled = b.Op("Mul", {clip, Scalar(b, "s", 0.5f)});
  b.Output(b.Op("Add", {scaled, Scalar(b, "t", -1.0f)}));
  auto fused = FuseAndCompare(*b.Build(), Random({1, 3, 5, 5}, 6));
  EXPECT_EQ(fused->num_nodes(), 1u);
  EXPECT_EQ(fused->nodes()[0]->GetFloats("post_linear", {}), (std::vector<float>{0.5f, -1.0f}));
}

// x * Clip(x + 3, 0, 6) / 6 in the two orders exporters use, and the HardSigmoid form.
TEST(FusionTest, DecomposedHardSwishAndHardSigmoidBecomeSingleOps) {
  for (int form = 0; form < 3; ++form) {
    GraphBuilder b(11);
    Value* x = b.Input("x", DataType::kFloat32, {1, 4, 3, 3});
    Value* shifted = b.Op("Add", {x, Scalar(b, "three", 3.0f)});
    Value* clip = b.Op("Clip", {shifted, Scalar(b, "zero", 0.0f), Scalar(b, "six", 6.0f)});
    Value* out = nullptr;
    if (form == 0) {
      out = b.Op("Div", {b.Op("Mul", {x, clip}), Scalar(b, "d", 6.0f)});
    } else if (form == 1) {
      out = b.Op("Mul", {x, b.Op("Div", {clip, Scalar(b, "d", 6.0f)})});
    } else {
      out = b.Op("Div", {clip, Scalar(b, "d", 6.0f)});
    }
    b.Output(out);
    Tensor input = Random({1, 4, 3, 3}, 7);
    for (float& v : input.span<float>()) v *= 5.0f;  // cover both clip bounds
    auto fused = FuseAndCompare(*b.Build(), input);
    EXPECT_EQ(fused->num_nodes(), 1u) << "form " << form;
    EXPECT_EQ(Count(*fused, form == 2 ? "HardSigmoid" : "HardSwish"), 1) << "form " << form;
  }
}

// A Linear layer as exporters write it (Gemm, transB=1) followed by an activation, and a
// MatMul + bias + activation: each becomes one qtune::MatMulBias with the activation.
TEST(FusionTest, LinearLayersAbsorbTheirActivation) {
  for (const char* act : {"Relu", "Sigmoid", "Tanh"}) {
    GraphBuilder b(13);
    Value* x = b.Input("x", DataType::kFloat32, {3, 8});
    Value* gemm =
        b.Op("Gemm", {x, b.Initializer("w", Random({5, 8}, 1)), b.Initializer("c", Random({5}, 2))},
             {Attribute::Int("transB", 1)});
    b.Output(b.Op(act, {gemm}));
    auto fused = FuseAndCompare(*b.Build(), Random({3, 8}, 3));
    EXPECT_EQ(fused->num_nodes(), 1u) << act;
    EXPECT_EQ(Count(*fused, "MatMulBias"), 1) << act;
  }
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {2, 4, 8});
  Value* mm = b.Op("MatMul", {x, b.Initializer("w", Random({8, 6}, 4))});
  Value* biased = b.Op("Add", {mm, b.Initializer("bias", Random({6}, 5))});
  b.Output(b.Op("Relu", {biased}));
  // FuseAndCompare needs the sizes MatMulBias fusion checks; x is rank 3.
  auto fused = FuseAndCompare(*b.Build(), Random({2, 4, 8}, 6));
  EXPECT_EQ(fused->num_nodes(), 1u);
  EXPECT_EQ(fused->nodes()[0]->GetString("activation", ""), "Relu");
}

TEST(FusionTest, GemmWithAlphaKeepsItsActivationSeparate) {
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {3, 8});
  Value* gemm =
      b.Op("Gemm", {x, b.Initializer("w", Random({8, 5}, 1))}, {Attribute::Float("alpha", 2.0f)});
  b.Output(b.Op("Relu", {gemm}));
  auto fused = FuseAndCompare(*b.Build(), Random({3, 8}, 3));
  EXPECT_EQ(Count(*fused, "Relu"), 1);
}

TEST(FusionTest, ShiftOtherThanThreeIsNotAHardSwish) {
  GraphBuilder b(11);
  Value* x = b.Input("x", DataType::kFloat32, {1, 2, 2, 2});
  Value* shifted = b.Op("Add", {x, Scalar(b, "two", 2.0f)});
  Value* clip = b.Op("Clip", {shifted, Scalar(b, "zero", 0.0f), Scalar(b, "six", 6.0f)});
  b.Output(b.Op("Div", {b.Op("Mul", {x, clip}), Scalar(b, "d", 6.0f)}));
  auto fused = FuseAndCompare(*b.Build(), Random({1, 2, 2, 2}, 8));
  EXPECT_EQ(Count(*fused, "HardSwish"), 0);
}

}  // namespace
}  // namespace qtune::runtime
