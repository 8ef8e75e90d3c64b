// Reference Det and Einsum: cases the ONNX node tests leave out (odd sizes, singular and
// pivoting matrices, implicit outputs, traces, ellipsis broadcasting across ranks,
// integers) and the errors, which name the node.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "runtime/reference_test_util.h"

namespace qtune::runtime::testing {
namespace {

Tensor F64(std::vector<int64_t> sizes, std::vector<double> values) {
  return Tensor::FromVector<double>(std::move(sizes), values);
}

OpCall EinsumCall(const std::string& equation, std::vector<Tensor> inputs) {
  return {.op_type = "Einsum",
          .inputs = std::move(inputs),
          .attributes = {Attribute::String("equation", equation)},
          .opset = 12,
          .name = "es"};
}

void ExpectErrorNaming(const StatusOr<std::vector<Tensor>>& result, const std::string& node,
                       const std::string& detail) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument) << result.status().ToString();
  EXPECT_NE(result.status().message().find(node), std::string::npos) << result.status().ToString();
  EXPECT_NE(result.status().message().find(detail), std::string::npos)
      << result.status().ToString();
}

// ------------------------------------------------------------------ Det

TEST(ReferenceDet, NeedsPivotingAndBatches) {
  // [[0, 1], [1, 0]] has a zero pivot first: det -1; a 3x3 with det 2*3*4 - ... by hand.
  Tensor x = F32({2, 3, 3}, {0, 1, 0, 1, 0, 0, 0, 0, 1,  //
                             2, -1, 0, -1, 2, -1, 0, -1, 2});
  Tensor y = Run1({.op_type = "Det", .inputs = {x}, .opset = 11});
  ASSERT_EQ(y.sizes(), (std::vector<int64_t>{2}));
  EXPECT_NEAR(Values<float>(y)[0], -1.0f, 1e-6);
  EXPECT_NEAR(Values<float>(y)[1], 4.0f, 1e-5);
}

TEST(ReferenceDet, SingularIsZeroAndOneByOneIsTheValue) {
  Tensor singular = F64({3, 3}, {1, 2, 3, 2, 4, 6, 7, 8, 9});
  EXPECT_EQ(Values<double>(Run1({.op_type = "Det", .inputs = {singular}, .opset = 11}))[0], 0.0);
  Tensor one = F32({1, 1}, {-2.5f});
  EXPECT_EQ(Values<float>(Run1({.op_type = "Det", .inputs = {one}, .opset = 11}))[0], -2.5f);
}

TEST(ReferenceDet, NonSquareIsAnErrorNamingTheNode) {
  auto result = RunOp({.op_type = "Det", .inputs = {Iota({2, 3})}, .opset = 11, .name = "det1"});
  ExpectErrorNaming(result, "Det 'det1'", "square");
}

// ------------------------------------------------------------------ Einsum

TEST(ReferenceEinsum, ImplicitOutputIsSortedSingleLetters) {
  // "ij,jk" -> "ik": a matrix product of [2,3] and [3,2].
  Tensor y =
      Run1(EinsumCall("ij,jk", {F64({2, 3}, {1, 2, 3, 4, 5, 6}), F64({3, 2}, {1, 0, 0, 1, 1, 1})}));
  ASSERT_EQ(y.sizes(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Values<double>(y), (std::vector<double>{4, 5, 10, 11}));
  // "ba" implicit is "ab": a transpose.
  Tensor t = Run1(EinsumCall("ba", {F64({2, 3}, {1, 2, 3, 4, 5, 6})}));
  ASSERT_EQ(t.sizes(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Values<double>(t), (std::vector<double>{1, 4, 2, 5, 3, 6}));
}

TEST(ReferenceEinsum, TraceAndDiagonal) {
  Tensor x = F32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor trace = Run1(EinsumCall("ii", {x}));
  EXPECT_TRUE(trace.sizes().empty());
  EXPECT_EQ(Values<float>(trace)[0], 15.0f);
  EXPECT_EQ(Values<float>(Run1(EinsumCall("ii->i", {x}))), (std::vector<float>{1, 5, 9}));
}

TEST(ReferenceEinsum, OuterProductUppercaseAndSpaces) {
  Tensor y = Run1(EinsumCall(" A , b -> b A ", {F32({2}, {1, 2}), F32({3}, {1, 10, 100})}));
  ASSERT_EQ(y.sizes(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Values<float>(y), (std::vector<float>{1, 2, 10, 20, 100, 200}));
}

TEST(ReferenceEinsum, EllipsisBroadcastsAcrossRanks) {
  // "...ij,...jk->...ik" with batch dims [2,1] and [3]: the batch broadcasts to [2,3].
  Tensor a = Iota({2, 1, 2, 3});
  Tensor b = Iota({3, 3, 2}, 1);
  Tensor y = Run1(EinsumCall("...ij,...jk->...ik", {a, b}));
  ASSERT_EQ(y.sizes(), (std::vector<int64_t>{2, 3, 2, 2}));
  std::vector<float> got = Values<float>(y);
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  for (int p = 0; p < 2; ++p) {
    for (int q = 0; q < 3; ++q) {
      for (int i = 0; i < 2; ++i) {
        for (int k = 0; k < 2; ++k) {
          float want = 0;
          for (int j = 0; j < 3; ++j) want += pa[p * 6 + i * 3 + j] * pb[q * 6 + j * 2 + k];
          EXPECT_EQ(got[((p * 3 + q) * 2 + i) * 2 + k], want) << p << q << i << k;
        }
      }
    }
  }
  // Implicit output puts the ellipsis dims first: "i...->" is "...i" reordered.
  Tensor m = Iota({2, 3});
  Tensor moved = Run1(EinsumCall("i...", {m}));
  ASSERT_EQ(moved.sizes(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Values<float>(moved), (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

TEST(ReferenceEinsum, IntegersAndSumToScalar) {
  Tensor y = Run1(EinsumCall("ij->", {I32({2, 2}, {1, -2, 3, 4})}));
  EXPECT_EQ(y.dtype(), DataType::kInt32);
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{6}));
}

TEST(ReferenceEinsum, BadEquationsAreErrorsNamingTheNode) {
  Tensor m = Iota({2, 3});
  ExpectErrorNaming(RunOp(EinsumCall("ij,jk", {m})), "Einsum 'es'", "2 input terms for 1 inputs");
  ExpectErrorNaming(RunOp(EinsumCall("i1->i", {m})), "Einsum 'es'", "invalid character '1'");
  ExpectErrorNaming(RunOp(EinsumCall("ijk", {m})), "Einsum 'es'", "does not fit input 0");
  ExpectErrorNaming(RunOp(EinsumCall("ij->k", {m})), "Einsum 'es'", "output letter 'k'");
  ExpectErrorNaming(RunOp(EinsumCall("ii", {m})), "Einsum 'es'", "letter 'i'");
  ExpectErrorNaming(RunOp(EinsumCall("i.j", {m})), "Einsum 'es'", "\"...\"");
  ExpectErrorNaming(RunOp(EinsumCall("...j->j", {Iota({2, 3})})), "Einsum 'es'", "no \"...\"");
}

}  // namespace
}  // namespace qtune::runtime::testing
