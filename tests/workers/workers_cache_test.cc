// The worker's model cache trusts nothing (issue 24 item 5): a file planted under a
// candidate's SHA-256 is detected and never measured, the default cache is private to the
// user, and a cache folder other users can write to is refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "core/sha256.h"
#include "workers/worker_pool_fixture.h"

namespace qtune::measure {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

class WorkersCacheTest : public qtune::testing::WorkerPoolTest {
 protected:
  WorkersCacheTest() : WorkerPoolTest("qtune_workers_cache_") {}

  // Starts a worker on `cache` and expects it to stop at once with an error naming it.
  void ExpectCacheRefused(const std::string& cache, const std::string& why) {
    StartRedis();
    qtune::testing::WorkerProcess& worker = StartWorker("w", "", cache);
    ASSERT_TRUE(WaitFor(10, [&] { return worker.Log().find("qtune: error") != std::string::npos; }))
        << worker.Log();
    EXPECT_THAT(worker.Log(), HasSubstr("refusing the worker's model cache '" + cache + "'"));
    EXPECT_THAT(worker.Log(), HasSubstr(why));
    EXPECT_THAT(worker.Log(), HasSubstr("--cache-dir"));
    EXPECT_EQ(worker.Log().find("serving queue"), std::string::npos) << "it must not serve";
  }
};

TEST_F(WorkersCacheTest, PlantedModelUnderACandidatesHashIsDetectedAndNotMeasured) {
  StartRedis();
  const std::string model = ModelVariant("m.onnx", 'a');
  const std::string planted = ModelVariant("planted.onnx", 'z');
  const double real_ms = ScriptLatency(model);
  ASSERT_NE(real_ms, ScriptLatency(planted)) << "pick other bytes: the two measure the same";
  // Someone who can write to the cache puts other bytes under the candidate's SHA-256
  // before the worker ever fetches it.
  auto bytes = ReadFile(model);
  ASSERT_TRUE(bytes.ok());
  const std::string sha = Sha256Hex(*bytes);
  ASSERT_TRUE(fs::create_directory(CacheOf("w")));
  fs::permissions(CacheOf("w"), fs::perms::owner_all);
  fs::copy_file(planted, CacheOf("w") + "/" + sha + ".onnx");
  qtune::testing::WorkerProcess& worker = StartWorker("w");
  auto bench = Bench();
  ASSERT_NE(bench, nullptr);
  Measurement m = bench->Measure({model, "", 1, 10});
  ASSERT_TRUE(m.ok()) << FailureKindName(m.failure) << ": " << m.detail;
  ASSERT_EQ(m.candidate_ms.size(), 1u);
  EXPECT_EQ(m.candidate_ms[0], real_ms) << "the planted bytes were measured";
  EXPECT_THAT(worker.Log(), HasSubstr("does not have that SHA-256"));
  EXPECT_THAT(worker.Log(), HasSubstr("fetching the model again"));
  EXPECT_EQ(*Sha256File(CacheOf("w") + "/" + sha + ".onnx"), sha) << "replaced by the real one";
  // Damaged after use (bytes flipped in place): caught again on the next job.
  qtune::WriteFileAtomic(CacheOf("w") + "/" + sha + ".onnx", *ReadFile(planted)).IgnoreError();
  Measurement again = bench->Measure({model, "", 1, 10});
  ASSERT_TRUE(again.ok()) << again.detail;
  EXPECT_EQ(again.candidate_ms[0], real_ms);
}

TEST_F(WorkersCacheTest, DefaultCacheIsAPrivateFolderOfTheUser) {
  StartRedis();
  const std::string xdg = (dir_ / "xdg").string();
  const char* saved = std::getenv("XDG_CACHE_HOME");
  const std::string saved_value = saved != nullptr ? saved : "";
  ::setenv("XDG_CACHE_HOME", xdg.c_str(), 1);  // inherited by the worker
  StartWorker("dflt", "", "default");
  if (saved != nullptr) {
    ::setenv("XDG_CACHE_HOME", saved_value.c_str(), 1);
  } else {
    ::unsetenv("XDG_CACHE_HOME");
  }
  auto bench = Bench();
  ASSERT_NE(bench, nullptr);
  const std::string model = ModelVariant("m.onnx", 'b');
  Measurement m = bench->Measure({model, "", 1, 10});
  ASSERT_TRUE(m.ok()) << m.detail;
  const std::string cache = xdg + "/qtune/worker-dflt";
  EXPECT_TRUE(fs::exists(cache + "/" + Sha256Hex(*ReadFile(model)) + ".onnx"))
      << "the model is not cached under " << cache;
  struct stat st {};
  ASSERT_EQ(::stat(cache.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(st.st_uid, ::geteuid());
}

TEST_F(WorkersCacheTest, CacheFolderWritableByOthersIsRefused) {
  const std::string cache = (dir_ / "open").string();
  ASSERT_TRUE(fs::create_directory(cache));
  ASSERT_EQ(::chmod(cache.c_str(), 0777), 0);
  ExpectCacheRefused(cache, "lets other users write to it");
}

TEST_F(WorkersCacheTest, CacheFolderOfAnotherUserIsRefused) {
  const std::string cache = (dir_ / "theirs").string();
  ASSERT_TRUE(fs::create_directory(cache));
  ASSERT_EQ(::chmod(cache.c_str(), 0700), 0);
  if (::chown(cache.c_str(), ::geteuid() + 4242, static_cast<gid_t>(-1)) != 0) {
    GTEST_SKIP() << "cannot chown (not running as root)";
  }
  ExpectCacheRefused(cache, "belongs to user id " + std::to_string(::geteuid() + 4242));
}

}  // namespace
}  // namespace qtune::measure
