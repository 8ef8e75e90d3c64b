// Bad input to the qtune binary: each case gets a clear message and its exit code
// (docs/cli.md, "How bad input is answered"), never a crash or a silently damaged file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "cli_runner.h"
#include "core/npy.h"
#include "core/npz.h"

namespace qtune {
namespace {

namespace fs = std::filesystem;

using testing::CliResult;
using testing::RunQtuneCli;

std::string FmnistModel() { return std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx"; }

std::string ReadBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A fresh folder under the system temp dir, removed with the object.
class TempFolder {
 public:
  TempFolder() {
    std::string pattern = (fs::temp_directory_path() / "qtune_cli_bad_XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempFolder() { fs::remove_all(path_); }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

TEST(CliBadInputTest, RunWithABatchOfZeroGivesEmptyOutputs) {
  TempFolder dir;
  auto empty = Tensor::Allocate(DataType::kFloat32, {0, 1, 28, 28});
  ASSERT_TRUE(empty.ok());
  ASSERT_TRUE(WriteNpy((dir / "empty.npy").string(), *empty).ok());
  for (const char* tier : {"", " --reference"}) {
    const std::string out = (dir / "out.npz").string();
    CliResult r =
        RunQtuneCli("run " + FmnistModel() + " --input input=" + (dir / "empty.npy").string() +
                    " -o " + out + tier);
    ASSERT_EQ(r.exit_code, 0) << tier << ": " << r.out;
    auto entries = ReadNpz(out);
    ASSERT_TRUE(entries.ok()) << entries.status().ToString();
    ASSERT_EQ(entries->size(), 1u);
    EXPECT_EQ((*entries)[0].second.sizes(), (std::vector<int64_t>{0, 10})) << tier;
    fs::remove(out);
  }
}

TEST(CliBadInputTest, QuantizeOutputThatIsTheInputModelIsRefusedAndTheModelKept) {
  TempFolder dir;
  const fs::path model = dir / "m.onnx";
  fs::copy_file(FmnistModel(), model);
  const std::string before = ReadBytes(model);
  fs::create_symlink(model, dir / "link.onnx");
  fs::create_hard_link(model, dir / "hard.onnx");
  const std::string dot_path = (dir / "." / "m.onnx").string();
  for (const fs::path& output : {model, dir / "link.onnx", dir / "hard.onnx", fs::path(dot_path)}) {
    CliResult r = RunQtuneCli("quantize " + model.string() + " -o " + output.string() +
                              " --random-calibration --calib-samples 4");
    EXPECT_EQ(r.exit_code, 2) << output << ": " << r.out;
    EXPECT_NE(r.out.find("is the input file"), std::string::npos) << r.out;
    EXPECT_EQ(ReadBytes(model), before) << output;
  }
}

TEST(CliBadInputTest, QuantizeOutputThatIsTheCalibrationFileIsRefused) {
  TempFolder dir;
  auto calib = Tensor::Allocate(DataType::kFloat32, {2, 1, 28, 28});
  ASSERT_TRUE(calib.ok());
  const std::string calib_path = (dir / "calib.npy").string();
  ASSERT_TRUE(WriteNpy(calib_path, *calib).ok());
  CliResult r = RunQtuneCli("quantize " + FmnistModel() + " -o " + calib_path +
                            " --calib input=" + calib_path);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("is the input file"), std::string::npos) << r.out;
}

TEST(CliBadInputTest, RunOutputThatIsAnInputFileIsRefused) {
  TempFolder dir;
  auto x = Tensor::Allocate(DataType::kFloat32, {1, 1, 28, 28});
  ASSERT_TRUE(x.ok());
  const std::string x_path = (dir / "x.npy").string();
  ASSERT_TRUE(WriteNpy(x_path, *x).ok());
  const std::string before = ReadBytes(x_path);
  CliResult r = RunQtuneCli("run " + FmnistModel() + " --input input=" + x_path + " -o " + x_path);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("is the input file"), std::string::npos) << r.out;
  EXPECT_EQ(ReadBytes(x_path), before);
  CliResult model =
      RunQtuneCli("run " + FmnistModel() + " --input input=" + x_path + " -o " + FmnistModel());
  EXPECT_EQ(model.exit_code, 2) << model.out;
}

// An exception that escapes a command (here nlohmann::json refusing a path that is not
// UTF-8) is reported as an internal error with the internal-error exit code, not a crash.
TEST(CliBadInputTest, EscapedExceptionIsAnInternalErrorNotACrash) {
  TempFolder dir;
  const fs::path link = dir / "model_\xff.onnx";
  fs::create_symlink(FmnistModel(), link);
  CliResult r = RunQtuneCli("inspect --json \"" + link.string() + "\"");
  ASSERT_NE(r.exit_code, -1) << "crashed: " << r.out;
  if (r.exit_code != 0) {
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find("qtune: error: internal error:"), std::string::npos) << r.out;
  }
}

// Sizes no tensor may have (issue 24 item 7): refused against the 16 GiB limit before a
// plan is compiled for them (--print-plan with a dimension of 2^32 died with SIGFPE).
TEST(CliBadInputTest, ShapeBeyondTheTensorLimitIsRefusedBeforeCompiling) {
  for (const char* command : {"run --print-plan", "bench --iters 1"}) {
    CliResult r = RunQtuneCli(std::string(command) + " " + FmnistModel() +
                              " --shape input=4294967296x1x28x28");
    EXPECT_EQ(r.exit_code, 2) << command << ": " << r.out;
    EXPECT_NE(r.out.find("input 'input': tensor of 4294967296x1x28x28 float32 exceeds the 16 "
                         "GiB limit"),
              std::string::npos)
        << command << ": " << r.out;
  }
}

}  // namespace
}  // namespace qtune
