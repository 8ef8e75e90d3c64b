// .npy reading and writing of well-formed files. Malformed input: npy_malformed_test.cc.
#include "core/npy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/file_io.h"
#include "core/float_convert.h"
#include "core/npy_test_util.h"
#include "core/tensor.h"

namespace qtune {
namespace {

using npy_testing::MakeNpy;
using npy_testing::RawBytes;
using npy_testing::TempPath;

const std::string kModelsDir = QTUNE_MODELS_DIR;

TEST(NpyTest, RealCalibrationFileIsFloat32Images) {
  const std::string path = kModelsDir + "/fmnist/calib_512.npy";
  auto tensor = ReadNpy(path);
  ASSERT_TRUE(tensor.ok()) << tensor.status().ToString();
  EXPECT_EQ(tensor->dtype(), DataType::kFloat32);
  EXPECT_EQ(tensor->sizes(), (std::vector<int64_t>{512, 1, 28, 28}));
  // The data is the file's bytes after its 128-byte header, verbatim.
  auto file = ReadFile(path);
  ASSERT_TRUE(file.ok());
  ASSERT_EQ(file->size(), 128 + tensor->byte_size());
  EXPECT_EQ(std::memcmp(file->data() + 128, tensor->raw_data(), tensor->byte_size()), 0);
  // ParseNpy on the same bytes agrees with ReadNpy.
  auto parsed = ParseNpy(*file, path);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(std::memcmp(parsed->raw_data(), tensor->raw_data(), tensor->byte_size()), 0);
  for (float v : tensor->span<float>()) ASSERT_TRUE(std::isfinite(v));
}

TEST(NpyTest, RealLabelsFileIsInt64ClassIds) {
  auto tensor = ReadNpy(kModelsDir + "/fmnist/test_2000_labels.npy");
  ASSERT_TRUE(tensor.ok()) << tensor.status().ToString();
  EXPECT_EQ(tensor->dtype(), DataType::kInt64);
  EXPECT_EQ(tensor->sizes(), (std::vector<int64_t>{2000}));
  for (int64_t label : tensor->span<int64_t>()) {
    ASSERT_GE(label, 0);
    ASSERT_LE(label, 9);
  }
}

TEST(NpyTest, WrittenHeaderMatchesNumpyLayout) {
  auto bytes = SerializeNpy(Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(bytes->substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const size_t header_len = static_cast<uint8_t>((*bytes)[8]) | static_cast<uint8_t>((*bytes)[9])
                                                                    << 8;
  EXPECT_EQ((10 + header_len) % 64, 0u);
  EXPECT_EQ(bytes->size(), 10 + header_len + 6 * sizeof(float));
  std::string header = bytes->substr(10, header_len);
  EXPECT_EQ(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 0), 0u)
      << header;
  EXPECT_EQ(header.back(), '\n');
}

TEST(NpyTest, OneDimensionalShapeIsWrittenWithTrailingComma) {
  auto bytes = SerializeNpy(Tensor::FromVector<int64_t>({3}, {1, 2, 3}));
  ASSERT_TRUE(bytes.ok());
  EXPECT_NE(bytes->find("'shape': (3,)"), std::string::npos);
  EXPECT_NE(bytes->find("'descr': '<i8'"), std::string::npos);
}

TEST(NpyTest, ScalarRoundTrips) {
  auto bytes = SerializeNpy(Tensor::Scalar<double>(2.5));
  ASSERT_TRUE(bytes.ok());
  EXPECT_NE(bytes->find("'shape': ()"), std::string::npos);
  auto back = ParseNpy(*bytes, "scalar.npy");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->rank(), 0u);
  EXPECT_EQ(back->num_elements(), 1);
  EXPECT_EQ(back->data<double>()[0], 2.5);
}

TEST(NpyTest, EmptyArrayRoundTrips) {
  auto empty = Tensor::Allocate(DataType::kFloat32, {0, 4});
  ASSERT_TRUE(empty.ok());
  auto bytes = SerializeNpy(*empty);
  ASSERT_TRUE(bytes.ok());
  auto back = ParseNpy(*bytes, "empty.npy");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->sizes(), (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(back->num_elements(), 0);
}

// Every numpy-representable dtype, through a file and back, bit for bit.
TEST(NpyTest, EveryDtypeRoundTripsThroughAFile) {
  const DataType types[] = {
      DataType::kFloat16, DataType::kFloat32, DataType::kFloat64, DataType::kInt8,
      DataType::kUint8,   DataType::kInt16,   DataType::kUint16,  DataType::kInt32,
      DataType::kUint32,  DataType::kInt64,   DataType::kUint64,  DataType::kBool,
  };
  for (DataType dtype : types) {
    SCOPED_TRACE(std::string(DataTypeName(dtype)));
    auto tensor = Tensor::Allocate(dtype, {2, 3, 5});
    ASSERT_TRUE(tensor.ok());
    auto* p = static_cast<uint8_t*>(tensor->raw_data());
    for (size_t i = 0; i < tensor->byte_size(); ++i) {
      p[i] = dtype == DataType::kBool ? static_cast<uint8_t>(i % 2)
                                      : static_cast<uint8_t>(i * 37 + 11);
    }
    const std::string path = TempPath("roundtrip.npy");
    ASSERT_TRUE(WriteNpy(path, *tensor).ok());
    auto back = ReadNpy(path);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->dtype(), dtype);
    EXPECT_EQ(back->sizes(), tensor->sizes());
    EXPECT_EQ(std::memcmp(back->raw_data(), tensor->raw_data(), tensor->byte_size()), 0);
    ::unlink(path.c_str());
  }
}

TEST(NpyTest, ReadTensorIsOwnedAndAligned) {
  auto bytes = SerializeNpy(Tensor::FromVector<int32_t>({4}, {1, 2, 3, 4}));
  ASSERT_TRUE(bytes.ok());
  auto back = ParseNpy(*bytes, "x.npy");
  ASSERT_TRUE(back.ok());
  bytes->assign(bytes->size(), '\0');  // the tensor must not alias the input
  EXPECT_FALSE(back->is_borrowed());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(back->raw_data()) % 64, 0u);
  EXPECT_EQ(back->data<int32_t>()[3], 4);
}

TEST(NpyTest, Version2HeaderIsRead) {
  auto t = ParseNpy(MakeNpy("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }",
                            RawBytes<int32_t>({7, -8}), 2),
                    "v2.npy");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->data<int32_t>()[1], -8);
}

