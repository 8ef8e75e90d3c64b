// Debian's ONNX backend test models (libonnx-testdata): every model.onnx must load (and
// then round-trip) or return a clean error; none may crash.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "ir/onnx_io.h"
#include "ir/onnx_test_util.h"
#include "ir/verify.h"
#include "util/missing_dependency.h"

namespace qtune::ir {
namespace {
namespace fs = std::filesystem;

constexpr const char* kTestDataDir = "/usr/share/libonnx-testdata/data";

std::vector<std::string> TestModels() {
  std::vector<std::string> paths;
  std::error_code ec;
  if (!fs::is_directory(kTestDataDir, ec)) return paths;
  for (const auto& suite : fs::directory_iterator(kTestDataDir, ec)) {
    if (!suite.is_directory()) continue;
    for (const auto& test : fs::directory_iterator(suite.path(), ec)) {
      fs::path model = test.path() / "model.onnx";
      if (fs::is_regular_file(model, ec)) paths.push_back(model.string());
    }
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

TEST(OnnxNodeTestsTest, EveryModelLoadsOrFailsCleanly) {
  const std::vector<std::string> paths = TestModels();
  if (paths.empty()) {
    QTUNE_SKIP_OR_FAIL_IN_CI() << "libonnx-testdata is not installed (" << kTestDataDir << ")";
  }
  int loaded = 0;
  std::map<std::string, int> errors_by_code;
  std::map<std::string, std::string> example_by_code;
  for (const std::string& path : paths) {
    SCOPED_TRACE(path);
    auto g = LoadModel(path);
    if (!g.ok()) {
      const Status& s = g.status();
      EXPECT_NE(s.code(), StatusCode::kInternal) << s.ToString();
      EXPECT_NE(s.code(), StatusCode::kDataLoss) << s.ToString();
      EXPECT_EQ(s.message().rfind(path, 0), 0u) << s.ToString();
      const std::string code = StatusCodeName(s.code());
      ++errors_by_code[code];
      example_by_code.emplace(code, s.message());
      continue;
    }
    ++loaded;
    EXPECT_TRUE(Verify(**g).ok());
    auto bytes = SerializeModel(**g);
    ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
    auto again = ParseModel(*bytes, path + " (re-saved)", {});
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    testing::ExpectSameGraph(**g, **again);
  }
  std::printf("[ onnx tests ] %zu models: %d loaded and round-tripped", paths.size(), loaded);
  for (const auto& [code, count] : errors_by_code) std::printf(", %d %s", count, code.c_str());
  std::printf("\n");
  for (const auto& [code, message] : example_by_code) {
    std::printf("[ onnx tests ] e.g. %s: %s\n", code.c_str(), message.c_str());
  }
  // Only models with sequences, optionals, strings, sparse tensors or int4 are refused.
  EXPECT_GE(loaded, static_cast<int>(paths.size() * 9 / 10));
}

}  // namespace
}  // namespace qtune::ir
