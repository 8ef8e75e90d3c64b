// `qtune report MODEL.qtc`: the page of a checkpoint from a real `qtune tune` on the bundled
// fmnist model (its table, its weight fingerprint, its manifest), and the checkpoint
// checks it shares with loading: a hash file that differs or is missing, a damaged
// archive, --no-verify, a newer format.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"
#include "report/report_test_util.h"
#include "tune/checkpoint.h"

namespace qtune::report {
namespace {
namespace fs = std::filesystem;
using qtune::testing::RunQtuneCli;

class ReportCheckpointTest : public ::testing::Test {
 protected:
  // One tune run for the whole suite (seconds); each test works on copies.
  static void SetUpTestSuite() {
    dir_ =
        new fs::path(fs::temp_directory_path() / ("qtune_report_ckpt_" + std::to_string(getpid())));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_);
    auto tune = RunQtuneCli("tune " + kFmnistModel + " --calib " + kFmnistCalib + " -o " +
                            Path("fmnist.qtc") +
                            " --candidates fp32,int8 --calib-samples 64 --iters 3 --rounds 1");
    tune_out_ = new std::string(std::to_string(tune.exit_code) + ": " + tune.out);
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
    delete tune_out_;
  }
  void SetUp() override { ASSERT_EQ(tune_out_->substr(0, 2), "0:") << *tune_out_; }
  static std::string Path(const std::string& name) { return (*dir_ / name).string(); }

  // A copy of the checkpoint and its hash file as `name` (the hash file names the
  // archive's basename, which the check does not compare).
  static void CopyCheckpoint(const std::string& name) {
    fs::copy_file(Path("fmnist.qtc"), Path(name), fs::copy_options::overwrite_existing);
    fs::copy_file(Path("fmnist.qtc.sha256"), Path(name + ".sha256"),
                  fs::copy_options::overwrite_existing);
  }

  // The manifest as the tune library reads it (verified).
  static nlohmann::json Manifest() {
    auto manifest = tune::ReadManifestOnly(Path("fmnist.qtc"), {});
    EXPECT_TRUE(manifest.ok()) << manifest.status().ToString();
    return manifest.ok() ? tune::ManifestToJson(*manifest) : nlohmann::json();
  }

