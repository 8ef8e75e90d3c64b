// Models whose sizes depend on values computed at run time run in stages
// (runtime/dynamic/graph_runner.h): the static part as a compiled plan, the rest after
// the dynamic steps, compiled for the sizes they produced and cached per size set.
#include <gtest/gtest.h>

#include "core/tensor.h"
#include "ir/builder.h"
#include "ir/subgraph.h"
#include "runtime/dynamic/graph_runner.h"
#include "runtime/session.h"

namespace qtune::runtime {
namespace {

using ir::Attribute;
using ir::GraphBuilder;

Attribute IntAttr(const std::string& name, int64_t v) {
  Attribute a;
  a.name = name;
  a.type = ir::AttributeType::kInt;
  a.i = v;
  return a;
}

std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

std::unique_ptr<Session> MakeSession(const ir::Graph& graph, bool use_onednn) {
  SessionOptions options;
  options.use_onednn = use_onednn;
  auto session = Session::Create(graph, options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  return std::move(*session);
}

// x [2,6] -> Reshape(shape from an input) -> Relu.
std::unique_ptr<ir::Graph> ReshapeFromInput() {
  GraphBuilder b(17);
  ir::Value* x = b.Input("x", DataType::kFloat32, {2, 6});
  ir::Value* shape = b.Input("shape", DataType::kInt64, {2});
  b.Output(b.Op("Relu", {b.Op("Reshape", {x, shape})}));
  return b.Build();
}

TEST(StagedRunTest, ReshapeWithARunTimeShapeCompilesOncePerShape) {
  auto graph = ReshapeFromInput();
  for (bool onednn : {true, false}) {
    auto session = MakeSession(*graph, onednn);
    std::vector<float> values(12);
    for (int i = 0; i < 12; ++i) values[i] = static_cast<float>(i - 6);
    Tensor x = Tensor::FromVector<float>({2, 6}, values);
    for (std::vector<int64_t> shape : {std::vector<int64_t>{3, 4}, {4, 3}, {3, 4}, {-1, 2}}) {
      auto out = session->Run({{"x", x}, {"shape", Tensor::FromVector<int64_t>({2}, shape)}});
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      std::vector<int64_t> expected = shape;
      if (expected[0] == -1) expected[0] = 6;
      EXPECT_EQ((*out)[0].second.sizes(), expected);
      std::vector<float> got = Floats((*out)[0].second);
      for (int i = 0; i < 12; ++i) EXPECT_EQ(got[i], std::max(0.0f, values[i]));
    }
    // A static-size question about this model is answered with a clear error.
    auto plan = session->Prepare({{"x", {2, 6}}, {"shape", {2}}});
    EXPECT_EQ(plan.status().code(), StatusCode::kFailedPrecondition);
  }
}

TEST(StagedRunTest, StagesAreCachedPerSizeSet) {
  auto graph = ReshapeFromInput();
  GraphRunner runner(*graph, GraphRunnerOptions{});
  Tensor x = Tensor::FromVector<float>({2, 6}, std::vector<float>(12, 1.0f));
  auto run = [&](std::vector<int64_t> shape) {
    auto out = runner.Run(std::vector<RunValue>{
        RunValue::Of(x), RunValue::Of(Tensor::FromVector<int64_t>({2}, shape))});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
  };
  run({3, 4});
  EXPECT_EQ(runner.stages_compiled(), 1);
  run({3, 4});
  EXPECT_EQ(runner.stages_compiled(), 1);
  run({4, 3});
  EXPECT_EQ(runner.stages_compiled(), 2);
  run({3, 4});
  EXPECT_EQ(runner.stages_compiled(), 2);
}

// x [6] -> Greater(x, 0) -> NonZero [1,n] -> Squeeze -> Gather(x) -> Mul by 2: the
// positive values, as many as there are.
std::unique_ptr<ir::Graph> PositiveValues() {
  GraphBuilder b(13);
  ir::Value* x = b.Input("x", DataType::kFloat32, {6});
  ir::Value* zero = b.Initializer("zero", Tensor::Scalar<float>(0.0f));
  ir::Value* two = b.Initializer("two", Tensor::Scalar<float>(2.0f));
  ir::Value* axes = b.Initializer("axes", Tensor::FromVector<int64_t>({1}, {0}));
  ir::Value* where = b.Op("NonZero", {b.Op("Greater", {x, zero})});
  ir::Value* index = b.Op("Squeeze", {where, axes});
  b.Output(b.Op("Mul", {b.Op("Gather", {x, index}), two}));
  return b.Build();
}

TEST(StagedRunTest, NonZeroFeedsALaterStageOfAnySize) {
  auto graph = PositiveValues();
  for (bool onednn : {true, false}) {
    auto session = MakeSession(*graph, onednn);
    for (std::vector<float> values :
         {std::vector<float>{1, -1, 2, -2, 3, -3}, {-1, -1, -1, -1, -1, -1}, {1, 2, 3, 4, 5, 6}}) {
      auto out = session->Run({{"x", Tensor::FromVector<float>({6}, values)}});
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      std::vector<float> expected;
      for (float v : values) {
        if (v > 0) expected.push_back(2 * v);
      }
      EXPECT_EQ(Floats((*out)[0].second), expected);
      EXPECT_EQ((*out)[0].second.sizes(), std::vector<int64_t>{int64_t(expected.size())});
    }
  }
}

// The static part of a staged model still gets the fast kernels.
TEST(StagedRunTest, StaticPrefixRunsOnTheFastTier) {
  GraphBuilder b(13);
  ir::Value* x = b.Input("x", DataType::kFloat32, {1, 3, 8, 8});
  Tensor w = Tensor::FromVector<float>({4, 3, 3, 3}, std::vector<float>(108, 0.1f));
  ir::Value* conv = b.Op("Conv", {x, b.Initializer("w", w)});
  ir::Value* zero = b.Initializer("zero", Tensor::Scalar<float>(1.0f));
  b.Output(b.Op("NonZero", {b.Op("Greater", {conv, zero})}));
  auto graph = b.Build();
  GraphRunner runner(*graph, GraphRunnerOptions{});
  std::vector<float> values(192);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 7);
  auto out = runner.Run(
      std::vector<RunValue>{RunValue::Of(Tensor::FromVector<float>({1, 3, 8, 8}, values))});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().size(0), 4);
  const std::string stages = runner.LastRunToString();
  EXPECT_NE(stages.find("onednn"), std::string::npos) << stages;
  EXPECT_NE(stages.find("dynamic NonZero"), std::string::npos) << stages;
}

TEST(StagedRunTest, AbsurdRunTimeSizesAreErrorsNamingTheNode) {
  GraphBuilder b(13);
  ir::Value* shape = b.Input("shape", DataType::kInt64, {2});
  b.Output(b.Op("ConstantOfShape", {shape}, {}, ir::OpOptions{"fill", {}, ""}));
  auto graph = b.Build();
  auto session = MakeSession(*graph, true);
  for (std::vector<int64_t> bad : {std::vector<int64_t>{-3, 2}, {1000000000000, 1000000000000}}) {
    auto out = session->Run({{"shape", Tensor::FromVector<int64_t>({2}, bad)}});
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().ToString().find("fill"), std::string::npos) << out.status().ToString();
  }
  auto reshape = ReshapeFromInput();
  auto session2 = MakeSession(*reshape, true);
  auto out = session2->Run({{"x", Tensor::FromVector<float>({2, 6}, std::vector<float>(12, 1))},
                            {"shape", Tensor::FromVector<int64_t>({2}, {5, 5})}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().ToString().find("Reshape"), std::string::npos) << out.status().ToString();
}

// A Loop whose carried value grows each iteration and whose trip count is an input: the
// Loop runs as a dynamic step, its body compiled per size.
TEST(StagedRunTest, LoopWithGrowingStateAndRunTimeTripCount) {
  GraphBuilder body(13);
  body.Input("i", DataType::kInt64, std::vector<int64_t>{});
  ir::Value* cond = body.Input("cond", DataType::kBool, std::vector<int64_t>{});
  ir::Value* acc = body.Input("acc", DataType::kFloat32, Shape({Dim::Unknown()}));
  ir::Value* one = body.Initializer("one", Tensor::FromVector<float>({1}, {1.0f}));
  Attribute axis = IntAttr("axis", 0);
  body.Output(body.Op("Identity", {cond}));
  body.Output(body.Op("Concat", {acc, one}, {axis}));
  auto body_graph = body.Build();
  auto attr = ir::SubgraphAttribute("body", *body_graph, 0);
  ASSERT_TRUE(attr.ok()) << attr.status().ToString();

  GraphBuilder b(13);
  ir::Value* m = b.Input("m", DataType::kInt64, std::vector<int64_t>{});
  ir::Value* start = b.Input("start", DataType::kFloat32, {2});
  b.Output(b.Op("Loop", {m, nullptr, start}, {*attr}));
  auto graph = b.Build();
  auto session = MakeSession(*graph, true);
  for (int64_t trips : {0, 3, 5}) {
    auto out = session->Run(
        {{"m", Tensor::Scalar<int64_t>(trips)}, {"start", Tensor::FromVector<float>({2}, {7, 8})}});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ((*out)[0].second.sizes(), std::vector<int64_t>{2 + trips});
  }
}

}  // namespace
}  // namespace qtune::runtime
