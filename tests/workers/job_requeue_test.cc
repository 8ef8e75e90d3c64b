// DecideRequeue (measure/job_requeue.h): how long a job for another machine circles on
// the jobs stream before it goes to the dead-letter stream (issue 24 item 6).
#include "measure/job_requeue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace qtune::measure {
namespace {
using ::testing::HasSubstr;

const RequeuePolicy kPolicy{/*unserved_grace_s=*/10, /*max_requeues=*/100};
const std::string kMachine = "Some CPU | avx2 | threads 8 | qtune 0.1.0";

TEST(JobRequeueTest, AServedJobIsPutBackAndCounted) {
  RequeueDecision d = DecideRequeue({}, 5000, /*served=*/true, "j-1", kMachine, kPolicy);
  EXPECT_FALSE(d.dead_letter);
  EXPECT_EQ(d.next.requeues, 1);
  EXPECT_EQ(d.next.unserved_since_ms, -1);
  // A machine served again clears the clock.
  d = DecideRequeue({3, 1000}, 5000, /*served=*/true, "j-1", kMachine, kPolicy);
  EXPECT_FALSE(d.dead_letter);
  EXPECT_EQ(d.next.requeues, 4);
  EXPECT_EQ(d.next.unserved_since_ms, -1);
}

TEST(JobRequeueTest, AnUnservedJobDiesAfterTheGrace) {
  RequeueDecision first = DecideRequeue({}, 5000, /*served=*/false, "j-2", kMachine, kPolicy);
  EXPECT_FALSE(first.dead_letter) << "the first look starts the clock";
  EXPECT_EQ(first.next.unserved_since_ms, 5000);
  RequeueDecision before = DecideRequeue(first.next, 14999, false, "j-2", kMachine, kPolicy);
  EXPECT_FALSE(before.dead_letter);
  EXPECT_EQ(before.next.unserved_since_ms, 5000) << "the clock is kept, not restarted";
  RequeueDecision after = DecideRequeue(before.next, 15000, false, "j-2", kMachine, kPolicy);
  ASSERT_TRUE(after.dead_letter);
  EXPECT_THAT(after.reason, HasSubstr("job j-2"));
  EXPECT_THAT(after.reason, HasSubstr("'" + kMachine + "'"));
  EXPECT_THAT(after.reason, HasSubstr("no live worker announced that machine for 10.0 s"));
  EXPECT_THAT(after.reason, HasSubstr("put back 2 times"));
}

TEST(JobRequeueTest, ZeroGraceDeadLettersAnUnservedJobAtOnce) {
  RequeueDecision d = DecideRequeue({}, 5000, false, "j-3", kMachine, {0, 100});
  EXPECT_TRUE(d.dead_letter);
}

TEST(JobRequeueTest, TooManyRequeuesDieEvenWhenServed) {
  EXPECT_FALSE(DecideRequeue({99, -1}, 0, true, "j-4", kMachine, kPolicy).dead_letter);
  RequeueDecision d = DecideRequeue({100, -1}, 0, true, "j-4", kMachine, kPolicy);
  ASSERT_TRUE(d.dead_letter);
  EXPECT_THAT(d.reason, HasSubstr("put back 100 times"));
  EXPECT_THAT(d.reason, HasSubstr("--max-requeues"));
}

TEST(JobRequeueTest, FieldsRoundTripAndGarbageReadsAsAFirstPutBack) {
  StreamFields fields = {{"v", "1"}, {"job", "j"}, {kRequeuesField, "7"}};
  StreamFields next = RequeuedFields(fields, {8, 1234});
  EXPECT_EQ(next.size(), 4u) << "the old count is replaced, not repeated";
  RequeueState state = ReadRequeueState(next);
  EXPECT_EQ(state.requeues, 8);
  EXPECT_EQ(state.unserved_since_ms, 1234);
  EXPECT_EQ(ReadRequeueState(RequeuedFields(next, {9, -1})).unserved_since_ms, -1);
  state = ReadRequeueState({{kRequeuesField, "-3"}, {kUnservedSinceField, "soon"}});
  EXPECT_EQ(state.requeues, 0);
  EXPECT_EQ(state.unserved_since_ms, -1);
}

}  // namespace
}  // namespace qtune::measure
