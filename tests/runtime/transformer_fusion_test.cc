// Transformer fusions on a decomposed encoder layer (hidden 64, 4 heads, seq 16, batch 2):
// which ops the compiled plan holds, which kernels run them, and that the oneDNN tier's
// output matches the reference executor on the unfused graph.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>

#include "runtime/fusion/fusion_pipeline.h"
#include "runtime/reference/reference_executor.h"
#include "runtime/session.h"
#include "runtime/transformer_test_model.h"
#include "util/ort_peer.h"

namespace qtune::runtime {
namespace {

using testing::BuildEncoder;
using testing::EncoderOptions;
using testing::GeluForm;

const std::vector<int64_t> kInputSizes = {2, 16, 64};
constexpr uint64_t kInputSeed = 11;

std::map<std::string, int> CountOps(const ir::Graph& graph) {
  std::map<std::string, int> counts;
  for (const ir::Node* node : graph.nodes()) ++counts[node->op_type()];
  return counts;
}

// The implementations the plan chose per op type ("onednn:..." or "reference").
std::multimap<std::string, std::string> Kernels(const Plan& plan) {
  std::multimap<std::string, std::string> kernels;
  for (const PlanStep& step : plan.steps) kernels.emplace(step.op_type, step.kernel->Describe());
  return kernels;
}

// Runs `graph` through a Session and through the reference executor (unfused, unoptimized)
// and returns the relative L2 distance of output 0.
double DistanceToReference(const ir::Graph& graph, const SessionOptions& options) {
  NamedTensors inputs = {{"x", testing::RandomTensor(kInputSizes, kInputSeed)}};
  auto session = Session::Create(graph, options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  if (!session.ok()) return INFINITY;
  auto ours = (*session)->Run(inputs);
  auto reference = RunReference(graph, inputs);
  EXPECT_TRUE(ours.ok()) << ours.status().ToString();
  EXPECT_TRUE(reference.ok()) << reference.status().ToString();
  if (!ours.ok() || !reference.ok()) return INFINITY;
  return testing::RelativeL2((*ours)[0].second, (*reference)[0].second);
}

struct EncoderCase {
  std::string name;
  EncoderOptions options;
};

void PrintTo(const EncoderCase& c, std::ostream* os) { *os << c.name; }

class TransformerFusionTest : public ::testing::TestWithParam<EncoderCase> {};

TEST_P(TransformerFusionTest, EncoderFusesAndMatchesTheReference) {
  const EncoderOptions& o = GetParam().options;
  SCOPED_TRACE("weights seed " + std::to_string(o.seed) + ", input seed " +
               std::to_string(kInputSeed));
  std::unique_ptr<ir::Graph> graph = BuildEncoder(o);
  auto session = Session::Create(*graph, SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto plan = (*session)->Prepare({{"x", kInputSizes}});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  std::map<std::string, int> ops = CountOps(*(*plan)->graph);
  EXPECT_EQ(ops["LayerNormalization"], 2 * o.layers);
  // GELU runs as the first feed-forward matmul's eltwise post-op: no Gelu step is left.
  EXPECT_EQ(ops.count("Gelu"), 0u) << (*plan)->ToString();
  int gelu_epilogues = 0;
  for (const ir::Node* node : (*plan)->graph->nodes()) {
    const std::string activation = node->GetString("activation", "");
    if (node->op_type() == "MatMulBias" && (activation == "Gelu" || activation == "GeluTanh")) {
      ++gelu_epilogues;
      EXPECT_EQ(activation, o.gelu == GeluForm::kTanhPow || o.gelu == GeluForm::kTanhCubeByMul
                                ? "GeluTanh"
                                : "Gelu");
    }
  }
  EXPECT_EQ(gelu_epilogues, o.layers);
  EXPECT_EQ(ops["MatMulBias"], 6 * o.layers);  // Q, K, V, output, 2 feed-forward
  // Q x K^T, scale, Softmax, P x V and the head Transposes are one qtune::Attention.
  EXPECT_EQ(ops["Attention"], o.layers);
  for (const char* gone :
       {"ReduceMean", "Sqrt", "Pow", "Erf", "Tanh", "MatMul", "Softmax", "Transpose", "Add"}) {
    EXPECT_EQ(ops.count(gone), 0u) << gone << " left in\n" << (*plan)->ToString();
  }
  for (const auto& [op, impl] : Kernels(**plan)) {
    if (op == "LayerNormalization" || op == "Attention" || op == "MatMulBias") {
      EXPECT_TRUE(impl.starts_with("onednn:") || impl.starts_with("native:"))
          << op << " runs on " << impl;
    }
  }
  EXPECT_LE(DistanceToReference(*graph, SessionOptions{}), 1e-4);
  SessionOptions reference_tier;
  reference_tier.use_onednn = false;  // the fused graph on the reference kernels
  EXPECT_LE(DistanceToReference(*graph, reference_tier), 1e-5);
}

EncoderOptions With(std::function<void(EncoderOptions&)> change) {
  EncoderOptions o;
  change(o);
  return o;
}

INSTANTIATE_TEST_SUITE_P(
    Forms, TransformerFusionTest,
    ::testing::Values(
        EncoderCase{"opset13", EncoderOptions{}},
        EncoderCase{"opset18_axes_input", With([](auto& o) { o.opset = 18; })},
        EncoderCase{"square_by_mul", With([](auto& o) { o.square_by_mul = true; })},
        EncoderCase{"gelu_erf_then_half",
                    With([](auto& o) { o.gelu = GeluForm::kXTimesErfThenHalf; })},
        EncoderCase{"gelu_half_then_x", With([](auto& o) { o.gelu = GeluForm::kErfHalfThenX; })},
        EncoderCase{"gelu_tanh_pow", With([](auto& o) { o.gelu = GeluForm::kTanhPow; })},
        EncoderCase{"gelu_tanh_cube_by_mul",
                    With([](auto& o) { o.gelu = GeluForm::kTanhCubeByMul; })},
        EncoderCase{"two_layers", With([](auto& o) {
                      o.layers = 2;
                      o.seed = 5;
                    })}),
    [](const auto& info) { return info.param.name; });

// Small graphs for the edges of each pattern: the fused op count in the plan, and the
// oneDNN tier against the reference executor.
class EdgeCaseTest : public ::testing::Test {
 protected:
  EdgeCaseTest() : b_(13), e_(b_, 7) { x_ = b_.Input("x", DataType::kFloat32, kInputSizes); }
  // Compiles the finished graph and returns its op counts; checks numerics on the way.
  std::map<std::string, int> CompileAndCheck(ir::Value* y) {
    b_.Output(y);
    std::unique_ptr<ir::Graph> graph = b_.Build();
    auto session = Session::Create(*graph, SessionOptions{});
    EXPECT_TRUE(session.ok()) << session.status().ToString();
    if (!session.ok()) return {};
    auto plan = (*session)->Prepare({{"x", kInputSizes}});
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    if (!plan.ok()) return {};
    EXPECT_LE(DistanceToReference(*graph, SessionOptions{}), 1e-5);
    return CountOps(*(*plan)->graph);
  }
  ir::GraphBuilder b_;
  testing::EncoderBuilder e_;
  ir::Value* x_ = nullptr;
};

TEST_F(EdgeCaseTest, LayerNormWithoutGammaOrBetaGetsOnes) {
  using ir::Attribute;
  ir::Value* mean = b_.Op("ReduceMean", {x_}, {Attribute::Ints("axes", {2})});
  ir::Value* d = b_.Op("Sub", {x_, mean});
  ir::Value* var = b_.Op("ReduceMean", {b_.Op("Mul", {d, d})}, {Attribute::Ints("axes", {-1})});
  ir::Value* y = b_.Op("Div", {d, b_.Op("Sqrt", {b_.Op("Add", {e_.Scalar(1e-5f), var})})});
  std::map<std::string, int> ops = CompileAndCheck(y);
  EXPECT_EQ(ops["LayerNormalization"], 1);
  EXPECT_EQ(ops.size(), 1u);
}

TEST_F(EdgeCaseTest, LayerNormWithOnlyBetaOfShape1x1xC) {
  using ir::Attribute;
  ir::Value* mean = b_.Op("ReduceMean", {x_}, {Attribute::Ints("axes", {-1})});
  ir::Value* d = b_.Op("Sub", {x_, mean});
  ir::Value* var =
      b_.Op("ReduceMean", {b_.Op("Pow", {d, e_.Scalar(2.0f)})}, {Attribute::Ints("axes", {-1})});
  ir::Value* n = b_.Op("Div", {d, b_.Op("Sqrt", {b_.Op("Add", {var, e_.Scalar(1e-5f)})})});
  ir::Value* y = b_.Op("Add", {e_.Random({1, 1, 64}, 0.5f), n});
  std::map<std::string, int> ops = CompileAndCheck(y);
  EXPECT_EQ(ops["LayerNormalization"], 1);
  EXPECT_EQ(ops.size(), 1u);
}

TEST_F(EdgeCaseTest, MatMulBiasAcceptsRowAndScalarBiases) {
  ir::Value* h =
      b_.Op("Add", {b_.Op("MatMul", {x_, e_.Random({64, 32}, 0.2f)}), e_.Random({1, 1, 32}, 0.5f)});
  ir::Value* y = b_.Op("Add", {e_.Scalar(0.25f), b_.Op("MatMul", {h, e_.Random({32, 5}, 0.2f)})});
  std::map<std::string, int> ops = CompileAndCheck(y);
  EXPECT_EQ(ops["MatMulBias"], 2);
  EXPECT_EQ(ops.size(), 1u);
}

TEST_F(EdgeCaseTest, SplitProjectionBecomesOneMatMulBiasPerPart) {
  // A packed QKV projection: MatMul + bias -> Split into three [.., 64] parts.
  ir::Value* qkv =
      b_.Op("Add", {b_.Op("MatMul", {x_, e_.Random({64, 192}, 0.2f)}), e_.Random({192}, 0.5f)});
  std::vector<ir::Value*> parts =
      b_.MultiOp("Split", {qkv, e_.Int64s({64, 64, 64})}, 3, {ir::Attribute::Int("axis", -1)});
  ir::Value* y = b_.Op("Mul", {b_.Op("Sub", {parts[0], parts[1]}), parts[2]});
  std::map<std::string, int> ops = CompileAndCheck(y);
  EXPECT_EQ(ops["MatMulBias"], 3);
  EXPECT_EQ(ops.count("Split"), 0u);
}

TEST_F(EdgeCaseTest, ResidualAddBecomesTheMatMulBiasSum) {
  ir::Value* h =
      b_.Op("Add", {e_.Random({64}, 0.5f), b_.Op("MatMul", {x_, e_.Random({64, 64}, 0.2f)})});
  ir::Value* y = b_.Op("Add", {x_, h});
  std::map<std::string, int> ops = CompileAndCheck(y);
  EXPECT_EQ(ops["MatMulBias"], 1);
  EXPECT_EQ(ops.count("Add"), 0u);
}

// Single-pattern graphs for what must not fuse.
class NotFusedTest : public ::testing::Test {
 protected:
  NotFusedTest() : b_(13), e_(b_, 3) { x_ = b_.Input("x", DataType::kFloat32, kInputSizes); }
  // Every value has kInputSizes unless `sizes_of` names it.
  std::map<std::string, int> FuseAndCount(
      ir::Value* y, const std::map<std::string, std::vector<int64_t>>& sizes_of = {}) {
    b_.Output(y);
    std::unique_ptr<ir::Graph> graph = b_.Build();
    SizesByName sizes;
    for (const ir::Value* v : graph->inputs()) sizes[v->name()] = {DataType::kFloat32, kInputSizes};
    for (const ir::Node* n : graph->nodes()) {
      for (const ir::Value* out : n->outputs()) {
        auto given = sizes_of.find(out->name());
        sizes[out->name()] = {DataType::kFloat32,
                              given == sizes_of.end() ? kInputSizes : given->second};
      }
    }
    auto report = RunFusions(*graph, sizes);
    EXPECT_TRUE(report.ok()) << report.status().ToString();
    return CountOps(*graph);
  }
  ir::GraphBuilder b_;
  testing::EncoderBuilder e_;
  ir::Value* x_ = nullptr;
};

TEST_F(NotFusedTest, MeanOverAnotherAxisIsNoLayerNorm) {
  using ir::Attribute;
  ir::Value* mean = b_.Op("ReduceMean", {x_}, {Attribute::Ints("axes", {1})});
  ir::Value* d = b_.Op("Sub", {x_, mean});
  ir::Value* var = b_.Op("ReduceMean", {b_.Op("Mul", {d, d})}, {Attribute::Ints("axes", {1})});
  ir::Value* y = b_.Op("Div", {d, b_.Op("Sqrt", {b_.Op("Add", {var, e_.Scalar(1e-5f)})})});
  EXPECT_EQ(FuseAndCount(y).count("LayerNormalization"), 0u);
}

TEST_F(NotFusedTest, WrongGeluConstantIsNoGelu) {
  ir::Value* erf = b_.Op("Erf", {b_.Op("Div", {x_, e_.Scalar(1.5f)})});
  ir::Value* y =
      b_.Op("Mul", {b_.Op("Mul", {x_, e_.Scalar(0.5f)}), b_.Op("Add", {erf, e_.Scalar(1.0f)})});
  EXPECT_EQ(FuseAndCount(y).count("Gelu"), 0u);
}

TEST_F(NotFusedTest, ErfWithASecondReaderIsNoGelu) {
  ir::Value* erf = b_.Op("Erf", {b_.Op("Div", {x_, e_.Scalar(1.4142135f)})});
  ir::Value* gelu =
      b_.Op("Mul", {b_.Op("Mul", {x_, e_.Scalar(0.5f)}), b_.Op("Add", {erf, e_.Scalar(1.0f)})});
  ir::Value* y = b_.Op("Add", {gelu, erf});
  EXPECT_EQ(FuseAndCount(y).count("Gelu"), 0u);
}

TEST_F(NotFusedTest, ResidualAddIsNoBias) {
  ir::Value* w = e_.Random({64, 64}, 0.1f);
  ir::Value* y = b_.Op("Add", {b_.Op("MatMul", {x_, w}), x_});
  std::map<std::string, int> ops = FuseAndCount(y);
  EXPECT_EQ(ops.count("MatMulBias"), 0u);
  EXPECT_EQ(ops["MatMul"], 1);
}

TEST_F(NotFusedTest, NarrowSplitPartsStayOneProjection) {
  // Parts of 32 columns run below the matmul kernels' block width: no split.
  ir::Value* qk =
      b_.Op("Add", {b_.Op("MatMul", {x_, e_.Random({64, 64}, 0.2f)}), e_.Random({64}, 0.5f)});
  std::vector<ir::Value*> parts =
      b_.MultiOp("Split", {qk, e_.Int64s({32, 32})}, 2, {ir::Attribute::Int("axis", -1)});
  std::map<std::string, int> ops =
      FuseAndCount(b_.Op("Add", {parts[0], parts[1]}),
                   {{parts[0]->name(), {2, 16, 32}}, {parts[1]->name(), {2, 16, 32}}});
  EXPECT_EQ(ops["MatMulBias"], 1);
  EXPECT_EQ(ops["Split"], 1);
}

TEST_F(NotFusedTest, BroadcastResidualStaysAnAdd) {
  // The Add broadcasts a [2, 1, 64] value over the product: not a residual of its sizes.
  ir::Value* h =
      b_.Op("Add", {b_.Op("MatMul", {x_, e_.Random({64, 64}, 0.2f)}), e_.Random({64}, 0.5f)});
  ir::Value* row = b_.Op("ReduceMean", {x_}, {ir::Attribute::Ints("axes", {1})});
  std::map<std::string, int> ops =
      FuseAndCount(b_.Op("Add", {h, row}), {{row->name(), {2, 1, 64}}});
  EXPECT_EQ(ops["MatMulBias"], 1);
  EXPECT_EQ(ops["Add"], 1);
}

}  // namespace
}  // namespace qtune::runtime
