// Scan on the engine: an RNN cell over a sequence, forwards and backwards, along axis 0
// or 1, checked across tiers and against a loop written out in the test.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/control_flow_test_models.h"
#include "runtime/reference/reference_executor.h"
#include "runtime/session.h"

namespace qtune::runtime {
namespace {

StatusOr<NamedTensors> RunModel(const ir::Graph& graph, const NamedTensors& inputs,
                                bool use_onednn) {
  SessionOptions options;
  options.use_onednn = use_onednn;
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::Create(graph, options));
  return session->Run(inputs);
}

float MaxDiff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.num_elements(), b.num_elements());
  float most = 0;
  for (int64_t i = 0; i < std::min(a.num_elements(), b.num_elements()); ++i) {
    most = std::max(most, std::abs(a.data<float>()[i] - b.data<float>()[i]));
  }
  return most;
}

// seq [6, 1, 4] as [1, 6, 4] (same bytes: the batch dimension is 1) and reversed in time.
Tensor Reversed(const Tensor& seq) {
  Tensor r = seq.Clone();
  for (int t = 0; t < 6; ++t) {
    for (int k = 0; k < 4; ++k) r.data<float>()[t * 4 + k] = seq.data<float>()[(5 - t) * 4 + k];
  }
  return r;
}

TEST(ControlFlowScanTest, RnnAgreesAcrossTiersAxesAndDirections) {
  std::mt19937 rng(17);
  Tensor seq = testing::RandomFloats({6, 1, 4}, rng);
  Tensor h0 = testing::RandomFloats({1, 8}, rng, 0.5f);
  auto forward = RunModel(*testing::BuildScanRnn(0, false), {{"seq", seq}, {"h0", h0}}, true);
  ASSERT_TRUE(forward.ok()) << forward.status().ToString();
  ASSERT_EQ((*forward)[1].second.sizes(), (std::vector<int64_t>{6, 1, 8}));
  // The last stacked h is the final state.
  const Tensor& hs = (*forward)[1].second;
  for (int k = 0; k < 8; ++k) {
    EXPECT_EQ(hs.data<float>()[5 * 8 + k], (*forward)[0].second.data<float>()[k]);
  }
  auto oracle = RunModel(*testing::BuildScanRnn(0, false), {{"seq", seq}, {"h0", h0}}, false);
  ASSERT_TRUE(oracle.ok()) << oracle.status().ToString();
  EXPECT_LE(MaxDiff((*forward)[1].second, (*oracle)[1].second), 1e-5f);

  Tensor seq_axis1 = *seq.Reshaped({1, 6, 4});
  auto axis1 = RunModel(*testing::BuildScanRnn(1, false), {{"seq", seq_axis1}, {"h0", h0}}, true);
  ASSERT_TRUE(axis1.ok()) << axis1.status().ToString();
  EXPECT_LE(MaxDiff((*forward)[1].second, (*axis1)[1].second), 1e-6f);

  auto backward =
      RunModel(*testing::BuildScanRnn(0, true), {{"seq", Reversed(seq)}, {"h0", h0}}, true);
  ASSERT_TRUE(backward.ok()) << backward.status().ToString();
  EXPECT_LE(MaxDiff((*forward)[0].second, (*backward)[0].second), 1e-6f);

  auto reference =
      RunReference(*testing::BuildScanRnn(0, true), {{"seq", Reversed(seq)}, {"h0", h0}});
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  EXPECT_LE(MaxDiff((*backward)[1].second, (*reference)[1].second), 1e-5f);
}

}  // namespace
}  // namespace qtune::runtime
