// The public API's whole workflow on the bundled fmnist model, as a program using the
// installed qtune would call it: Quantize, Tune to a checkpoint, ReadCheckpoint, LoadTuned
// (and a tampered checkpoint), Autotune, and how Tune and Autotune find the qtune binary.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "qtune/qtune.h"

namespace qtune {
namespace {
namespace fs = std::filesystem;

const std::string kModel = std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx";
const std::string kCalib = std::string(QTUNE_MODELS_DIR) + "/fmnist/calib_512.npy";

class ApiWorkflowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("qtune_api_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    setenv("QTUNE_CACHE_DIR", (dir_ / "cache").c_str(), 1);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // fp32 and int8 at one thread, measured briefly.
  static TuneOptions QuickTune() {
    TuneOptions options;
    options.calib = {kCalib};
    options.candidates = {"fp32", "int8"};
    options.max_calib_samples = 64;
    options.iters = 3;
    options.rounds = 1;
    options.qtune_binary = QTUNE_BINARY;
    return options;
  }

  // Logits of a session on zeros of the model's input size (batch 1).
  static std::vector<float> LogitsOnZeros(Session& session) {
    NamedTensors inputs;
    auto input = Tensor::Allocate(DataType::kFloat32, {1, 1, 28, 28});
    EXPECT_TRUE(input.ok());
    inputs.emplace_back(session.inputs()[0].name, *input);
    auto outputs = session.Run(inputs);
    EXPECT_TRUE(outputs.ok()) << outputs.status().ToString();
    if (!outputs.ok()) return {};
    const Tensor& logits = (*outputs)[0].second;
    return std::vector<float>(logits.data<float>(), logits.data<float>() + logits.num_elements());
  }

  fs::path dir_;
};

TEST_F(ApiWorkflowTest, QuantizeWritesARunnableQdqModelAndItsSummary) {
  QuantizeOptions options;
  options.calib = {kCalib};
  options.max_calib_samples = 64;
  auto result = Quantize(kModel, Path("q.onnx"), options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_GT(result->quantized_layers, 0);
  auto summary = nlohmann::json::parse(result->summary_json);
  EXPECT_EQ(summary["output"], Path("q.onnx"));
  EXPECT_EQ(summary["layers"].size(),
            static_cast<size_t>(result->quantized_layers + result->float_layers));
  auto session = Session::Open(Path("q.onnx"));
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_EQ(LogitsOnZeros(**session).size(), 10u);
}

// `n` fmnist-sized samples of a smooth pattern in [0, 1]; `phase` makes other data.
Tensor CalibSamples(int64_t n, float phase = 0) {
  auto samples = Tensor::Allocate(DataType::kFloat32, {n, 1, 28, 28});
  EXPECT_TRUE(samples.ok());
  float* x = samples->data<float>();
  for (int64_t i = 0; i < samples->num_elements(); ++i) {
    x[i] = std::sin(0.37f * static_cast<float>(i) + phase) * 0.5f + 0.5f;
  }
  return *samples;
}

TEST_F(ApiWorkflowTest, QuantizeTakesCalibrationTensorsInMemory) {
  const Tensor samples = CalibSamples(32);
  QuantizeOptions options;
  options.calib_tensors = {{"input", samples}};
  auto result = Quantize(kModel, Path("q.onnx"), options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_GT(result->quantized_layers, 0);
  auto session = Session::Open(Path("q.onnx"));
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_EQ(LogitsOnZeros(**session).size(), 10u);
  // Files and tensors at once is ambiguous; a tensor for no such input is named.
  options.calib = {kCalib};
  auto both = Quantize(kModel, Path("both.onnx"), options);
  EXPECT_EQ(both.status().code(), StatusCode::kInvalidArgument);
  options.calib.clear();
  options.calib_tensors = {{"no_such_input", samples}};
  auto wrong = Quantize(kModel, Path("wrong.onnx"), options);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("no_such_input"), std::string::npos)
      << wrong.status().message();
  EXPECT_FALSE(fs::exists(Path("both.onnx")));
  EXPECT_FALSE(fs::exists(Path("wrong.onnx")));
}

// Autotune keeps the tensors in the work dir: the same tensors resume the search, other
// ones are other options (refused until a new work dir or force_new).
TEST_F(ApiWorkflowTest, AutotuneWithCalibrationTensorsResumesOnTheSameData) {
  AutotuneOptions options;
  options.calib_tensors = {{"input", CalibSamples(32)}};
  options.mode = "quick";
  options.work_dir = Path("work");
  options.qtune_binary = QTUNE_BINARY;
  auto first = Autotune(kModel, Path("at.onnx"), options);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto again = Autotune(kModel, Path("at.onnx"), options);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(nlohmann::json::parse(again->report_json)["counts"]["measured"], 0);
  options.calib_tensors = {{"input", CalibSamples(32, /*phase=*/1)}};
  auto other = Autotune(kModel, Path("at.onnx"), options);
  EXPECT_FALSE(other.ok());
}

TEST_F(ApiWorkflowTest, TuneTakesCalibrationTensors) {
  TuneOptions options = QuickTune();
  options.calib.clear();
  options.calib_tensors = {{"input", CalibSamples(32)}};
  auto result = Tune(kModel, Path("m.qtc"), options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(fs::exists(Path("m.qtc")));
  EXPECT_EQ(result->rows.size(), 2u);
}

TEST_F(ApiWorkflowTest, QuantizeWithoutCalibrationDataSaysWhatToPass) {
  auto result = Quantize(kModel, Path("q.onnx"), {});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(Path("q.onnx")));
}

TEST_F(ApiWorkflowTest, TuneSavesACheckpointThatReadsAndLoadsBack) {
  auto tuned = Tune(kModel, Path("m.qtc"), QuickTune());
  ASSERT_TRUE(tuned.ok()) << tuned.status().ToString();
  ASSERT_EQ(tuned->rows.size(), 2u);
  int chosen = 0;
  for (const TuneRow& row : tuned->rows) chosen += row.chosen;
  EXPECT_EQ(chosen, 1);
  EXPECT_EQ(nlohmann::json::parse(tuned->json)["candidate"], tuned->candidate);
  ASSERT_TRUE(fs::exists(Path("m.qtc.sha256")));

  auto info = ReadCheckpoint(Path("m.qtc"));
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->format_version, 1);
  EXPECT_EQ(info->candidate, tuned->candidate);
  EXPECT_EQ(info->threads, tuned->threads);
  EXPECT_GT(info->weights_fingerprinted, 0);
  EXPECT_EQ(info->weights_sha256.size(), 64u);
  EXPECT_EQ(info->input_sizes.begin()->second, (std::vector<int64_t>{1, 1, 28, 28}));

  auto loaded = LoadTuned(kModel, Path("m.qtc"));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto fp32 = Session::Open(kModel);
  ASSERT_TRUE(fp32.ok());
  std::vector<float> got = LogitsOnZeros(**loaded), want = LogitsOnZeros(**fp32);
  ASSERT_EQ(got.size(), want.size());
  double signal = 0, noise = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    signal += double(want[i]) * want[i];
    noise += double(got[i] - want[i]) * (got[i] - want[i]);
  }
  // The accuracy check the tuner applied (min SQNR 20 dB) holds for the loaded session.
  EXPECT_GE(noise == 0 ? INFINITY : 10 * std::log10(signal / noise), 20.0);
}

TEST_F(ApiWorkflowTest, TamperedCheckpointIsDataLossUnlessUnverified) {
  ASSERT_TRUE(Tune(kModel, Path("m.qtc"), QuickTune()).ok());
  std::ofstream(Path("m.qtc.sha256"))
      << std::string(64, '0') << "  m.qtc\n";  // a hash file that does not match
  auto info = ReadCheckpoint(Path("m.qtc"));
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(info.status().message().find("--no-verify"), std::string::npos);
  auto loaded = LoadTuned(kModel, Path("m.qtc"));
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kDataLoss);

