// `qtune autotune` and `qtune tune` on a model whose sizes are known only while it runs (a
// detector whose export includes NonMaxSuppression): calibration, the measurements, the
// checkpoint load and the final models all run through the engine's stages.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>

#include "cli/cli_runner.h"
#include "core/npy.h"
#include "ir/onnx_io.h"
#include "util/detector_models.h"
#include "util/random_tensor.h"

namespace qtune::autotune {
namespace {
namespace fs = std::filesystem;
using qtune::testing::RunQtuneCli;

class StagedModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int test_number = 0;
    dir_ = fs::temp_directory_path() /
           ("qtune_staged_" + std::to_string(getpid()) + "_" + std::to_string(test_number++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::mt19937 rng(77);
    auto model = qtune::testing::BuildDetectorWithNms(rng);
    ASSERT_TRUE(ir::SaveModel(*model, Path("detector.onnx")).ok());
    ASSERT_TRUE(
        WriteNpy(Path("calib.npy"), qtune::testing::UniformTensor({8, 3, 16, 16}, rng, 1.0f)).ok());
    ASSERT_TRUE(
        WriteNpy(Path("image.npy"), qtune::testing::UniformTensor({1, 3, 16, 16}, rng, 1.0f)).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

TEST_F(StagedModelTest, AutotuneTunesADetectorWithNonMaxSuppressionAndTheResultRuns) {
  auto tuned = RunQtuneCli("autotune " + Path("detector.onnx") + " -o " + Path("tuned.onnx") +
                           " --calib " + Path("calib.npy") + " --work-dir " + Path("work") +
                           " --mode quick --no-progress");
  ASSERT_EQ(tuned.exit_code, 0) << tuned.out;
  // The search measured candidates through the stages (nothing failed).
  EXPECT_NE(tuned.out.find("failed 0"), std::string::npos) << tuned.out;
  EXPECT_EQ(tuned.out.find("measured 0 "), std::string::npos) << tuned.out;
  auto run = RunQtuneCli("run " + Path("tuned.onnx") + " -i image=" + Path("image.npy"));
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("detections"), std::string::npos) << run.out;
}

TEST_F(StagedModelTest, TuneCheckpointOfADetectorWithNonMaxSuppressionLoadsAndRuns) {
  auto tuned = RunQtuneCli("tune " + Path("detector.onnx") + " --calib " + Path("calib.npy") +
                           " -o " + Path("detector.qtc") + " --candidates fp32,int8 --no-progress");
  ASSERT_EQ(tuned.exit_code, 0) << tuned.out;
  auto run = RunQtuneCli("run " + Path("detector.onnx") + " --checkpoint " + Path("detector.qtc") +
                         " -i image=" + Path("image.npy"));
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("detections"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace qtune::autotune
