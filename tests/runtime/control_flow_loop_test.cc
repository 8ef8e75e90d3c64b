// Loop on the engine: carried values and scan outputs with a constant trip count, a
// run-time trip count with a body-computed condition, carried values that grow each
// iteration, an If nested in the body, and the errors for sizes only known at run time.
#include <gtest/gtest.h>

#include "runtime/control_flow_test_models.h"
#include "runtime/reference/reference_executor.h"
#include "runtime/session.h"

namespace qtune::runtime {
namespace {

std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

StatusOr<NamedTensors> RunModel(const ir::Graph& graph, const NamedTensors& inputs,
                                bool use_onednn) {
  SessionOptions options;
  options.use_onednn = use_onednn;
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::Create(graph, options));
  return session->Run(inputs);
}

TEST(ControlFlowLoopTest, ConstantTripStacksScanOutputs) {
  auto graph = testing::BuildLoopAccumulate(/*runtime_trip=*/false);
  NamedTensors inputs = {{"x", Tensor::FromVector<float>({3}, {1, 2, -1})}};
  for (bool use_onednn : {true, false}) {
    auto out = RunModel(*graph, inputs, use_onednn);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(Floats((*out)[0].second), (std::vector<float>{5, 10, -5}));
    ASSERT_EQ((*out)[1].second.sizes(), (std::vector<int64_t>{5, 3}));
    std::vector<float> expected;
    for (int t = 0; t < 5; ++t) {
      for (float x : {1.0f, 2.0f, -1.0f}) expected.push_back(x * (t + 1) * t);
    }
    EXPECT_EQ(Floats((*out)[1].second), expected);
  }
}

TEST(ControlFlowLoopTest, RepeatedRunsStartFromTheInitialValues) {
  auto graph = testing::BuildLoopAccumulate(/*runtime_trip=*/false);
  auto session = Session::Create(*graph, SessionOptions{});
  ASSERT_TRUE(session.ok());
  for (float x : {1.0f, 3.0f}) {
    auto out = (*session)->Run({{"x", Tensor::FromVector<float>({3}, {x, x, x})}});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(Floats((*out)[0].second), (std::vector<float>(3, 5 * x)));
  }
}

// Both tiers give the reference executor's outputs (sizes and values) for `inputs`.
void ExpectBothTiersMatchTheReference(const ir::Graph& graph, const NamedTensors& inputs) {
  auto reference = RunReference(graph, inputs);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  for (bool use_onednn : {true, false}) {
    auto out = RunModel(graph, inputs, use_onednn);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ASSERT_EQ(out->size(), reference->size());
    for (size_t i = 0; i < out->size(); ++i) {
      EXPECT_EQ((*out)[i].second.sizes(), (*reference)[i].second.sizes()) << "output " << i;
      EXPECT_EQ(Floats((*out)[i].second), Floats((*reference)[i].second)) << "output " << i;
    }
  }
}

// Scan outputs stacked over a trip count known only at run time: the Loop runs as a
// dynamic step (its body compiled), as the reference executor runs it.
TEST(ControlFlowLoopTest, RunTimeTripWithScanOutputsRunsInStages) {
  auto graph = testing::BuildLoopAccumulate(/*runtime_trip=*/true);
  for (int64_t trips : {0, 3, 5}) {
    NamedTensors inputs = {{"x", Tensor::FromVector<float>({3}, {1, 2, 3})},
                           {"M", Tensor::Scalar<int64_t>(trips)}};
    ExpectBothTiersMatchTheReference(*graph, inputs);
  }
}

TEST(ControlFlowLoopTest, BodyConditionEndsARunTimeTripCount) {
  auto graph = testing::BuildLoopUntil();
  struct Case {
    int64_t m;
    float limit;
    float expected;
  };
  for (const Case& c :
       {Case{100, 7.0f, 7.5f}, Case{2, 7.0f, 3.0f}, Case{0, 7.0f, 0.0f}, Case{100, -1.0f, 1.5f}}) {
    for (bool use_onednn : {true, false}) {
      auto out = RunModel(*graph,
                          {{"M", Tensor::Scalar<int64_t>(c.m)},
                           {"limit", Tensor::FromVector<float>({1}, {c.limit})}},
                          use_onednn);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_EQ(Floats((*out)[0].second), (std::vector<float>{c.expected}))
          << "M " << c.m << " limit " << c.limit;
    }
  }
}

TEST(ControlFlowLoopTest, GrowingCarriedValueWithConstantTrip) {
  auto graph = testing::BuildLoopGrowing(/*runtime_trip=*/false);
  for (bool use_onednn : {true, false}) {
    auto out = RunModel(*graph, {{"v0", Tensor::FromVector<float>({1, 2}, {1, 2})}}, use_onednn);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ASSERT_EQ((*out)[0].second.sizes(), (std::vector<int64_t>{5, 2}));
    EXPECT_EQ(Floats((*out)[0].second), (std::vector<float>{1, 2, 1, 2, 2, 3, 3, 4, 4, 5}));
  }
}

// A carried value that grows each iteration, with a run-time trip count: it runs in
// stages, the body compiled once per size it meets.
TEST(ControlFlowLoopTest, GrowingCarriedValueWithRunTimeTripRunsInStages) {
  auto graph = testing::BuildLoopGrowing(/*runtime_trip=*/true);
  NamedTensors inputs = {{"v0", Tensor::FromVector<float>({1, 2}, {1, 2})},
                         {"M", Tensor::Scalar<int64_t>(4)}};
  ExpectBothTiersMatchTheReference(*graph, inputs);
}

TEST(ControlFlowLoopTest, IfNestedInTheBodyReadsValuesTwoScopesUp) {
  auto graph = testing::BuildLoopWithIf();
  NamedTensors inputs = {{"x", Tensor::FromVector<float>({2}, {1, 2})},
                         {"scale", Tensor::FromVector<float>({1}, {3})}};
  for (bool use_onednn : {true, false}) {
    auto out = RunModel(*graph, inputs, use_onednn);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    // Iterations 0 and 2 add x * 3, 1 and 3 subtract x.
    EXPECT_EQ(Floats((*out)[0].second), (std::vector<float>{4, 8}));
  }
  auto reference = RunReference(*graph, inputs);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  EXPECT_EQ(Floats((*reference)[0].second), (std::vector<float>{4, 8}));
}

TEST(ControlFlowLoopTest, ReferenceExecutorRunsRunTimeTripCounts) {
  // The reference executor has no fixed sizes: scan outputs of a run-time trip count work.
  auto graph = testing::BuildLoopAccumulate(/*runtime_trip=*/true);
  auto out = RunReference(*graph, {{"x", Tensor::FromVector<float>({3}, {1, 1, 1})},
                                   {"M", Tensor::Scalar<int64_t>(2)}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Floats((*out)[0].second), (std::vector<float>{2, 2, 2}));
  EXPECT_EQ(Floats((*out)[1].second), (std::vector<float>{0, 0, 0, 2, 2, 2}));
}

}  // namespace
}  // namespace qtune::runtime
