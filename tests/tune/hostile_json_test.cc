// Hostile JSON in a checkpoint (issue 24 item 1): a manifest.json, plan.json or cache marker
// nested 100 000 levels deep crashed qtune with a stack overflow (nlohmann::json recurses
// per level) and left the unpacking folder behind. Now it is refused as bad data, before
// it is parsed, and the cache is left as it was.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/sha256.h"
#include "quant/plan_json.h"
#include "tune/checkpoint.h"
#include "tune/checkpoint_test_util.h"

namespace qtune::tune {
namespace {

using ::testing::HasSubstr;
using testing::ScratchDir;

std::string DeepArrays(int depth) {
  return std::string(static_cast<size_t>(depth), '[') +
         std::string(static_cast<size_t>(depth), ']');
}

// A valid manifest whose "tuning" value (kept as JSON and printed by inspect) nests deeply.
std::string ManifestWithDeepTuning(int depth) {
  std::string text = ManifestToJson(testing::SampleContents().manifest).dump();
  const std::string key = "\"tuning\":";
  size_t at = text.find(key);
  EXPECT_NE(at, std::string::npos) << text;
  size_t end = text.find('}', at);  // SampleContents' tuning is a flat object
  return text.substr(0, at + key.size()) + DeepArrays(depth) + text.substr(end + 1);
}

class CheckpointHostileJsonTest : public ::testing::Test {
 protected:
  void ExpectRefusedLeavingNoFolder(const std::string& manifest) {
    const std::string path = dir_.Join("deep.qtc"), cache = dir_.Join("cache");
    testing::WriteCraftedCheckpoint(path, {{kManifestEntryName, manifest}});
    auto loaded = LoadCheckpoint(path, testing::OptionsWithCache(cache));
    ASSERT_EQ(loaded.status().code(), StatusCode::kDataLoss) << loaded.status().ToString();
    EXPECT_THAT(loaded.status().message(), HasSubstr("manifest.json"));
    EXPECT_THAT(loaded.status().message(), HasSubstr("nested deeper than 64 levels"));
    EXPECT_TRUE(testing::ListDir(cache).empty())
        << "left in the cache: " << testing::ListDir(cache).front();
    auto manifest_only = ReadManifestOnly(path, testing::OptionsWithCache(cache));
    EXPECT_EQ(manifest_only.status().code(), StatusCode::kDataLoss);
  }
  ScratchDir dir_;
};

TEST_F(CheckpointHostileJsonTest, DeeplyNestedManifestIsRefusedAndLeavesNoUnpackingFolder) {
  ExpectRefusedLeavingNoFolder(DeepArrays(100000));
}

TEST_F(CheckpointHostileJsonTest, DeeplyNestedValueInsideAValidManifestIsRefused) {
  ExpectRefusedLeavingNoFolder(ManifestWithDeepTuning(100000));
}

TEST_F(CheckpointHostileJsonTest, ManifestNestedWithinTheLimitStillLoads) {
  const std::string path = dir_.Join("ok.qtc");
  testing::WriteCraftedCheckpoint(path, {{kManifestEntryName, ManifestWithDeepTuning(40)}});
  auto loaded = LoadCheckpoint(path, testing::OptionsWithCache(dir_.Join("cache")));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_TRUE(loaded->manifest.tuning.is_array());
}

TEST_F(CheckpointHostileJsonTest, DeeplyNestedCacheMarkerIsUnpackedAgain) {
  const std::string path = dir_.Join("m.qtc"), cache = dir_.Join("cache");
  ASSERT_TRUE(SaveCheckpoint(path, testing::SampleContents()).ok());
  auto first = LoadCheckpoint(path, testing::OptionsWithCache(cache));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  testing::WriteAll(first->unpacked_dir + "/.qtune-unpacked.json", DeepArrays(100000));
  auto second = LoadCheckpoint(path, testing::OptionsWithCache(cache));
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_FALSE(second->reused_cache);
}

TEST(PlanJsonHostileTest, DeeplyNestedPlanIsDataLoss) {
  auto plan = quant::ParsePlanJson(DeepArrays(100000), "'m.qtc' plan.json");
  ASSERT_EQ(plan.status().code(), StatusCode::kDataLoss) << plan.status().ToString();
  EXPECT_THAT(plan.status().message(), HasSubstr("'m.qtc' plan.json: JSON nested deeper"));
  std::string nested_field = "{\"quantized_nodes\": " + DeepArrays(100000) + "}";
  EXPECT_EQ(quant::ParsePlanJson(nested_field, "p").status().code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace qtune::tune
