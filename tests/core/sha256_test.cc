#include "core/sha256.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "core/file_io.h"

namespace qtune {
namespace {

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/sha256_test_" + std::to_string(::getpid()) + "_" + name;
}

TEST(Sha256Test, EmptyInputMatchesFipsVector) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256Test, AbcMatchesFipsVector) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256Test, TwoBlockMessageMatchesFipsVector) {
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256Test, MillionAsStreamedInOddChunksMatchesFipsVector) {
  Sha256 hasher;
  std::string chunk(997, 'a');
  size_t left = 1000000;
  while (left > 0) {
    size_t n = std::min(left, chunk.size());
    hasher.Update(std::string_view(chunk).substr(0, n));
    left -= n;
  }
  EXPECT_EQ(hasher.HexDigest(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256Test, EmbeddedNulBytesAreHashed) {
  std::string with_nul("a\0b", 3);
  EXPECT_NE(Sha256Hex(with_nul), Sha256Hex("a"));
  EXPECT_EQ(Sha256Hex(with_nul).size(), 64u);
}

TEST(Sha256Test, MovedHasherKeepsState) {
  Sha256 a;
  a.Update("ab");
  Sha256 b = std::move(a);
  b.Update("c");
  EXPECT_EQ(b.HexDigest(), Sha256Hex("abc"));
}

TEST(Sha256Test, FileLargerThanTheReadBufferMatchesInMemoryDigest) {
  std::string contents;
  for (int i = 0; i < (3 << 20) + 17; ++i) contents.push_back(static_cast<char>(i * 31 + 7));
  const std::string path = TempPath("big.bin");
  ASSERT_TRUE(WriteFileAtomic(path, contents).ok());
  auto digest = Sha256File(path);
  ASSERT_TRUE(digest.ok()) << digest.status().ToString();
  EXPECT_EQ(*digest, Sha256Hex(contents));
  ::unlink(path.c_str());
}

TEST(Sha256Test, EmptyFileHashesLikeEmptyString) {
  const std::string path = TempPath("empty.bin");
  ASSERT_TRUE(WriteFileAtomic(path, "").ok());
  auto digest = Sha256File(path);
  ASSERT_TRUE(digest.ok());
  EXPECT_EQ(*digest, Sha256Hex(""));
  ::unlink(path.c_str());
}

TEST(Sha256Test, MissingFileIsNotFoundAndNamesThePath) {
  auto digest = Sha256File("/nonexistent/qtune/model.onnx");
  ASSERT_FALSE(digest.ok());
  EXPECT_EQ(digest.status().code(), StatusCode::kNotFound);
  EXPECT_NE(digest.status().message().find("/nonexistent/qtune/model.onnx"), std::string::npos);
}

TEST(Sha256Test, FolderIsRejected) {
  auto digest = Sha256File(::testing::TempDir());
  ASSERT_FALSE(digest.ok());
  EXPECT_EQ(digest.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace qtune
