// SaveCheckpoint / LoadCheckpoint / ReadManifestOnly: round trip, reproducible bytes, the
// hash file and the order checks run in, manifest versioning.
#include "tune/checkpoint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <random>

#include "core/sha256.h"
#include "tune/checkpoint_test_util.h"
#include "util/test_models.h"

namespace qtune::tune {
namespace {

using ::testing::HasSubstr;
using testing::ReadAll;
using testing::ScratchDir;
using testing::WriteAll;

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.Join("model.qtc");
    cache_ = dir_.Join("cache");
    ASSERT_TRUE(SaveCheckpoint(path_, testing::SampleContents()).ok());
  }
  StatusOr<LoadedCheckpoint> Load() {
    return LoadCheckpoint(path_, testing::OptionsWithCache(cache_));
  }

  ScratchDir dir_;
  std::string path_;
  std::string cache_;
};

TEST_F(CheckpointTest, RoundTripKeepsManifestAndFiles) {
  CheckpointContents saved = testing::SampleContents();
  auto loaded = Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->manifest.format_version, kCheckpointFormatVersion);
  EXPECT_EQ(loaded->manifest.qtune_version, saved.manifest.qtune_version);
  EXPECT_EQ(loaded->manifest.created_utc, saved.manifest.created_utc);
  EXPECT_EQ(loaded->manifest.weights, saved.manifest.weights);
  EXPECT_EQ(loaded->manifest.tuning, saved.manifest.tuning);
  EXPECT_FALSE(loaded->reused_cache);
  EXPECT_EQ(loaded->archive_sha256, Sha256Hex(ReadAll(path_)));
  EXPECT_EQ(loaded->unpacked_dir, cache_ + "/" + loaded->archive_sha256);
  for (const auto& [name, bytes] : saved.files) {
    auto read = loaded->ReadFile(name);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_EQ(*read, bytes) << name;
  }
  EXPECT_EQ(loaded->file_sha256.size(), saved.files.size() + 1);  // + manifest.json
}

TEST_F(CheckpointTest, NewManifestNamesThisQtuneAndUtcTime) {
  CheckpointManifest m = NewCheckpointManifest();
  EXPECT_FALSE(m.qtune_version.empty());
  EXPECT_EQ(m.created_utc.size(), 20u);
  EXPECT_EQ(m.created_utc.back(), 'Z');
}

TEST_F(CheckpointTest, SameContentsGiveSameBytes) {
  const std::string other = dir_.Join("again.qtc");
  ASSERT_TRUE(SaveCheckpoint(other, testing::SampleContents()).ok());
  std::string a = ReadAll(path_), b = ReadAll(other);
  EXPECT_EQ(a, b);
  ASSERT_GT(a.size(), 10u);
  EXPECT_EQ(a.substr(0, 2), "\x1f\x8b");            // gzip
  EXPECT_EQ(a.substr(4, 4), std::string(4, '\0'));  // no gzip timestamp
}

TEST_F(CheckpointTest, HashFileIsInSha256sumFormat) {
  EXPECT_EQ(ReadAll(path_ + ".sha256"), Sha256Hex(ReadAll(path_)) + "  model.qtc\n");
}

TEST_F(CheckpointTest, SaveReplacesAnEarlierCheckpoint) {
  CheckpointContents c = testing::SampleContents();
  c.files["plan.json"] = "{}";
  ASSERT_TRUE(SaveCheckpoint(path_, c).ok());
  auto loaded = Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(*loaded->ReadFile("plan.json"), "{}");
}

TEST_F(CheckpointTest, SaveRefusesBadEntryNames) {
  for (const char* name : {"../x", "/abs", "dir/file", ".hidden", "", "a b", "manifest.json"}) {
    CheckpointContents c = testing::SampleContents();
    c.files[name] = "x";
    Status s = SaveCheckpoint(dir_.Join("bad.qtc"), c);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << name << ": " << s.ToString();
  }
}

TEST_F(CheckpointTest, TamperedArchiveByteIsRefused) {
  std::string bytes = ReadAll(path_);
  bytes[bytes.size() / 2] ^= 0x01;
  WriteAll(path_, bytes);
  auto loaded = Load();
  ASSERT_EQ(loaded.status().code(), StatusCode::kDataLoss) << loaded.status().ToString();
  EXPECT_THAT(loaded.status().message(), HasSubstr("'" + path_ + "'"));
  EXPECT_THAT(loaded.status().message(), HasSubstr("'" + path_ + ".sha256'"));
  EXPECT_THAT(loaded.status().message(), HasSubstr("--no-verify"));
  EXPECT_TRUE(testing::ListDir(cache_).empty()) << "nothing may be unpacked";
}

