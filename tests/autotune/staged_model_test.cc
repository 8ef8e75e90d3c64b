// `qtune autotune` on a model whose sizes are known only while it runs (a detector whose
// export includes NonMaxSuppression): calibration, the in-process measurements and the
// final model all run through the engine's stages, and the tuned model runs.
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

TEST(AutotuneStagedModelTest, DetectorWithNonMaxSuppressionIsTunedAndRuns) {
  const fs::path dir = fs::temp_directory_path() / ("qtune_staged_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::mt19937 rng(77);
  auto model = qtune::testing::BuildDetectorWithNms(rng);
  const std::string model_path = (dir / "detector.onnx").string();
  ASSERT_TRUE(ir::SaveModel(*model, model_path).ok());
  ASSERT_TRUE(WriteNpy((dir / "calib.npy").string(),
                       qtune::testing::UniformTensor({8, 3, 16, 16}, rng, 1.0f))
                  .ok());
  ASSERT_TRUE(WriteNpy((dir / "image.npy").string(),
                       qtune::testing::UniformTensor({1, 3, 16, 16}, rng, 1.0f))
                  .ok());
  auto tuned = RunQtuneCli("autotune " + model_path + " -o " + (dir / "tuned.onnx").string() +
                           " --calib " + (dir / "calib.npy").string() + " --work-dir " +
                           (dir / "work").string() + " --mode quick --no-progress");
  ASSERT_EQ(tuned.exit_code, 0) << tuned.out;
  // The search measured candidates through the stages (nothing failed).
  EXPECT_NE(tuned.out.find("failed 0"), std::string::npos) << tuned.out;
  EXPECT_EQ(tuned.out.find("measured 0 "), std::string::npos) << tuned.out;
  ASSERT_TRUE(fs::exists(dir / "tuned.onnx")) << tuned.out;
  auto run = RunQtuneCli("run " + (dir / "tuned.onnx").string() + " -i image=" +
                         (dir / "image.npy").string());
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("detections"), std::string::npos) << run.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace qtune::autotune
