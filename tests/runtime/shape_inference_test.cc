// InferShapes on small graphs, data-movement ops and whole graphs: Reshape, Slice, Resize,
// Split, Squeeze/Unsqueeze, reductions, normalization outputs, the constant shape-subgraph
// walk, and errors that name the node. Every case is also checked node by node against
// the sizes the reference kernel actually produces (shape_inference_test_util.h).
#include <gtest/gtest.h>

#include "runtime/shape/infer_shapes.h"
#include "shape_inference_test_util.h"

namespace qtune::runtime {
namespace {

using namespace shape_testing;  // NOLINT(build/namespaces): test helpers

Sizes Reshape(const Sizes& x, const Sizes& shape, int64_t allowzero) {
  GraphBuilder b(17);
  Value* xv = b.Input("x", DataType::kFloat32, x);
  return SizesOf(b, b.Op("Reshape", {xv, b.Initializer("shape", Ints(shape))},
                         {Attribute::Int("allowzero", allowzero)}));
}

TEST(ShapeInferenceReshapeTest, ZeroCopiesMinusOneInfersAllowZeroKeeps) {
  EXPECT_EQ(Reshape({2, 3, 4}, {0, -1}, 0), (Sizes{2, 12}));
  EXPECT_EQ(Reshape({2, 3, 4}, {4, 0, 2}, 0), (Sizes{4, 3, 2}));
  EXPECT_EQ(Reshape({2, 3, 4}, {-1}, 0), (Sizes{24}));
  EXPECT_EQ(Reshape({2, 3, 4}, {2, -1, 2}, 0), (Sizes{2, 6, 2}));
  // allowzero: a 0 in shape is a size, not a copy.
  EXPECT_EQ(Reshape({0, 3}, {3, 0}, 1), (Sizes{3, 0}));
}

TEST(ShapeInferenceReshapeTest, ImpossibleShapesNameTheNode) {
  // Without allowzero the 0 copies X's 3: [3, 3] holds 9 elements, not 6.
  for (const Sizes& shape : {Sizes{3, 0}, Sizes{-1, -1}, Sizes{4, -1}}) {
    GraphBuilder b(17);
    Value* x = b.Input("x", DataType::kFloat32, {2, 3});
    Value* y = b.Op("Reshape", {x, b.Initializer("shape", Ints(shape))}, {}, {.name = "rs"});
    Status s = InferError(b, y);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << SizesToString(shape);
    EXPECT_NE(s.message().find("rs"), std::string::npos) << s.ToString();
  }
}

// Slice of x = [10, 6] on `axes` (opset 13: every parameter is an input).
Sizes Slice(const Sizes& starts, const Sizes& ends, const Sizes& axes, const Sizes& steps) {
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {10, 6});
  return SizesOf(
      b, b.Op("Slice", {x, b.Initializer("starts", Ints(starts)), b.Initializer("ends", Ints(ends)),
                        b.Initializer("axes", Ints(axes)), b.Initializer("steps", Ints(steps))}));
}

TEST(ShapeInferenceSliceTest, NegativeStepsAndSentinels) {
  EXPECT_EQ(Slice({-1}, {kMin}, {0}, {-1}), (Sizes{10, 6}));    // whole axis reversed
  EXPECT_EQ(Slice({kMax}, {kMin}, {0}, {-1}), (Sizes{10, 6}));  // huge start clamps to 9
  EXPECT_EQ(Slice({8}, {1}, {0}, {-3}), (Sizes{3, 6}));         // 8, 5, 2
  EXPECT_EQ(Slice({0}, {kMax}, {-1}, {1}), (Sizes{10, 6}));     // negative axis
  EXPECT_EQ(Slice({1}, {kMax}, {0}, {2}), (Sizes{5, 6}));       // 1, 3, 5, 7, 9
  EXPECT_EQ(Slice({-100, 2}, {100, 2}, {0, 1}, {1, 1}), (Sizes{10, 0}));
  EXPECT_EQ(Slice({3}, {7}, {0}, {-1}), (Sizes{0, 6}));      // wrong direction: empty
  EXPECT_EQ(Slice({-2}, {-12}, {1}, {-2}), (Sizes{10, 3}));  // 4, 2, 0
}

TEST(ShapeInferenceSliceTest, Opset9ReadsAttributes) {
  GraphBuilder b(9);
  Value* x = b.Input("x", DataType::kFloat32, {10, 6});
  Value* y = b.Op("Slice", {x},
                  {Attribute::Ints("starts", {2, -3}), Attribute::Ints("ends", {kMax, -1}),
                   Attribute::Ints("axes", {0, 1})});
  EXPECT_EQ(SizesOf(b, y), (Sizes{8, 2}));
}

TEST(ShapeInferenceResizeTest, ScalesFloorAndSizes) {
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {1, 2, 3, 4});
  Value* by_scales = b.Op("Resize", {x, nullptr, b.Initializer("scales", Floats({1, 1, 2, 1.5}))},
                          {Attribute::String("mode", "nearest")});
  Value* down = b.Op("Resize", {x, nullptr, b.Initializer("down", Floats({1, 1, 0.6f, 0.6f}))},
                     {Attribute::String("mode", "linear")});
  Value* by_sizes =
      b.Op("Resize", {x, nullptr, nullptr, b.Initializer("sizes", Ints({1, 2, 5, 7}))},
           {Attribute::String("mode", "linear")});
  std::vector<ValueInfo> infos = Infer(b, {by_scales, down, by_sizes});
  ASSERT_EQ(infos.size(), 3u);
  EXPECT_EQ(infos[0].sizes, (Sizes{1, 2, 6, 6}));
  EXPECT_EQ(infos[1].sizes, (Sizes{1, 2, 1, 2}));
  EXPECT_EQ(infos[2].sizes, (Sizes{1, 2, 5, 7}));
}

