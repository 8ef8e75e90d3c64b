// InferShapes for the neural-network ops: Conv, ConvTranspose, pools, Gemm, MatMul.
#include <gtest/gtest.h>

#include "runtime/shape/infer_shapes.h"
#include "shape_inference_test_util.h"

namespace qtune::runtime {
namespace {

using namespace shape_testing;  // NOLINT(build/namespaces): test helpers

TEST(ShapeInferenceConvTest, PadsStridesDilationsAndGroups) {
  using A = Attribute;
  EXPECT_EQ(ConvLike("Conv", {1, 3, 10, 10}, {8, 3, 3, 3}, {A::Ints("pads", {1, 1, 1, 1})}),
            (Sizes{1, 8, 10, 10}));
  EXPECT_EQ(ConvLike("Conv", {1, 3, 10, 11}, {8, 3, 3, 3}, {A::Ints("strides", {2, 3})}),
            (Sizes{1, 8, 4, 3}));
  EXPECT_EQ(ConvLike("Conv", {1, 3, 10, 10}, {8, 3, 3, 3}, {A::Ints("dilations", {2, 1})}),
            (Sizes{1, 8, 6, 8}));
  // Asymmetric pads: [h_begin, w_begin, h_end, w_end].
  EXPECT_EQ(ConvLike("Conv", {1, 1, 5, 6}, {1, 1, 3, 3}, {A::Ints("pads", {0, 1, 2, 0})}),
            (Sizes{1, 1, 5, 5}));
  EXPECT_EQ(ConvLike("Conv", {2, 2, 9}, {4, 2, 4}, {A::Ints("strides", {2})}), (Sizes{2, 4, 3}));
  EXPECT_EQ(ConvLike("Conv", {1, 1, 4, 5, 6}, {2, 1, 3, 3, 3}, {}), (Sizes{1, 2, 2, 3, 4}));
  // Groups and depthwise.
  EXPECT_EQ(ConvLike("Conv", {1, 4, 7, 7}, {6, 2, 3, 3}, {Attribute::Int("group", 2)}),
            (Sizes{1, 6, 5, 5}));
  EXPECT_EQ(ConvLike("Conv", {1, 8, 7, 7}, {8, 1, 3, 3}, {Attribute::Int("group", 8)}),
            (Sizes{1, 8, 5, 5}));
}

TEST(ShapeInferenceConvTest, EveryAutoPadMode) {
  using A = Attribute;
  for (const char* same : {"SAME_UPPER", "SAME_LOWER"}) {
    EXPECT_EQ(ConvLike("Conv", {1, 1, 7, 8}, {1, 1, 3, 3},
                       {A::String("auto_pad", same), A::Ints("strides", {2, 2})}),
              (Sizes{1, 1, 4, 4}))
        << same;
    EXPECT_EQ(ConvLike("Conv", {1, 1, 7, 8}, {1, 1, 4, 4}, {A::String("auto_pad", same)}),
              (Sizes{1, 1, 7, 8}))
        << same;
  }
  EXPECT_EQ(ConvLike("Conv", {1, 1, 7, 8}, {1, 1, 3, 3},
                     {A::String("auto_pad", "VALID"), A::Ints("strides", {2, 2})}),
            (Sizes{1, 1, 3, 3}));
  EXPECT_EQ(ConvLike("Conv", {1, 1, 7, 8}, {1, 1, 3, 3},
                     {A::String("auto_pad", "NOTSET"), A::Ints("pads", {1, 1, 1, 1})}),
            (Sizes{1, 1, 7, 8}));
}

TEST(ShapeInferenceConvTest, ChannelAndGemmMismatchesNameTheNode) {
  for (const char* op : {"Conv", "Gemm"}) {
    GraphBuilder b(17);
    bool conv = std::string(op) == "Conv";
    Value* x = b.Input("x", DataType::kFloat32, conv ? Sizes{1, 4, 7, 7} : Sizes{3, 4});
    std::vector<Attribute> group;
    if (conv) group.push_back(Attribute::Int("group", 2));
    Value* y = b.Op(op, {x, b.Initializer("w", Zeros(conv ? Sizes{6, 3, 3, 3} : Sizes{5, 4}))},
                    group, {.name = "bad_node"});
    Status s = InferError(b, y);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << op;
    EXPECT_NE(s.message().find("bad_node"), std::string::npos) << s.ToString();
  }
}

TEST(ShapeInferenceConvTransposeTest, StridesPadsOutputPaddingAndGroups) {
  using A = Attribute;
  EXPECT_EQ(ConvLike("ConvTranspose", {1, 2, 3, 3}, {2, 4, 3, 3}, {A::Ints("strides", {2, 2})}),
            (Sizes{1, 4, 7, 7}));
  EXPECT_EQ(ConvLike("ConvTranspose", {1, 2, 3, 3}, {2, 4, 3, 3},
                     {A::Ints("strides", {2, 2}), A::Ints("output_padding", {1, 0})}),
            (Sizes{1, 4, 8, 7}));
  EXPECT_EQ(ConvLike("ConvTranspose", {1, 2, 3, 3}, {2, 4, 3, 3},
                     {A::Ints("strides", {2, 2}), A::Ints("pads", {1, 0, 1, 2})}),
            (Sizes{1, 4, 5, 5}));
  EXPECT_EQ(ConvLike("ConvTranspose", {1, 2, 3, 3}, {2, 4, 3, 3}, {A::Ints("dilations", {2, 2})}),
            (Sizes{1, 4, 7, 7}));
  EXPECT_EQ(ConvLike("ConvTranspose", {1, 4, 3, 3}, {4, 3, 3, 3}, {A::Int("group", 2)}),
            (Sizes{1, 6, 5, 5}));
}

TEST(ShapeInferenceConvTransposeTest, OutputShapeAndAutoPad) {
  using A = Attribute;
  EXPECT_EQ(ConvLike("ConvTranspose", {1, 1, 3, 3}, {1, 2, 3, 3},
                     {A::Ints("strides", {3, 2}), A::Ints("output_shape", {10, 8})}),
            (Sizes{1, 2, 10, 8}));
  for (const char* same : {"SAME_UPPER", "SAME_LOWER"}) {
    EXPECT_EQ(ConvLike("ConvTranspose", {1, 1, 3, 4}, {1, 2, 3, 3},
                       {A::Ints("strides", {2, 2}), A::String("auto_pad", same)}),
              (Sizes{1, 2, 6, 8}))
        << same;
  }
  EXPECT_EQ(ConvLike("ConvTranspose", {1, 1, 3, 3}, {1, 2, 3, 3},
                     {A::Ints("strides", {2, 2}), A::String("auto_pad", "VALID")}),
            (Sizes{1, 2, 7, 7}));
}

TEST(ShapeInferencePoolTest, CeilModeAndTheLastWindowRule) {
  using A = Attribute;
  for (const char* op : {"MaxPool", "AveragePool"}) {
    std::vector<Attribute> k2s2 = {A::Ints("kernel_shape", {2, 2}), A::Ints("strides", {2, 2})};
    EXPECT_EQ(Pool(op, {1, 1, 5, 5}, k2s2), (Sizes{1, 1, 2, 2})) << op;
    k2s2.push_back(A::Int("ceil_mode", 1));
    EXPECT_EQ(Pool(op, {1, 1, 5, 5}, k2s2), (Sizes{1, 1, 3, 3})) << op;
    // A window that would start in the right padding only is dropped: 3, not 4.
    k2s2.push_back(A::Ints("pads", {1, 1, 1, 1}));
    EXPECT_EQ(Pool(op, {1, 1, 5, 5}, k2s2), (Sizes{1, 1, 3, 3})) << op;
    EXPECT_EQ(Pool(op, {1, 1, 6, 6},
                   {A::Ints("kernel_shape", {3, 3}), A::Ints("strides", {2, 2}),
                    A::Ints("pads", {1, 1, 1, 1}), A::Int("ceil_mode", 1)}),
              (Sizes{1, 1, 4, 4}))
        << op;
    EXPECT_EQ(Pool(op, {1, 2, 7, 6},
                   {A::Ints("kernel_shape", {3, 3}), A::Ints("strides", {2, 2}),
                    A::String("auto_pad", "SAME_UPPER")}),
              (Sizes{1, 2, 4, 3}))
        << op;
  }
  EXPECT_EQ(Pool("MaxPool", {1, 1, 8, 8},
                 {A::Ints("kernel_shape", {2, 2}), A::Ints("dilations", {2, 2})}),
            (Sizes{1, 1, 6, 6}));
  EXPECT_EQ(Pool("GlobalAveragePool", {2, 3, 5, 7}, {}), (Sizes{2, 3, 1, 1}));
}

TEST(ShapeInferencePoolTest, MaxPoolIndicesAreInt64) {
  GraphBuilder b(17);
  Value* x = b.Input("x", DataType::kFloat32, {1, 2, 5, 5});
  std::vector<Value*> ys = b.MultiOp("MaxPool", {x}, 2, {Attribute::Ints("kernel_shape", {3, 3})});
  std::vector<ValueInfo> infos = Infer(b, ys);
  ASSERT_EQ(infos.size(), 2u);
  EXPECT_EQ(infos[1].dtype, DataType::kInt64);
  EXPECT_EQ(infos[1].sizes, (Sizes{1, 2, 3, 3}));
}

Sizes Gemm(const Sizes& a, const Sizes& bsizes, int64_t trans_a, int64_t trans_b) {
  GraphBuilder b(17);
  Value* av = b.Input("a", DataType::kFloat32, a);
  Value* bv = b.Input("b", DataType::kFloat32, bsizes);
  return SizesOf(b, b.Op("Gemm", {av, bv},
                         {Attribute::Int("transA", trans_a), Attribute::Int("transB", trans_b)}));
}

TEST(ShapeInferenceGemmTest, Transposes) {
  EXPECT_EQ(Gemm({3, 4}, {4, 5}, 0, 0), (Sizes{3, 5}));
  EXPECT_EQ(Gemm({4, 3}, {4, 5}, 1, 0), (Sizes{3, 5}));
  EXPECT_EQ(Gemm({3, 4}, {5, 4}, 0, 1), (Sizes{3, 5}));
  EXPECT_EQ(Gemm({4, 3}, {5, 4}, 1, 1), (Sizes{3, 5}));
}

Sizes MatMul(const Sizes& a, const Sizes& bsizes) {
  GraphBuilder b(17);
  Value* av = b.Input("a", DataType::kFloat32, a);
  return SizesOf(b, b.Op("MatMul", {av, b.Input("b", DataType::kFloat32, bsizes)}));
}

TEST(ShapeInferenceMatMulTest, VectorsAndBroadcastBatches) {
  EXPECT_EQ(MatMul({3}, {3, 4}), (Sizes{4}));
  EXPECT_EQ(MatMul({2, 3, 4}, {4}), (Sizes{2, 3}));
  EXPECT_EQ(MatMul({3}, {3}), (Sizes{}));
  EXPECT_EQ(MatMul({3}, {2, 3, 4}), (Sizes{2, 4}));
  EXPECT_EQ(MatMul({2, 1, 3, 4}, {5, 4, 6}), (Sizes{2, 5, 3, 6}));
  EXPECT_EQ(MatMul({1, 3, 4}, {7, 4, 2}), (Sizes{7, 3, 2}));
}

}  // namespace
}  // namespace qtune::runtime
