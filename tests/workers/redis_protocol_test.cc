// The Redis URL parser and the job/result/heartbeat encodings (measure/redis_protocol.h):
// round trips, and garbage rejected with a reason that names the field.
#include "measure/redis_protocol.h"

#include <gtest/gtest.h>

#include "core/sha256.h"

namespace qtune::measure {
namespace {

TEST(RedisUrlTest, ParsesHostPortDbAndPassword) {
  auto url = ParseRedisUrl("redis://:pa55@example.org:6390/3");
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  EXPECT_EQ(url->host, "example.org");
  EXPECT_EQ(url->port, 6390);
  EXPECT_EQ(url->db, 3);
  EXPECT_EQ(url->password, "pa55");
  EXPECT_EQ(url->Redacted(), "redis://:***@example.org:6390/3");
  auto plain = ParseRedisUrl("redis://10.0.0.2");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->port, 6379);
  EXPECT_EQ(plain->db, 0);
  EXPECT_EQ(plain->Redacted(), "redis://10.0.0.2:6379/0");
}

TEST(RedisUrlTest, BadUrlsAreRejectedWithoutRepeatingThePassword) {
  for (const char* bad :
       {"http://host", "redis://:pw@host:99999", "redis://:pw@host/x", "redis://pw@host"}) {
    auto url = ParseRedisUrl(bad);
    ASSERT_FALSE(url.ok()) << bad;
    EXPECT_EQ(url.status().message().find("pw"), std::string::npos) << url.status().message();
  }
}

TEST(RedisKeysTest, QueueNamesAndResultKeysAreChecked) {
  EXPECT_FALSE(RedisKeys::ForQueue("").ok());
  EXPECT_FALSE(RedisKeys::ForQueue("a b").ok());
  EXPECT_FALSE(RedisKeys::ForQueue("a:b").ok());
  auto keys = RedisKeys::ForQueue("lab-1");
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(keys->jobs(), "qtune:lab-1:jobs");
  EXPECT_TRUE(keys->IsResultsKey("qtune:lab-1:results:host-12-abc"));
  EXPECT_FALSE(keys->IsResultsKey("qtune:lab-1:results:"));
  EXPECT_FALSE(keys->IsResultsKey("qtune:other:results:x"));
  EXPECT_FALSE(keys->IsResultsKey("qtune:lab-1:results:x:y"));
  EXPECT_FALSE(keys->IsResultsKey("qtune:lab-1:jobs"));
}

Job SampleJob(const RedisKeys& keys) {
  Job job;
  job.id = "t-1";
  job.reply = keys.results("t");
  job.candidate_sha256 = Sha256Hex("candidate");
  job.reference_sha256 = Sha256Hex("reference");
  job.rounds = 4;
  job.iters = 7;
  job.warmup = 2;
  job.timeout_s = 12.5;
  job.seed = 99;
  job.shapes = {{"input", {1, 3, 224, 224}}};
  job.machine = "cpu | avx2 | threads 1 | qtune 0.1.0";
  return job;
}

TEST(RedisJobTest, RoundTrips) {
  auto keys = *RedisKeys::ForQueue("q");
  const Job job = SampleJob(keys);
  auto parsed = ParseJob(EncodeJob(job), keys);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->id, job.id);
  EXPECT_EQ(parsed->reply, job.reply);
  EXPECT_EQ(parsed->candidate_sha256, job.candidate_sha256);
  EXPECT_EQ(parsed->reference_sha256, job.reference_sha256);
  EXPECT_EQ(parsed->rounds, 4);
  EXPECT_EQ(parsed->iters, 7);
  EXPECT_EQ(parsed->warmup, 2);
  EXPECT_DOUBLE_EQ(parsed->timeout_s, 12.5);
  EXPECT_EQ(parsed->seed, 99u);
  EXPECT_EQ(parsed->shapes, job.shapes);
  EXPECT_EQ(parsed->machine, job.machine);
  EXPECT_FALSE(parsed->candidate_bf16);
}

TEST(RedisJobTest, Bf16FlagRoundTripsAndIsOptional) {
  auto keys = *RedisKeys::ForQueue("q");
  Job job = SampleJob(keys);
  job.candidate_bf16 = true;
  auto parsed = ParseJob(EncodeJob(job), keys);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_TRUE(parsed->candidate_bf16);
  // A job without the field (a tuner that never asks for bf16) measures in fp32.
  StreamFields without = EncodeJob(job);
  std::erase_if(without, [](const auto& f) { return f.first == "candidate_bf16"; });
  parsed = ParseJob(without, keys);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_FALSE(parsed->candidate_bf16);
}

