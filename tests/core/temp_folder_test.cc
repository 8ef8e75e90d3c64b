// TempFolder (core/file_io.h): a folder of its own under the temporary directory, removed
// with its contents when the owner goes, handed over by a move.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>

#include "core/file_io.h"

namespace qtune {
namespace {
namespace fs = std::filesystem;

TEST(TempFolderTest, IsRemovedWithItsContentsAndMovesOwnership) {
  std::string path;
  {
    std::optional<TempFolder> moved;
    {
      auto folder = TempFolder::Create("qtune_temp_folder_test_");
      ASSERT_TRUE(folder.ok()) << folder.status().ToString();
      path = folder->path();
      EXPECT_TRUE(fs::is_directory(path));
      EXPECT_EQ(fs::path(path).filename().string().rfind("qtune_temp_folder_test_", 0), 0u);
      std::ofstream(fs::path(path) / "file.txt") << "data";
      moved.emplace(std::move(*folder));
    }
    EXPECT_TRUE(fs::exists(fs::path(path) / "file.txt")) << "the moved-from owner removed it";
    EXPECT_EQ(moved->path(), path);
  }
  EXPECT_FALSE(fs::exists(path));
}

}  // namespace
}  // namespace qtune