TEST(ShapeInferenceResizeTest, Opset18AxesAndKeepAspectRatioPolicy) {
  GraphBuilder b(18);
  Value* x = b.Input("x", DataType::kFloat32, {1, 2, 4, 6});
  Value* sizes = b.Initializer("sizes", Ints({3, 3}));
  auto resize = [&](const char* policy) {
    return b.Op(
        "Resize", {x, nullptr, nullptr, sizes},
        {Attribute::Ints("axes", {2, -1}), Attribute::String("keep_aspect_ratio_policy", policy)});
  };
  Value* scaled = b.Op("Resize", {x, nullptr, b.Initializer("scales", Floats({2, 0.5f}))},
                       {Attribute::Ints("axes", {3, 2})});
  std::vector<ValueInfo> infos =
      Infer(b, {resize("stretch"), resize("not_larger"), resize("not_smaller"), scaled});
  ASSERT_EQ(infos.size(), 4u);
  EXPECT_EQ(infos[0].sizes, (Sizes{1, 2, 3, 3}));
  EXPECT_EQ(infos[1].sizes, (Sizes{1, 2, 2, 3}));  // one scale, min(3/4, 3/6) = 0.5
  EXPECT_EQ(infos[2].sizes, (Sizes{1, 2, 3, 5}));  // max(3/4, 3/6) = 0.75, rounded
  EXPECT_EQ(infos[3].sizes, (Sizes{1, 2, 2, 12}));
}

TEST(ShapeInferenceResizeTest, Opset10TakesScalesAsSecondInput) {
  GraphBuilder b(10);
  Value* x = b.Input("x", DataType::kFloat32, {1, 1, 2, 2});
  EXPECT_EQ(SizesOf(b, b.Op("Resize", {x, b.Initializer("scales", Floats({1, 1, 2, 3}))})),
            (Sizes{1, 1, 4, 6}));
}