// Each case replaces one field of a good job with garbage.
TEST(RedisJobTest, GarbageFieldsAreRejectedNamingTheField) {
  auto keys = *RedisKeys::ForQueue("q");
  const std::vector<std::pair<std::string, std::string>> cases = {{"v", "2"},
                                                                  {"rounds", "0"},
                                                                  {"rounds", "3x"},
                                                                  {"iters", ""},
                                                                  {"candidate", "abc"},
                                                                  {"reference", "ZZ"},
                                                                  {"reply", "qtune:q:jobs"},
                                                                  {"timeout_s", "-1"},
                                                                  {"shapes", "[1,2]"},
                                                                  {"shapes", "{\"x\": [-1]}"},
                                                                  {"seed", "-5"},
                                                                  {"candidate_bf16", "yes"}};
  for (const auto& [field, value] : cases) {
    StreamFields fields = EncodeJob(SampleJob(keys));
    for (auto& [f, v] : fields) {
      if (f == field) v = value;
    }
    auto parsed = ParseJob(fields, keys);
    ASSERT_FALSE(parsed.ok()) << field << "=" << value;
    EXPECT_NE(parsed.status().message().find(field == "v" ? "version" : field), std::string::npos)
        << parsed.status().message();
  }
  StreamFields missing = EncodeJob(SampleJob(keys));
  missing.erase(missing.begin() + 3);  // candidate
  auto parsed = ParseJob(missing, keys);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("'candidate' is missing"), std::string::npos);
}

TEST(RedisResultTest, RoundTripsSuccessAndFailure) {
  JobResult r{"t-1", "w1", "m", {}};
  r.measurement.candidate_ms = {1.5, 1.25};
  r.measurement.reference_ms = {2.0, 2.5};
  auto parsed = ParseResult(EncodeResult(r));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_TRUE(parsed->measurement.ok());
  EXPECT_EQ(parsed->measurement.candidate_ms, r.measurement.candidate_ms);
  EXPECT_EQ(parsed->measurement.reference_ms, r.measurement.reference_ms);
  JobResult failed{"t-2", "w1", "m", {}};
  failed.measurement.failure = FailureKind::kExit;
  failed.measurement.exit_code = 7;
  failed.measurement.detail = "boom";
  auto f = ParseResult(EncodeResult(failed));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->measurement.failure, FailureKind::kExit);
  EXPECT_EQ(f->measurement.exit_code, 7);
  EXPECT_EQ(f->measurement.detail, "boom");
}

TEST(RedisResultTest, GarbageResultsAreRejected) {
  JobResult r{"t-1", "w1", "m", {}};
  r.measurement.candidate_ms = {1.5};
  for (const auto& [field, value] :
       std::vector<std::pair<std::string, std::string>>{{"kind", "exploded"},
                                                        {"candidate_ms", "[1, \"x\"]"},
                                                        {"candidate_ms", "{"},
                                                        {"reference_ms", "[-1]"},
                                                        {"exit_code", "nine"}}) {
    StreamFields fields = EncodeResult(r);
    for (auto& [f, v] : fields) {
      if (f == field) v = value;
    }
    auto parsed = ParseResult(fields);
    ASSERT_FALSE(parsed.ok()) << field;
    EXPECT_NE(parsed.status().message().find(field), std::string::npos);
  }
  EXPECT_FALSE(ParseResult({{"hello", "world"}}).ok());
}

TEST(RedisHeartbeatTest, RoundTripsAndTheFingerprintHoldsTheMachine) {
  WorkerHeartbeat h{"w1", "host", 42, ThisMachine(2), 5, 1.5};
  auto parsed = ParseHeartbeat(EncodeHeartbeat(h));
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->name, "w1");
  EXPECT_EQ(parsed->machine.Fingerprint(), h.machine.Fingerprint());
  EXPECT_NE(h.machine.Fingerprint().find("threads 2"), std::string::npos);
  EXPECT_NE(ThisMachine(1).Fingerprint(), ThisMachine(2).Fingerprint());
  EXPECT_FALSE(ParseHeartbeat("{\"name\": 3}").ok());
  EXPECT_FALSE(ParseHeartbeat("not json").ok());
}

}  // namespace
}  // namespace qtune::measure
