// Reference Shrink, BitShift, EyeLike, ReverseSequence, Scatter, MeanVarianceNormalization,
// MaxUnpool and BatchNormalization's training mode: cases the ONNX node tests leave out
// (integer types, shifts past the width, negative k, other axes, odd sizes, broadcasting)
// and errors that name the node.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "runtime/reference_test_util.h"

namespace qtune::runtime::testing {
namespace {

void ExpectErrorNaming(const StatusOr<std::vector<Tensor>>& result, const std::string& node,
                       const std::string& detail) {
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find(node), std::string::npos) << result.status().ToString();
  EXPECT_NE(result.status().message().find(detail), std::string::npos)
      << result.status().ToString();
}

TEST(ReferenceShrink, IntegersTruncateAndDefaultLambdIsHalf) {
  Tensor x = I32({5}, {-3, -1, 0, 1, 3});
  Tensor y = Run1({.op_type = "Shrink",
                   .inputs = {x},
                   .attributes = {Attribute::Float("lambd", 1.5f), Attribute::Float("bias", 0.5f)},
                   .opset = 9});
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{-2, 0, 0, 0, 2}));  // -2.5, 2.5 truncate
  Tensor f = Run1({.op_type = "Shrink", .inputs = {F32({3}, {-0.6f, 0.5f, 0.7f})}, .opset = 9});
  std::vector<float> got = Values<float>(f);
  EXPECT_FLOAT_EQ(got[0], -0.6f);
  EXPECT_EQ(got[1], 0.0f);
  EXPECT_FLOAT_EQ(got[2], 0.7f);
}

TEST(ReferenceBitShift, BroadcastsAndShiftsPastTheWidthGiveZero) {
  Tensor x = Tensor::FromVector<uint8_t>({2, 2}, {1, 2, 128, 255});
  Tensor s = Tensor::FromVector<uint8_t>({2}, {1, 9});
  Tensor left = Run1({.op_type = "BitShift",
                      .inputs = {x, s},
                      .attributes = {Attribute::String("direction", "LEFT")},
                      .opset = 11});
  EXPECT_EQ(Values<uint8_t>(left), (std::vector<uint8_t>{2, 0, 0, 0}));
  Tensor right = Run1({.op_type = "BitShift",
                       .inputs = {x, Tensor::FromVector<uint8_t>({1}, {7})},
                       .attributes = {Attribute::String("direction", "RIGHT")},
                       .opset = 11});
  EXPECT_EQ(Values<uint8_t>(right), (std::vector<uint8_t>{0, 0, 1, 1}));
}

TEST(ReferenceBitShift, BadDirectionAndSignedTypesAreRefused) {
  Tensor x = Tensor::FromVector<uint32_t>({1}, {1});
  ExpectErrorNaming(RunOp({.op_type = "BitShift",
                           .inputs = {x, x},
                           .attributes = {Attribute::String("direction", "UP")},
                           .opset = 11,
                           .name = "bs"}),
                    "BitShift 'bs'", "direction");
  auto signed_x = RunOp({.op_type = "BitShift",
                         .inputs = {I32({1}, {1}), I32({1}, {1})},
                         .attributes = {Attribute::String("direction", "LEFT")},
                         .opset = 11,
                         .name = "bs"});
  ASSERT_FALSE(signed_x.ok());
  EXPECT_EQ(signed_x.status().code(), StatusCode::kUnimplemented);
}

TEST(ReferenceEyeLike, NegativeKAndBoolOutput) {
  Tensor y = Run1({.op_type = "EyeLike",
                   .inputs = {F32({3, 2}, {9, 9, 9, 9, 9, 9})},
                   .attributes = {Attribute::Int("k", -1), Attribute::Int("dtype", 9)},
                   .opset = 9});
  ASSERT_EQ(y.dtype(), DataType::kBool);
  EXPECT_EQ(Values<bool>(y), (std::vector<bool>{false, false, true, false, false, true}));
  Tensor far = Run1({.op_type = "EyeLike",
                     .inputs = {I64({2, 2}, {1, 1, 1, 1})},
                     .attributes = {Attribute::Int("k", 7)},
                     .opset = 9});
  EXPECT_EQ(Values<int64_t>(far), (std::vector<int64_t>{0, 0, 0, 0}));
  ExpectErrorNaming(RunOp({.op_type = "EyeLike", .inputs = {Iota({4})}, .opset = 9, .name = "e"}),
                    "EyeLike 'e'", "2-D");
}

TEST(ReferenceReverseSequence, InnerDimsMoveTogether) {
  // time_axis 0, batch_axis 1, one trailing dim of 2: [T=3, B=2, 2].
  Tensor x = Iota({3, 2, 2});
  Tensor y = Run1({.op_type = "ReverseSequence", .inputs = {x, I64({2}, {3, 1})}, .opset = 10});
  EXPECT_EQ(Values<float>(y), (std::vector<float>{8, 9, 2, 3, 4, 5, 6, 7, 0, 1, 10, 11}));
}

