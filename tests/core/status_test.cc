#include "core/status.h"

#include <gtest/gtest.h>

#include <cstring>

#include "core/dtype.h"
#include "core/shape.h"
#include "core/tensor.h"

namespace qtune {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgumentError("odd: " + std::to_string(x));
  return x / 2;
}

Status Quarter(int x, int* out) {
  ASSIGN_OR_RETURN(int h, Half(x));
  ASSIGN_OR_RETURN(*out, Half(h));
  return Status::Ok();
}

TEST(StatusTest, OkByDefault) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(StatusTest, ErrorCarriesCodeAndMessage) {
  Status s = DataLossError("torn record");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_EQ(s.ToString(), "DataLoss: torn record");
  EXPECT_EQ(s.WithContext("state.jsonl:3").message(), "state.jsonl:3: torn record");
}

TEST(StatusTest, AssignOrReturnPropagatesTheFirstError) {
  int out = 0;
  EXPECT_TRUE(Quarter(8, &out).ok());
  EXPECT_EQ(out, 2);
  Status s = Quarter(6, &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "odd: 3");
}

TEST(StatusTest, StatusOrFromOkStatusBecomesInternalError) {
  StatusOr<int> v(Status::Ok());
  EXPECT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kInternal);
}

TEST(TensorTest, AllocateRejectsHugeAndNegativeSizes) {
  EXPECT_EQ(Tensor::Allocate(DataType::kFloat32, {-1, 3}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Tensor::Allocate(DataType::kFloat32, {int64_t{1} << 40}).status().code(),
            StatusCode::kResourceExhausted);
  // An element count past int64 is beyond the size limit too (core/tensor_limits.h).
  EXPECT_EQ(Tensor::Allocate(DataType::kInt64, {int64_t{1} << 62, 4}).status().code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(Tensor::Allocate(DataType::kString, {2}).status().code(), StatusCode::kUnimplemented);
}

// AllocateUninitialized checks sizes as Allocate does; Allocate still zero-fills, even
// memory a freed uninitialized tensor left dirty.
TEST(TensorTest, UninitializedAllocationChecksLikeAllocateAndAllocateStillZeroes) {
  EXPECT_EQ(Tensor::AllocateUninitialized(DataType::kFloat32, {-1, 3}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Tensor::AllocateUninitialized(DataType::kFloat32, {int64_t{1} << 40}).status().code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(Tensor::AllocateUninitialized(DataType::kString, {2}).status().code(),
            StatusCode::kUnimplemented);
  auto raw = Tensor::AllocateUninitialized(DataType::kFloat32, {3, 5});
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(raw->sizes(), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(raw->raw_data()) % 64, 0u);
  for (int round = 0; round < 4; ++round) {
    auto dirty = Tensor::AllocateUninitialized(DataType::kUint8, {1000});
    ASSERT_TRUE(dirty.ok());
    std::memset(dirty->raw_data(), 0xA5, 1000);
    *dirty = Tensor();
    auto zeroed = Tensor::Allocate(DataType::kUint8, {1000});
    ASSERT_TRUE(zeroed.ok());
    for (uint8_t v : zeroed->span<uint8_t>()) ASSERT_EQ(v, 0);
  }
}

TEST(TensorTest, CopiesAliasAndCloneDoesNot) {
  Tensor a = Tensor::FromVector<float>({2, 2}, {1, 2, 3, 4});
  Tensor alias = a;
  Tensor deep = a.Clone();
  a.data<float>()[0] = 9;
  EXPECT_EQ(alias.data<float>()[0], 9);
  EXPECT_EQ(deep.data<float>()[0], 1);
  EXPECT_EQ(a.DebugString(), "float32[2x2]");
  EXPECT_FALSE(a.Reshaped({3}).ok());
  EXPECT_EQ(a.Reshaped({4})->sizes(), std::vector<int64_t>{4});
}

TEST(ShapeTest, PrintsSymbolicAndUnknownDims) {
  Shape s({Dim::Symbolic("batch"), Dim::Known(3), Dim::Unknown()});
  EXPECT_EQ(s.ToString(), "[batch,3,?]");
  EXPECT_FALSE(s.is_fully_known());
  EXPECT_EQ(NumElements({2, 3, 4}), 24);
  EXPECT_EQ(NumElements({int64_t{1} << 40, int64_t{1} << 40}), -1);
}

TEST(DataTypeTest, NamesSizesAndOnnxNumbers) {
  EXPECT_EQ(DataTypeSize(DataType::kFloat8E4M3FN), 1u);
  EXPECT_EQ(DataTypeName(DataType::kBfloat16), "bfloat16");
  EXPECT_EQ(static_cast<int>(DataType::kFloat8E5M2), 19);
  EXPECT_TRUE(IsKnownDataType(22));
  EXPECT_TRUE(IsKnownDataType(23));  // float4e2m1
  EXPECT_TRUE(IsKnownDataType(24));  // float8e8m0
  EXPECT_FALSE(IsKnownDataType(25));
  EXPECT_FALSE(IsKnownDataType(0));
  EXPECT_EQ(*ParseDataType("int8"), DataType::kInt8);
  EXPECT_FALSE(ParseDataType("int9").ok());
}

}  // namespace
}  // namespace qtune
