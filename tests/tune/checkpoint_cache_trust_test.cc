// The checkpoint cache trusts nothing it did not verify (issue 24 item 5): a folder that
// only its owner can write, and an unpacked copy reused only when its files are the
// entries of the verified archive, whatever its completion marker says. Tests run as
// root, so "another user" is made with chown and "writable by others" with chmod.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/sha256.h"
#include "tune/checkpoint.h"
#include "tune/checkpoint_test_util.h"

namespace qtune::tune {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::ScratchDir;

class CheckpointCacheTrustTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.Join("model.qtc");
    cache_ = dir_.Join("cache");
    ASSERT_TRUE(SaveCheckpoint(path_, testing::SampleContents()).ok());
  }
  StatusOr<LoadedCheckpoint> Load() {
    return LoadCheckpoint(path_, testing::OptionsWithCache(cache_));
  }
  // Loads with stderr captured into `log`.
  StatusOr<LoadedCheckpoint> LoadQuietly(std::string* log) {
    ::testing::internal::CaptureStderr();
    auto loaded = Load();
    *log = ::testing::internal::GetCapturedStderr();
    return loaded;
  }

  ScratchDir dir_;
  std::string path_;
  std::string cache_;
};

TEST_F(CheckpointCacheTrustTest, PlantedCopyWithAMatchingMarkerIsNotReused) {
  auto first = Load();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  // Someone rewrites plan.json in the unpacked copy and forges the completion marker to
  // match: every file agrees with the marker, none with the archive.
  const std::string planted = R"({"placement": ["planted"]})";
  const std::string dir = first->unpacked_dir;
  testing::WriteAll(dir + "/plan.json", planted);
  const std::string marker_path = dir + "/.qtune-unpacked.json";
  nlohmann::json marker = nlohmann::json::parse(testing::ReadAll(marker_path));
  for (nlohmann::json& f : marker["files"]) {
    if (f["name"] == "plan.json") {
      f["sha256"] = Sha256Hex(planted);
      f["bytes"] = planted.size();
    }
  }
  testing::WriteAll(marker_path, marker.dump(2));
  std::string log;
  auto second = LoadQuietly(&log);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_FALSE(second->reused_cache) << "the planted copy was used";
  EXPECT_THAT(log, HasSubstr("its files are not the entries of the archive"));
  EXPECT_EQ(*second->ReadFile("plan.json"), testing::SampleContents().files["plan.json"]);
  EXPECT_TRUE(Load()->reused_cache) << "the repaired copy is reused";
}

TEST_F(CheckpointCacheTrustTest, CacheFolderWritableByOthersIsRefused) {
  ASSERT_TRUE(fs::create_directory(cache_));
  ASSERT_EQ(::chmod(cache_.c_str(), 0777), 0);
  auto loaded = Load();
  ASSERT_EQ(loaded.status().code(), StatusCode::kFailedPrecondition) << loaded.status().ToString();
  EXPECT_THAT(loaded.status().message(), HasSubstr("refusing the checkpoint cache '" + cache_));
  EXPECT_THAT(loaded.status().message(), HasSubstr("lets other users write to it"));
  EXPECT_THAT(loaded.status().message(), HasSubstr("QTUNE_CACHE_DIR"));
  EXPECT_TRUE(testing::ListDir(cache_).empty()) << "nothing unpacked into it";
}

TEST_F(CheckpointCacheTrustTest, CacheFolderOfAnotherUserIsRefused) {
  ASSERT_TRUE(fs::create_directory(cache_));
  if (::chown(cache_.c_str(), ::geteuid() + 4242, static_cast<gid_t>(-1)) != 0) {
    GTEST_SKIP() << "cannot chown (not running as root)";
  }
  auto loaded = Load();
  ASSERT_EQ(loaded.status().code(), StatusCode::kFailedPrecondition) << loaded.status().ToString();
  EXPECT_THAT(loaded.status().message(),
              HasSubstr("belongs to user id " + std::to_string(::geteuid() + 4242)));
}

TEST_F(CheckpointCacheTrustTest, UnpackedCopyOfAnotherUserIsUnpackedAgain) {
  auto first = Load();
  ASSERT_TRUE(first.ok());
  if (::chown(first->unpacked_dir.c_str(), ::geteuid() + 4242, static_cast<gid_t>(-1)) != 0) {
    GTEST_SKIP() << "cannot chown (not running as root)";
  }
  std::string log;
  auto second = LoadQuietly(&log);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_FALSE(second->reused_cache);
  EXPECT_THAT(log, HasSubstr("belongs to user id"));
  struct stat st {};
  ASSERT_EQ(::stat(second->unpacked_dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, ::geteuid());
}

TEST_F(CheckpointCacheTrustTest, AMissingCacheFolderIsCreatedPrivate) {
  cache_ = dir_.Join("new/cache");
  auto loaded = Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  struct stat st {};
  ASSERT_EQ(::stat(cache_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

}  // namespace
}  // namespace qtune::tune