// Split of x = [7, 4] on axis 0 into `outputs` pieces.
std::vector<Sizes> Split(int64_t opset, size_t outputs, const Sizes& split, bool split_as_input) {
  GraphBuilder b(opset);
  std::vector<Value*> inputs = {b.Input("x", DataType::kFloat32, {7, 4})};
  std::vector<Attribute> attributes;
  if (!split.empty() && split_as_input) inputs.push_back(b.Initializer("split", Ints(split)));
  if (!split.empty() && !split_as_input) attributes.push_back(Attribute::Ints("split", split));
  if (opset >= 18 && split.empty()) {
    attributes.push_back(Attribute::Int("num_outputs", static_cast<int64_t>(outputs)));
  }
  std::vector<Sizes> sizes;
  for (const ValueInfo& info : Infer(b, b.MultiOp("Split", inputs, outputs, attributes))) {
    sizes.push_back(info.sizes);
  }
  return sizes;
}

TEST(ShapeInferenceSplitTest, Opset11AttributeVs13InputVs18NumOutputs) {
  const std::vector<Sizes> uneven = {{2, 4}, {5, 4}};
  EXPECT_EQ(Split(11, 2, {2, 5}, /*split_as_input=*/false), uneven);
  EXPECT_EQ(Split(13, 2, {2, 5}, /*split_as_input=*/true), uneven);
  EXPECT_EQ(Split(18, 2, {2, 5}, /*split_as_input=*/true), uneven);
  // opset 18 num_outputs: ceil(7 / 3) = 3 per piece, the last one smaller.
  EXPECT_EQ(Split(18, 3, {}, false), (std::vector<Sizes>{{3, 4}, {3, 4}, {1, 4}}));
  EXPECT_EQ(Split(13, 7, {}, false), std::vector<Sizes>(7, Sizes{1, 4}));
}

TEST(ShapeInferenceSplitTest, SizesThatDoNotAddUpNameTheNode) {
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {7, 4});
  std::vector<Value*> ys =
      b.MultiOp("Split", {x, b.Initializer("split", Ints({2, 4}))}, 2, {}, {.name = "sp"});
  b.Output(ys[1]);
  Status s = InferError(b, ys[0]);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("sp"), std::string::npos) << s.ToString();
}

TEST(ShapeInferenceSqueezeTest, Opset11AttributeVs13Input) {
  for (int64_t opset : {11, 13}) {
    GraphBuilder b(opset);
    Value* x = b.Input("x", DataType::kFloat32, {1, 3, 1, 5});
    auto axes = [&](const Sizes& a,
                    const char* name) -> std::pair<std::vector<Value*>, std::vector<Attribute>> {
      if (opset >= 13) return {{x, b.Initializer(name, Ints(a))}, {}};
      return {{x}, {Attribute::Ints("axes", a)}};
    };
    auto [sq_in, sq_attr] = axes({-2}, "sq_axes");
    Value* squeezed = b.Op("Squeeze", sq_in, sq_attr);
    Value* all = b.Op("Squeeze", {x});
    auto [un_in, un_attr] = axes({0, -1}, "un_axes");
    Value* unsqueezed = b.Op("Unsqueeze", un_in, un_attr);
    std::vector<ValueInfo> infos = Infer(b, {squeezed, all, unsqueezed});
    ASSERT_EQ(infos.size(), 3u) << opset;
    EXPECT_EQ(infos[0].sizes, (Sizes{1, 3, 5})) << opset;
    EXPECT_EQ(infos[1].sizes, (Sizes{3, 5})) << opset;
    EXPECT_EQ(infos[2].sizes, (Sizes{1, 1, 3, 1, 5, 1})) << opset;
  }
}

TEST(ShapeInferenceReduceTest, AxesKeepdimsAndNoop) {
  GraphBuilder b(18);
  Value* x = b.Input("x", DataType::kFloat32, {2, 3, 4});
  Value* axes = b.Initializer("axes", Ints({-1, 0}));
  Value* kept = b.Op("ReduceMean", {x, axes});
  Value* dropped = b.Op("ReduceSum", {x, axes}, {Attribute::Int("keepdims", 0)});
  Value* all = b.Op("ReduceMax", {x}, {Attribute::Int("keepdims", 0)});
  Value* noop = b.Op("ReduceL2", {x}, {Attribute::Int("noop_with_empty_axes", 1)});
  Value* arg = b.Op("ArgMax", {x}, {Attribute::Int("axis", 1), Attribute::Int("keepdims", 0)});
  std::vector<ValueInfo> infos = Infer(b, {kept, dropped, all, noop, arg});
  ASSERT_EQ(infos.size(), 5u);
  EXPECT_EQ(infos[0].sizes, (Sizes{1, 3, 1}));
  EXPECT_EQ(infos[1].sizes, (Sizes{3}));
  EXPECT_EQ(infos[2].sizes, (Sizes{}));
  EXPECT_EQ(infos[3].sizes, (Sizes{2, 3, 4}));
  EXPECT_EQ(infos[4].sizes, (Sizes{2, 4}));
  EXPECT_EQ(infos[4].dtype, DataType::kInt64);
}

