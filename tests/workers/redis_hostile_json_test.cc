// Hostile JSON in Redis jobs, results and heartbeats (issue 24 item 1): a field nested
// 100 000 levels deep is rejected before it is parsed (it crashed the worker or the tuner
// with a stack overflow), naming the field; text that is not UTF-8 passes through a job's
// result unchanged and is replaced only when written as JSON.
#include <gtest/gtest.h>

#include <string>

#include "core/json_limits.h"
#include "core/sha256.h"
#include "measure/redis_protocol.h"

namespace qtune::measure {
namespace {

std::string DeepArrays(int depth) {
  return std::string(static_cast<size_t>(depth), '[') +
         std::string(static_cast<size_t>(depth), ']');
}

void Set(StreamFields& fields, const std::string& name, const std::string& value) {
  for (auto& [f, v] : fields) {
    if (f == name) v = value;
  }
}

TEST(RedisHostileJsonTest, DeeplyNestedShapesOfAJobAreRejectedNamingTheField) {
  auto keys = RedisKeys::ForQueue("q");
  ASSERT_TRUE(keys.ok());
  Job job;
  job.id = "t-1";
  job.reply = keys->results("t");
  job.candidate_sha256 = Sha256Hex("candidate");
  job.reference_sha256 = Sha256Hex("reference");
  job.rounds = 1;
  job.iters = 1;
  job.timeout_s = 1;
  job.shapes = {{"input", {1, 4}}};
  job.machine = "m";
  StreamFields fields = EncodeJob(job);
  ASSERT_TRUE(ParseJob(fields, *keys).ok());
  Set(fields, "shapes", "{\"input\": " + DeepArrays(100000) + "}");
  auto parsed = ParseJob(fields, *keys);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("field 'shapes': JSON nested deeper than 64"),
            std::string::npos)
      << parsed.status().ToString();
}

TEST(RedisHostileJsonTest, DeeplyNestedLatenciesOfAResultAreRejectedNamingTheField) {
  JobResult r{"t-1", "w1", "m", {}};
  r.measurement.candidate_ms = {1.5};
  r.measurement.reference_ms = {2.5};
  for (const char* field : {"candidate_ms", "reference_ms"}) {
    StreamFields fields = EncodeResult(r);
    Set(fields, field, DeepArrays(100000));
    auto parsed = ParseResult(fields);
    ASSERT_FALSE(parsed.ok()) << field;
    EXPECT_NE(
        parsed.status().message().find(std::string("field '") + field + "': JSON nested deeper"),
        std::string::npos)
        << parsed.status().ToString();
  }
}

TEST(RedisHostileJsonTest, DeeplyNestedHeartbeatIsRejected) {
  EXPECT_FALSE(ParseHeartbeat(DeepArrays(100000)).ok());
  EXPECT_FALSE(ParseHeartbeat("{\"name\": " + DeepArrays(100000) + "}").ok());
}

TEST(RedisHostileJsonTest, FailureDetailThatIsNotUtf8SurvivesTheResultAndDumpsAsJson) {
  JobResult failed{"t-2", "w1", "m", {}};
  failed.measurement.failure = FailureKind::kExit;
  failed.measurement.exit_code = 1;
  failed.measurement.detail = "caf\xe9 exploded";
  auto parsed = ParseResult(EncodeResult(failed));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->measurement.detail, "caf\xe9 exploded");
  EXPECT_EQ(DumpJson(nlohmann::json(parsed->measurement.detail)), "\"caf\xef\xbf\xbd exploded\"");
}

}  // namespace
}  // namespace qtune::measure
