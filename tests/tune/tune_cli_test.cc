// `qtune tune`, `qtune run|bench --checkpoint` and `qtune inspect MODEL.qtc` as a user runs
// them: bad checkpoints and other weights are refused with exit code 3 and their messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "cli/cli_runner.h"
#include "ir/onnx_io.h"
#include "tune/checkpoint.h"
#include "tune/checkpoint_test_util.h"
#include "tune/tune_test_util.h"

namespace qtune::tune {
namespace {

using qtune::testing::RunQtuneCli;
using ::testing::HasSubstr;
using testing::ScratchDir;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void Spit(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

class TuneCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new ScratchDir();
    setenv("QTUNE_CACHE_DIR", scratch_->Join("cache").c_str(), 1);
    auto r = RunQtuneCli("tune " + testing::kFmnistModel + " --calib " + testing::kFmnistCalib +
                         " -o " + Checkpoint() +
                         " --candidates fp32,int8 --calib-samples 64 --iters 3 --rounds 1");
    tune_output_ = new std::string(r.out);
    tune_exit_ = r.exit_code;
  }
  static void TearDownTestSuite() {
    delete tune_output_;
    delete scratch_;
  }
  static std::string Checkpoint() { return scratch_->Join("fmnist.qtc"); }
  // A copy of the checkpoint and its hash file under `name`.
  std::string Copy(const std::string& name) {
    std::string path = scratch_->Join(name);
    Spit(path, Slurp(Checkpoint()));
    std::string hash = Slurp(Checkpoint() + ".sha256");
    Spit(path + ".sha256", hash.replace(hash.find("fmnist.qtc"), 10, name));
    return path;
  }
  std::string RunWith(const std::string& model, const std::string& checkpoint) {
    return "run " + model + " --checkpoint " + checkpoint +
           " --input input=" + testing::kFmnistCalib;
  }

