// Shape functions of the ONNX quantization ops on their own (types per opset, sizes from
// the Conv/MatMul geometry, errors before anything runs). The kernels are tested in
// reference_quant_linear_test.cc and reference_quant_integer_test.cc, where every
// successful call also checks its shape function against the kernel's outputs.
#include <gtest/gtest.h>

#include "reference_quant_test_util.h"

namespace qtune::runtime::testing {
namespace {

StatusOr<ValueInfo> Infer1(OpCall call) {
  ASSIGN_OR_RETURN(std::vector<ValueInfo> infos, InferOp(call));
  if (infos.empty()) return InternalError("no outputs");
  return infos[0];
}

TEST(QuantShapeTest, QuantizeLinearOutputTypePerOpset) {
  Tensor x = F32({2, 3}, {0, 0, 0, 0, 0, 0});
  auto q = [&](std::vector<Tensor> extra, int64_t opset, std::vector<Attribute> attrs = {}) {
    std::vector<Tensor> in = {x, ScalarF32(1)};
    in.insert(in.end(), extra.begin(), extra.end());
    return Infer1({.op_type = "QuantizeLinear", .inputs = in, .attributes = attrs, .opset = opset});
  };
  EXPECT_EQ(q({}, 10)->dtype, DataType::kUint8);
  EXPECT_EQ(q({Tensor::Scalar<int8_t>(0)}, 13)->dtype, DataType::kInt8);
  EXPECT_EQ(q({Float8(DataType::kFloat8E5M2, {}, {0})}, 19)->dtype, DataType::kFloat8E5M2);
  EXPECT_EQ(q({}, 21, {Attribute::Int("output_dtype", 5)})->dtype, DataType::kInt16);
  EXPECT_EQ(q({}, 21, {Attribute::Int("output_dtype", 5)})->sizes, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(q({Tensor::Scalar<int16_t>(0)}, 13).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(q({}, 21, {Attribute::Int("output_dtype", 21)})->dtype, DataType::kUint4);
  EXPECT_EQ(q({}, 21, {Attribute::Int("output_dtype", 23)}).status().code(),
            StatusCode::kInvalidArgument);  // float4e2m1 needs opset 23
  EXPECT_EQ(q({}, 23, {Attribute::Int("output_dtype", 23)})->dtype, DataType::kFloat4E2M1);
}

TEST(QuantShapeTest, DequantizeLinearOutputTypeFollowsTheScaleFromOpset19) {
  auto dq = [](Tensor scale, int64_t opset) {
    return Infer1(
        {.op_type = "DequantizeLinear", .inputs = {U8({4}, {0, 0, 0, 0}), scale}, .opset = opset});
  };
  EXPECT_EQ(dq(ScalarF32(1), 13)->dtype, DataType::kFloat32);
  EXPECT_EQ(dq(Half({}, {1.0f}), 19)->dtype, DataType::kFloat16);
  EXPECT_EQ(dq(Half({}, {1.0f}, DataType::kBfloat16), 21)->dtype, DataType::kBfloat16);
  EXPECT_EQ(dq(Half({}, {1.0f}), 13).status().code(), StatusCode::kInvalidArgument);
}

TEST(QuantShapeTest, ScaleLayoutIsCheckedBeforeRunning) {
  OpCall call{.op_type = "DequantizeLinear",
              .inputs = {U8({2, 3}, {0, 0, 0, 0, 0, 0}), F32({2}, {1, 1})}};
  EXPECT_EQ(Infer1(call).status().code(), StatusCode::kInvalidArgument);  // axis 1 has 3
  call.attributes = {Attribute::Int("axis", 0)};
  EXPECT_TRUE(Infer1(call).ok());
  call.opset = 21;
  call.inputs[1] = F32({1, 3}, {1, 1, 1});
  call.attributes.push_back(Attribute::Int("block_size", 2));
  EXPECT_TRUE(Infer1(call).ok());  // ceil(2 / 2) = 1 along axis 0
  call.inputs[1] = F32({2, 3}, {1, 1, 1, 1, 1, 1});
  EXPECT_EQ(Infer1(call).status().code(), StatusCode::kInvalidArgument);
}

TEST(QuantShapeTest, IntegerOpsUseConvAndMatMulGeometry) {
  std::vector<Tensor> conv = {U8({1, 2, 5, 5}, std::vector<uint8_t>(50, 0)),
                              ScalarF32(1),
                              Tensor::Scalar<uint8_t>(0),
                              I8({4, 2, 3, 3}, std::vector<int8_t>(72, 0)),
                              ScalarF32(1),
                              Tensor::Scalar<int8_t>(0),
                              ScalarF32(1),
                              Tensor::Scalar<int8_t>(0)};
  auto info = Infer1({.op_type = "QLinearConv",
                      .inputs = conv,
                      .attributes = {Attribute::Ints("strides", {2, 2})}});
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->dtype, DataType::kInt8);
  EXPECT_EQ(info->sizes, (std::vector<int64_t>{1, 4, 2, 2}));

  auto ci = Infer1({.op_type = "ConvInteger", .inputs = {conv[0], conv[3]}});
  ASSERT_TRUE(ci.ok());
  EXPECT_EQ(ci->dtype, DataType::kInt32);
  EXPECT_EQ(ci->sizes, (std::vector<int64_t>{1, 4, 3, 3}));

  auto mi = Infer1({.op_type = "MatMulInteger",
                    .inputs = {U8({3, 1, 2, 5}, std::vector<uint8_t>(30, 0)),
                               U8({4, 5, 6}, std::vector<uint8_t>(120, 0))}});
  ASSERT_TRUE(mi.ok());
  EXPECT_EQ(mi->dtype, DataType::kInt32);
  EXPECT_EQ(mi->sizes, (std::vector<int64_t>{3, 4, 2, 6}));

  auto bad = Infer1({.op_type = "MatMulInteger",
                     .inputs = {F32({2, 2}, {0, 0, 0, 0}), U8({2, 2}, {0, 0, 0, 0})}});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(QuantShapeTest, DynamicQuantizeLinearHasThreeOutputs) {
  auto infos = InferOp({.op_type = "DynamicQuantizeLinear",
                        .inputs = {F32({2, 2}, {0, 0, 0, 0})},
                        .opset = 11,
                        .num_outputs = 3});
  ASSERT_TRUE(infos.ok());
  ASSERT_EQ(infos->size(), 3u);
  EXPECT_EQ((*infos)[0].dtype, DataType::kUint8);
  EXPECT_EQ((*infos)[0].sizes, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ((*infos)[1].dtype, DataType::kFloat32);
  EXPECT_EQ((*infos)[1].sizes, (std::vector<int64_t>{}));
  EXPECT_EQ((*infos)[2].dtype, DataType::kUint8);
}

}  // namespace
}  // namespace qtune::runtime::testing
