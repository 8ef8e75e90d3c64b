// Unpacking a checkpoint: entries that must be refused, and the cache folder's reuse and
// repair rules.
#include <archive_entry.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "tune/checkpoint.h"
#include "tune/checkpoint_test_util.h"

namespace qtune::tune {
namespace {

using testing::CraftedEntry;
using ::testing::HasSubstr;
using testing::ManifestEntry;
using testing::ScratchDir;

class CheckpointUnpackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.Join("model.qtc");
    cache_ = dir_.Join("cache");
  }
  StatusOr<LoadedCheckpoint> Load() {
    return LoadCheckpoint(path_, testing::OptionsWithCache(cache_));
  }

  // Crafts an archive of a valid manifest plus `entry`, loads it and expects DataLoss
  // mentioning `expected`, with nothing left in the cache (not even a temporary folder).
  void ExpectRefused(const CraftedEntry& entry, const std::string& expected) {
    testing::WriteCraftedCheckpoint(path_, {ManifestEntry(), entry});
    auto loaded = Load();
    ASSERT_EQ(loaded.status().code(), StatusCode::kDataLoss) << loaded.status().ToString();
    EXPECT_THAT(loaded.status().message(), HasSubstr(expected));
    EXPECT_TRUE(testing::ListDir(cache_).empty())
        << "left in the cache: " << testing::ListDir(cache_).size();
    EXPECT_FALSE(std::ifstream(dir_.path() + "/x").good()) << "written outside the cache";
    EXPECT_EQ(ReadManifestOnly(path_, testing::OptionsWithCache(cache_)).status().code(),
              StatusCode::kOk)
        << "the manifest comes first, before the bad entry";
  }

  ScratchDir dir_;
  std::string path_;
  std::string cache_;
};

TEST_F(CheckpointUnpackTest, ParentPathEntryIsRefused) {
  ExpectRefused({"../x", "escaped"}, "entry '../x' has a '..' path");
  ExpectRefused({"a/../../x", "escaped"}, "'..' path");
}

TEST_F(CheckpointUnpackTest, AbsolutePathEntryIsRefused) {
  ExpectRefused({"/abs", "escaped"}, "entry '/abs' has an absolute path");
}

TEST_F(CheckpointUnpackTest, SymlinkEntryIsRefused) {
  ExpectRefused({"link", "", AE_IFLNK, "/etc/passwd"}, "entry 'link' is a symbolic link");
}

TEST_F(CheckpointUnpackTest, HardLinkEntryIsRefused) {
  ExpectRefused({"hard", "", AE_IFREG, "manifest.json", /*hardlink=*/true},
                "entry 'hard' is a hard link");
}

TEST_F(CheckpointUnpackTest, FolderEntryIsRefused) {
  ExpectRefused({"sub", "", AE_IFDIR}, "entry 'sub/' is a folder");
}

TEST_F(CheckpointUnpackTest, DeviceEntryIsRefused) {
  ExpectRefused({"dev", "", AE_IFCHR}, "entry 'dev' is a character device");
}

TEST_F(CheckpointUnpackTest, EntryInASubfolderIsRefused) {
  ExpectRefused({"sub/plan.json", "{}"}, "no folders");
}

TEST_F(CheckpointUnpackTest, NameOutsideTheCharsetIsRefused) {
  ExpectRefused({"plan$.json", "{}"}, "may hold only letters");
  ExpectRefused({".hidden", "{}"}, "must start with a letter or digit");
}

TEST_F(CheckpointUnpackTest, RepeatedEntryIsRefused) {
  ExpectRefused(ManifestEntry(), "entry 'manifest.json' appears twice");
}

TEST_F(CheckpointUnpackTest, OversizedEntryIsRefused) {
  ASSERT_TRUE(SaveCheckpoint(path_, testing::SampleContents()).ok());  // samples.npz: 3004 B
  LoadCheckpointOptions options = testing::OptionsWithCache(cache_);
  options.max_entry_bytes = 3000;
  auto loaded = LoadCheckpoint(path_, options);
  ASSERT_EQ(loaded.status().code(), StatusCode::kDataLoss) << loaded.status().ToString();
  EXPECT_THAT(loaded.status().message(),
              HasSubstr("entry 'samples.npz' declares 3004 bytes, more than the limit of 3000"));
  EXPECT_TRUE(testing::ListDir(cache_).empty());
}

TEST_F(CheckpointUnpackTest, EntriesOverTheTotalCapAreRefused) {
  ASSERT_TRUE(SaveCheckpoint(path_, testing::SampleContents()).ok());
  LoadCheckpointOptions options = testing::OptionsWithCache(cache_);
  options.max_total_bytes = 3100;
  auto loaded = LoadCheckpoint(path_, options);
  ASSERT_EQ(loaded.status().code(), StatusCode::kDataLoss) << loaded.status().ToString();
  EXPECT_THAT(loaded.status().message(), HasSubstr("bytes in all"));
}

