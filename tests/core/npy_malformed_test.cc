// Malformed and unsupported .npy input: every case returns a Status naming the file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <random>
#include <string>

#include "core/file_io.h"
#include "core/npy.h"
#include "core/npy_test_util.h"

namespace qtune {
namespace {

using npy_testing::MakeNpy;
using npy_testing::RawBytes;
using npy_testing::TempPath;

const std::string kSource = "bad/input.npy";

std::string Dict(const std::string& descr, const std::string& shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + shape + ", }";
}

// Parses `bytes` both from memory and from a file; both must fail with `code`, naming
// the source, and (when given) mentioning `fragment`.
void ExpectRejected(const std::string& bytes, StatusCode code, const std::string& fragment = "") {
  auto parsed = ParseNpy(bytes, kSource);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), code) << parsed.status().ToString();
  EXPECT_NE(parsed.status().message().find("'" + kSource + "'"), std::string::npos)
      << parsed.status().message();
  if (!fragment.empty()) {
    EXPECT_NE(parsed.status().message().find(fragment), std::string::npos)
        << parsed.status().message();
  }
  const std::string path = TempPath("malformed.npy");
  ASSERT_TRUE(WriteFileAtomic(path, bytes).ok());
  auto read = ReadNpy(path);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), code) << read.status().ToString();
  EXPECT_NE(read.status().message().find(path), std::string::npos) << read.status().message();
  ::unlink(path.c_str());
}

const std::string kTwoFloats = RawBytes<float>({1.0f, 2.0f});

TEST(NpyMalformedTest, FortranOrderIsRejected) {
  ExpectRejected(MakeNpy(Dict("<f4", "(2,)", true), kTwoFloats), StatusCode::kUnimplemented,
                 "Fortran");
}

TEST(NpyMalformedTest, BigEndianIsRejected) {
  ExpectRejected(MakeNpy(Dict(">f4", "(2,)"), kTwoFloats), StatusCode::kUnimplemented,
                 "big-endian");
}

TEST(NpyMalformedTest, ComplexDtypeIsRejected) {
  ExpectRejected(MakeNpy(Dict("<c8", "(1,)"), kTwoFloats), StatusCode::kUnimplemented, "'<c8'");
}

TEST(NpyMalformedTest, ObjectDtypeIsRejected) {
  ExpectRejected(MakeNpy(Dict("|O", "(1,)"), std::string(8, '\0')), StatusCode::kUnimplemented,
                 "'|O'");
}

TEST(NpyMalformedTest, StringDtypesAreRejected) {
  ExpectRejected(MakeNpy(Dict("<U5", "(1,)"), std::string(20, 'a')), StatusCode::kUnimplemented);
  ExpectRejected(MakeNpy(Dict("|S3", "(1,)"), "abc"), StatusCode::kUnimplemented);
}

TEST(NpyMalformedTest, DatetimeAndTruncatedDescrAreRejected) {
  ExpectRejected(MakeNpy(Dict("<M8[s]", "(1,)"), std::string(8, '\0')), StatusCode::kUnimplemented);
  ExpectRejected(MakeNpy(Dict("<", "(1,)"), ""), StatusCode::kUnimplemented);
  ExpectRejected(MakeNpy(Dict("", "(1,)"), ""), StatusCode::kUnimplemented);
}

TEST(NpyMalformedTest, StructuredDtypeIsRejected) {
  ExpectRejected(MakeNpy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }",
                         RawBytes<float>({1.0f})),
                 StatusCode::kUnimplemented, "structured");
}

TEST(NpyMalformedTest, BadMagicIsRejected) {
  std::string bytes = MakeNpy(Dict("<f4", "(2,)"), kTwoFloats);
  bytes[1] = 'X';
  ExpectRejected(bytes, StatusCode::kInvalidArgument, "not a .npy file");
  ExpectRejected("PK\x03\x04 this is a zip", StatusCode::kInvalidArgument, "not a .npy file");
}

TEST(NpyMalformedTest, EmptyFileIsDataLoss) { ExpectRejected("", StatusCode::kDataLoss, "empty"); }

TEST(NpyMalformedTest, TruncatedPreambleIsDataLoss) {
  ExpectRejected(std::string("\x93NUMPY\x01", 7), StatusCode::kDataLoss, "truncated");
  ExpectRejected(std::string("\x93NUMPY\x02\x00\x10\x00", 10), StatusCode::kDataLoss);
}

TEST(NpyMalformedTest, TruncatedHeaderIsDataLoss) {
  std::string bytes = MakeNpy(Dict("<f4", "(2,)"), kTwoFloats);
  ExpectRejected(bytes.substr(0, 40), StatusCode::kDataLoss, "header");
}

TEST(NpyMalformedTest, UnknownFormatVersionIsRejected) {
  std::string bytes = MakeNpy(Dict("<f4", "(2,)"), kTwoFloats);
  bytes[6] = 4;
  ExpectRejected(bytes, StatusCode::kUnimplemented, "version 4.0");
  bytes[6] = 1;
  bytes[7] = 1;
  ExpectRejected(bytes, StatusCode::kUnimplemented, "version 1.1");
}