  static ScratchDir* scratch_;
  static std::string* tune_output_;
  static int tune_exit_;
};
ScratchDir* TuneCliTest::scratch_ = nullptr;
std::string* TuneCliTest::tune_output_ = nullptr;
int TuneCliTest::tune_exit_ = -1;

TEST_F(TuneCliTest, TunePrintsTheTableAndWritesTheCheckpoint) {
  ASSERT_EQ(tune_exit_, 0) << *tune_output_;
  EXPECT_THAT(*tune_output_, HasSubstr("candidate"));
  EXPECT_THAT(*tune_output_, HasSubstr("int8"));
  EXPECT_THAT(*tune_output_, HasSubstr("chosen: "));
  EXPECT_TRUE(std::filesystem::exists(Checkpoint() + ".sha256"));
  EXPECT_LT(std::filesystem::file_size(Checkpoint()), 64u * 1024u);
}

TEST_F(TuneCliTest, RunWithCheckpointWritesOutputs) {
  ASSERT_EQ(tune_exit_, 0) << *tune_output_;
  auto r = RunQtuneCli(RunWith(testing::kFmnistModel, Checkpoint()) + " -o " +
                       scratch_->Join("out.npz"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("logits"));
}

TEST_F(TuneCliTest, BenchAndInspectReadTheCheckpoint) {
  ASSERT_EQ(tune_exit_, 0) << *tune_output_;
  auto bench = RunQtuneCli("bench " + testing::kFmnistModel + " --checkpoint " + Checkpoint() +
                           " --iters 5 --warmup 1");
  EXPECT_EQ(bench.exit_code, 0) << bench.out;
  EXPECT_THAT(bench.out, HasSubstr("checkpoint"));
  auto inspect = RunQtuneCli("inspect " + Checkpoint());
  EXPECT_EQ(inspect.exit_code, 0) << inspect.out;
  EXPECT_THAT(inspect.out, HasSubstr("chosen"));
  EXPECT_THAT(inspect.out, HasSubstr("not stored"));
}

TEST_F(TuneCliTest, TamperedArchiveIsRefusedWithExitCode3) {
  ASSERT_EQ(tune_exit_, 0) << *tune_output_;
  std::string path = Copy("tampered.qtc");
  std::string data = Slurp(path);
  data[data.size() / 2] ^= 0x40;
  Spit(path, data);
  auto r = RunQtuneCli(RunWith(testing::kFmnistModel, path));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_THAT(r.out, HasSubstr("sha256"));
}

TEST_F(TuneCliTest, TamperedHashIsRefusedWithExitCode3) {
  ASSERT_EQ(tune_exit_, 0) << *tune_output_;
  std::string path = Copy("badhash.qtc");
  std::string hash = Slurp(path + ".sha256");
  hash[0] = hash[0] == '0' ? '1' : '0';
  Spit(path + ".sha256", hash);
  auto r = RunQtuneCli(RunWith(testing::kFmnistModel, path));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_THAT(r.out, HasSubstr("badhash.qtc.sha256"));
}

TEST_F(TuneCliTest, MissingHashIsRefusedUnlessNoVerify) {
  ASSERT_EQ(tune_exit_, 0) << *tune_output_;
  std::string path = Copy("nohash.qtc");
  std::filesystem::remove(path + ".sha256");
  auto r = RunQtuneCli(RunWith(testing::kFmnistModel, path));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--no-verify"));
  auto unverified = RunQtuneCli(RunWith(testing::kFmnistModel, path) + " --no-verify");
  EXPECT_EQ(unverified.exit_code, 0) << unverified.out;
  EXPECT_THAT(unverified.out, HasSubstr("NOT VERIFYING"));
}

TEST_F(TuneCliTest, WrongModelIsRefusedNamingTheInitializerUnlessAllowed) {
  ASSERT_EQ(tune_exit_, 0) << *tune_output_;
  auto model = ir::LoadModel(testing::kFmnistModel);
  ASSERT_TRUE(model.ok());
  const std::string name = testing::LargestWeightName(**model);
  std::string other = scratch_->Join("other_weights.onnx");
  ASSERT_TRUE(ir::SaveModel(*testing::WithScaledWeight(**model, name, 0.5f), other).ok());
  auto r = RunQtuneCli(RunWith(other, Checkpoint()));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_THAT(r.out, HasSubstr(name));
  auto allowed = RunQtuneCli(RunWith(other, Checkpoint()) + " --allow-weight-mismatch");
  EXPECT_EQ(allowed.exit_code, 0) << allowed.out;
  EXPECT_THAT(allowed.out, HasSubstr("--allow-weight-mismatch"));
}

TEST_F(TuneCliTest, TruncatedArchiveIsRefusedWithExitCode3) {
  ASSERT_EQ(tune_exit_, 0) << *tune_output_;
  std::string path = Copy("truncated.qtc");
  std::string data = Slurp(path);
  Spit(path, data.substr(0, data.size() / 2));
  testing::RehashCheckpoint(path);  // a matching hash: the archive itself is what is wrong
  auto r = RunQtuneCli(RunWith(testing::kFmnistModel, path));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_THAT(r.out, HasSubstr("truncated.qtc"));
}

TEST_F(TuneCliTest, PathTraversalEntryIsRefusedAndNothingEscapes) {
  std::string path = scratch_->Join("traversal.qtc");
  testing::WriteCraftedCheckpoint(path, {testing::ManifestEntry(), {"../escaped", "x"}});
  auto r = RunQtuneCli(RunWith(testing::kFmnistModel, path));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_THAT(r.out, HasSubstr("'..'"));
  EXPECT_FALSE(std::filesystem::exists(scratch_->Join("cache/../escaped")));
}

TEST_F(TuneCliTest, NewerFormatVersionIsRefusedNamingBothVersions) {
  ASSERT_EQ(tune_exit_, 0) << *tune_output_;
  CheckpointContents c = testing::SampleContents();
  c.manifest.format_version = kCheckpointFormatVersion + 1;
  std::string path = scratch_->Join("newer.qtc");
  ASSERT_TRUE(SaveCheckpoint(path, c).ok());
  auto r = RunQtuneCli(RunWith(testing::kFmnistModel, path));
  EXPECT_EQ(r.exit_code, 4) << r.out;  // unsupported (docs/cli.md)
  EXPECT_THAT(r.out, HasSubstr("format_version " + std::to_string(kCheckpointFormatVersion + 1)));
  EXPECT_THAT(r.out, HasSubstr("format_version " + std::to_string(kCheckpointFormatVersion)));
}

TEST_F(TuneCliTest, OutputOverTheModelIsRefused) {
  auto r = RunQtuneCli("tune " + testing::kFmnistModel + " --calib " + testing::kFmnistCalib +
                       " -o " + testing::kFmnistModel);
  EXPECT_EQ(r.exit_code, 2) << r.out;
}

}  // namespace
}  // namespace qtune::tune
