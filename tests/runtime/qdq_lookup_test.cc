// DQ -> elementwise chain -> Q becomes one qtune::QLookup whose results equal the unfused
// chain exactly (the table is computed by the chain's own reference kernels).
#include <gtest/gtest.h>

#include <random>

#include "ir/builder.h"
#include "runtime/fused_run.h"
#include "runtime/session.h"

namespace qtune::runtime {
namespace {

using ir::Attribute;

Tensor Scalar(DataType type, float v) {
  Tensor t = *Tensor::Allocate(type, {});
  if (type == DataType::kFloat32) t.data<float>()[0] = v;
  if (type == DataType::kUint8) t.data<uint8_t>()[0] = static_cast<uint8_t>(v);
  if (type == DataType::kInt8) t.data<int8_t>()[0] = static_cast<int8_t>(v);
  return t;
}

struct Chain {
  std::string label;
  DataType in_type, out_type;
  // Builds the float ops between the DQ and the Q; returns their result.
  std::function<ir::Value*(ir::GraphBuilder&, ir::Value*)> ops;
};

// x (float) -> Q -> DQ -> chain -> Q -> DQ -> y: the graph a QDQ exporter writes around an
// elementwise tail such as hard-swish's x + 3 -> Clip(0, 6) -> / 6.
std::unique_ptr<ir::Graph> BuildGraph(const Chain& c, int64_t opset) {
  ir::GraphBuilder b(opset);
  ir::Value* x = b.Input("x", DataType::kFloat32, {2, 8, 5, 7});
  auto quant = [&](ir::Value* v, DataType type, float scale, float zp) {
    ir::Value* s = b.Initializer(v->name() + "_s", Scalar(DataType::kFloat32, scale));
    ir::Value* z = b.Initializer(v->name() + "_z", Scalar(type, zp));
    ir::Value* q = b.Op("QuantizeLinear", {v, s, z});
    return b.Op("DequantizeLinear", {q, s, z});
  };
  ir::Value* in = quant(x, c.in_type, 0.05f, c.in_type == DataType::kUint8 ? 128 : 0);
  ir::Value* out = c.ops(b, in);
  b.Output(quant(out, c.out_type, 0.031f, c.out_type == DataType::kUint8 ? 3 : -2));
  return b.Build();
}

std::vector<Chain> Chains() {
  auto f = [](float v) { return Scalar(DataType::kFloat32, v); };
  return {
      {"hard_sigmoid_tail", DataType::kUint8, DataType::kUint8,
       [f](ir::GraphBuilder& b, ir::Value* v) {
         ir::Value* a = b.Op("Add", {v, b.Initializer("three", f(3))});
         ir::Value* c = b.Op("Clip", {a, b.Initializer("lo", f(0)), b.Initializer("hi", f(6))});
         return b.Op("Div", {c, b.Initializer("six", f(6))});
       }},
      {"sigmoid_s8_to_u8", DataType::kInt8, DataType::kUint8,
       [](ir::GraphBuilder& b, ir::Value* v) { return b.Op("Sigmoid", {v}); }},
      {"scaled_tanh_s8", DataType::kInt8, DataType::kInt8,
       [f](ir::GraphBuilder& b, ir::Value* v) {
         return b.Op("Tanh", {b.Op("Mul", {b.Initializer("k", f(0.7f)), v})});
       }},
  };
}

TEST(QdqLookup, ChainsBecomeOneTableAndMatchTheUnfusedGraphExactly) {
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  for (const Chain& c : Chains()) {
    SCOPED_TRACE(c.label);
    std::unique_ptr<ir::Graph> graph = BuildGraph(c, 13);
    Tensor x = *Tensor::Allocate(DataType::kFloat32, {2, 8, 5, 7});
    for (float& v : x.span<float>()) v = dist(rng);
    auto run = RunFusedAndReference(*graph, {{"x", x}});
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    auto& ops = run->ops;
    EXPECT_EQ(ops["QLookup"], 1) << run->plan;
    EXPECT_EQ(ops["Add"] + ops["Clip"] + ops["Div"] + ops["Sigmoid"] + ops["Tanh"] + ops["Mul"], 0)
        << run->plan;
    const Tensor& a = run->want[0].second;
    const Tensor& b = run->got[0].second;
    ASSERT_EQ(a.num_elements(), b.num_elements());
    for (int64_t i = 0; i < a.num_elements(); ++i) {
      ASSERT_EQ(a.data<float>()[i], b.data<float>()[i]) << "element " << i;
    }
  }
}

// A chain whose intermediate value is also read elsewhere must not fuse.
TEST(QdqLookup, LeavesChainsWithOtherReaders) {
  Chain c{"shared", DataType::kUint8, DataType::kUint8, [](ir::GraphBuilder& b, ir::Value* v) {
            ir::Value* s = b.Op("Sigmoid", {v});
            b.Output(s);
            return b.Op("Relu", {s});
          }};
  std::unique_ptr<ir::Graph> graph = BuildGraph(c, 13);
  auto session = Session::Create(*graph, SessionOptions{});
  ASSERT_TRUE(session.ok());
  auto plan = (*session)->Prepare({{"x", {2, 8, 5, 7}}});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  for (const PlanStep& step : (*plan)->steps) EXPECT_NE(step.op_type, "QLookup");
}

}  // namespace
}  // namespace qtune::runtime
