// The command-line contract of docs/cli.md: exit codes (2 usage, 3 bad data), every error
// starting with "qtune: error:", checks done before the work, and the global flags.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"
#include "core/npy.h"
#include "core/tensor.h"

namespace qtune {
namespace {

namespace fs = std::filesystem;

using testing::CliResult;
using testing::RunQtuneCli;

std::string M(const std::string& f) { return std::string(QTUNE_MODELS_DIR) + "/fmnist/" + f; }
const std::string kModel = M("fmnist_resnet.onnx");

// A fresh folder under the system temp dir, removed with the object.
class TempFolder {
 public:
  TempFolder() {
    std::string pattern = (fs::temp_directory_path() / "qtune_cli_contract_XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempFolder() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A usage error: exit 2 and the first line of stderr is "qtune: error: ...".
void ExpectUsageError(const CliResult& r, const std::string& says) {
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out.rfind("qtune: error: ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(says), std::string::npos) << "expected '" << says << "' in\n" << r.out;
}

// A fast quantize run: 4 random samples, table only.
const std::string kQuickQuantize =
    "quantize " + kModel + " --report --random-calibration --calib-samples 4";

TEST(CliContractTest, ParseErrorsStartWithQtuneErrorAndExit2) {
  ExpectUsageError(RunQtuneCli("inspect --no-such-flag " + kModel), "--no-such-flag");
  ExpectUsageError(RunQtuneCli("bench " + kModel + " --threads 0"), "--threads");
  ExpectUsageError(RunQtuneCli(""), "subcommand");
  ExpectUsageError(RunQtuneCli("run"), "model");
}

TEST(CliContractTest, MisspelledCommandSuggestsTheRightOne) {
  ExpectUsageError(RunQtuneCli("quantise " + kModel), "did you mean 'quantize'?");
  ExpectUsageError(RunQtuneCli("--log-level info banch " + kModel), "did you mean 'bench'?");
  CliResult far = RunQtuneCli("frobnicate");
  ExpectUsageError(far, "unknown command 'frobnicate'");
  EXPECT_NE(far.out.find("inspect, run, bench"), std::string::npos) << far.out;
  EXPECT_EQ(far.out.find("measure-worker"), std::string::npos) << "hidden command listed";
}

TEST(CliContractTest, FlagProblemsFoundBeforeAnyWorkAreUsageErrors) {
  TempFolder dir;
  // No calibration data at all.
  ExpectUsageError(RunQtuneCli("quantize " + kModel + " -o " + (dir / "q.onnx")), "--calib");
  // The entropy calibrator models the int8 grid; the fp8 recipe has no such grid.
  ExpectUsageError(RunQtuneCli(kQuickQuantize + " --recipe fp8 --calibrator entropy"),
                   "--calibrator entropy");
  ExpectUsageError(RunQtuneCli(kQuickQuantize + " --percentile 99.9"), "--percentile");
  ExpectUsageError(RunQtuneCli(kQuickQuantize + " --asymmetric-activations --recipe fp8"),
                   "fp8_e4m3");
  ExpectUsageError(
      RunQtuneCli("quantize " + kModel + " --report --calib " + M("calib_512.npy") + " --seed 3"),
      "--random-calibration");
  // A symbolic batch dimension and no --shape.
  ExpectUsageError(RunQtuneCli("bench " + kModel + " --iters 1"), "--shape input=");
}

TEST(CliContractTest, UnwritableOutputFailsBeforeCalibration) {
  TempFolder dir;
  std::ofstream(dir / "file") << "x";
  const std::string calib = " --calib " + M("calib_512.npy");
  for (const std::string& out :
       {dir / "missing_dir/q.onnx", dir / "file/q.onnx", dir / "", (dir / "file") + "/"}) {
    CliResult r = RunQtuneCli("quantize " + kModel + " -o " + out + calib);
    ExpectUsageError(r, "-o " + out);
    EXPECT_EQ(r.out.find("calibrating"), std::string::npos) << "checked after calibrating:\n"
                                                            << r.out;
    EXPECT_EQ(r.out.find(".tmp"), std::string::npos) << "names a temporary file:\n" << r.out;
  }
  ExpectUsageError(
      RunQtuneCli("quantize " + kModel + " -o " + (dir / "missing_dir/q.onnx") + calib),
      "does not exist; create it first");
  if (geteuid() != 0) {  // root writes anywhere
    fs::create_directory(dir / "ro");
    fs::permissions(dir / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    ExpectUsageError(RunQtuneCli("quantize " + kModel + " -o " + (dir / "ro/q.onnx") + calib),
                     "not writable");
  }
  ExpectUsageError(RunQtuneCli("run " + kModel + " -i " + M("test_2000.npy") + " -o " +
                               (dir / "missing_dir/o.npz")),
                   "does not exist");
}

TEST(CliContractTest, RunTakesABareNpyForASingleInputModelAndWritesNpyWhenAsked) {
  TempFolder dir;
  CliResult bare =
      RunQtuneCli("run " + kModel + " -i " + M("test_2000.npy") + " -o " + (dir / "bare.npz"));
  ASSERT_EQ(bare.exit_code, 0) << bare.out;
  CliResult named = RunQtuneCli("run " + kModel + " -i input=" + M("test_2000.npy") + " -o " +
                                (dir / "named.npz"));
  ASSERT_EQ(named.exit_code, 0) << named.out;
  EXPECT_EQ(ReadBytes(dir / "bare.npz"), ReadBytes(dir / "named.npz"));
  // -o out.npy: the one output as a .npy file, not a zip under a .npy name.
  CliResult npy =
      RunQtuneCli("run " + kModel + " -i " + M("test_2000.npy") + " -o " + (dir / "out.npy"));
  ASSERT_EQ(npy.exit_code, 0) << npy.out;
  EXPECT_EQ(ReadBytes(dir / "out.npy").substr(0, 6), "\x93NUMPY");
}

TEST(CliContractTest, RunPrintPlanNeedsNoInput) {
  // fmnist's batch dimension is symbolic: --shape gives it.
  CliResult plan = RunQtuneCli("run " + kModel + " --print-plan --shape input=1x1x28x28");
  ASSERT_EQ(plan.exit_code, 0) << plan.out;
  EXPECT_NE(plan.out.find("Conv"), std::string::npos) << plan.out;
  ExpectUsageError(RunQtuneCli("run " + kModel + " --print-plan"), "--shape input=");
  ExpectUsageError(RunQtuneCli("run " + kModel), "run needs --input");
}

// A model whose sizes depend on values (a NonMaxSuppression keeps some of its boxes) runs,
// and --print-plan prints the stages the run went through; without --input there is no
// plan to print before running, which is a usage error.
TEST(CliContractTest, RunPrintsTheStagesOfAModelWithDataDependentSizes) {
  const std::string model =
      std::string(QTUNE_SOURCE_DIR) + "/tests/fuzz/corpus/model/detection_nms.onnx";
  TempFolder dir;
  std::vector<float> boxes = {0, 0,    1, 1,    0, 0.1f, 1, 1.1f, 0, 5,  1, 6,
                              0, 5.1f, 1, 6.1f, 0, 10,   1, 11,   0, 20, 1, 21};
  std::vector<float> scores = {0.9f, 0.8f, 0.7f, 0.6f, 0.5f, 0.4f,
                               0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f};
  ASSERT_TRUE(WriteNpy(dir / "boxes.npy", Tensor::FromVector<float>({1, 6, 4}, boxes)).ok());
  ASSERT_TRUE(WriteNpy(dir / "scores.npy", Tensor::FromVector<float>({1, 2, 6}, scores)).ok());
  CliResult run = RunQtuneCli("run " + model + " -i boxes=" + (dir / "boxes.npy") +
                              " -i scores=" + (dir / "scores.npy") + " --print-plan");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("stage 0:"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("dynamic NonMaxSuppression"), std::string::npos) << run.out;
  ExpectUsageError(RunQtuneCli("run " + model + " --print-plan"), "give --input");
}

TEST(CliContractTest, BenchTimesGivenInputs) {
  CliResult r = RunQtuneCli("bench " + kModel + " --input input=" + M("test_2000.npy") +
                            " --iters 2 --warmup 0 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  nlohmann::json j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
  EXPECT_GT(j["median_ms"].get<double>(), 0.0);
  ExpectUsageError(RunQtuneCli("bench " + kModel + " --input input=" + M("test_2000.npy") +
                               " --shape input=1x1x28x28"),
                   "both --input and --shape");
}

TEST(CliContractTest, QuantizingAQdqModelSaysItIsAlreadyQuantized) {
  TempFolder dir;
  CliResult first = RunQtuneCli("quantize " + kModel + " -o " + (dir / "q.onnx") + " --calib " +
                                M("calib_512.npy") + " --calib-samples 32");
  ASSERT_EQ(first.exit_code, 0) << first.out;
  CliResult again = RunQtuneCli("quantize " + (dir / "q.onnx") + " -o " + (dir / "qq.onnx") +
                                " --calib " + M("calib_512.npy"));
  EXPECT_EQ(again.exit_code, 3) << again.out;
  EXPECT_EQ(again.out.rfind("qtune: error: ", 0), 0u) << again.out;
  EXPECT_NE(again.out.find("is already quantized"), std::string::npos) << again.out;
  EXPECT_FALSE(fs::exists(dir / "qq.onnx"));
  // eval shows progress: both models per batch, then the per-tensor comparison.
  CliResult eval = RunQtuneCli("eval " + kModel + " " + (dir / "q.onnx") + " --data " +
                               M("test_2000.npy") + " --batch 500 --worst 1");
  ASSERT_EQ(eval.exit_code, 0) << eval.out;
  EXPECT_NE(eval.out.find("eval: started, 9 steps"), std::string::npos) << eval.out;
  EXPECT_NE(eval.out.find("eval: 100% (9/9)"), std::string::npos) << eval.out;
  EXPECT_NE(eval.out.find("top-1 agreement    0.9"), std::string::npos) << eval.out;
}

TEST(CliContractTest, LogLevelWorksBeforeOrAfterTheCommandAndFromTheEnvironment) {
  const std::string info = "qtune info: calibrating";
  EXPECT_NE(RunQtuneCli(kQuickQuantize).out.find(info), std::string::npos);
  for (const std::string& args :
       {"--log-level warning " + kQuickQuantize, kQuickQuantize + " --log-level warning",
        kQuickQuantize + " --quiet"}) {
    CliResult r = RunQtuneCli(args);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.out;
    EXPECT_EQ(r.out.find(info), std::string::npos) << args << "\n" << r.out;
  }
  CliResult env = RunQtuneCli(kQuickQuantize, true, "QTUNE_LOG_LEVEL=warning");
  EXPECT_EQ(env.exit_code, 0) << env.out;
  EXPECT_EQ(env.out.find(info), std::string::npos) << env.out;
  // The flag wins over the environment.
  CliResult both = RunQtuneCli(kQuickQuantize + " --log-level info", true, "QTUNE_LOG_LEVEL=off");
  EXPECT_NE(both.out.find(info), std::string::npos) << both.out;
  ExpectUsageError(RunQtuneCli(kQuickQuantize, true, "QTUNE_LOG_LEVEL=loud"),
                   "QTUNE_LOG_LEVEL=loud");
}

TEST(CliContractTest, ProgressPrintsAFewLinesOffATerminalAndCanBeTurnedOff) {
  const std::string calib = " --calib " + M("calib_512.npy") + " --batch 8";
  CliResult r = RunQtuneCli("quantize " + kModel + " --report" + calib);  // 64 batches of 8
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find('\r'), std::string::npos) << "terminal redraws in a pipe";
  size_t lines = 0;
  for (size_t at = r.out.find("calibrating: "); at != std::string::npos;
       at = r.out.find("calibrating: ", at + 1)) {
    ++lines;
  }
  EXPECT_GE(lines, 3u) << r.out;   // start, steps, end
  EXPECT_LE(lines, 12u) << r.out;  // not one per batch
  // The bar counts samples (512), so it moves with every batch.
  EXPECT_NE(r.out.find("calibrating: started, 512 steps"), std::string::npos) << r.out;
  for (const std::string& off : {std::string(" --no-progress"), std::string(" --quiet")}) {
    CliResult quiet = RunQtuneCli("quantize " + kModel + " --report" + calib + off);
    ASSERT_EQ(quiet.exit_code, 0) << quiet.out;
    EXPECT_EQ(quiet.out.find("calibrating: "), std::string::npos) << off << "\n" << quiet.out;
  }
  CliResult env =
      RunQtuneCli("quantize " + kModel + " --report" + calib, true, "QTUNE_NO_PROGRESS=1");
  EXPECT_EQ(env.out.find("calibrating: "), std::string::npos) << env.out;
  EXPECT_NE(env.out.find("qtune info: calibrating"), std::string::npos) << env.out;
}

nlohmann::json QuantizeJson(const std::string& flags) {
  CliResult r = RunQtuneCli("quantize " + kModel + " --report --json " + flags, false);
  EXPECT_EQ(r.exit_code, 0) << flags << "\n" << r.out;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

const nlohmann::json* Row(const nlohmann::json& summary, const std::string& node) {
  for (const auto& row : summary["layers"]) {
    if (row["node"] == node) return &row;
  }
  return nullptr;
}

TEST(CliContractTest, ExcludeKeepsMatchingNodesAndOpsInFloat) {
  const std::string calib = "--calib " + M("calib_512.npy") + " --calib-samples 64 ";
  nlohmann::json plain = QuantizeJson(calib);
  ASSERT_NE(Row(plain, "/l1/c1/Conv"), nullptr) << plain.dump();
  EXPECT_TRUE((*Row(plain, "/l1/c1/Conv"))["quantized"].get<bool>());
  nlohmann::json by_name = QuantizeJson(calib + "--exclude '/l1/*'");
  EXPECT_FALSE((*Row(by_name, "/l1/c1/Conv"))["quantized"].get<bool>());
  EXPECT_TRUE((*Row(by_name, "/stem/stem.0/Conv"))["quantized"].get<bool>());
  nlohmann::json by_op = QuantizeJson(calib + "--exclude-op Conv");
  for (const auto& row : by_op["layers"]) {
    if (row["op"] != "Conv") continue;
    EXPECT_FALSE(row["quantized"].get<bool>()) << row.dump();
  }
  EXPECT_LT(by_op["quantized_layers"].get<int>(), by_name["quantized_layers"].get<int>());
}

TEST(CliContractTest, AsymmetricActivationsFlagEqualsTheInt8AsymPreset) {
  const std::string calib = "--calib " + M("calib_512.npy") + " --calib-samples 64 ";
  nlohmann::json flag = QuantizeJson(calib + "--asymmetric-activations");
  nlohmann::json preset = QuantizeJson(calib + "--recipe int8_asym");
  ASSERT_FALSE(flag["layers"].empty());
  EXPECT_EQ(flag["layers"], preset["layers"]);
  EXPECT_NE(flag.dump().find("uint8"), std::string::npos) << flag.dump();
}

TEST(CliContractTest, RandomCalibrationSeedIsSettable) {
  const std::string random = "--random-calibration --calib-samples 8 ";
  nlohmann::json a = QuantizeJson(random + "--seed 1");
  nlohmann::json again = QuantizeJson(random + "--seed 1");
  nlohmann::json b = QuantizeJson(random + "--seed 2");
  ASSERT_FALSE(a["layers"].empty());
  EXPECT_EQ(a["layers"], again["layers"]);
  EXPECT_NE(a["layers"], b["layers"]);
}

}  // namespace
}  // namespace qtune
