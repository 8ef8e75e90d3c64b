// Reference shape kernels: Reshape, Flatten, Transpose, Squeeze/Unsqueeze (attribute and
// input forms), Concat, Split, Slice (opset 9 and 10 forms), Gather, GatherElements,
// Expand, Tile, Shape, Size, Pad, Constant, ConstantOfShape, Range, NonZero.
#include <limits>

#include "reference_test_util.h"

namespace qtune::runtime::testing {
namespace {

using Sizes = std::vector<int64_t>;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(ReferenceReshapeTest, ZeroCopiesAndMinusOneInfers) {
  Tensor y = Run1({.op_type = "Reshape", .inputs = {Iota({2, 3, 4}), Ints({0, -1})}});
  EXPECT_EQ(y.sizes(), (Sizes{2, 12}));
  EXPECT_EQ(Values<float>(y)[13], 13);
  y = Run1({.op_type = "Reshape", .inputs = {Iota({2, 3, 4}), Ints({-1, 0, 2})}});
  EXPECT_EQ(y.sizes(), (Sizes{4, 3, 2}));
}

TEST(ReferenceReshapeTest, AllowZeroKeepsZeroAsASize) {
  Tensor y = Run1({.op_type = "Reshape",
                   .inputs = {Iota({0, 3}), Ints({3, 0})},
                   .attributes = {Attribute::Int("allowzero", 1)},
                   .opset = 14});
  EXPECT_EQ(y.sizes(), (Sizes{3, 0}));
}

TEST(ReferenceReshapeTest, WrongElementCountIsInvalidArgumentNamingTheNode) {
  auto bad = RunOp({.op_type = "Reshape", .inputs = {Iota({2, 3}), Ints({4, 2})}, .name = "r1"});
  ASSERT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("Reshape 'r1'"), std::string::npos);
  bad = RunOp({.op_type = "Reshape", .inputs = {Iota({2, 3}), Ints({-1, 4})}});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  bad = RunOp({.op_type = "Reshape", .inputs = {Iota({6}), Ints({-1, -1})}});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(ReferenceReshapeTest, FlattenAtEveryAxis) {
  EXPECT_EQ(Run1({.op_type = "Flatten", .inputs = {Iota({2, 3, 5})}}).sizes(), (Sizes{2, 15}));
  EXPECT_EQ(Run1({.op_type = "Flatten",
                  .inputs = {Iota({2, 3, 5})},
                  .attributes = {Attribute::Int("axis", 0)}})
                .sizes(),
            (Sizes{1, 30}));
  EXPECT_EQ(Run1({.op_type = "Flatten",
                  .inputs = {Iota({2, 3, 5})},
                  .attributes = {Attribute::Int("axis", -1)}})
                .sizes(),
            (Sizes{6, 5}));
  EXPECT_EQ(Run1({.op_type = "Flatten",
                  .inputs = {Iota({2, 3, 5})},
                  .attributes = {Attribute::Int("axis", 3)}})
                .sizes(),
            (Sizes{30, 1}));
}

TEST(ReferenceReshapeTest, TransposeMovesElements) {
  Tensor y = Run1({.op_type = "Transpose", .inputs = {Iota({2, 3})}});
  EXPECT_EQ(y.sizes(), (Sizes{3, 2}));
  EXPECT_EQ(Values<float>(y), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  for (int64_t n : {1, 2, 3, 5, 7, 15, 17, 33}) {
    Tensor x = Iota({2, n, 3});
    Tensor t = Run1({.op_type = "Transpose",
                     .inputs = {x},
                     .attributes = {Attribute::Ints("perm", {1, 2, 0})}});
    ASSERT_EQ(t.sizes(), (Sizes{n, 3, 2}));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < 3; ++j)
        for (int64_t k = 0; k < 2; ++k)
          ASSERT_EQ(t.data<float>()[(i * 3 + j) * 2 + k], x.data<float>()[(k * n + i) * 3 + j]);
  }
  auto bad = RunOp({.op_type = "Transpose",
                    .inputs = {Iota({2, 3})},
                    .attributes = {Attribute::Ints("perm", {0, 0})}});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(ReferenceReshapeTest, SqueezeAndUnsqueezeAxesAsAttributeInOpset11AndInputInOpset13) {
  Tensor x = Iota({1, 3, 1, 2});
  Tensor s11 = Run1({.op_type = "Squeeze",
                     .inputs = {x},
                     .attributes = {Attribute::Ints("axes", {0, -2})},
                     .opset = 11});
  EXPECT_EQ(s11.sizes(), (Sizes{3, 2}));
  Tensor s13 = Run1({.op_type = "Squeeze", .inputs = {x, Ints({2})}, .opset = 13});
  EXPECT_EQ(s13.sizes(), (Sizes{1, 3, 2}));
  EXPECT_EQ(Run1({.op_type = "Squeeze", .inputs = {x}, .opset = 13}).sizes(), (Sizes{3, 2}));
  auto bad = RunOp({.op_type = "Squeeze", .inputs = {x, Ints({1})}, .opset = 13});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);

  Tensor u11 = Run1({.op_type = "Unsqueeze",
                     .inputs = {Iota({3, 2})},
                     .attributes = {Attribute::Ints("axes", {0, 3})},
                     .opset = 11});
  EXPECT_EQ(u11.sizes(), (Sizes{1, 3, 2, 1}));
  Tensor u13 = Run1({.op_type = "Unsqueeze", .inputs = {Iota({3, 2}), Ints({-1, 1})}, .opset = 13});
  EXPECT_EQ(u13.sizes(), (Sizes{3, 1, 2, 1}));
  Tensor scalar = Run1({.op_type = "Unsqueeze", .inputs = {I64({}, {7}), Ints({0})}, .opset = 13});
  EXPECT_EQ(scalar.sizes(), (Sizes{1}));
}

TEST(ReferenceReshapeTest, ExpandShapeAndSize) {
  Tensor y = Run1({.op_type = "Expand", .inputs = {F32({3, 1}, {1, 2, 3}), Ints({2, 1, 2})}});
  EXPECT_EQ(y.sizes(), (Sizes{2, 3, 2}));
  EXPECT_EQ(Values<float>(y), (std::vector<float>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  // The input's larger dims win over 1s in the shape.
  EXPECT_EQ(Run1({.op_type = "Expand", .inputs = {Iota({2, 3}), Ints({1, 1})}}).sizes(),
            (Sizes{2, 3}));
  Tensor shape = Run1({.op_type = "Shape", .inputs = {Iota({2, 3, 5, 7})}});
  EXPECT_EQ(shape.dtype(), DataType::kInt64);
  EXPECT_EQ(Values<int64_t>(shape), (Sizes{2, 3, 5, 7}));
  Tensor part = Run1({.op_type = "Shape",
                      .inputs = {Iota({2, 3, 5, 7})},
                      .attributes = {Attribute::Int("start", 1), Attribute::Int("end", -1)},
                      .opset = 15});
  EXPECT_EQ(Values<int64_t>(part), (Sizes{3, 5}));
  Tensor clamped = Run1({.op_type = "Shape",
                         .inputs = {Iota({2, 3})},
                         .attributes = {Attribute::Int("start", -10), Attribute::Int("end", 10)},
                         .opset = 15});
  EXPECT_EQ(Values<int64_t>(clamped), (Sizes{2, 3}));
  Tensor size = Run1({.op_type = "Size", .inputs = {Iota({2, 3, 5})}});
  EXPECT_EQ(size.rank(), 0u);
  EXPECT_EQ(Values<int64_t>(size), (Sizes{30}));
}

TEST(ReferenceCombineTest, ConcatAlongEachAxis) {
  Tensor a = Iota({2, 2}), b = Iota({2, 1}, 10);
  EXPECT_EQ(
      Values<float>(
          Run1({.op_type = "Concat", .inputs = {a, b}, .attributes = {Attribute::Int("axis", 1)}})),
      (std::vector<float>{0, 1, 10, 2, 3, 11}));
  EXPECT_EQ(Values<float>(Run1({.op_type = "Concat",
                                .inputs = {a, Iota({1, 2}, 10)},
                                .attributes = {Attribute::Int("axis", -2)}})),
            (std::vector<float>{0, 1, 2, 3, 10, 11}));
  Tensor ints = Run1({.op_type = "Concat",
                      .inputs = {Ints({1}), Ints({}), Ints({-1, 8})},
                      .attributes = {Attribute::Int("axis", 0)}});
  EXPECT_EQ(Values<int64_t>(ints), (Sizes{1, -1, 8}));
  auto bad = RunOp({.op_type = "Concat",
                    .inputs = {a, Iota({3, 3})},
                    .attributes = {Attribute::Int("axis", 1)}});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(ReferenceCombineTest, SplitByAttributeInputNumOutputsAndEvenly) {
  Tensor x = Iota({2, 5});
  auto v11 = RunOp({.op_type = "Split",
                    .inputs = {x},
                    .attributes = {Attribute::Int("axis", 1), Attribute::Ints("split", {2, 3})},
                    .opset = 11,
                    .num_outputs = 2});
  ASSERT_TRUE(v11.ok()) << v11.status().ToString();
  EXPECT_EQ(Values<float>((*v11)[0]), (std::vector<float>{0, 1, 5, 6}));
  EXPECT_EQ(Values<float>((*v11)[1]), (std::vector<float>{2, 3, 4, 7, 8, 9}));
  auto v13 = RunOp({.op_type = "Split",
                    .inputs = {x, Ints({4, 1})},
                    .attributes = {Attribute::Int("axis", -1)},
                    .opset = 13,
                    .num_outputs = 2});
  ASSERT_TRUE(v13.ok());
  EXPECT_EQ((*v13)[1].sizes(), (Sizes{2, 1}));
  EXPECT_EQ(Values<float>((*v13)[1]), (std::vector<float>{4, 9}));
  auto v18 = RunOp({.op_type = "Split",
                    .inputs = {Iota({5})},
                    .attributes = {Attribute::Int("num_outputs", 3)},
                    .opset = 18,
                    .num_outputs = 3});
  ASSERT_TRUE(v18.ok()) << v18.status().ToString();
  EXPECT_EQ(Values<float>((*v18)[0]), (std::vector<float>{0, 1}));
  EXPECT_EQ(Values<float>((*v18)[2]), (std::vector<float>{4}));
  auto even = RunOp({.op_type = "Split", .inputs = {Iota({6})}, .num_outputs = 3});
  ASSERT_TRUE(even.ok());
  EXPECT_EQ(Values<float>((*even)[1]), (std::vector<float>{2, 3}));
  auto bad = RunOp({.op_type = "Split", .inputs = {Iota({5})}, .num_outputs = 2});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(ReferenceCombineTest, TileRepeatsEachDim) {
  Tensor y = Run1({.op_type = "Tile", .inputs = {F32({2, 1}, {1, 2}), Ints({2, 3})}});
  EXPECT_EQ(y.sizes(), (Sizes{4, 3}));
  EXPECT_EQ(Values<float>(y), (std::vector<float>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2}));
}

TEST(ReferenceSliceTest, Opset9AttributesAndOpset10Inputs) {
  Tensor x = Iota({3, 4});
  Tensor v9 =
      Run1({.op_type = "Slice",
            .inputs = {x},
            .attributes = {Attribute::Ints("starts", {1, 0}), Attribute::Ints("ends", {kMax, 2})},
            .opset = 9});
  EXPECT_EQ(v9.sizes(), (Sizes{2, 2}));
  EXPECT_EQ(Values<float>(v9), (std::vector<float>{4, 5, 8, 9}));
  Tensor v10 =
      Run1({.op_type = "Slice", .inputs = {x, Ints({1}), Ints({-1}), Ints({1})}, .opset = 10});
  EXPECT_EQ(v10.sizes(), (Sizes{3, 2}));
  EXPECT_EQ(Values<float>(v10), (std::vector<float>{1, 2, 5, 6, 9, 10}));
}

TEST(ReferenceSliceTest, NegativeStepsAndClamping) {
  Tensor x = Iota({7});
  auto slice = [&](int64_t start, int64_t end, int64_t step) {
    return Values<float>(Run1(
        {.op_type = "Slice", .inputs = {x, Ints({start}), Ints({end}), Ints({0}), Ints({step})}}));
  };
  EXPECT_EQ(slice(-1, -kMax, -1), (std::vector<float>{6, 5, 4, 3, 2, 1, 0}));  // reverse
  EXPECT_EQ(slice(5, 1, -2), (std::vector<float>{5, 3}));
  EXPECT_EQ(slice(100, -100, -3), (std::vector<float>{6, 3, 0}));
  EXPECT_EQ(slice(1, 100, 2), (std::vector<float>{1, 3, 5}));
  EXPECT_EQ(slice(4, 2, 1), (std::vector<float>{}));
  EXPECT_EQ(slice(-100, 3, 1), (std::vector<float>{0, 1, 2}));
  auto bad = RunOp({.op_type = "Slice", .inputs = {x, Ints({0}), Ints({3}), Ints({0}), Ints({0})}});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(ReferenceGatherTest, GatherWithNegativeIndicesAndAxis) {
  Tensor x = Iota({3, 2});
  Tensor y = Run1({.op_type = "Gather", .inputs = {x, I64({2}, {-1, 0})}});
  EXPECT_EQ(Values<float>(y), (std::vector<float>{4, 5, 0, 1}));
  Tensor cols = Run1({.op_type = "Gather",
                      .inputs = {x, I32({1, 1}, {1})},
                      .attributes = {Attribute::Int("axis", 1)}});
  EXPECT_EQ(cols.sizes(), (Sizes{3, 1, 1}));
  EXPECT_EQ(Values<float>(cols), (std::vector<float>{1, 3, 5}));
  Tensor scalar = Run1({.op_type = "Gather", .inputs = {Ints({2, 3, 5}), I64({}, {1})}});
  EXPECT_EQ(scalar.rank(), 0u);
  EXPECT_EQ(Values<int64_t>(scalar), (Sizes{3}));
  auto bad = RunOp({.op_type = "Gather", .inputs = {x, I64({1}, {3})}});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(ReferenceGatherTest, GatherElementsPicksAlongTheAxis) {
  Tensor x = F32({2, 2}, {1, 2, 3, 4});
  Tensor y = Run1({.op_type = "GatherElements",
                   .inputs = {x, I64({2, 2}, {0, 0, 1, 0})},
                   .attributes = {Attribute::Int("axis", 1)}});
  EXPECT_EQ(Values<float>(y), (std::vector<float>{1, 1, 4, 3}));
  Tensor z = Run1({.op_type = "GatherElements", .inputs = {x, I64({1, 2}, {1, -2})}});
  EXPECT_EQ(Values<float>(z), (std::vector<float>{3, 2}));
}

TEST(ReferencePadTest, ConstantReflectEdgeAndAttributeForm) {
  Tensor x = F32({1, 3}, {1, 2, 3});
  Tensor pads = Ints({0, 2, 0, 1});
  EXPECT_EQ(Values<float>(Run1({.op_type = "Pad", .inputs = {x, pads, F32({}, {9})}, .opset = 13})),
            (std::vector<float>{9, 9, 1, 2, 3, 9}));
  EXPECT_EQ(Values<float>(Run1({.op_type = "Pad",
                                .inputs = {x, pads},
                                .attributes = {Attribute::String("mode", "reflect")}})),
            (std::vector<float>{3, 2, 1, 2, 3, 2}));
  EXPECT_EQ(Values<float>(Run1({.op_type = "Pad",
                                .inputs = {x, pads},
                                .attributes = {Attribute::String("mode", "edge")}})),
            (std::vector<float>{1, 1, 1, 2, 3, 3}));
  Tensor v2 =
      Run1({.op_type = "Pad",
            .inputs = {x},
            .attributes = {Attribute::Ints("pads", {1, 0, 0, 0}), Attribute::Float("value", -1)},
            .opset = 2});
  EXPECT_EQ(v2.sizes(), (Sizes{2, 3}));
  EXPECT_EQ(Values<float>(v2), (std::vector<float>{-1, -1, -1, 1, 2, 3}));
  // Negative pads crop.
  Tensor crop = Run1({.op_type = "Pad", .inputs = {x, Ints({0, -1, 0, 0})}});
  EXPECT_EQ(Values<float>(crop), (std::vector<float>{2, 3}));
  // Opset 18 axes input.
  Tensor axes =
      Run1({.op_type = "Pad", .inputs = {x, Ints({1, 1}), Tensor(), Ints({-1})}, .opset = 18});
  EXPECT_EQ(Values<float>(axes), (std::vector<float>{0, 1, 2, 3, 0}));
}

TEST(ReferenceGenerateTest, ConstantForms) {
  Tensor t =
      Run1({.op_type = "Constant", .attributes = {Attribute::TensorValue("value", Ints({4, 5}))}});
  EXPECT_EQ(Values<int64_t>(t), (Sizes{4, 5}));
  Tensor f = Run1({.op_type = "Constant", .attributes = {Attribute::Float("value_float", 2.5f)}});
  EXPECT_EQ(f.rank(), 0u);
  EXPECT_EQ(Values<float>(f), (std::vector<float>{2.5f}));
  Tensor fs =
      Run1({.op_type = "Constant", .attributes = {Attribute::Floats("value_floats", {1, 2})}});
  EXPECT_EQ(fs.sizes(), (Sizes{2}));
  Tensor i = Run1({.op_type = "Constant", .attributes = {Attribute::Int("value_int", -3)}});
  EXPECT_EQ(Values<int64_t>(i), (Sizes{-3}));
  Tensor is =
      Run1({.op_type = "Constant", .attributes = {Attribute::Ints("value_ints", {7, 8, 9})}});
  EXPECT_EQ(Values<int64_t>(is), (Sizes{7, 8, 9}));
}

TEST(ReferenceGenerateTest, ConstantOfShapeRangeAndNonZero) {
  Tensor zeros = Run1({.op_type = "ConstantOfShape", .inputs = {Ints({2, 3})}});
  EXPECT_EQ(zeros.dtype(), DataType::kFloat32);
  EXPECT_EQ(Values<float>(zeros), std::vector<float>(6, 0));
  Tensor sevens = Run1({.op_type = "ConstantOfShape",
                        .inputs = {Ints({2})},
                        .attributes = {Attribute::TensorValue("value", I64({1}, {7}))}});
  EXPECT_EQ(Values<int64_t>(sevens), (Sizes{7, 7}));
  Tensor r = Run1({.op_type = "Range", .inputs = {I64({}, {10}), I64({}, {1}), I64({}, {-3})}});
  EXPECT_EQ(Values<int64_t>(r), (Sizes{10, 7, 4}));
  Tensor rf = Run1({.op_type = "Range", .inputs = {F32({}, {0}), F32({}, {1}), F32({}, {0.25f})}});
  EXPECT_EQ(Values<float>(rf), (std::vector<float>{0, 0.25f, 0.5f, 0.75f}));
  Tensor empty = Run1({.op_type = "Range", .inputs = {I64({}, {5}), I64({}, {1}), I64({}, {1})}});
  EXPECT_EQ(empty.sizes(), (Sizes{0}));
  Tensor nz = Run1({.op_type = "NonZero", .inputs = {F32({2, 2}, {0, 1, 1, 0})}});
  EXPECT_EQ(nz.sizes(), (Sizes{2, 2}));
  EXPECT_EQ(Values<int64_t>(nz), (Sizes{0, 1, 1, 0}));
}

TEST(ReferenceScatterTest, GatherNDWithAndWithoutBatchDims) {
  Tensor x = Iota({2, 2, 2});
  Tensor y = Run1({.op_type = "GatherND", .inputs = {x, I64({2, 2}, {0, 1, 1, 0})}});
  EXPECT_EQ(y.sizes(), (Sizes{2, 2}));
  EXPECT_EQ(Values<float>(y), (std::vector<float>{2, 3, 4, 5}));
  Tensor b = Run1({.op_type = "GatherND",
                   .inputs = {x, I64({2, 1}, {1, 0})},
                   .attributes = {Attribute::Int("batch_dims", 1)}});
  EXPECT_EQ(b.sizes(), (Sizes{2, 2}));
  EXPECT_EQ(Values<float>(b), (std::vector<float>{2, 3, 4, 5}));
  auto bad = RunOp({.op_type = "GatherND", .inputs = {x, I64({1, 1}, {2})}});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(ReferenceScatterTest, ScatterNDAndScatterElementsWithReductions) {
  Tensor data = F32({4}, {1, 2, 3, 4});
  Tensor y =
      Run1({.op_type = "ScatterND", .inputs = {data, I64({2, 1}, {3, -4}), F32({2}, {10, 20})}});
  EXPECT_EQ(Values<float>(y), (std::vector<float>{20, 2, 3, 10}));
  EXPECT_EQ(Values<float>(data), (std::vector<float>{1, 2, 3, 4}));  // input untouched
  Tensor add = Run1({.op_type = "ScatterND",
                     .inputs = {data, I64({2, 1}, {1, 1}), F32({2}, {10, 20})},
                     .attributes = {Attribute::String("reduction", "add")},
                     .opset = 16});
  EXPECT_EQ(Values<float>(add), (std::vector<float>{1, 32, 3, 4}));
  Tensor e =
      Run1({.op_type = "ScatterElements",
            .inputs = {F32({2, 3}, {0, 0, 0, 0, 0, 0}), I64({1, 2}, {2, 0}), F32({1, 2}, {7, 8})},
            .attributes = {Attribute::Int("axis", 1)}});
  EXPECT_EQ(Values<float>(e), (std::vector<float>{8, 0, 7, 0, 0, 0}));
}

TEST(ReferenceGenerateTest, TriluAndOneHot) {
  Tensor x = Iota({3, 3}, 1);
  EXPECT_EQ(Values<float>(Run1({.op_type = "Trilu", .inputs = {x}, .opset = 14})),
            (std::vector<float>{1, 2, 3, 0, 5, 6, 0, 0, 9}));
  EXPECT_EQ(Values<float>(Run1({.op_type = "Trilu",
                                .inputs = {x, I64({}, {-1})},
                                .attributes = {Attribute::Int("upper", 0)},
                                .opset = 14})),
            (std::vector<float>{0, 0, 0, 4, 0, 0, 7, 8, 0}));
  Tensor oh =
      Run1({.op_type = "OneHot", .inputs = {I64({3}, {0, -1, 5}), I64({}, {3}), F32({2}, {0, 1})}});
  EXPECT_EQ(oh.sizes(), (Sizes{3, 3}));
  EXPECT_EQ(Values<float>(oh), (std::vector<float>{1, 0, 0, 0, 0, 1, 0, 0, 0}));
  Tensor oh0 = Run1({.op_type = "OneHot",
                     .inputs = {I64({2}, {1, 0}), I64({}, {2}), I64({2}, {-1, 5})},
                     .attributes = {Attribute::Int("axis", 0)}});
  EXPECT_EQ(oh0.sizes(), (Sizes{2, 2}));
  EXPECT_EQ(Values<int64_t>(oh0), (Sizes{-1, 5, 5, -1}));
}

}  // namespace
}  // namespace qtune::runtime::testing
