// Truncated, bit-flipped and random bytes: ParseModel returns OK or a clean error (never
// crashes), with fixed seeds that are printed on failure.
#include <gtest/gtest.h>

#include <random>

#include "ir/onnx_io.h"
#include "ir/onnx_test_util.h"
#include "ir/verify.h"

namespace qtune::ir {
namespace {

using testing::BundledModelPaths;
using testing::ReadBytes;

// A parse result is acceptable if it is a verified graph or an error naming the source.
void ExpectCleanResult(const std::string& bytes, const std::string& source) {
  LoadOptions options;
  options.max_total_tensor_bytes = int64_t{256} << 20;
  auto g = ParseModel(bytes, source, options);
  if (g.ok()) {
    EXPECT_TRUE(Verify(**g).ok());
    return;
  }
  EXPECT_NE(g.status().code(), StatusCode::kInternal) << g.status().ToString();
  EXPECT_EQ(g.status().message().rfind(source, 0), 0u) << g.status().ToString();
}

TEST(MalformedBytesTest, TruncatedRealModelsFailCleanly) {
  for (const std::string& path : BundledModelPaths()) {
    const std::string bytes = ReadBytes(path);
    ASSERT_FALSE(bytes.empty()) << path;
    int errors = 0;
    const size_t n = bytes.size();
    for (size_t cut : {size_t{0}, size_t{1}, size_t{2}, size_t{7}, size_t{100}, n / 10, n / 4,
                       n / 3, n / 2, 2 * n / 3, 9 * n / 10, n - 100, n - 2, n - 1}) {
      SCOPED_TRACE(path + " cut at " + std::to_string(cut));
      const std::string source = "truncated_" + std::to_string(cut) + ".onnx";
      auto g = ParseModel(bytes.substr(0, cut), source, {});
      if (!g.ok()) {
        ++errors;
        EXPECT_EQ(g.status().message().rfind(source, 0), 0u) << g.status().ToString();
      }
    }
    // Almost every cut lands inside the graph field: a protobuf parse error.
    EXPECT_GE(errors, 12) << path;
  }
}

TEST(MalformedBytesTest, TruncationIsReportedAsDataLoss) {
  const std::string bytes = ReadBytes(BundledModelPaths()[0]);
  auto g = ParseModel(bytes.substr(0, bytes.size() / 2), "half.onnx", {});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(g.status().message().find("half.onnx is not a valid ONNX model"), std::string::npos)
      << g.status().message();
}

TEST(MalformedBytesTest, BitFlippedRealModelsNeverCrash) {
  for (const std::string& path : BundledModelPaths()) {
    const std::string original = ReadBytes(path);
    const int rounds = original.size() > (1 << 20) ? 20 : 150;
    for (int seed = 1; seed <= rounds; ++seed) {
      SCOPED_TRACE(path + " seed " + std::to_string(seed));
      std::mt19937_64 rng(static_cast<uint64_t>(seed));
      std::string bytes = original;
      // Flip 1..16 bits, biased to the first 4 KiB where the structure (names, dims,
      // types) lives in small models.
      const int flips = 1 + static_cast<int>(rng() % 16);
      for (int i = 0; i < flips; ++i) {
        size_t limit = (rng() % 2 == 0) ? std::min<size_t>(bytes.size(), 4096) : bytes.size();
        size_t pos = rng() % limit;
        bytes[pos] = static_cast<char>(bytes[pos] ^ (1 << (rng() % 8)));
      }
      ExpectCleanResult(bytes, "flipped.onnx");
    }
  }
}

TEST(MalformedBytesTest, RandomBytesNeverCrash) {
  for (int seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(static_cast<uint64_t>(seed));
    std::string bytes(rng() % 4096, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    ExpectCleanResult(bytes, "random.onnx");
  }
}

TEST(MalformedBytesTest, SplicedModelsNeverCrash) {
  // The front of one valid model glued to the back of another.
  const std::vector<std::string> paths = BundledModelPaths();
  const std::string a = ReadBytes(paths[0]);
  const std::string b = ReadBytes(paths[2]);
  for (int seed = 1; seed <= 30; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(static_cast<uint64_t>(seed));
    std::string bytes = a.substr(0, rng() % a.size()) + b.substr(rng() % b.size());
    ExpectCleanResult(bytes, "spliced.onnx");
  }
}

}  // namespace
}  // namespace qtune::ir

namespace qtune::ir {
namespace {

TEST(MalformedFileTest, MissingFileIsNotFound) {
  testing::TempDir dir;
  auto g = LoadModel(dir.File("absent.onnx"));
  EXPECT_EQ(g.status().code(), StatusCode::kNotFound);
  EXPECT_NE(g.status().message().find("absent.onnx"), std::string::npos);
}

TEST(MalformedFileTest, FolderIsNotAModel) {
  testing::TempDir dir;
  auto g = LoadModel(dir.path().string());
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument) << g.status().ToString();
}

TEST(MalformedFileTest, TruncatedFileIsDataLoss) {
  testing::TempDir dir;
  const std::string bytes = ReadBytes(BundledModelPaths()[2]);
  testing::WriteBytes(dir.File("cut.onnx"), bytes.substr(0, bytes.size() / 3));
  auto g = LoadModel(dir.File("cut.onnx"));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(g.status().message().find("cut.onnx is not a valid ONNX model"), std::string::npos)
      << g.status().message();
}

}  // namespace
}  // namespace qtune::ir
