// Replays the fuzzing regression corpus (tests/data/onnx/corpus) through ParseModel: every
// file must give a verified graph or a clean error, and a loaded graph must re-save.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "ir/onnx_io.h"
#include "ir/onnx_test_util.h"
#include "ir/verify.h"

namespace qtune::ir {
namespace {
namespace fs = std::filesystem;

TEST(CorpusTest, EveryFileLoadsOrFailsCleanly) {
  const fs::path dir = fs::path(QTUNE_TEST_DATA_DIR) / "onnx" / "corpus";
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().filename() != "README.md") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  int loaded = 0;
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.string());
    const std::string bytes = testing::ReadBytes(file.string());
    LoadOptions options;
    options.max_total_tensor_bytes = int64_t{64} << 20;
    auto g = ParseModel(bytes, file.filename().string(), options);
    if (!g.ok()) {
      EXPECT_NE(g.status().code(), StatusCode::kInternal) << g.status().ToString();
      EXPECT_EQ(g.status().message().rfind(file.filename().string(), 0), 0u)
          << g.status().ToString();
      continue;
    }
    ++loaded;
    EXPECT_TRUE(Verify(**g).ok());
    auto saved = SerializeModel(**g);
    ASSERT_TRUE(saved.ok()) << saved.status().ToString();
    auto again = ParseModel(*saved, "resaved.onnx", options);
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_EQ((*again)->num_nodes(), (*g)->num_nodes());
  }
  std::printf("[ corpus ] %zu files, %d loaded\n", files.size(), loaded);
}

}  // namespace
}  // namespace qtune::ir