TEST(NpyTest, Version3HeaderIsRead) {
  auto t = ParseNpy(MakeNpy("{'descr': '<u2', 'fortran_order': False, 'shape': (1, 1), }",
                            RawBytes<uint16_t>({65535}), 3),
                    "v3.npy");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->dtype(), DataType::kUint16);
  EXPECT_EQ(t->data<uint16_t>()[0], 65535);
}

TEST(NpyTest, ByteOrderFreeSpellingsOfOneByteTypesAreAccepted) {
  for (const char* descr : {"|i1", "<i1", ">i1", "|u1", "<u1", "|b1", "<b1"}) {
    SCOPED_TRACE(descr);
    std::string dict =
        std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (3,), }";
    auto t = ParseNpy(MakeNpy(dict, std::string("\x01\x00\x02", 3)), "x.npy");
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->num_elements(), 3);
  }
}

TEST(NpyTest, NativeByteOrderIsLittleEndian) {
  auto t = ParseNpy(
      MakeNpy("{'descr': '=f4', 'fortran_order': False, 'shape': (1,), }", RawBytes<float>({1.5f})),
      "x.npy");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->data<float>()[0], 1.5f);
}

TEST(NpyTest, Float16DataDecodesWithHalfToFloat) {
  auto t = ParseNpy(MakeNpy("{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }",
                            RawBytes<uint16_t>({0x3C00, 0xC000})),
                    "half.npy");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->dtype(), DataType::kFloat16);
  EXPECT_EQ(HalfToFloat(t->data<uint16_t>()[0]), 1.0f);
  EXPECT_EQ(HalfToFloat(t->data<uint16_t>()[1]), -2.0f);
}

TEST(NpyTest, NonCanonicalBoolBytesBecomeOne) {
  auto t = ParseNpy(MakeNpy("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                            std::string("\x00\x02\xff", 3)),
                    "mask.npy");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->data<bool>()[0], false);
  const auto* raw = static_cast<const uint8_t*>(t->raw_data());
  EXPECT_EQ(raw[1], 1);
  EXPECT_EQ(raw[2], 1);
}

TEST(NpyTest, HeaderVariantsOtherWritersProduceAreAccepted) {
  const char* dicts[] = {
      // Double quotes, another key order, no trailing comma, extra whitespace.
      "{\"shape\": (2,), \"fortran_order\": False, \"descr\": \"<i2\"}",
      "{ 'descr' : '<i2' ,'shape':(2,),'fortran_order':False }",
      // Python 2 long literals.
      "{'descr': '<i2', 'fortran_order': False, 'shape': (2L,), }",
      // A 1-tuple written without its comma.
      "{'descr': '<i2', 'fortran_order': False, 'shape': (2), }",
  };
  for (const char* dict : dicts) {
    SCOPED_TRACE(dict);
    auto t = ParseNpy(MakeNpy(dict, RawBytes<int16_t>({-1, 2})), "x.npy");
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->sizes(), (std::vector<int64_t>{2}));
    EXPECT_EQ(t->data<int16_t>()[0], -1);
  }
}

TEST(NpyTest, ParseNpyHeaderReportsOffsetAndSizeWithoutData) {
  std::string bytes = MakeNpy("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 7), }", "");
  auto header = ParseNpyHeader(bytes, "x.npy");
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  EXPECT_EQ(header->dtype, DataType::kFloat64);
  EXPECT_EQ(header->sizes, (std::vector<int64_t>{3, 7}));
  EXPECT_EQ(header->data_offset, static_cast<int64_t>(bytes.size()));  // no data follows
  EXPECT_EQ(header->data_bytes, 3 * 7 * 8);
}

TEST(NpyTest, NumpyUnrepresentableDtypesAreNotSerialized) {
  for (DataType dtype : {DataType::kBfloat16, DataType::kFloat8E4M3FN, DataType::kFloat8E5M2,
                         DataType::kComplex64}) {
    auto tensor = Tensor::Allocate(dtype, {2});
    ASSERT_TRUE(tensor.ok());
    auto bytes = SerializeNpy(*tensor);
    ASSERT_FALSE(bytes.ok());
    EXPECT_EQ(bytes.status().code(), StatusCode::kUnimplemented);
    EXPECT_NE(bytes.status().message().find(std::string(DataTypeName(dtype))), std::string::npos);
    const std::string path = TempPath("never_written.npy");
    Status s = WriteNpy(path, *tensor);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
    EXPECT_NE(::access(path.c_str(), F_OK), 0);
  }
}

TEST(NpyTest, InvalidTensorIsNotSerialized) {
  auto bytes = SerializeNpy(Tensor());
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().code(), StatusCode::kInvalidArgument);
}

TEST(NpyTest, WriteIntoMissingFolderNamesThePath) {
  Status s = WriteNpy("/nonexistent/qtune/out.npy", Tensor::Scalar<float>(1));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent/qtune/out.npy"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace qtune
