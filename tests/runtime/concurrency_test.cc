// Several sessions at once (the autotuner, Python bindings and servers do this): two
// sessions with different thread counts, run concurrently from two threads many times,
// give bit for bit the outputs each gives alone. oneDNN's engine is shared; streams and
// OpenMP thread counts are per thread (onednn_context.h).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <thread>

#include "ir/onnx_io.h"
#include "runtime/session.h"
#include "util/random_tensor.h"
#include "util/test_models.h"

namespace qtune::runtime {
namespace {

bool SameBytes(const NamedTensors& a, const NamedTensors& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const Tensor& x = a[i].second;
    const Tensor& y = b[i].second;
    if (x.byte_size() != y.byte_size() ||
        std::memcmp(x.raw_data(), y.raw_data(), x.byte_size()) != 0) {
      return false;
    }
  }
  return true;
}

struct Runner {
  std::unique_ptr<Session> session;
  NamedTensors inputs;
  NamedTensors alone;  // outputs of a run with nothing else running
};

Runner MakeRunner(const ir::Graph& graph, int threads, const std::vector<int64_t>& sizes,
                  uint32_t seed) {
  SessionOptions options;
  options.threads = threads;
  Runner r;
  auto session = Session::Create(graph, options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  if (!session.ok()) return r;
  r.session = std::move(session).value();
  r.inputs = {{graph.inputs()[0]->name(), testing::RandomUniformTensor(sizes, seed)}};
  auto alone = r.session->Run(r.inputs);
  EXPECT_TRUE(alone.ok()) << alone.status().ToString();
  if (alone.ok()) r.alone = std::move(alone).value();
  return r;
}

TEST(ConcurrencyTest, TwoSessionsWithDifferentThreadCountsMatchTheirSoloRuns) {
  auto graph = ir::LoadModel(std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx");
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  Runner one = MakeRunner(**graph, 1, {3, 1, 28, 28}, 1);
  Runner two = MakeRunner(**graph, 2, {5, 1, 28, 28}, 2);
  ASSERT_FALSE(one.alone.empty() || two.alone.empty());
  std::atomic<int> mismatches{0}, errors{0};
  auto loop = [&](Runner& r) {
    for (int i = 0; i < 300; ++i) {
      auto out = r.session->Run(r.inputs);
      if (!out.ok()) {
        ++errors;
      } else if (!SameBytes(*out, r.alone)) {
        ++mismatches;
      }
    }
  };
  std::thread a(loop, std::ref(one));
  std::thread b(loop, std::ref(two));
  a.join();
  b.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

// One session shared by two threads: Run() serializes, outputs stay exact.
TEST(ConcurrencyTest, OneSessionSharedByTwoThreadsStaysExact) {
  std::unique_ptr<ir::Graph> graph = testing::BuildTestResNet18();
  Runner r = MakeRunner(*graph, 2, {1, 3, 224, 224}, 3);
  ASSERT_FALSE(r.alone.empty());
  std::atomic<int> mismatches{0};
  auto loop = [&] {
    for (int i = 0; i < 10; ++i) {
      auto out = r.session->Run(r.inputs);
      if (!out.ok() || !SameBytes(*out, r.alone)) ++mismatches;
    }
  };
  std::thread a(loop), b(loop);
  a.join();
  b.join();
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace qtune::runtime