  EXPECT_TRUE(ReadCheckpoint(Path("m.qtc"), {.verify = false}).ok());
  EXPECT_TRUE(LoadTuned(kModel, Path("m.qtc"), {.verify = false}).ok());
}

TEST_F(ApiWorkflowTest, AutotuneWritesTheModelAndReportsItsSpeedup) {
  AutotuneOptions options;
  options.calib = {kCalib};
  options.max_calib_samples = 64;
  options.mode = "quick";
  options.work_dir = Path("work");
  options.qtune_binary = QTUNE_BINARY;
  auto result = Autotune(kModel, Path("at.onnx"), options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(fs::exists(Path("at.onnx")));
  EXPECT_GT(result->latency_ms, 0);
  EXPECT_GT(result->speedup_vs_fp32, 0);
  auto report = nlohmann::json::parse(result->report_json);
  EXPECT_EQ(report["format"], "qtune-autotune-report");
  EXPECT_TRUE(fs::exists(Path("work/report.json")));
}

TEST_F(ApiWorkflowTest, MeasuringFindsItsOwnExecutableAndNamesABadGivenOne) {
  TuneOptions options = QuickTune();
  options.qtune_binary = Path("not-there");
  auto tuned = Tune(kModel, Path("m.qtc"), options);
  ASSERT_FALSE(tuned.ok());
  EXPECT_EQ(tuned.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(tuned.status().message().find("QTUNE_BINARY"), std::string::npos);
  EXPECT_FALSE(fs::exists(Path("m.qtc")));

  // Not given, no $QTUNE_BINARY and no qtune on the PATH: the library finds its own
  // qtune-measure (here in the build tree) and tunes and autotunes with it.
  const char* old_path = std::getenv("PATH");
  const std::string saved_path = old_path ? old_path : "";
  setenv("PATH", Path("empty").c_str(), 1);
  unsetenv("QTUNE_BINARY");
  options.qtune_binary.clear();
  options.candidates = {"fp32"};
  auto tuned_here = Tune(kModel, Path("m.qtc"), options);
  AutotuneOptions at;
  at.calib = {kCalib};
  at.max_calib_samples = 64;
  at.mode = "quick";
  at.work_dir = Path("work");
  auto autotuned = Autotune(kModel, Path("at.onnx"), at);
  setenv("PATH", saved_path.c_str(), 1);
  ASSERT_TRUE(tuned_here.ok()) << tuned_here.status().ToString();
  EXPECT_TRUE(fs::exists(Path("m.qtc")));
  ASSERT_TRUE(autotuned.ok()) << autotuned.status().ToString();
  EXPECT_GT(autotuned->latency_ms, 0);
}

}  // namespace
}  // namespace qtune
