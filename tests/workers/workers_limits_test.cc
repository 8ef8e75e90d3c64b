// A job with absurd input sizes (issue 24 item 7): a dimension of 2^32 crashed the
// measuring child with SIGFPE, where the CLI refuses the same sizes ("16 GiB limit"). Such
// jobs are refused with a clear failure, and the worker goes on serving.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include "workers/worker_pool_fixture.h"

namespace qtune::measure {
namespace {
using ::testing::HasSubstr;

class WorkersLimitsTest : public qtune::testing::WorkerPoolTest {
 protected:
  WorkersLimitsTest() : WorkerPoolTest("qtune_workers_limits_") {}

  // Measures the test model on the engine (a measuring child) with input sizes `sizes`.
  Measurement MeasureWithSizes(std::vector<int64_t> sizes) {
    RedisBenchmarkOptions o;
    o.input_sizes = {{"input", std::move(sizes)}};
    auto bench = Bench(o);
    if (bench == nullptr) return {};
    return bench->Measure({Model(), "", 1, 60});
  }
};

TEST_F(WorkersLimitsTest, AbsurdSizesAreRefusedAndTheWorkerSurvives) {
  StartRedis();
  // The engine measures (no --benchmark-command): StartWorker's command is overridden by
  // starting the worker directly.
  auto w = qtune::testing::WorkerProcess::Start("--redis '" + redis_->Url() +
                                                    "' --name engine --heartbeat 0.2 --cache-dir " +
                                                    CacheOf("engine"),
                                                (dir_ / "engine.log").string());
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  qtune::testing::WorkerProcess& worker = **w;
  // More elements than any tensor may hold: refused with the job, before a child sees it.
  Measurement huge = MeasureWithSizes({int64_t{1} << 32, 1, 28, 28});
  EXPECT_EQ(huge.failure, FailureKind::kUnparsable)
      << FailureKindName(huge.failure) << ": " << huge.detail;
  EXPECT_THAT(huge.detail, HasSubstr("4294967296x1x28x28"));
  EXPECT_THAT(huge.detail, HasSubstr("16 GiB limit"));
  // Few enough elements for a byte each, too many bytes as float32: the child refuses
  // them against the model's input type before compiling anything.
  Measurement big = MeasureWithSizes({int64_t{6} << 20, 1, 28, 28});
  EXPECT_EQ(big.failure, FailureKind::kBuild) << FailureKindName(big.failure) << ": " << big.detail;
  EXPECT_THAT(big.detail, HasSubstr("input 'input'"));
  EXPECT_THAT(big.detail, HasSubstr("float32 exceeds the 16 GiB limit"));
  // The worker serves on.
  Measurement ok = MeasureWithSizes({1, 1, 28, 28});
  EXPECT_TRUE(ok.ok()) << FailureKindName(ok.failure) << ": " << ok.detail;
  EXPECT_EQ(::kill(worker.pid(), 0), 0) << worker.Log();
  EXPECT_EQ(worker.Log().find("crash"), std::string::npos) << worker.Log();
}

}  // namespace
}  // namespace qtune::measure
