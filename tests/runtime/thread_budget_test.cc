// The adaptive thread policy (runtime/thread_budget.h): the decision for a given load, and
// a session on ResNet-18 that drops to the free cores while real busy processes hold the
// others, with outputs equal to a fixed session's.
#include "runtime/thread_budget.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "runtime/session.h"
#include "util/random_tensor.h"
#include "util/test_models.h"

namespace qtune::runtime {
namespace {

TEST(ThreadsForLoad, TakesAwayOnlyCoresOthersKeepBusy) {
  EXPECT_EQ(ThreadsForLoad(2, {.other_busy_cores = 0.0, .allowed_cpus = 2}), 2);
  EXPECT_EQ(ThreadsForLoad(2, {.other_busy_cores = 0.55, .allowed_cpus = 2}), 2);
  EXPECT_EQ(ThreadsForLoad(2, {.other_busy_cores = 0.6, .allowed_cpus = 2}), 1);
  EXPECT_EQ(ThreadsForLoad(2, {.other_busy_cores = 1.0, .allowed_cpus = 2}), 1);
  EXPECT_EQ(ThreadsForLoad(2, {.other_busy_cores = 2.0, .allowed_cpus = 2}), 1);  // never 0
  EXPECT_EQ(ThreadsForLoad(4, {.other_busy_cores = 0.0, .allowed_cpus = 2}), 2);  // <= CPUs
  EXPECT_EQ(ThreadsForLoad(8, {.other_busy_cores = 9.7, .allowed_cpus = 16}), 6);
  EXPECT_EQ(ThreadsForLoad(8, {.other_busy_cores = 1.2, .allowed_cpus = 16}), 8);
  EXPECT_EQ(ThreadsForLoad(1, {.other_busy_cores = 0.0, .allowed_cpus = 16}), 1);
}

TEST(ThreadPolicy, ParsesNamesAndTheEnvironment) {
  EXPECT_EQ(ParseThreadPolicy("fixed").value(), ThreadPolicy::kFixed);
  EXPECT_EQ(ParseThreadPolicy("adaptive").value(), ThreadPolicy::kAdaptive);
  StatusOr<ThreadPolicy> bad = ParseThreadPolicy("greedy");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'greedy'"), std::string::npos);
  EXPECT_NE(bad.status().message().find("adaptive"), std::string::npos);

  ::setenv("QTUNE_THREAD_POLICY", "fixed", 1);
  EXPECT_EQ(ThreadPolicyFromEnvironment().value(), ThreadPolicy::kFixed);
  ::setenv("QTUNE_THREAD_POLICY", "sometimes", 1);
  StatusOr<ThreadPolicy> env = ThreadPolicyFromEnvironment();
  ASSERT_FALSE(env.ok());
  EXPECT_NE(env.status().message().find("QTUNE_THREAD_POLICY"), std::string::npos);
  ::unsetenv("QTUNE_THREAD_POLICY");
  EXPECT_EQ(ThreadPolicyFromEnvironment().value(), ThreadPolicy::kAdaptive);
}

TEST(CpuLoad, SeesTheCpusThisProcessMayUse) {
  CpuLoad load = CurrentCpuLoad();
  EXPECT_GE(load.allowed_cpus, 1);
  EXPECT_GE(load.other_busy_cores, 0.0);
  EXPECT_LE(load.other_busy_cores, load.allowed_cpus);
}

// Child processes that spin until killed: "another process holds a core".
class BusyProcesses {
 public:
  explicit BusyProcesses(int count) {
    for (int i = 0; i < count; ++i) {
      pid_t pid = fork();
      if (pid == 0) {
        volatile uint64_t spin = 0;
        for (;;) spin = spin + 1;
      }
      if (pid > 0) pids_.push_back(pid);
    }
  }
  ~BusyProcesses() {
    for (pid_t pid : pids_) kill(pid, SIGKILL);
    for (pid_t pid : pids_) waitpid(pid, nullptr, 0);
  }
  size_t size() const { return pids_.size(); }

 private:
  std::vector<pid_t> pids_;
};

// Runs `session` for at least `duration` (and at least 3 times).
void RunFor(Session& session, const NamedTensors& inputs, std::chrono::milliseconds duration,
            NamedTensors* last) {
  const auto end = std::chrono::steady_clock::now() + duration;
  for (int i = 0; i < 3 || std::chrono::steady_clock::now() < end; ++i) {
    auto out = session.Run(inputs);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    *last = std::move(out).value();
  }
}

TEST(AdaptiveSession, RunsOnTheCoresOtherProcessesLeaveFree) {
  const int cpus = CurrentCpuLoad().allowed_cpus;
  if (cpus < 2) GTEST_SKIP() << "one CPU: there is no second thread to give up";
  auto graph = testing::BuildTestResNet18();
  const NamedTensors inputs = {
      {graph->inputs()[0]->name(), testing::RandomUniformTensor({1, 3, 224, 224}, 7)}};

  SessionOptions adaptive_options;
  adaptive_options.threads = cpus;
  adaptive_options.thread_policy = ThreadPolicy::kAdaptive;
  auto adaptive = Session::Create(*graph, adaptive_options);
  ASSERT_TRUE(adaptive.ok()) << adaptive.status().ToString();
  SessionOptions fixed_options = adaptive_options;
  fixed_options.thread_policy = ThreadPolicy::kFixed;
  auto fixed = Session::Create(*graph, fixed_options);
  ASSERT_TRUE(fixed.ok()) << fixed.status().ToString();

  NamedTensors adaptive_out, fixed_out;
  {
    // Every CPU but one is held: the adaptive session must end up on one thread (more
    // load from other tests can only take more cores away).
    BusyProcesses busy(cpus - 1);
    ASSERT_EQ(busy.size(), size_t(cpus - 1));
    std::this_thread::sleep_for(std::chrono::milliseconds(3 * kLoadWindowMs));
    RunFor(**adaptive, inputs, std::chrono::milliseconds(6 * kLoadWindowMs), &adaptive_out);
    RunFor(**fixed, inputs, std::chrono::milliseconds(2 * kLoadWindowMs), &fixed_out);
  }
  const std::map<int, int64_t> adaptive_runs = (*adaptive)->RunsByThreads();
  EXPECT_GT(adaptive_runs.count(1) ? adaptive_runs.at(1) : 0, 0)
      << "no run on one thread while " << cpus - 1 << " of " << cpus << " CPUs were busy";
  const std::map<int, int64_t> fixed_runs = (*fixed)->RunsByThreads();
  ASSERT_EQ(fixed_runs.size(), 1u);
  EXPECT_EQ(fixed_runs.begin()->first, cpus);

  // The one-thread plan computes what the full one does.
  ASSERT_EQ(adaptive_out.size(), fixed_out.size());
  const auto a = adaptive_out[0].second.span<float>();
  const auto f = fixed_out[0].second.span<float>();
  ASSERT_EQ(a.size(), f.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], f[i], 1e-4f * (1 + std::abs(f[i])));
}

}  // namespace
}  // namespace qtune::runtime
