// A tuner and a worker reach a redis-server bound to the IPv6 loopback through
// redis://[::1]:PORT (issue 24 item 9: the port used to be appended twice).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "util/missing_dependency.h"
#include "workers/worker_pool_fixture.h"

namespace qtune::measure {
namespace {
using ::testing::HasSubstr;

class WorkersIpv6Test : public qtune::testing::WorkerPoolTest {
 protected:
  WorkersIpv6Test() : WorkerPoolTest("qtune_workers_ipv6_") {}
};

TEST_F(WorkersIpv6Test, TunerAndWorkerMeetOnTheIpv6Loopback) {
  if (!qtune::testing::HasIpv6Loopback()) {
    QTUNE_SKIP_OR_FAIL_IN_CI() << "this machine has no IPv6 loopback ([::1])";
  }
  StartRedis("::1");
  const std::string url = "redis://[::1]:" + std::to_string(redis_->port()) + "/0";
  ASSERT_EQ(redis_->Url(), url);
  qtune::testing::WorkerProcess& worker = StartWorker("v6");
  auto bench = Bench();
  ASSERT_NE(bench, nullptr);
  Measurement m = bench->Measure({ModelVariant("m.onnx", 'v'), "", 1, 10});
  EXPECT_TRUE(m.ok()) << FailureKindName(m.failure) << ": " << m.detail;
  EXPECT_THAT(bench->Describe(), HasSubstr(url));
  EXPECT_THAT(worker.Log(), HasSubstr("serving queue 'default' on " + url));
}

}  // namespace
}  // namespace qtune::measure
