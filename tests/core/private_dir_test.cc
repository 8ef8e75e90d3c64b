// EnsurePrivateDir (core/private_dir.h): caches qtune reads files back from must be
// folders only the current user can write. Tests run as root, so "another user" is made
// with chown (root may) and "writable by others" with chmod.
#include "core/private_dir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "core/file_io.h"

namespace qtune {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

class PrivateDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto folder = TempFolder::Create("qtune_private_dir_test_");
    ASSERT_TRUE(folder.ok()) << folder.status().ToString();
    scratch_.emplace(std::move(*folder));
  }
  std::string Join(const std::string& name) const { return scratch_->path() + "/" + name; }
  static unsigned Mode(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
  }
  std::optional<TempFolder> scratch_;
  const PrivateDirOptions options_{"the test cache", "pass --cache-dir DIR"};
};

TEST_F(PrivateDirTest, MissingFoldersAreCreatedPrivate) {
  const std::string dir = Join("a/b/c");
  ASSERT_TRUE(EnsurePrivateDir(dir, options_).ok());
  EXPECT_EQ(Mode(dir), 0700u);
  EXPECT_EQ(Mode(Join("a")), 0700u) << "created parents are private too";
  EXPECT_TRUE(EnsurePrivateDir(dir, options_).ok()) << "an existing private folder is fine";
  EXPECT_TRUE(CheckPrivateDir(dir, options_).ok());
}

TEST_F(PrivateDirTest, OwnFolderReadableByOthersIsAccepted) {
  const std::string dir = Join("shared-read");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  EXPECT_TRUE(EnsurePrivateDir(dir, options_).ok());
}

TEST_F(PrivateDirTest, FolderWritableByOthersIsRefused) {
  const std::string dir = Join("world");
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  for (unsigned mode : {0777u, 01777u, 0770u, 0702u}) {
    ASSERT_EQ(::chmod(dir.c_str(), mode), 0);
    Status s = EnsurePrivateDir(dir, options_);
    ASSERT_EQ(s.code(), StatusCode::kFailedPrecondition) << std::oct << mode;
    EXPECT_THAT(s.message(), HasSubstr("refusing the test cache '" + dir + "'"));
    EXPECT_THAT(s.message(), HasSubstr("lets other users write to it"));
    EXPECT_THAT(s.message(), HasSubstr("chmod go-w"));
    EXPECT_THAT(s.message(), HasSubstr("pass --cache-dir DIR"));
  }
  EXPECT_EQ(Mode(dir), 0702u) << "a refused folder is left as it is";
}

TEST_F(PrivateDirTest, FolderOfAnotherUserIsRefused) {
  const std::string dir = Join("theirs");
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  if (::chown(dir.c_str(), ::geteuid() + 4242, static_cast<gid_t>(-1)) != 0) {
    GTEST_SKIP() << "cannot chown (not running as root)";
  }
  Status s = EnsurePrivateDir(dir, options_);
  ASSERT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("belongs to user id " + std::to_string(::geteuid() + 4242)));
  EXPECT_THAT(s.message(), HasSubstr("'" + dir + "'"));
  // A symbolic link of ours to their folder is judged by the folder.
  const std::string link = Join("link");
  fs::create_directory_symlink(dir, link);
  EXPECT_EQ(EnsurePrivateDir(link, options_).code(), StatusCode::kFailedPrecondition);
}

TEST_F(PrivateDirTest, AFileInPlaceOfTheFolderIsRefused) {
  const std::string file = Join("file");
  ASSERT_TRUE(WriteFileAtomic(file, "x").ok());
  Status s = EnsurePrivateDir(file, options_);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("is not a folder"));
  EXPECT_EQ(CheckPrivateDir(Join("missing"), options_).code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace qtune
