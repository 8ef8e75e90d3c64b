// The 4-bit types (int4, uint4, float4e2m1: two per byte in files, one per byte in memory)
// and float8e8m0 through the loader and the writer: raw_data, int32_data and external data,
// odd element counts, and sizes that do not match.
#include <gtest/gtest.h>

#include <cstring>

#include "core/nibble_pack.h"
#include "ir/builder.h"
#include "ir/onnx_convert.h"
#include "ir/onnx_io.h"
#include "ir/onnx_test_util.h"

namespace qtune::ir {
namespace {

using testing::AddOutput;
using testing::MakeModel;
using testing::Parse;

onnx::ModelProto ModelWith(const onnx::TensorProto& tensor) {
  onnx::ModelProto m = MakeModel(24);
  *m.mutable_graph()->add_initializer() = tensor;
  m.mutable_graph()->mutable_initializer(0)->set_name("t");
  AddOutput(m.mutable_graph(), "t");
  return m;
}

onnx::TensorProto Typed(DataType type, std::vector<int64_t> dims) {
  onnx::TensorProto t;
  t.set_data_type(static_cast<int32_t>(type));
  for (int64_t d : dims) t.add_dims(d);
  return t;
}

std::vector<uint8_t> Bytes(const Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.raw_data());
  return {p, p + t.byte_size()};
}

StatusOr<Tensor> Load(const onnx::TensorProto& proto) {
  ASSIGN_OR_RETURN(auto graph, Parse(ModelWith(proto)));
  return graph->FindValue("t")->initializer();
}

TEST(OnnxPackedTypesTest, Int4RawDataUnpacksLowNibbleFirstAndSignExtends) {
  onnx::TensorProto p = Typed(DataType::kInt4, {5});
  p.set_raw_data(std::string("\xF8\x70\x03", 3));  // -8 -1 | 0 7 | 3 (high nibble unused)
  auto t = Load(p);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->dtype(), DataType::kInt4);
  EXPECT_EQ(t->byte_size(), 5u);  // one element per byte in memory
  const auto v = t->span<int8_t>();
  EXPECT_EQ(std::vector<int8_t>(v.begin(), v.end()), (std::vector<int8_t>{-8, -1, 0, 7, 3}));
}

TEST(OnnxPackedTypesTest, Uint4AndFloat4FromInt32DataOneEntryPerByte) {
  onnx::TensorProto u = Typed(DataType::kUint4, {3});
  u.add_int32_data(0xF8);
  u.add_int32_data(0x07);
  auto tu = Load(u);
  ASSERT_TRUE(tu.ok()) << tu.status().ToString();
  EXPECT_EQ(Bytes(*tu), (std::vector<uint8_t>{8, 15, 7}));
  onnx::TensorProto f = Typed(DataType::kFloat4E2M1, {2, 2});
  f.add_int32_data(0x7A);  // -1.0, 6.0
  f.add_int32_data(0x21);  // 0.5, 1.0
  auto tf = Load(f);
  ASSERT_TRUE(tf.ok()) << tf.status().ToString();
  EXPECT_EQ(Bytes(*tf), (std::vector<uint8_t>{0xA, 0x7, 0x1, 0x2}));
}

TEST(OnnxPackedTypesTest, Float8E8M0IsOneBytePerElement) {
  onnx::TensorProto raw = Typed(DataType::kFloat8E8M0, {3});
  raw.set_raw_data(std::string("\x7F\x80\xFF", 3));
  auto t = Load(raw);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(Bytes(*t), (std::vector<uint8_t>{127, 128, 255}));
  onnx::TensorProto typed = Typed(DataType::kFloat8E8M0, {2});
  typed.add_int32_data(1);
  typed.add_int32_data(254);
  EXPECT_EQ(Bytes(*Load(typed)), (std::vector<uint8_t>{1, 254}));
}

TEST(OnnxPackedTypesTest, SizeMismatchesNameTheTensorAndThePackedByteCount) {
  onnx::TensorProto p = Typed(DataType::kFloat4E2M1, {5});
  p.set_raw_data(std::string(5, '\0'));  // 5 elements need 3 bytes
  auto t = Load(p);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("'t'"), std::string::npos) << t.status().ToString();
  EXPECT_NE(t.status().message().find("needs 3 (two elements per byte)"), std::string::npos)
      << t.status().ToString();
  onnx::TensorProto q = Typed(DataType::kInt4, {4});
  q.add_int32_data(0x11);  // 4 elements need 2 entries
  EXPECT_EQ(Load(q).status().code(), StatusCode::kInvalidArgument);
}

// Every nibble value of each 4-bit type, an odd count, through SerializeModel and back;
// the file holds them packed.
TEST(OnnxPackedTypesTest, SaveWritesPackedBytesAndReloadsTheSameValues) {
  GraphBuilder b(24);
  for (DataType type : {DataType::kInt4, DataType::kUint4, DataType::kFloat4E2M1}) {
    Tensor t = *Tensor::Allocate(type, {17});
    for (int i = 0; i < 17; ++i) {
      const int v = type == DataType::kInt4 ? i % 16 - 8 : i % 16;
      t.data<uint8_t>()[i] = static_cast<uint8_t>(static_cast<int8_t>(v));
    }
    b.Output(b.Initializer(std::string(DataTypeName(type)), t));
  }
  std::unique_ptr<Graph> graph = b.Build();
  ASSERT_NE(graph, nullptr);
  auto bytes = SerializeModel(*graph);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  onnx::ModelProto saved;
  ASSERT_TRUE(saved.ParseFromString(*bytes));
  for (const onnx::TensorProto& init : saved.graph().initializer()) {
    EXPECT_EQ(init.raw_data().size(), 9u) << init.name();  // ceil(17 / 2)
  }
  // uint4 0..15, 0: bytes 0x10, 0x32, ..., 0xFE, 0x00.
  const std::string& u4 = saved.graph().initializer(1).raw_data();
  EXPECT_EQ(static_cast<uint8_t>(u4[0]), 0x10);
  EXPECT_EQ(static_cast<uint8_t>(u4[7]), 0xFE);
  EXPECT_EQ(static_cast<uint8_t>(u4[8]), 0x00);
  auto again = ParseModel(*bytes, "packed.onnx", {});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  testing::ExpectSameGraph(*graph, **again);
}

TEST(OnnxPackedTypesTest, ExternalDataHoldsPackedBytes) {
  testing::TempDir dir;
  GraphBuilder b(24);
  Tensor t = *Tensor::Allocate(DataType::kInt4, {3001});
  for (int i = 0; i < 3001; ++i) t.data<int8_t>()[i] = static_cast<int8_t>(i % 16 - 8);
  b.Output(b.Initializer("w", t));
  std::unique_ptr<Graph> graph = b.Build();
  ASSERT_NE(graph, nullptr);
  SaveOptions options;
  options.use_external_data = true;
  const std::string path = dir.File("m.onnx");
  ASSERT_TRUE(SaveModel(*graph, path, options).ok());
  EXPECT_EQ(testing::ReadBytes(dir.File("m.onnx.data")).size(), 1501u);
  auto again = LoadModel(path);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  testing::ExpectSameGraph(*graph, **again);
}

}  // namespace
}  // namespace qtune::ir
