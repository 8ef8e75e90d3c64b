// Initializer data in every encoding ONNX allows: raw_data and the typed fields.
#include <gtest/gtest.h>

#include <cstring>

#include "core/float_convert.h"
#include "ir/onnx_io.h"
#include "ir/onnx_test_util.h"

namespace qtune::ir {
namespace {

using testing::AddOutput;
using testing::MakeModel;
using testing::Parse;

// A model whose only content is initializer "t" (also the graph output).
onnx::ModelProto ModelWith(const onnx::TensorProto& tensor) {
  onnx::ModelProto m = MakeModel();
  *m.mutable_graph()->add_initializer() = tensor;
  m.mutable_graph()->mutable_initializer(0)->set_name("t");
  AddOutput(m.mutable_graph(), "t");
  return m;
}

onnx::TensorProto Typed(int32_t data_type, std::vector<int64_t> dims) {
  onnx::TensorProto t;
  t.set_data_type(data_type);
  for (int64_t d : dims) t.add_dims(d);
  return t;
}

Tensor LoadTensor(const onnx::TensorProto& proto) {
  auto g = Parse(ModelWith(proto));
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  if (!g.ok()) return Tensor();
  return (*g)->FindValue("t")->initializer();
}

TEST(OnnxLoadTensorTest, FloatData) {
  onnx::TensorProto p = Typed(1, {2, 2});
  for (float v : {1.f, -2.f, 3.5f, 0.f}) p.add_float_data(v);
  Tensor t = LoadTensor(p);
  ASSERT_TRUE(t.is_valid());
  EXPECT_EQ(t.sizes(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(t.span<float>()[2], 3.5f);
}

TEST(OnnxLoadTensorTest, Int32DataCarriesNarrowIntegersAndBool) {
  onnx::TensorProto i8 = Typed(3, {3});
  for (int v : {-128, 0, 127}) i8.add_int32_data(v);
  EXPECT_EQ(LoadTensor(i8).span<int8_t>()[0], -128);
  onnx::TensorProto u8 = Typed(2, {2});
  for (int v : {255, 1}) u8.add_int32_data(v);
  EXPECT_EQ(LoadTensor(u8).span<uint8_t>()[0], 255);
  onnx::TensorProto i16 = Typed(5, {1});
  i16.add_int32_data(-300);
  EXPECT_EQ(LoadTensor(i16).span<int16_t>()[0], -300);
  onnx::TensorProto i32 = Typed(6, {1});
  i32.add_int32_data(-70000);
  EXPECT_EQ(LoadTensor(i32).span<int32_t>()[0], -70000);
  onnx::TensorProto b = Typed(9, {3});
  for (int v : {1, 0, 1}) b.add_int32_data(v);
  Tensor bt = LoadTensor(b);
  EXPECT_EQ(bt.dtype(), DataType::kBool);
  EXPECT_EQ(static_cast<const uint8_t*>(bt.raw_data())[2], 1);
}

TEST(OnnxLoadTensorTest, Int32DataCarriesHalfBfloatAndFloat8BitPatterns) {
  onnx::TensorProto h = Typed(10, {2});
  h.add_int32_data(FloatToHalf(1.5f));
  h.add_int32_data(FloatToHalf(-0.25f));
  Tensor ht = LoadTensor(h);
  EXPECT_EQ(HalfToFloat(ht.span<uint16_t>()[1]), -0.25f);
  onnx::TensorProto bf = Typed(16, {1});
  bf.add_int32_data(FloatToBfloat16(3.0f));
  EXPECT_EQ(Bfloat16ToFloat(LoadTensor(bf).span<uint16_t>()[0]), 3.0f);
  for (int32_t fp8 = 17; fp8 <= 20; ++fp8) {
    onnx::TensorProto f8 = Typed(fp8, {2});
    f8.add_int32_data(0x38);
    f8.add_int32_data(0x7E);
    Tensor t = LoadTensor(f8);
    ASSERT_TRUE(t.is_valid()) << fp8;
    EXPECT_EQ(static_cast<int32_t>(t.dtype()), fp8);
    EXPECT_EQ(static_cast<const uint8_t*>(t.raw_data())[1], 0x7E);
  }
}

TEST(OnnxLoadTensorTest, Int64DoubleAndUint64Data) {
  onnx::TensorProto i64 = Typed(7, {2});
  i64.add_int64_data(int64_t{1} << 40);
  i64.add_int64_data(-1);
  EXPECT_EQ(LoadTensor(i64).span<int64_t>()[0], int64_t{1} << 40);
  onnx::TensorProto f64 = Typed(11, {1});
  f64.add_double_data(0.1);
  EXPECT_EQ(LoadTensor(f64).span<double>()[0], 0.1);
  onnx::TensorProto u32 = Typed(12, {1});
  u32.add_uint64_data(4000000000u);
  EXPECT_EQ(LoadTensor(u32).span<uint32_t>()[0], 4000000000u);
  onnx::TensorProto u64 = Typed(13, {1});
  u64.add_uint64_data(~uint64_t{0});
  EXPECT_EQ(LoadTensor(u64).span<uint64_t>()[0], ~uint64_t{0});
}

TEST(OnnxLoadTensorTest, ComplexUsesTwoEntriesPerElement) {
  onnx::TensorProto c = Typed(14, {2});
  for (float v : {1.f, 2.f, 3.f, 4.f}) c.add_float_data(v);
  Tensor t = LoadTensor(c);
  ASSERT_TRUE(t.is_valid());
  float out[4];
  std::memcpy(out, t.raw_data(), sizeof(out));
  EXPECT_EQ(out[3], 4.f);
}

TEST(OnnxLoadTensorTest, RawDataOfEveryStorableType) {
  for (int32_t type = 1; type <= kMaxKnownDataType; ++type) {
    const DataType dtype = static_cast<DataType>(type);
    // The packed 4-bit types: onnx_packed_types_test.
    if (!IsStorableDataType(dtype) || IsPackedInFiles(dtype)) continue;
    onnx::TensorProto p = Typed(type, {3});
    std::string bytes(3 * DataTypeSize(dtype), '\0');
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 + type);
    p.set_raw_data(bytes);
    Tensor t = LoadTensor(p);
    ASSERT_TRUE(t.is_valid()) << DataTypeName(dtype);
    EXPECT_EQ(t.dtype(), dtype);
    EXPECT_EQ(std::string(static_cast<const char*>(t.raw_data()), t.byte_size()), bytes)
        << DataTypeName(dtype);
  }
}

TEST(OnnxLoadTensorTest, EmptyTensorNeedsNoData) {
  Tensor t = LoadTensor(Typed(1, {0, 3}));
  ASSERT_TRUE(t.is_valid());
  EXPECT_EQ(t.num_elements(), 0);
}

TEST(OnnxLoadTensorTest, ScalarTensor) {
  onnx::TensorProto p = Typed(7, {});
  p.add_int64_data(42);
  Tensor t = LoadTensor(p);
  EXPECT_EQ(t.rank(), 0u);
  EXPECT_EQ(t.span<int64_t>()[0], 42);
}

}  // namespace
}  // namespace qtune::ir