TEST(ShapeInferenceReduceTest, Opset13ReduceMeanReadsTheAttribute) {
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {2, 3, 4});
  Value* mean = b.Op("ReduceMean", {x}, {Attribute::Ints("axes", {1})});
  Value* sum = b.Op("ReduceSum", {x, b.Initializer("axes", Ints({1}))});
  std::vector<ValueInfo> infos = Infer(b, {mean, sum});
  ASSERT_EQ(infos.size(), 2u);
  EXPECT_EQ(infos[0].sizes, (Sizes{2, 1, 4}));
  EXPECT_EQ(infos[1].sizes, (Sizes{2, 1, 4}));
}

TEST(ShapeInferenceNormTest, DropoutMaskAndLayerNormStatistics) {
  GraphBuilder b(17);
  Value* x = b.Input("x", DataType::kFloat32, {2, 3, 4});
  std::vector<Value*> dropout = b.MultiOp("Dropout", {x}, 2);
  Value* scale = b.Initializer("scale", Zeros({3, 4}));
  std::vector<Value*> norm =
      b.MultiOp("LayerNormalization", {x, scale}, 3, {Attribute::Int("axis", -2)});
  std::vector<ValueInfo> infos = Infer(b, {dropout[1], norm[0], norm[1], norm[2]});
  ASSERT_EQ(infos.size(), 4u);
  EXPECT_EQ(infos[0].dtype, DataType::kBool);
  EXPECT_EQ(infos[0].sizes, (Sizes{2, 3, 4}));
  EXPECT_EQ(infos[1].sizes, (Sizes{2, 3, 4}));
  for (int i : {2, 3}) {
    EXPECT_EQ(infos[i].dtype, DataType::kFloat32);
    EXPECT_EQ(infos[i].sizes, (Sizes{2, 1, 1}));
  }
}

TEST(ShapeInferenceGraphTest, SizesFromRunTimeValuesAreUnimplementedNotGuessed) {
  GraphBuilder b(17);
  Value* limit = b.Input("limit", DataType::kInt64, Sizes{});
  Value* y = b.Op("Range",
                  {b.Initializer("start", Tensor::Scalar<int64_t>(0)), limit,
                   b.Initializer("delta", Tensor::Scalar<int64_t>(1))},
                  {}, {.name = "range"});
  Status s = InferError(b, y);
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented) << s.ToString();
  EXPECT_NE(s.message().find("range"), std::string::npos) << s.ToString();

  GraphBuilder k(17);
  Value* x = k.Input("x", DataType::kFloat32, {3, 5});
  std::vector<Value*> top = k.MultiOp("TopK", {x, k.Initializer("k", Ints({2}))}, 2);
  std::vector<ValueInfo> infos = Infer(k, top);
  ASSERT_EQ(infos.size(), 2u);
  EXPECT_EQ(infos[0].sizes, (Sizes{3, 2}));
  EXPECT_EQ(infos[1].dtype, DataType::kInt64);
}