TEST_F(CheckpointUnpackTest, TooManyEntriesAreRefused) {
  ASSERT_TRUE(SaveCheckpoint(path_, testing::SampleContents()).ok());  // 3 entries
  LoadCheckpointOptions options = testing::OptionsWithCache(cache_);
  options.max_entries = 2;
  auto loaded = LoadCheckpoint(path_, options);
  ASSERT_EQ(loaded.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(loaded.status().message(), HasSubstr("more than 2 entries"));
}

TEST_F(CheckpointUnpackTest, OversizedArchiveIsRefusedBeforeReading) {
  ASSERT_TRUE(SaveCheckpoint(path_, testing::SampleContents()).ok());
  LoadCheckpointOptions options = testing::OptionsWithCache(cache_);
  options.max_archive_bytes = 10;
  EXPECT_EQ(LoadCheckpoint(path_, options).status().code(), StatusCode::kResourceExhausted);
}

struct FileId {
  ino_t inode;
  timespec mtime;
};

FileId IdOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return {st.st_ino, st.st_mtim};
}

TEST_F(CheckpointUnpackTest, SecondLoadReusesTheUnpackedCopy) {
  ASSERT_TRUE(SaveCheckpoint(path_, testing::SampleContents()).ok());
  auto first = Load();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(first->reused_cache);
  const std::string plan = first->unpacked_dir + "/plan.json";
  FileId before = IdOf(plan);
  FileId dir_before = IdOf(first->unpacked_dir);

  auto second = Load();
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_TRUE(second->reused_cache);
  EXPECT_EQ(second->unpacked_dir, first->unpacked_dir);
  FileId after = IdOf(plan);
  EXPECT_EQ(after.inode, before.inode) << "plan.json was written again";
  EXPECT_EQ(after.mtime.tv_sec, before.mtime.tv_sec);
  EXPECT_EQ(after.mtime.tv_nsec, before.mtime.tv_nsec);
  EXPECT_EQ(IdOf(first->unpacked_dir).inode, dir_before.inode);
  EXPECT_EQ(second->manifest.tuning, first->manifest.tuning);
  EXPECT_EQ(testing::ListDir(cache_).size(), 1u) << "no temporary folders left";
}

TEST_F(CheckpointUnpackTest, DamagedCachedFileIsUnpackedAgain) {
  ASSERT_TRUE(SaveCheckpoint(path_, testing::SampleContents()).ok());
  auto first = Load();
  ASSERT_TRUE(first.ok());
  testing::WriteAll(first->unpacked_dir + "/plan.json", "{\"tampered\": true}");
  ::testing::internal::CaptureStderr();
  auto second = Load();
  std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_FALSE(second->reused_cache);
  EXPECT_THAT(log, HasSubstr("unpacking again"));
  EXPECT_EQ(*second->ReadFile("plan.json"), testing::SampleContents().files["plan.json"]);
  EXPECT_EQ(testing::ListDir(cache_).size(), 1u) << "the damaged copy is gone";
  EXPECT_TRUE(Load()->reused_cache) << "the repaired copy is reused";
}

TEST_F(CheckpointUnpackTest, CacheWithoutCompletionMarkerIsUnpackedAgain) {
  ASSERT_TRUE(SaveCheckpoint(path_, testing::SampleContents()).ok());
  auto first = Load();
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(::unlink((first->unpacked_dir + "/.qtune-unpacked.json").c_str()), 0);
  ::testing::internal::CaptureStderr();
  auto second = Load();
  ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_FALSE(second->reused_cache);
}

TEST_F(CheckpointUnpackTest, CacheWithAGarbledMarkerIsUnpackedAgain) {
  ASSERT_TRUE(SaveCheckpoint(path_, testing::SampleContents()).ok());
  auto first = Load();
  ASSERT_TRUE(first.ok());
  for (const char* marker :
       {R"({"archive_sha256": 5, "files": []})", "{\"files\": [{}]}", "[", ""}) {
    testing::WriteAll(first->unpacked_dir + "/.qtune-unpacked.json", marker);
    ::testing::internal::CaptureStderr();
    auto again = Load();
    ::testing::internal::GetCapturedStderr();
    ASSERT_TRUE(again.ok()) << marker << ": " << again.status().ToString();
    EXPECT_FALSE(again->reused_cache) << marker;
  }
}

TEST_F(CheckpointUnpackTest, CacheWithAMissingFileIsUnpackedAgain) {
  ASSERT_TRUE(SaveCheckpoint(path_, testing::SampleContents()).ok());
  auto first = Load();
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(::unlink((first->unpacked_dir + "/samples.npz").c_str()), 0);
  ::testing::internal::CaptureStderr();
  auto second = Load();
  ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->reused_cache);
  EXPECT_TRUE(second->ReadFile("samples.npz").ok());
}

TEST_F(CheckpointUnpackTest, CacheWithAnExtraFileIsUnpackedAgain) {
  ASSERT_TRUE(SaveCheckpoint(path_, testing::SampleContents()).ok());
  auto first = Load();
  ASSERT_TRUE(first.ok());
  testing::WriteAll(first->unpacked_dir + "/planted.so", "x");
  ::testing::internal::CaptureStderr();
  auto second = Load();
  ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->reused_cache);
  EXPECT_FALSE(std::ifstream(second->unpacked_dir + "/planted.so").good());
}

}  // namespace
}  // namespace qtune::tune
