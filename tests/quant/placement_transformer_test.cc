// Transformer rules: LayerNorm internals and Softmax are never quantized; attention
// MatMuls follow ModelOpt's rules on trt and stay float on cpu.
#include <gtest/gtest.h>

#include "placement_test_util.h"
#include "quant/graph_patterns.h"

namespace qtune::quant {
namespace {

using namespace testing;  // NOLINT

ir::Value* Scalar(ir::GraphBuilder& b, const std::string& name, float v) {
  return b.Initializer(name, Tensor::FromVector<float>({}, {v}));
}

// x [1, 8, 32] -> MatMul -> decomposed LayerNorm (9 nodes) -> MatMul
std::unique_ptr<ir::Graph> LayerNormGraph() {
  ir::GraphBuilder b(17);
  ir::Value* x = b.Input("x", DataType::kFloat32, {1, 8, 32});
  ir::Value* y = b.Op("MatMul", {x, Weights(b, "w1", {32, 32})}, {}, {.name = "mm1"});
  auto axes = ir::Attribute::Ints("axes", {-1});
  ir::Value* mean = b.Op("ReduceMean", {y}, {axes}, {.name = "ln_mean"});
  ir::Value* d = b.Op("Sub", {y, mean}, {}, {.name = "ln_sub"});
  ir::Value* sq = b.Op("Pow", {d, Scalar(b, "two", 2.0f)}, {}, {.name = "ln_pow"});
  ir::Value* var = b.Op("ReduceMean", {sq}, {axes}, {.name = "ln_var"});
  ir::Value* eps = b.Op("Add", {var, Scalar(b, "eps", 1e-5f)}, {}, {.name = "ln_eps"});
  ir::Value* sd = b.Op("Sqrt", {eps}, {}, {.name = "ln_sqrt"});
  ir::Value* n = b.Op("Div", {d, sd}, {}, {.name = "ln_div"});
  ir::Value* g = b.Op("Mul", {n, Weights(b, "gamma", {32})}, {}, {.name = "ln_gamma"});
  ir::Value* bt = b.Op("Add", {g, Weights(b, "beta", {32})}, {}, {.name = "ln_beta"});
  b.Output(b.Op("MatMul", {bt, Weights(b, "w2", {32, 32})}, {}, {.name = "mm2"}));
  return b.Build();
}

TEST(TransformerPlacementTest, LayerNormChainIsNeverQuantized) {
  auto graph = LayerNormGraph();
  auto no_quantize = FindNoQuantizeNodes(*graph);
  std::set<std::string> names;
  for (const ir::Node* n : no_quantize) names.insert(n->name());
  EXPECT_EQ(names, (std::set<std::string>{"ln_mean", "ln_sub", "ln_pow", "ln_var", "ln_eps",
                                          "ln_sqrt", "ln_div", "ln_gamma", "ln_beta"}));
  for (Target target : {Target::kCpu, Target::kTrt}) {
    QuantPlan plan = PlanOrDie(*graph, Preset("int8"), target, {{"x", {1, 8, 32}}});
    for (const QuantSite& s : plan.sites) {
      for (const auto& [node, index] : s.consumers) {
        EXPECT_EQ(node.rfind("ln_", 0), std::string::npos) << node << " got a quantizer";
      }
    }
    ASSERT_NE(SiteFor(plan, "mm2", 0), nullptr);  // the LayerNorm output feeds a MatMul
    EXPECT_EQ(SiteFor(plan, "mm2", 0)->value, "ln_beta_out");
  }
}

// q [1, 2, S, H] x kt [1, 2, H, S] -> Div -> Softmax -> x v [1, 2, S, H]
std::unique_ptr<ir::Graph> AttentionGraph(int64_t s, int64_t h) {
  ir::GraphBuilder b(17);
  ir::Value* q = b.Input("q", DataType::kFloat32, {1, 2, s, h});
  ir::Value* kt = b.Input("kt", DataType::kFloat32, {1, 2, h, s});
  ir::Value* v = b.Input("v", DataType::kFloat32, {1, 2, s, h});
  ir::Value* scores = b.Op("MatMul", {q, kt}, {}, {.name = "bmm1"});
  ir::Value* scaled = b.Op("Div", {scores, Scalar(b, "scale", 8.0f)}, {}, {.name = "scale_div"});
  ir::Value* probs =
      b.Op("Softmax", {scaled}, {ir::Attribute::Int("axis", -1)}, {.name = "softmax"});
  b.Output(b.Op("MatMul", {probs, v}, {}, {.name = "bmm2"}));
  return b.Build();
}

InputSizes AttentionSizes(int64_t s, int64_t h) {
  return {{"q", {1, 2, s, h}}, {"kt", {1, 2, h, s}}, {"v", {1, 2, s, h}}};
}

TEST(TransformerPlacementTest, AttentionMatMulsOnTrt) {
  auto graph = AttentionGraph(64, 32);
  QuantPlan plan = PlanOrDie(*graph, Preset("int8"), Target::kTrt, AttentionSizes(64, 32));
  EXPECT_TRUE(plan.skipped.empty());
  for (const char* node : {"bmm1", "bmm2"}) {
    ASSERT_NE(SiteFor(plan, node, 0), nullptr) << node;
    ASSERT_NE(SiteFor(plan, node, 1), nullptr) << node;
  }
  EXPECT_EQ(SiteFor(plan, "bmm2", 0)->role, "attention MatMul input (Softmax output)");
  EXPECT_EQ(SiteFor(plan, "softmax", 0), nullptr);
}

TEST(TransformerPlacementTest, AttentionMatMulsStayFloatOnCpu) {
  auto graph = AttentionGraph(64, 32);
  QuantPlan plan = PlanOrDie(*graph, Preset("int8"), Target::kCpu, AttentionSizes(64, 32));
  ASSERT_EQ(plan.skipped.size(), 2u);
  EXPECT_NE(plan.skipped[0].reason.find("activation x activation"), std::string::npos);
  EXPECT_TRUE(plan.sites.empty());
}

TEST(TransformerPlacementTest, LongSequenceInt8AndSmallHeadFp8AreSkipped) {
  auto long_seq = AttentionGraph(520, 32);
  QuantPlan int8 = PlanOrDie(*long_seq, Preset("int8"), Target::kTrt, AttentionSizes(520, 32));
  ASSERT_NE(Skipped(int8, "bmm1"), nullptr);
  EXPECT_NE(Skipped(int8, "bmm1")->reason.find("sequence length 520 > 512"), std::string::npos);
  QuantPlan fp8_long = PlanOrDie(*long_seq, Preset("fp8"), Target::kTrt, AttentionSizes(520, 32));
  EXPECT_EQ(Skipped(fp8_long, "bmm1"), nullptr);  // fp8 has no sequence limit
  auto small_head = AttentionGraph(64, 8);
  QuantPlan fp8 = PlanOrDie(*small_head, Preset("fp8"), Target::kTrt, AttentionSizes(64, 8));
  ASSERT_NE(Skipped(fp8, "bmm1"), nullptr);
  EXPECT_NE(Skipped(fp8, "bmm1")->reason.find("head size 8"), std::string::npos);
  ASSERT_NE(Skipped(fp8, "bmm2"), nullptr);
}

}  // namespace
}  // namespace qtune::quant
