// Jobs nobody can take (issue 24 item 6): a job for a machine no live worker serves used
// to circle on the stream forever, costing every worker a second per bounce. Now it goes
// to the dead-letter stream and its tuner gets a failure naming the machine.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/sha256.h"
#include "measure/redis_client.h"
#include "measure/redis_protocol.h"
#include "workers/worker_pool_fixture.h"

namespace qtune::measure {
namespace {
using ::testing::HasSubstr;

const char kNobodysMachine[] = "Nobody's CPU | avx9 | threads 99 | qtune 0.1.0";

class WorkersRequeueTest : public qtune::testing::WorkerPoolTest {
 protected:
  WorkersRequeueTest() : WorkerPoolTest("qtune_workers_requeue_") {}

  int64_t StreamLength(RedisClient& admin, const std::string& key) {
    auto length = admin.Command({"XLEN", key});
    EXPECT_TRUE(length.ok()) << length.status().ToString();
    return length.ok() ? length->integer : -1;
  }
};

TEST_F(WorkersRequeueTest, JobsForAMachineNobodyServesGoToTheDeadLetterStream) {
  StartRedis();
  StartWorker("w", "--dead-letter-after 1");
  auto bench = Bench();
  ASSERT_NE(bench, nullptr);
  const auto keys = *RedisKeys::ForQueue("default");
  RedisClient admin(*ParseRedisUrl(redis_->Url()));
  // Three jobs of another tuner, for a machine no worker has.
  auto bytes = ReadFile(Model());
  ASSERT_TRUE(bytes.ok());
  const std::string sha = Sha256Hex(*bytes);
  ASSERT_TRUE(admin.Command({"SET", keys.model(sha), *bytes}).ok());
  for (int i = 0; i < 3; ++i) {
    Job job;
    job.id = "foreign-" + std::to_string(i);
    job.reply = keys.results("other-tuner");
    job.candidate_sha256 = sha;
    job.timeout_s = 10;
    job.machine = kNobodysMachine;
    std::vector<std::string> argv = {"XADD", keys.jobs(), "*"};
    for (const auto& [f, v] : EncodeJob(job)) {
      argv.push_back(f);
      argv.push_back(v);
    }
    ASSERT_TRUE(admin.Command(argv).ok());
  }
  // This tuner's own measurements go on while they circle (a second per bounce before).
  const auto start = Clock::now();
  for (char c : std::string("xyz")) {
    Measurement m = bench->Measure({ModelVariant(std::string(1, c) + ".onnx", c), "", 1, 10});
    EXPECT_TRUE(m.ok()) << m.detail;
  }
  EXPECT_LT(Seconds(start), 6) << workers_[0]->Log();
  // All three end in the dead-letter stream, with the reason, and their tuner is answered.
  EXPECT_TRUE(WaitFor(10, [&] { return StreamLength(admin, keys.dead()) == 3; }))
      << workers_[0]->Log();
  auto dead = admin.Command({"XRANGE", keys.dead(), "-", "+"});
  ASSERT_TRUE(dead.ok());
  auto entries = ParseStreamEntries(*dead);
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 3u);
  const std::string* reason = FindField((*entries)[0].fields, "dead_reason");
  ASSERT_NE(reason, nullptr);
  EXPECT_THAT(*reason, HasSubstr(kNobodysMachine));
  EXPECT_THAT(*reason, HasSubstr("no live worker announced that machine"));
  auto answers = admin.Command({"XRANGE", keys.results("other-tuner"), "-", "+"});
  ASSERT_TRUE(answers.ok());
  auto results = ParseStreamEntries(*answers);
  ASSERT_TRUE(results.ok());
  ASSERT_EQ(results->size(), 3u);
  for (const StreamEntry& e : *results) {
    auto r = ParseResult(e.fields);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_THAT(r->job_id, HasSubstr("foreign-"));
    EXPECT_EQ(r->measurement.failure, FailureKind::kConnection);
    EXPECT_THAT(r->measurement.detail, HasSubstr(kNobodysMachine));
  }
  EXPECT_TRUE(WaitFor(5, [&] { return StreamLength(admin, keys.jobs()) == 0; }))
      << "nothing circles any more";
  EXPECT_THAT(workers_[0]->Log(), HasSubstr("moving job foreign-0 to qtune:default:dead"));
}

TEST_F(WorkersRequeueTest, ATunerWhoseMachineNobodyServesAnyMoreGetsAFailureNamingIt) {
  StartRedis();
  // Another --threads is another machine. The tuner takes the first worker's ("a").
  qtune::testing::WorkerProcess& a = StartWorker("a", "--threads 1");
  StartWorker("b", "--threads 2 --dead-letter-after 1");
  RedisClient admin(*ParseRedisUrl(redis_->Url()));
  ASSERT_TRUE(WaitFor(10, [&] {
    auto keys = admin.Command({"KEYS", "qtune:default:worker:*"});
    return keys.ok() && keys->elements.size() == 2;
  }));
  RedisBenchmarkOptions o;
  o.queue_wait_s = 30;
  auto bench = Bench(o);
  ASSERT_NE(bench, nullptr);
  const std::string machine = bench->required_machine();
  ASSERT_THAT(machine, HasSubstr("threads 1"));
  a.Kill();  // its heartbeat expires within 5 s; b cannot take the tuner's jobs
  const auto start = Clock::now();
  ::testing::internal::CaptureStderr();
  Measurement m = bench->Measure({ModelVariant("m.onnx", 'q'), "", 1, 5});
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(m.failure, FailureKind::kConnection) << FailureKindName(m.failure) << ": " << m.detail;
  EXPECT_THAT(m.detail, HasSubstr("'" + machine + "'"));
  EXPECT_THAT(m.detail, HasSubstr("start a worker on such a machine"));
  EXPECT_LT(Seconds(start), 15) << "not the tuner's timeout of 35 s";
  EXPECT_THAT(log, HasSubstr("redis: worker 'b' gave up on job"));
  EXPECT_EQ(StreamLength(admin, "qtune:default:dead"), 1);
}

}  // namespace
}  // namespace qtune::measure