TEST_F(CheckpointTest, TamperedHashFileIsRefused) {
  std::string hash = ReadAll(path_ + ".sha256");
  hash[0] = hash[0] == '0' ? '1' : '0';
  WriteAll(path_ + ".sha256", hash);
  auto loaded = Load();
  ASSERT_EQ(loaded.status().code(), StatusCode::kDataLoss) << loaded.status().ToString();
  EXPECT_THAT(loaded.status().message(), HasSubstr("does not match its hash file"));
}

TEST_F(CheckpointTest, MalformedHashFileIsRefused) {
  WriteAll(path_ + ".sha256", "not a digest\n");
  auto loaded = Load();
  ASSERT_EQ(loaded.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(loaded.status().message(), HasSubstr("sha256sum format"));
}

TEST_F(CheckpointTest, MissingHashFileIsRefused) {
  ASSERT_EQ(::unlink((path_ + ".sha256").c_str()), 0);
  auto loaded = Load();
  ASSERT_EQ(loaded.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(loaded.status().message(), HasSubstr("'" + path_ + ".sha256' is missing"));
  EXPECT_THAT(loaded.status().message(), HasSubstr("--no-verify"));
  auto manifest = ReadManifestOnly(path_, testing::OptionsWithCache(cache_));
  EXPECT_EQ(manifest.status().code(), StatusCode::kDataLoss);
}

TEST_F(CheckpointTest, NoVerifyLoadsWithoutHashFileAndWarns) {
  ASSERT_EQ(::unlink((path_ + ".sha256").c_str()), 0);
  LoadCheckpointOptions options = testing::OptionsWithCache(cache_);
  options.verify = false;
  ::testing::internal::CaptureStderr();
  auto loaded = LoadCheckpoint(path_, options);
  std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_THAT(log, HasSubstr("NOT VERIFYING"));
  EXPECT_THAT(log, HasSubstr(path_));
}

TEST_F(CheckpointTest, TruncatedArchiveIsRefused) {
  const std::string bytes = ReadAll(path_);
  WriteAll(path_, bytes.substr(0, bytes.size() / 2));
  EXPECT_EQ(Load().status().code(), StatusCode::kDataLoss);
  // Unverified, the archive reader itself must notice the truncation, wherever it is: in
  // the middle, in the gzip trailer, or at its last byte.
  LoadCheckpointOptions options = testing::OptionsWithCache(cache_);
  options.verify = false;
  for (size_t keep : {bytes.size() / 2, bytes.size() - 8, bytes.size() - 1}) {
    WriteAll(path_, bytes.substr(0, keep));
    ::testing::internal::CaptureStderr();
    auto loaded = LoadCheckpoint(path_, options);
    ::testing::internal::GetCapturedStderr();
    ASSERT_EQ(loaded.status().code(), StatusCode::kDataLoss)
        << "kept " << keep << " of " << bytes.size() << ": " << loaded.status().ToString();
    EXPECT_THAT(loaded.status().message(), HasSubstr("truncated or corrupt"));
    EXPECT_TRUE(testing::ListDir(cache_).empty()) << "nothing may be left in the cache";
  }
}

TEST_F(CheckpointTest, TruncatedLargeEntryIsRefused) {
  CheckpointContents c = testing::SampleContents();
  std::mt19937 rng(7);  // incompressible data, so the cut lands inside the entry
  std::string noise(256 << 10, '\0');
  for (char& ch : noise) ch = static_cast<char>(rng());
  c.files["samples.npz"] = noise;
  ASSERT_TRUE(SaveCheckpoint(path_, c).ok());
  const std::string bytes = ReadAll(path_);
  WriteAll(path_, bytes.substr(0, bytes.size() / 2));
  LoadCheckpointOptions options = testing::OptionsWithCache(cache_);
  options.verify = false;
  ::testing::internal::CaptureStderr();
  auto loaded = LoadCheckpoint(path_, options);
  ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(loaded.status().code(), StatusCode::kDataLoss) << loaded.status().ToString();
  EXPECT_THAT(loaded.status().message(), HasSubstr("truncated or corrupt"));
  EXPECT_TRUE(testing::ListDir(cache_).empty());
}

TEST_F(CheckpointTest, ResNet18CheckpointHoldsDigestsNotWeights) {
  auto resnet = qtune::testing::BuildTestResNet18();
  CheckpointContents c = testing::SampleContents();
  c.manifest.weights = FingerprintWeights(*resnet);
  ASSERT_TRUE(SaveCheckpoint(path_, c).ok());
  // 45 MB of weights; the checkpoint holds 64-digit digests of them.
  EXPECT_LT(ReadAll(path_).size(), 32u << 10);
  auto loaded = Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_TRUE(CheckWeights(loaded->manifest.weights, *resnet).ok());
}

TEST_F(CheckpointTest, NewerFormatVersionIsRefusedNamingBothVersions) {
  CheckpointContents c = testing::SampleContents();
  c.manifest.format_version = kCheckpointFormatVersion + 1;
  ASSERT_TRUE(SaveCheckpoint(path_, c).ok());
  auto loaded = Load();
  ASSERT_EQ(loaded.status().code(), StatusCode::kUnimplemented) << loaded.status().ToString();
  EXPECT_THAT(loaded.status().message(),
              HasSubstr("format_version " + std::to_string(kCheckpointFormatVersion + 1)));
  EXPECT_THAT(loaded.status().message(),
              HasSubstr("format_version " + std::to_string(kCheckpointFormatVersion) + ")"));
  EXPECT_TRUE(testing::ListDir(cache_).empty()) << "a refused checkpoint stays out of the cache";
  EXPECT_EQ(ReadManifestOnly(path_, testing::OptionsWithCache(cache_)).status().code(),
            StatusCode::kUnimplemented);
}

TEST_F(CheckpointTest, MissingManifestFieldIsRefusedNamingIt) {
  nlohmann::json m = ManifestToJson(testing::SampleContents().manifest);
  m.erase("created_utc");
  testing::WriteCraftedCheckpoint(path_, {{kManifestEntryName, m.dump()}});
  auto loaded = Load();
  ASSERT_EQ(loaded.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(loaded.status().message(), HasSubstr("missing field 'created_utc'"));
}

TEST_F(CheckpointTest, ManifestThatIsNotJsonIsRefused) {
  testing::WriteCraftedCheckpoint(path_, {{kManifestEntryName, "{not json"}});
  EXPECT_EQ(Load().status().code(), StatusCode::kDataLoss);
}

TEST_F(CheckpointTest, ArchiveWithoutManifestIsRefused) {
  testing::WriteCraftedCheckpoint(path_, {{"plan.json", "{}"}});
  auto loaded = Load();
  ASSERT_EQ(loaded.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(loaded.status().message(), HasSubstr("has no manifest.json"));
}

TEST_F(CheckpointTest, UnknownManifestFieldsAreIgnored) {
  nlohmann::json m = ManifestToJson(testing::SampleContents().manifest);
  m["cpu"] = "added later without a version bump";
  testing::WriteCraftedCheckpoint(path_, {{kManifestEntryName, m.dump()}});
  EXPECT_TRUE(Load().ok());
}

TEST_F(CheckpointTest, ReadManifestOnlyLeavesTheCacheAlone) {
  auto manifest = ReadManifestOnly(path_, testing::OptionsWithCache(cache_));
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  EXPECT_EQ(manifest->tuning, testing::SampleContents().manifest.tuning);
  EXPECT_TRUE(testing::ListDir(cache_).empty());
}

TEST_F(CheckpointTest, ReadFileOfUnknownEntryListsTheEntries) {
  auto loaded = Load();
  ASSERT_TRUE(loaded.ok());
  auto read = loaded->ReadFile("nope.json");
  ASSERT_EQ(read.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(read.status().message(), HasSubstr("plan.json"));
}

TEST_F(CheckpointTest, ReadFileNoticesACachedFileChangedAfterLoad) {
  auto loaded = Load();
  ASSERT_TRUE(loaded.ok());
  WriteAll(loaded->unpacked_dir + "/plan.json", "{\"evil\": 1}");
  EXPECT_EQ(loaded->ReadFile("plan.json").status().code(), StatusCode::kDataLoss);
}

TEST_F(CheckpointTest, CacheDirComesFromTheEnvironment) {
  // Restores the variables whatever happens.
  struct SavedEnv {
    std::string name;
    std::optional<std::string> value;
    explicit SavedEnv(std::string n) : name(std::move(n)) {
      if (const char* v = std::getenv(name.c_str())) value = v;
    }
    ~SavedEnv() {
      if (value)
        ::setenv(name.c_str(), value->c_str(), 1);
      else
        ::unsetenv(name.c_str());
    }
  } saved_qtune("QTUNE_CACHE_DIR"), saved_xdg("XDG_CACHE_HOME");
  LoadCheckpointOptions options;
  ::setenv("QTUNE_CACHE_DIR", "/tmp/qc", 1);
  EXPECT_EQ(*ResolveCheckpointCacheDir(options), "/tmp/qc/checkpoints");
  ::unsetenv("QTUNE_CACHE_DIR");
  ::setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  EXPECT_EQ(*ResolveCheckpointCacheDir(options), "/tmp/xdg/qtune/checkpoints");
  ::unsetenv("XDG_CACHE_HOME");
  options.cache_dir = "/explicit";
  EXPECT_EQ(*ResolveCheckpointCacheDir(options), "/explicit");
}

}  // namespace
}  // namespace qtune::tune