TEST(NpyMalformedTest, AbsurdHeaderLengthIsRejectedBeforeReading) {
  std::string bytes("\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12);
  ExpectRejected(bytes + "{}", StatusCode::kInvalidArgument, "header claims");
}

TEST(NpyMalformedTest, HeaderThatIsNotADictIsRejected) {
  const char* headers[] = {
      "['descr', '<f4']",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), ",  // no closing brace
      "{'descr': '<f4', 'fortran_order': False}",                  // no shape
      "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}",       // not a bool
      "{'descr': '<f4', 'fortran_order': False, 'shape': [2]}",    // not a tuple
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}",
      "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
      "{'descr': <f4, 'fortran_order': False, 'shape': (2,)}",
      "{'descr': '<f4 , 'fortran_order': False, 'shape': (2,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} trailing",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
      "{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}",
      "",
  };
  for (const char* header : headers) {
    SCOPED_TRACE(header);
    ExpectRejected(MakeNpy(header, kTwoFloats), StatusCode::kInvalidArgument, "not a valid dict");
  }
}

TEST(NpyMalformedTest, NegativeShapeIsRejected) {
  ExpectRejected(MakeNpy(Dict("<f4", "(-2,)"), kTwoFloats), StatusCode::kInvalidArgument,
                 "negative");
  ExpectRejected(MakeNpy(Dict("<f4", "(2, -1)"), kTwoFloats), StatusCode::kInvalidArgument);
}

TEST(NpyMalformedTest, DeclaredSizeLargerThanFileIsDataLoss) {
  ExpectRejected(MakeNpy(Dict("<f4", "(1000, 1000)"), kTwoFloats), StatusCode::kDataLoss,
                 "only 8 bytes of data follow");
}

TEST(NpyMalformedTest, ShapeAboveTensorLimitIsRejectedWithoutAllocating) {
  // 2^33 float32 elements = 32 GiB: over kMaxTensorBytes, and never allocated.
  ExpectRejected(MakeNpy(Dict("<f4", "(8589934592,)"), kTwoFloats), StatusCode::kResourceExhausted,
                 "limit");
  // Element count overflowing int64.
  ExpectRejected(MakeNpy(Dict("<u1", "(4294967296, 4294967296, 4294967296)"), kTwoFloats),
                 StatusCode::kResourceExhausted);
}

TEST(NpyMalformedTest, BytesAfterTheDataAreRejected) {
  ExpectRejected(MakeNpy(Dict("<f4", "(2,)"), kTwoFloats + "junk"), StatusCode::kDataLoss,
                 "unexpected bytes");
}

TEST(NpyMalformedTest, MissingFileIsNotFound) {
  auto t = ReadNpy("/nonexistent/qtune/calib.npy");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_NE(t.status().message().find("/nonexistent/qtune/calib.npy"), std::string::npos);
}

TEST(NpyMalformedTest, FolderIsRejected) {
  auto t = ReadNpy(::testing::TempDir());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
}

// Every prefix of a valid file is an error (never a crash, never a half-read tensor).
TEST(NpyMalformedTest, EveryTruncationOfAValidFileIsAnError) {
  auto full = SerializeNpy(Tensor::FromVector<int32_t>({3, 2}, {1, 2, 3, 4, 5, 6}));
  ASSERT_TRUE(full.ok());
  ASSERT_TRUE(ParseNpy(*full, kSource).ok());
  for (size_t n = 0; n < full->size(); ++n) {
    auto t = ParseNpy(std::string_view(*full).substr(0, n), kSource);
    EXPECT_FALSE(t.ok()) << "prefix of " << n << " bytes";
  }
}

// Random corruption of the preamble and header: any outcome but a crash, and a success
// must describe a tensor the data actually covers.
TEST(NpyMalformedTest, RandomlyCorruptedHeadersNeverCrash) {
  const uint32_t seed = 20240611;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  auto valid = SerializeNpy(Tensor::FromVector<float>({4, 4}, std::vector<float>(16, 1.0f)));
  ASSERT_TRUE(valid.ok());
  const size_t header_end = valid->size() - 16 * sizeof(float);
  for (int trial = 0; trial < 20000; ++trial) {
    std::string bytes = *valid;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      bytes[rng() % header_end] = static_cast<char>(rng() & 0xFF);
    }
    auto t = ParseNpy(bytes, kSource);
    if (t.ok()) {
      EXPECT_LE(t->byte_size(), bytes.size());
    } else {
      EXPECT_NE(t.status().message().find(kSource), std::string::npos);
    }
  }
}

TEST(NpyMalformedTest, RandomBytesAfterTheMagicNeverCrash) {
  const uint32_t seed = 7;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (int trial = 0; trial < 5000; ++trial) {
    std::string bytes("\x93NUMPY", 6);
    bytes.push_back(static_cast<char>(1 + rng() % 3));
    bytes.push_back(0);
    const size_t n = rng() % 200;
    for (size_t i = 0; i < n; ++i) bytes.push_back(static_cast<char>(rng() & 0xFF));
    auto t = ParseNpy(bytes, kSource);
    EXPECT_FALSE(t.ok());
  }
}

}  // namespace
}  // namespace qtune
