#include "core/npz.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/file_io.h"
#include "core/npy.h"
#include "core/npy_test_util.h"
#include "core/npz_fixtures.h"

namespace qtune {
namespace {

using npy_testing::TempPath;

std::string FixtureBytes(const unsigned char* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

std::string WriteTemp(const std::string& name, const std::string& bytes) {
  std::string path = TempPath(name);
  EXPECT_TRUE(WriteFileAtomic(path, bytes).ok());
  return path;
}

void ExpectNumpyFixtureContents(const NpzEntries& entries) {
  ASSERT_EQ(entries.size(), 2u);  // notes.txt is skipped
  EXPECT_EQ(entries[0].first, "images");
  EXPECT_EQ(entries[0].second.dtype(), DataType::kFloat32);
  EXPECT_EQ(entries[0].second.sizes(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(entries[0].second.data<float>()[3], 4.0f);
  EXPECT_EQ(entries[1].first, "labels");
  EXPECT_EQ(entries[1].second.dtype(), DataType::kInt64);
  EXPECT_EQ(entries[1].second.data<int64_t>()[2], 9);
}

TEST(NpzTest, NumpyStyleStoredArchiveIsRead) {
  const std::string path = WriteTemp(
      "stored.npz", FixtureBytes(npz_fixtures::kStoredNpz, sizeof(npz_fixtures::kStoredNpz)));
  auto entries = ReadNpz(path);
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  ExpectNumpyFixtureContents(*entries);
  ::unlink(path.c_str());
}

TEST(NpzTest, NumpyStyleDeflatedArchiveIsRead) {
  const std::string path = WriteTemp(
      "deflated.npz", FixtureBytes(npz_fixtures::kDeflatedNpz, sizeof(npz_fixtures::kDeflatedNpz)));
  auto entries = ReadNpz(path);
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  ExpectNumpyFixtureContents(*entries);
  ::unlink(path.c_str());
}

NpzEntries SampleEntries() {
  NpzEntries entries;
  entries.emplace_back("zeta", Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
  entries.emplace_back("alpha", Tensor::FromVector<int64_t>({4}, {-1, 0, 1, 1LL << 40}));
  entries.emplace_back("scalar", Tensor::Scalar<double>(0.25));
  entries.emplace_back("mask", Tensor::FromVector<bool>({3}, {true, false, true}));
  entries.emplace_back("empty", Tensor::Allocate(DataType::kUint8, {0}).value());
  entries.emplace_back("nested/key", Tensor::FromVector<int8_t>({2}, {-128, 127}));
  return entries;
}

void ExpectSameEntries(const NpzEntries& got, const NpzEntries& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].first);
    EXPECT_EQ(got[i].first, want[i].first);
    EXPECT_EQ(got[i].second.dtype(), want[i].second.dtype());
    EXPECT_EQ(got[i].second.sizes(), want[i].second.sizes());
    ASSERT_EQ(got[i].second.byte_size(), want[i].second.byte_size());
    if (want[i].second.byte_size() > 0) {
      EXPECT_EQ(std::memcmp(got[i].second.raw_data(), want[i].second.raw_data(),
                            want[i].second.byte_size()),
                0);
    }
  }
}

TEST(NpzTest, StoredRoundTripKeepsOrderKeysAndData) {
  const std::string path = TempPath("roundtrip.npz");
  ASSERT_TRUE(WriteNpz(path, SampleEntries()).ok());
  auto back = ReadNpz(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSameEntries(*back, SampleEntries());
  ::unlink(path.c_str());
}

TEST(NpzTest, CompressedRoundTripKeepsOrderKeysAndData) {
  const std::string path = TempPath("roundtrip_deflate.npz");
  NpzEntries entries = SampleEntries();
  entries.emplace_back("zeros", Tensor::Allocate(DataType::kFloat32, {256, 256}).value());
  ASSERT_TRUE(WriteNpz(path, entries, {.compress = true}).ok());
  auto file = ReadFile(path);
  ASSERT_TRUE(file.ok());
  EXPECT_LT(file->size(), 256u * 256u * 4u / 10u);  // the zeros really were deflated
  auto back = ReadNpz(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSameEntries(*back, entries);
  ::unlink(path.c_str());
}

TEST(NpzTest, SameEntriesGiveIdenticalArchives) {
  const std::string a = TempPath("det_a.npz"), b = TempPath("det_b.npz");
  ASSERT_TRUE(WriteNpz(a, SampleEntries()).ok());
  ASSERT_TRUE(WriteNpz(b, SampleEntries()).ok());
  EXPECT_EQ(ReadFile(a).value(), ReadFile(b).value());
  ::unlink(a.c_str());
  ::unlink(b.c_str());
}

TEST(NpzTest, NoEntriesWriteAnEmptyArchive) {
  const std::string path = TempPath("empty.npz");
  ASSERT_TRUE(WriteNpz(path, {}).ok());
  auto back = ReadNpz(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->empty());
  ::unlink(path.c_str());
}

TEST(NpzTest, DuplicateKeysAreRejectedOnWrite) {
  NpzEntries entries;
  entries.emplace_back("x", Tensor::Scalar<float>(1));
  entries.emplace_back("x", Tensor::Scalar<float>(2));
  Status s = WriteNpz(TempPath("dup.npz"), entries);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'x'"), std::string::npos) << s.message();
}

TEST(NpzTest, EmptyKeyIsRejectedOnWrite) {
  NpzEntries entries;
  entries.emplace_back("", Tensor::Scalar<float>(1));
  EXPECT_EQ(WriteNpz(TempPath("emptykey.npz"), entries).code(), StatusCode::kInvalidArgument);
}

TEST(NpzTest, FailedWriteLeavesTheOldArchiveAndNoTempFile) {
  const std::string path = TempPath("keep.npz");
  ASSERT_TRUE(WriteNpz(path, SampleEntries()).ok());
  const std::string before = ReadFile(path).value();
  NpzEntries bad = SampleEntries();
  bad.emplace_back("weights_fp8", Tensor::Allocate(DataType::kFloat8E4M3FN, {4}).value());
  Status s = WriteNpz(path, bad);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("weights_fp8"), std::string::npos) << s.message();
  EXPECT_EQ(ReadFile(path).value(), before);
  EXPECT_NE(::access((path + ".tmp." + std::to_string(::getpid())).c_str(), F_OK), 0);
  ::unlink(path.c_str());
}

TEST(NpzTest, WriteIntoMissingFolderNamesThePath) {
  Status s = WriteNpz("/nonexistent/qtune/out.npz", SampleEntries());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent/qtune/out.npz"), std::string::npos) << s.message();
}

TEST(NpzTest, MissingArchiveIsNotFound) {
  auto entries = ReadNpz("/nonexistent/qtune/calib.npz");
  ASSERT_FALSE(entries.ok());
  EXPECT_EQ(entries.status().code(), StatusCode::kNotFound);
}

TEST(NpzTest, NpyFileIsNotAnArchive) {
  const std::string path = WriteTemp("plain.npz", SerializeNpy(Tensor::Scalar<float>(1)).value());
  auto entries = ReadNpz(path);
  ASSERT_FALSE(entries.ok());
  EXPECT_EQ(entries.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(entries.status().message().find(path), std::string::npos);
  ::unlink(path.c_str());
}

TEST(NpzTest, BadMemberErrorNamesArchiveAndMember) {
  std::string bytes = FixtureBytes(npz_fixtures::kStoredNpz, sizeof(npz_fixtures::kStoredNpz));
  // Break the 'descr' of labels.npy inside the stored archive ('<i8' -> '<c8'). The CRC no
  // longer matches either; whichever check fires first, the member must be named.
  size_t at = bytes.find("'<i8'");
  ASSERT_NE(at, std::string::npos);
  bytes[at + 2] = 'c';
  const std::string path = WriteTemp("badmember.npz", bytes);
  auto entries = ReadNpz(path);
  ASSERT_FALSE(entries.ok());
  EXPECT_NE(entries.status().message().find(path + ":labels.npy"), std::string::npos)
      << entries.status().message();
  ::unlink(path.c_str());
}

// A stored archive whose zip64 size fields claim a 1 TiB member: rejected from the
// declared size, before anything is allocated.
TEST(NpzTest, DeclaredMemberSizeAboveLimitIsRejectedBeforeReading) {
  std::string bytes = FixtureBytes(npz_fixtures::kStoredNpz, sizeof(npz_fixtures::kStoredNpz));
  // Each zip64 extra field (id 0x0001) written by force_zip64 starts with the uncompressed
  // size; patch every one of them (local and central headers) to 2^40.
  const std::string tag("\x01\x00", 2);
  int patched = 0;
  for (size_t pos = 0; (pos = bytes.find(tag, pos)) != std::string::npos; pos += 2) {
    const uint16_t len = static_cast<uint8_t>(bytes[pos + 2]) | static_cast<uint8_t>(bytes[pos + 3])
                                                                    << 8;
    if (len != 16 && len != 24 && len != 28) continue;
    if (pos + 4 + 8 > bytes.size()) break;
    // Only patch fields whose current value equals images.npy's true size.
    uint64_t size = 0;
    std::memcpy(&size, bytes.data() + pos + 4, 8);
    if (size != 144) continue;  // 128-byte header + 4 floats
    const uint64_t huge = uint64_t{1} << 40;
    std::memcpy(bytes.data() + pos + 4, &huge, 8);
    ++patched;
  }
  ASSERT_GE(patched, 1);
  const std::string path = WriteTemp("huge.npz", bytes);
  auto entries = ReadNpz(path);
  ASSERT_FALSE(entries.ok());
  EXPECT_EQ(entries.status().code(), StatusCode::kResourceExhausted) << entries.status().ToString();
  EXPECT_NE(entries.status().message().find("images.npy"), std::string::npos)
      << entries.status().message();
  ::unlink(path.c_str());
}

TEST(NpzTest, EveryTruncationOfAnArchiveIsAnErrorOrAPrefixOfItsArrays) {
  const std::string full =
      FixtureBytes(npz_fixtures::kDeflatedNpz, sizeof(npz_fixtures::kDeflatedNpz));
  const std::string path = TempPath("truncated.npz");
  for (size_t n = 0; n < full.size(); n += 7) {
    ASSERT_TRUE(WriteFileAtomic(path, full.substr(0, n)).ok());
    auto entries = ReadNpz(path);
    if (entries.ok()) {
      ASSERT_LE(entries->size(), 2u) << n;
      if (!entries->empty()) {
        EXPECT_EQ((*entries)[0].second.data<float>()[3], 4.0f) << n;
      }
    } else {
      EXPECT_NE(entries.status().message().find(path), std::string::npos) << n;
    }
  }
  ::unlink(path.c_str());
}

TEST(NpzTest, RandomlyCorruptedArchivesNeverCrash) {
  const uint32_t seed = 1234;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const std::string full =
      FixtureBytes(npz_fixtures::kDeflatedNpz, sizeof(npz_fixtures::kDeflatedNpz));
  const std::string path = TempPath("corrupt.npz");
  for (int trial = 0; trial < 300; ++trial) {
    std::string bytes = full;
    const int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    ASSERT_TRUE(WriteFileAtomic(path, bytes).ok());
    auto entries = ReadNpz(path);
    if (!entries.ok()) {
      EXPECT_NE(entries.status().message().find(path), std::string::npos);
    }
  }
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace qtune