  static fs::path* dir_;
  static std::string* tune_out_;
};
fs::path* ReportCheckpointTest::dir_ = nullptr;
std::string* ReportCheckpointTest::tune_out_ = nullptr;

TEST_F(ReportCheckpointTest, PageShowsTheTuneTableTheWeightsAndTheManifest) {
  auto r = RunQtuneCli("report " + Path("fmnist.qtc") + " -o " + Path("c.html"),
                       /*with_stderr=*/true, "QTUNE_CACHE_DIR=" + Path("cache"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_FALSE(fs::exists(Path("cache"))) << "the report unpacked the checkpoint";
  EXPECT_NE(r.out.find("c.html (checkpoint report of " + Path("fmnist.qtc") + ")"),
            std::string::npos)
      << r.out;
  const std::string html = Slurp(Path("c.html"));
  ExpectSelfContainedPage(html);
  EXPECT_NE(html.find("verified against its .sha256 file"), std::string::npos);
  EXPECT_EQ(html.find("NOT verified"), std::string::npos);

  const nlohmann::json manifest = Manifest();
  const nlohmann::json& tuning = manifest["tuning"];
  // The tune plots and table: every row, the chosen one highlighted once.
  EXPECT_NE(html.find("Candidates: latency against accuracy"), std::string::npos);
  EXPECT_NE(html.find("Candidates side by side: latency"), std::string::npos);
  ASSERT_EQ(tuning["table"].size(), 2u);
  EXPECT_EQ(CountOf(html, "<tr class=\"highlight\">"), 1u);
  EXPECT_NE(html.find(tuning["candidate"].get<std::string>() + " x" +
                      std::to_string(tuning["threads"].get<int>()) + " thread(s)"),
            std::string::npos);
  EXPECT_NE(html.find("int8 x1"), std::string::npos);
  EXPECT_NE(html.find("fp32 x1"), std::string::npos);
  // The weight fingerprint: the count, the whole digest and every weight with its digest.
  const nlohmann::json& tensors = manifest["weights"]["tensors"];
  ASSERT_FALSE(tensors.empty());
  EXPECT_NE(
      html.find("<dt>weights fingerprinted</dt><dd>" + std::to_string(tensors.size()) + "</dd>"),
      std::string::npos);
  EXPECT_NE(html.find(manifest["weights"]["whole"].get<std::string>()), std::string::npos);
  for (const auto& t : tensors) {
    EXPECT_NE(html.find(t["name"].get<std::string>()), std::string::npos) << t["name"];
    EXPECT_NE(html.find(t["sha256"].get<std::string>()), std::string::npos);
  }
  // The manifest fields and the archive's digest (the one its hash file holds).
  EXPECT_NE(html.find(manifest["created_utc"].get<std::string>()), std::string::npos);
  EXPECT_NE(html.find(manifest["qtune_version"].get<std::string>()), std::string::npos);
  const std::string sha256_line = Slurp(Path("fmnist.qtc.sha256"));
  EXPECT_NE(html.find(sha256_line.substr(0, 64)), std::string::npos);
  // The stored quantization plan's entry, or that a float candidate has none.
  EXPECT_NE(html.find(tuning["plan"].is_string() ? "<dd>plan.json</dd>" : "<dd>none (a float"),
            std::string::npos);
}

TEST_F(ReportCheckpointTest, HashFileThatDiffersIsBadInputUnlessNoVerify) {
  CopyCheckpoint("t.qtc");
  std::ofstream(Path("t.qtc.sha256")) << std::string(64, '0') << "  t.qtc\n";
  auto r = RunQtuneCli("report " + Path("t.qtc") + " -o " + Path("t.html"));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_EQ(r.out.rfind("qtune: error: ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("t.qtc.sha256"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--no-verify"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(Path("t.html")));
  // The same message `qtune inspect` (which loads the same way) gives.
  auto inspect = RunQtuneCli("inspect " + Path("t.qtc"));
  EXPECT_EQ(inspect.exit_code, 3);
  EXPECT_EQ(inspect.out.substr(0, inspect.out.find('\n')), r.out.substr(0, r.out.find('\n')));

  r = RunQtuneCli("report " + Path("t.qtc") + " --no-verify -o " + Path("t.html"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("NOT VERIFYING"), std::string::npos) << r.out;  // the loader's warning
  EXPECT_NE(r.out.find("NOT verified"), std::string::npos) << r.out;
  const std::string html = Slurp(Path("t.html"));
  ExpectSelfContainedPage(html);
  EXPECT_NE(html.find("NOT verified (--no-verify)"), std::string::npos);
}

TEST_F(ReportCheckpointTest, MissingHashFileIsBadInputNamingIt) {
  CopyCheckpoint("m.qtc");
  fs::remove(Path("m.qtc.sha256"));
  auto r = RunQtuneCli("report " + Path("m.qtc") + " -o " + Path("m.html"));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("m.qtc.sha256"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(Path("m.html")));
}

TEST_F(ReportCheckpointTest, ChangedArchiveByteIsBadInput) {
  CopyCheckpoint("b.qtc");
  std::string bytes = Slurp(Path("b.qtc"));
  bytes[bytes.size() / 2] ^= 0x5a;
  std::ofstream(Path("b.qtc"), std::ios::binary) << bytes;
  auto r = RunQtuneCli("report " + Path("b.qtc") + " -o " + Path("b.html"));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("b.qtc"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(Path("b.html")));
}

TEST_F(ReportCheckpointTest, NewerFormatIsUnsupported) {
  tune::CheckpointContents contents;
  auto manifest = tune::ReadManifestOnly(Path("fmnist.qtc"), {});
  ASSERT_TRUE(manifest.ok());
  contents.manifest = *manifest;
  contents.manifest.format_version = tune::kCheckpointFormatVersion + 1;
  ASSERT_TRUE(tune::SaveCheckpoint(Path("new.qtc"), contents).ok());
  auto r = RunQtuneCli("report " + Path("new.qtc") + " -o " + Path("new.html"));
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_NE(r.out.find("newer"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(Path("new.html")));
}

TEST_F(ReportCheckpointTest, NamesFromTheCheckpointAreEscaped) {
  auto manifest = tune::ReadManifestOnly(Path("fmnist.qtc"), {});
  ASSERT_TRUE(manifest.ok());
  tune::CheckpointContents contents;
  contents.manifest = *manifest;
  const std::string evil = "<script>alert(1)</script>";
  contents.manifest.tuning["table"][0]["why"] = evil;
  contents.manifest.tuning["cpu"] = evil;
  ASSERT_TRUE(tune::SaveCheckpoint(Path("evil.qtc"), contents).ok());
  auto r = RunQtuneCli("report " + Path("evil.qtc") + " -o " + Path("evil.html"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string html = Slurp(Path("evil.html"));
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
}

TEST_F(ReportCheckpointTest, OutputOverTheHashFileIsAUsageError) {
  CopyCheckpoint("o.qtc");
  auto r = RunQtuneCli("report " + Path("o.qtc") + " -o " + Path("o.qtc.sha256"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(Slurp(Path("o.qtc.sha256")), Slurp(Path("fmnist.qtc.sha256")));
}

}  // namespace
}  // namespace qtune::report
