// The library's measuring child, qtune-measure, and how the library finds it
// (measure/measure_executable.h): with no qtune on the PATH and no $QTUNE_BINARY it is found
// in the build tree and measures a real model; a given path that is not an executable is a
// FailedPrecondition naming where it came from.
#include "measure/measure_executable.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "measure/benchmark_inprocess.h"

namespace qtune::measure {
namespace {

namespace fs = std::filesystem;

const std::string kFmnist = std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx";

// Sets (or unsets, for nullopt) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

int ExitCodeOf(const std::string& command) {
  int status = std::system((command + " >/dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(MeasureExecutableTest, FoundWithoutQtuneOnThePathAndMeasuresARealModel) {
  ScopedEnv path("PATH", "/nonexistent-qtune-test-dir");
  ScopedEnv binary("QTUNE_BINARY", std::nullopt);
  StatusOr<std::string> found = FindMeasureExecutable("");
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(fs::path(*found).filename(), kMeasureExecutableName);
  EXPECT_TRUE(fs::equivalent(*found, QTUNE_MEASURE)) << *found;

  InProcessBenchmarkOptions options;
  options.worker_executable = *found;
  options.warmup = 1;
  options.iters = 3;
  options.input_sizes = {{"input", {1, 1, 28, 28}}};
  options.timeout_s = 60;
  auto benchmark = InProcessBenchmark::Create(options);
  ASSERT_TRUE(benchmark.ok()) << benchmark.status().ToString();
  MeasureRequest request;
  request.candidate_path = kFmnist;
  request.reference_path = kFmnist;
  request.rounds = 2;
  Measurement m = (*benchmark)->Measure(request);
  ASSERT_TRUE(m.ok()) << m.detail;
  ASSERT_EQ(m.candidate_ms.size(), 2u);
  ASSERT_EQ(m.reference_ms.size(), 2u);
  EXPECT_GT(m.candidate_ms[0], 0);
  EXPECT_GT(m.reference_ms[1], 0);
}

TEST(MeasureExecutableTest, GivenPathsComeFirstAndMustBeExecutables) {
  ScopedEnv binary("QTUNE_BINARY", std::nullopt);
  StatusOr<std::string> given = FindMeasureExecutable(QTUNE_BINARY);
  ASSERT_TRUE(given.ok()) << given.status().ToString();
  EXPECT_EQ(*given, QTUNE_BINARY);

  StatusOr<std::string> missing = FindMeasureExecutable("/nonexistent/qtune-measure");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(missing.status().message().find("options.qtune_binary '/nonexistent/qtune-measure'"),
            std::string::npos)
      << missing.status().message();
  EXPECT_NE(missing.status().message().find("QTUNE_BINARY"), std::string::npos);

  // A folder is not an executable file either.
  EXPECT_FALSE(FindMeasureExecutable(fs::temp_directory_path().string()).ok());
}

TEST(MeasureExecutableTest, EnvironmentVariableIsTheSecondChoice) {
  {
    ScopedEnv binary("QTUNE_BINARY", std::string(QTUNE_BINARY));
    StatusOr<std::string> found = FindMeasureExecutable("");
    ASSERT_TRUE(found.ok()) << found.status().ToString();
    EXPECT_EQ(*found, QTUNE_BINARY);
    StatusOr<std::string> given = FindMeasureExecutable(QTUNE_MEASURE);
    ASSERT_TRUE(given.ok());
    EXPECT_EQ(*given, QTUNE_MEASURE);  // what the caller gives wins over the variable
  }
  ScopedEnv bad("QTUNE_BINARY", std::string("/nonexistent/qtune"));
  StatusOr<std::string> found = FindMeasureExecutable("");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(found.status().message().find("$QTUNE_BINARY '/nonexistent/qtune'"), std::string::npos)
      << found.status().message();
}

TEST(MeasureExecutableTest, QtuneMeasureServesOnlyItsOneCommand) {
  const std::string exe = QTUNE_MEASURE;
  EXPECT_EQ(ExitCodeOf(exe + " --help"), 0);
  EXPECT_EQ(ExitCodeOf(exe), 2);
  EXPECT_EQ(ExitCodeOf(exe + " run model.onnx"), 2);
  // At EOF on stdin the worker stops with 0.
  EXPECT_EQ(ExitCodeOf(exe + " measure-worker </dev/null"), 0);
}

}  // namespace
}  // namespace qtune::measure