TEST(ReferenceReverseSequence, MismatchedBatchIsAnErrorNamingTheNode) {
  ExpectErrorNaming(RunOp({.op_type = "ReverseSequence",
                           .inputs = {Iota({3, 2}), I64({3}, {1, 1, 1})},
                           .opset = 10,
                           .name = "rs"}),
                    "ReverseSequence 'rs'", "one length per batch entry");
  ExpectErrorNaming(RunOp({.op_type = "ReverseSequence",
                           .inputs = {Iota({3, 2}), I64({2}, {4, 1})},
                           .opset = 10,
                           .name = "rs"}),
                    "ReverseSequence 'rs'", "sequence_lens[0] = 4");
}

TEST(ReferenceScatter, DeprecatedScatterIsScatterElementsWithNegativeAxis) {
  Tensor y = Run1({.op_type = "Scatter",
                   .inputs = {Iota({2, 3}), I64({2, 1}, {2, -3}), F32({2, 1}, {-1, -2})},
                   .attributes = {Attribute::Int("axis", -1)},
                   .opset = 10});
  EXPECT_EQ(Values<float>(y), (std::vector<float>{0, 1, -1, -2, 4, 5}));
}

TEST(ReferenceMvn, CustomAxesAndConstantGroups) {
  // axes [1] of [2, 3]: each row to zero mean, unit variance; a constant row gives 0.
  Tensor y = Run1({.op_type = "MeanVarianceNormalization",
                   .inputs = {F32({2, 3}, {1, 2, 3, 5, 5, 5})},
                   .attributes = {Attribute::Ints("axes", {-1})},
                   .opset = 13});
  std::vector<float> got = Values<float>(y);
  const float s = std::sqrt(2.0f / 3.0f);
  EXPECT_NEAR(got[0], -1 / s, 1e-5);
  EXPECT_NEAR(got[1], 0, 1e-6);
  EXPECT_NEAR(got[2], 1 / s, 1e-5);
  EXPECT_EQ(got[3], 0.0f);
  ExpectErrorNaming(RunOp({.op_type = "MeanVarianceNormalization",
                           .inputs = {Iota({2, 3})},
                           .opset = 13,
                           .name = "mvn"}),
                    "MeanVarianceNormalization 'mvn'", "axis");
}

TEST(ReferenceMaxUnpool, OddSizesWithPadsAndIndicesOutOfRange) {
  // X [1,1,2,2] from a 3x3 pool with stride 2 and pads 1: output (2-1)*2+3-2 = 3 per dim.
  std::vector<Attribute> attrs = {Attribute::Ints("kernel_shape", {3, 3}),
                                  Attribute::Ints("strides", {2, 2}),
                                  Attribute::Ints("pads", {1, 1, 1, 1})};
  Tensor y = Run1({.op_type = "MaxUnpool",
                   .inputs = {F32({1, 1, 2, 2}, {1, 2, 3, 4}), I64({1, 1, 2, 2}, {0, 5, 6, 8})},
                   .attributes = attrs,
                   .opset = 11});
  ASSERT_EQ(y.sizes(), (std::vector<int64_t>{1, 1, 3, 3}));
  EXPECT_EQ(Values<float>(y), (std::vector<float>{1, 0, 0, 0, 0, 2, 3, 0, 4}));
  ExpectErrorNaming(RunOp({.op_type = "MaxUnpool",
                           .inputs = {F32({1, 1, 1, 1}, {1}), I64({1, 1, 1, 1}, {9})},
                           .attributes = attrs,
                           .opset = 11,
                           .name = "up"}),
                    "MaxUnpool 'up'", "index 9");
}

TEST(ReferenceBatchNormTraining, BatchStatisticsAndRunningUpdate) {
  // One channel, values 1..4: mean 2.5, population variance 1.25.
  auto out =
      RunOp({.op_type = "BatchNormalization",
             .inputs = {F32({2, 1, 2}, {1, 2, 3, 4}), F32({1}, {2}), F32({1}, {1}),
                        F32({1}, {0.5f}), F32({1}, {1})},
             .attributes = {Attribute::Int("training_mode", 1), Attribute::Float("momentum", 0.5f),
                            Attribute::Float("epsilon", 0.0f)},
             .opset = 15,
             .num_outputs = 3});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 3u);
  const float sd = std::sqrt(1.25f);
  EXPECT_NEAR(Values<float>((*out)[0])[0], (1 - 2.5f) / sd * 2 + 1, 1e-5);
  EXPECT_NEAR(Values<float>((*out)[1])[0], 0.5f * 0.5f + 2.5f * 0.5f, 1e-6);
  EXPECT_NEAR(Values<float>((*out)[2])[0], 1 * 0.5f + 1.25f * 0.5f, 1e-6);
}

}  // namespace
}  // namespace qtune::runtime::testing
