// Calibration data identified by content for the autotune state log (calib_digest.h).
#include "autotune/calib_digest.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "core/sha256.h"

namespace qtune::autotune {
namespace {

namespace fs = std::filesystem;

class CalibDigestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "calib_digest_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& bytes) {
    const fs::path path = dir_ / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    return path.string();
  }
  std::string Digest(const std::string& spec) {
    auto digests = CalibrationDigests({spec});
    EXPECT_TRUE(digests.ok()) << digests.status().ToString();
    return digests.ok() ? (*digests)[spec].get<std::string>() : "";
  }
  fs::path dir_;
};

TEST_F(CalibDigestTest, FileSpecsAreKeyedAsGivenAndHashTheBytes) {
  const std::string file = Write("c.npy", "abc");
  auto digests = CalibrationDigests({file, "input=" + file});
  ASSERT_TRUE(digests.ok()) << digests.status().ToString();
  EXPECT_EQ((*digests)[file], Sha256Hex("abc"));
  EXPECT_EQ((*digests)["input=" + file], Sha256Hex("abc"));
  // The same path, other bytes: another digest.
  Write("c.npy", "abd");
  EXPECT_EQ(Digest(file), Sha256Hex("abd"));
}

TEST_F(CalibDigestTest, ImageFolderDigestChangesWithAnyFileNameOrBytes) {
  const std::string folder = (dir_ / "images").string();
  Write("images/a.png", "1");
  Write("images/b.png", "2");
  const std::string original = Digest(folder);
  Write("images/b.png", "3");
  const std::string changed = Digest(folder);
  EXPECT_NE(changed, original);
  Write("images/b.png", "2");
  EXPECT_EQ(Digest(folder), original);
  fs::rename(dir_ / "images" / "b.png", dir_ / "images" / "c.png");
  EXPECT_NE(Digest(folder), original);
  fs::rename(dir_ / "images" / "c.png", dir_ / "images" / "b.png");
  Write("images/d.png", "4");
  EXPECT_NE(Digest(folder), original);
}

TEST_F(CalibDigestTest, MissingFileIsNotFoundNamingTheSpec) {
  const std::string missing = (dir_ / "none.npy").string();
  auto digests = CalibrationDigests({missing});
  ASSERT_FALSE(digests.ok());
  EXPECT_EQ(digests.status().code(), StatusCode::kNotFound);
  EXPECT_NE(digests.status().message().find(missing), std::string::npos);
}

}  // namespace
}  // namespace qtune::autotune
