// Shape functions fed sizes that overflow int64 (found by qtune_fuzz_model under UBSan,
// docs/fuzzing.md): each is refused with an InvalidArgument that names the node, never
// signed overflow (undefined behaviour) or an out-of-bounds read. Legitimate extreme
// values (Slice steps of INT64_MIN/MAX) still give the right sizes, checked against the
// reference kernels by Infer().
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "runtime/shape/infer_shapes.h"
#include "shape_inference_test_util.h"

namespace qtune::runtime {
namespace {

using namespace shape_testing;  // NOLINT(build/namespaces): test helpers

// The node `y` (named "n") must be refused with InvalidArgument naming it.
void ExpectRefused(GraphBuilder& b, Value* y, const std::string& what) {
  Status s = InferError(b, y);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << what << ": " << s.ToString();
  EXPECT_NE(s.message().find("'n'"), std::string::npos) << what << ": " << s.ToString();
}

TEST(ShapeOverflowTest, ReshapeShapeProductOverflowIsRefused) {
  // regress-reshape-shape-overflow.onnx: 4 * 9151314442816847878.
  GraphBuilder b(17);
  Value* x = b.Input("x", DataType::kFloat32, {2, 3});
  Value* y = b.Op("Reshape", {x, b.Initializer("shape", Ints({4, 9151314442816847878, -1}))}, {},
                  {.name = "n"});
  ExpectRefused(b, y, "Reshape");
}

TEST(ShapeOverflowTest, PadAmountsOverflowIsRefused) {
  // regress-pad-size-overflow.onnx: 2^56 + 9151314442816847872.
  GraphBuilder b(17);
  Value* x = b.Input("x", DataType::kFloat32, {2, 3});
  Value* y = b.Op("Pad", {x, b.Initializer("pads", Ints({0, kMax, 0, kMax}))}, {}, {.name = "n"});
  ExpectRefused(b, y, "Pad");
}

TEST(ShapeOverflowTest, ConcatAxisSumOverflowIsRefused) {
  // A zero dim lets another dim be as large as int64 holds; two of them do not add up.
  GraphBuilder b(17);
  Value* x = b.Input("x", DataType::kFloat32, {0, kMax});
  Value* y = b.Op("Concat", {x, x}, {Attribute::Int("axis", 1)}, {.name = "n"});
  ExpectRefused(b, y, "Concat");
}

TEST(ShapeOverflowTest, FlattenProductOverflowIsRefused) {
  GraphBuilder b(17);
  Value* x = b.Input("x", DataType::kFloat32, {2, kMax, 0});
  Value* y = b.Op("Flatten", {x}, {Attribute::Int("axis", 2)}, {.name = "n"});
  ExpectRefused(b, y, "Flatten");
}

TEST(ShapeOverflowTest, SplitSizesOverflowIsRefused) {
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {7, 4});
  std::vector<Value*> ys =
      b.MultiOp("Split", {x, b.Initializer("split", Ints({kMax, kMax}))}, 2, {}, {.name = "n"});
  b.Output(ys[1]);
  ExpectRefused(b, ys[0], "Split");
}

TEST(ShapeOverflowTest, ResizeScalesThatGiveNoSizeAreRefused) {
  const float inf = std::numeric_limits<float>::infinity();
  for (float scale : {inf, std::nanf(""), 3e38f}) {
    GraphBuilder b(13);
    Value* x = b.Input("x", DataType::kFloat32, {1, 1, 2, 2});
    Value* y = b.Op("Resize", {x, nullptr, b.Initializer("scales", Floats({1, 1, scale, 1}))},
                    {Attribute::String("mode", "nearest")}, {.name = "n"});
    ExpectRefused(b, y, "Resize scale " + std::to_string(scale));
  }
}

TEST(ShapeOverflowTest, ConvWindowAttributesThatOverflowAreRefused) {
  using A = Attribute;
  struct Case {
    const char* what;
    std::vector<Attribute> attributes;
  };
  const int64_t huge = int64_t{1} << 62;
  std::vector<Case> cases = {
      {"dilations", {A::Ints("dilations", {huge, 1})}},
      {"pads", {A::Ints("pads", {kMax, 0, kMax, 0}), A::Ints("kernel_shape", {1, 1})}},
      {"group", {A::Int("group", kMax)}},
  };
  for (const Case& c : cases) {
    GraphBuilder b(17);
    Value* x = b.Input("x", DataType::kFloat32, {1, 2, 5, 5});
    Value* y =
        b.Op("Conv", {x, b.Initializer("w", Zeros({2, 2, 3, 3}))}, c.attributes, {.name = "n"});
    ExpectRefused(b, y, std::string("Conv ") + c.what);
  }
}

TEST(ShapeOverflowTest, ConvTransposeBadAttributesAreRefused) {
  using A = Attribute;
  struct Case {
    const char* what;
    std::vector<Attribute> attributes;
  };
  std::vector<Case> cases = {
      // Was read past its end: one value for two spatial dims.
      {"output_padding", {A::Ints("output_padding", {1})}},
      {"output_shape", {A::Ints("output_shape", {7})}},
      {"strides", {A::Ints("strides", {kMax, 1})}},
      {"group", {A::Int("group", 0)}},
  };
  for (const Case& c : cases) {
    GraphBuilder b(17);
    Value* x = b.Input("x", DataType::kFloat32, {1, 2, 3, 3});
    Value* y = b.Op("ConvTranspose", {x, b.Initializer("w", Zeros({2, 2, 3, 3}))}, c.attributes,
                    {.name = "n"});
    ExpectRefused(b, y, std::string("ConvTranspose ") + c.what);
  }
}

TEST(ShapeOverflowTest, ConstantConvTransposeOnTheReferenceKernelIsRefused) {
  // All inputs constant: shape inference runs the reference kernel instead of the shape
  // function, so the kernel's own size arithmetic must refuse the same attributes.
  using A = Attribute;
  for (const std::vector<Attribute>& attributes :
       {std::vector<Attribute>{A::Ints("strides", {kMax, 1})},
        std::vector<Attribute>{A::Ints("output_padding", {kMax, 0})},
        std::vector<Attribute>{A::Ints("pads", {0, 0, kMax, kMax})},
        std::vector<Attribute>{A::Ints("output_shape", {kMin, 3})}}) {
    GraphBuilder b(17);
    Value* x = b.Initializer("x", Zeros({1, 2, 3, 3}));
    Value* y = b.Op("ConvTranspose", {x, b.Initializer("w", Zeros({2, 2, 3, 3}))}, attributes,
                    {.name = "n"});
    ExpectRefused(b, y, "constant ConvTranspose " + attributes[0].name);
  }
}

TEST(ShapeOverflowTest, ConstantConvAndPoolOnTheReferenceKernelAreRefused) {
  using A = Attribute;
  const int64_t huge = int64_t{1} << 62;
  for (const std::vector<Attribute>& attributes :
       {std::vector<Attribute>{A::Ints("strides", {kMax, 1})},
        std::vector<Attribute>{A::Ints("dilations", {huge, 1})},
        std::vector<Attribute>{A::Ints("pads", {kMax, 0, kMax, 0})}}) {
    GraphBuilder b(17);
    Value* x = b.Initializer("x", Zeros({1, 2, 5, 5}));
    Value* conv =
        b.Op("Conv", {x, b.Initializer("w", Zeros({2, 2, 3, 3}))}, attributes, {.name = "n"});
    ExpectRefused(b, conv, "constant Conv " + attributes[0].name);
  }
  GraphBuilder b(17);
  Value* x = b.Initializer("x", Zeros({1, 2, 5, 5}));
  Value* pool =
      b.Op("MaxPool", {x},
           {A::Ints("kernel_shape", {2, 2}), A::Ints("strides", {kMax, 1}), A::Int("ceil_mode", 1)},
           {.name = "n"});
  ExpectRefused(b, pool, "constant MaxPool strides");
}

// Slice of x = [10, 6] on axis 0 with one step.
Sizes SliceStep(int64_t start, int64_t end, int64_t step) {
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {10, 6});
  return SizesOf(
      b,
      b.Op("Slice", {x, b.Initializer("starts", Ints({start})), b.Initializer("ends", Ints({end})),
                     b.Initializer("axes", Ints({0})), b.Initializer("steps", Ints({step}))}));
}

TEST(ShapeOverflowTest, SliceExtremeStepsTakeOneElement) {
  EXPECT_EQ(SliceStep(0, kMax, kMax), (Sizes{1, 6}));
  EXPECT_EQ(SliceStep(kMax, kMin, kMin), (Sizes{1, 6}));
  EXPECT_EQ(SliceStep(-1, kMin, kMin + 1), (Sizes{1, 6}));
}

TEST(ShapeOverflowTest, SliceOfAnEmptyAxisIsEmpty) {
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {0, 6});
  Value* y =
      b.Op("Slice", {x, b.Initializer("starts", Ints({-1})), b.Initializer("ends", Ints({kMin})),
                     b.Initializer("axes", Ints({0})), b.Initializer("steps", Ints({-1}))});
  EXPECT_EQ(SizesOf(b, y), (Sizes{0, 6}));
}

}  // namespace
}  // namespace qtune::runtime