TEST(ShapeInferenceGraphTest, ShapeGatherConcatReshapeChainBecomesConstant) {
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {2, 3, 4, 5});
  Value* shape = b.Op("Shape", {x});
  Value* batch = b.Op("Gather", {shape, b.Constant(Tensor::Scalar<int64_t>(0))});
  Value* batch1 = b.Op("Unsqueeze", {batch, b.Constant(Ints({0}))});
  Value* target = b.Op("Concat", {batch1, b.Constant(Ints({-1}))}, {Attribute::Int("axis", 0)});
  Value* y = b.Op("Reshape", {x, target});
  b.Output(y);
  std::unique_ptr<ir::Graph> graph = b.Build();
  auto infos = InferShapes(*graph, InputSizes(*graph), ShapeInferenceOptions{});
  ASSERT_TRUE(infos.ok()) << infos.status().ToString();
  const ValueInfo& t = infos->at(target);
  ASSERT_TRUE(t.has_constant());
  EXPECT_EQ(std::vector<int64_t>(t.constant.data<int64_t>(), t.constant.data<int64_t>() + 2),
            (Sizes{2, -1}));
  EXPECT_EQ(infos->at(y).sizes, (Sizes{2, 60}));
  EXPECT_FALSE(infos->at(y).has_constant());
  ExpectReferenceAgrees(*graph, *infos);
}

TEST(ShapeInferenceGraphTest, ErrorsNameTheNodeAndMissingInputs) {
  GraphBuilder b(17);
  Value* x = b.Input("x", DataType::kFloat32, {2, 3});
  Value* y = b.Op("Add", {x, b.Input("z", DataType::kFloat32, {4})}, {}, {.name = "bad_add"});
  b.Output(y);
  std::unique_ptr<ir::Graph> graph = b.Build();
  auto infos = InferShapes(*graph, InputSizes(*graph), ShapeInferenceOptions{});
  ASSERT_FALSE(infos.ok());
  EXPECT_NE(infos.status().message().find("bad_add"), std::string::npos)
      << infos.status().ToString();
  auto missing = InferShapes(*graph, {{"x", {2, 3}}}, ShapeInferenceOptions{});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("'z'"), std::string::npos)
      << missing.status().ToString();
}

}  // namespace
}  // namespace qtune::runtime

namespace qtune::runtime {
namespace {

using namespace shape_testing;  // NOLINT(build/namespaces): test helpers

// Tile or Expand of x = [2, 3] by a constant `sizes` input; the status of shape inference.
Status TileOrExpandError(const char* op, const Sizes& sizes) {
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {2, 3});
  Value* y = b.Op(op, {x, b.Initializer("sizes", Ints(sizes))}, {}, {.name = "grow"});
  return InferError(b, y);
}

TEST(ShapeInferenceTileExpandTest, NegativeTileRepeatsAreAnErrorNamingTheNode) {
  Status s = TileOrExpandError("Tile", {2, -1});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("grow"), std::string::npos) << s.ToString();
}

TEST(ShapeInferenceTileExpandTest, HugeTileRepeatsThatOverflowAreAnErrorNamingTheNode) {
  for (const Sizes& repeats : {Sizes{kMax, 1}, Sizes{int64_t{1} << 62, 4}, Sizes{kMax, kMax}}) {
    Status s = TileOrExpandError("Tile", repeats);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << SizesToString(repeats);
    EXPECT_NE(s.message().find("grow"), std::string::npos) << s.ToString();
  }
}

TEST(ShapeInferenceTileExpandTest, NegativeExpandSizesAreAnErrorNamingTheNode) {
  for (const Sizes& shape : {Sizes{-5, 1}, Sizes{-1, 2, 3}, Sizes{2, -3}}) {
    Status s = TileOrExpandError("Expand", shape);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << SizesToString(shape);
    EXPECT_NE(s.message().find("grow"), std::string::npos) << s.ToString();
  }
}

TEST(ShapeInferenceTileExpandTest, HugeExpandSizesThatOverflowAreAnErrorNamingTheNode) {
  Status s = TileOrExpandError("Expand", {kMax, kMax, 1, 1});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("grow"), std::string::npos) << s.ToString();
}

TEST(ShapeInferenceTileExpandTest, ZeroSizesGiveEmptyOutputs) {
  EXPECT_TRUE(TileOrExpandError("Tile", {0, 2}).ok());
  EXPECT_TRUE(TileOrExpandError("Expand", {0, 1, 3}).ok());  // [2,3] to [0,2,3]
}

}  // namespace
}  // namespace qtune::runtime
