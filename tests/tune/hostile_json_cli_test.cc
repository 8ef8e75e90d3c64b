// `qtune inspect|report|run|bench` on a checkpoint whose manifest.json nests 100 000 arrays
// (4.9 KB compressed, with a valid .sha256), and `qtune report` on such a JSON file: each
// died with SIGSEGV (issue 24 item 1) and left a ".<sha>.unpacking.XXXXXX" folder in the
// checkpoint cache. Now: exit code 3, a message naming the file, the cache left empty.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli/cli_runner.h"
#include "tune/checkpoint.h"
#include "tune/checkpoint_test_util.h"
#include "tune/tune_test_util.h"

namespace qtune::tune {
namespace {

using qtune::testing::RunQtuneCli;
using ::testing::HasSubstr;
using testing::ScratchDir;

std::string DeepArrays(int depth) {
  return std::string(static_cast<size_t>(depth), '[') +
         std::string(static_cast<size_t>(depth), ']');
}

TEST(HostileJsonCliTest, DeeplyNestedManifestIsBadDataForEveryCommandAndLeavesNoFolder) {
  ScratchDir dir;
  const std::string qtc = dir.Join("deep.qtc");
  testing::WriteCraftedCheckpoint(qtc, {{kManifestEntryName, DeepArrays(100000)}});
  EXPECT_LT(std::filesystem::file_size(qtc), 8000u);
  const std::string env = "QTUNE_CACHE_DIR=" + dir.Join("cache");
  const std::string model = testing::kFmnistModel;
  for (const std::string& args :
       {"inspect " + qtc, "report " + qtc + " -o " + dir.Join("r.html"),
        "run " + model + " --checkpoint " + qtc + " --input input=" + testing::kFmnistCalib,
        "bench " + model + " --checkpoint " + qtc + " --iters 1 --warmup 0"}) {
    auto r = RunQtuneCli(args, /*with_stderr=*/true, env);
    EXPECT_EQ(r.exit_code, 3) << args << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr("deep.qtc' manifest.json: JSON nested deeper than 64")) << args;
    EXPECT_TRUE(testing::ListDir(dir.Join("cache/checkpoints")).empty())
        << args << ": left " << testing::ListDir(dir.Join("cache/checkpoints")).front();
  }
}

TEST(HostileJsonCliTest, DeeplyNestedJsonGivenToReportIsBadData) {
  ScratchDir dir;
  const std::string json = dir.Join("deep.json");
  std::ofstream(json) << DeepArrays(100000);
  auto r = RunQtuneCli("report " + json + " -o " + dir.Join("r.html"));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_THAT(r.out, HasSubstr("deep.json: JSON nested deeper than 64"));
  EXPECT_FALSE(std::filesystem::exists(dir.Join("r.html")));
}

}  // namespace
}  // namespace qtune::tune
