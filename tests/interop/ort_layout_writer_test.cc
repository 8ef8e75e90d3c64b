// The ONNX Runtime layout writer (quant/ort_layout.h) on a small residual-style graph:
//   x -> Conv a -> Relu -> r ; r -> Conv b -> y1 ; r -> Conv c -> y2 ; Add(y1, y2) -> out
// checked for the structure quantize_static writes and for each variation's form.
#include <gtest/gtest.h>

#include <random>

#include "ir/builder.h"
#include "quant/ort_layout.h"

namespace qtune::quant {
namespace {

Tensor RandomFloat(std::vector<int64_t> sizes, uint32_t seed) {
  std::mt19937 rng(seed);
  Tensor t = *Tensor::Allocate(DataType::kFloat32, std::move(sizes));
  for (float& v : t.span<float>()) v = std::normal_distribution<float>(0.0f, 0.3f)(rng);
  return t;
}

std::unique_ptr<ir::Graph> SmallResidual() {
  ir::GraphBuilder b(13);
  ir::Value* x = b.Input("x", DataType::kFloat32, {1, 3, 8, 8});
  auto conv = [&](ir::Value* in, const std::string& name, int64_t c_in, uint32_t seed) {
    ir::Value* w = b.Initializer(name + "_w", RandomFloat({8, c_in, 3, 3}, seed));
    ir::Value* bias = b.Initializer(name + "_b", RandomFloat({8}, seed + 100));
    return b.Op("Conv", {in, w, bias}, {ir::Attribute::Ints("pads", {1, 1, 1, 1})},
                {.name = name, .output_names = {name + "_out"}});
  };
  ir::Value* a = conv(x, "a", 3, 1);
  ir::Value* r = b.Op("Relu", {a}, {}, {.name = "relu", .output_names = {"r"}});
  ir::Value* y1 = conv(r, "b", 8, 2);
  ir::Value* y2 = conv(r, "c", 8, 3);
  b.Output(b.Op("Add", {y1, y2}, {}, {.name = "add", .output_names = {"out"}}));
  return b.Build();
}

StatusOr<std::unique_ptr<ir::Graph>> Write(const OrtLayoutOptions& options) {
  std::unique_ptr<ir::Graph> g = SmallResidual();
  ASSIGN_OR_RETURN(QuantPlan plan, PlanOrtLayout(*g, {{"x", {1, 3, 8, 8}}}, options));
  for (QuantSite& site : plan.sites) {
    if (site.kind != QuantSite::Kind::kActivation) continue;
    TensorRange range;
    range.min = site.value == "r" ? 0.0f : -1.0f;
    range.max = 3.0f;
    range.amax = 3.0f;
    site.range = range;
  }
  RETURN_IF_ERROR(ExportOrtLayout(*g, plan, options).status());
  return g;
}

std::vector<ir::Node*> Nodes(const ir::Graph& g, const std::string& op) {
  std::vector<ir::Node*> out;
  for (ir::Node* n : g.nodes()) {
    if (n->op_type() == op) out.push_back(n);
  }
  return out;
}

ir::Node* Producer(const ir::Node* node, size_t input) {
  return node->input(input) != nullptr ? node->input(input)->producer() : nullptr;
}

TEST(OrtLayoutWriter, DefaultIsQuantizeStaticLayout) {
  auto g = Write(OrtLayoutOptions{});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const ir::Graph& graph = **g;
  EXPECT_TRUE(Nodes(graph, "Relu").empty()) << "the Relu after Conv a folds into its Q";
  EXPECT_EQ(Nodes(graph, "QuantizeLinear").size(), 4u);              // x, r (= a's output), y1, y2
  EXPECT_EQ(Nodes(graph, "DequantizeLinear").size(), 4u + 3u + 3u);  // + weights + biases
  ir::Node* b = graph.FindNode("b");
  ir::Node* c = graph.FindNode("c");
  ASSERT_NE(b, nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(b->input(0), c->input(0)) << "one DequantizeLinear shared by both readers of r";
  ir::Node* q_r = Producer(Producer(b, 0), 0);
  ASSERT_NE(q_r, nullptr);
  EXPECT_EQ(q_r->op_type(), "QuantizeLinear");
  EXPECT_EQ(Producer(q_r, 0), graph.FindNode("a")) << "the Q reads Conv a directly";
  EXPECT_EQ(q_r->input(2)->initializer().dtype(), DataType::kUint8);
  EXPECT_EQ(q_r->input(2)->initializer().data<uint8_t>()[0], 0) << "range [0, 3]: zp 0";

  for (ir::Node* conv : Nodes(graph, "Conv")) {
    ir::Node* w_dq = Producer(conv, 1);
    ASSERT_EQ(w_dq->op_type(), "DequantizeLinear");
    EXPECT_EQ(w_dq->input(0)->initializer().dtype(), DataType::kInt8);
    EXPECT_EQ(w_dq->GetInt("axis", 1), 0);
    ASSERT_NE(w_dq->input(2), nullptr) << "explicit weight zero points";
    const Tensor& wz = w_dq->input(2)->initializer();
    EXPECT_EQ(wz.dtype(), DataType::kInt8);
    EXPECT_EQ(wz.num_elements(), 8);
    for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(wz.data<int8_t>()[i], 0);

    ir::Node* b_dq = Producer(conv, 2);
    ASSERT_EQ(b_dq->op_type(), "DequantizeLinear");
    EXPECT_EQ(b_dq->input(0)->initializer().dtype(), DataType::kInt32);
    ASSERT_NE(b_dq->input(2), nullptr);
    EXPECT_EQ(b_dq->input(2)->initializer().dtype(), DataType::kInt32);
    const float x_scale = Producer(conv, 0)->input(1)->initializer().data<float>()[0];
    const Tensor& ws = w_dq->input(1)->initializer();
    const Tensor& bs = b_dq->input(1)->initializer();
    ASSERT_EQ(bs.num_elements(), 8);
    for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(bs.data<float>()[i], x_scale * ws.data<float>()[i]);

    ASSERT_EQ(conv->output(0)->uses().size(), 1u);
    EXPECT_EQ(conv->output(0)->uses()[0].node->op_type(), "QuantizeLinear")
        << "a Q after each Conv output";
  }
  EXPECT_EQ(graph.outputs()[0]->name(), "out");
  EXPECT_EQ(graph.outputs()[0]->producer()->op_type(), "Add") << "graph outputs stay float";
}

TEST(OrtLayoutWriter, WithoutZeroPointsOmitsEveryZeroOne) {
  OrtLayoutOptions o;
  o.zero_points = false;
  auto g = Write(o);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  for (ir::Node* conv : Nodes(**g, "Conv")) {
    EXPECT_EQ(Producer(conv, 1)->input(2), nullptr);
    EXPECT_EQ(Producer(conv, 2)->input(2), nullptr);
  }
  ir::Node* dq_r = Producer((*g)->FindNode("b"), 0);
  EXPECT_EQ(dq_r->input(2), nullptr) << "uint8 zero point 0 is the default";
  ir::Node* dq_x = Producer((*g)->FindNode("a"), 0);
  ASSERT_NE(dq_x->input(2), nullptr) << "x's range [-1, 3] needs a zero point";
}

TEST(OrtLayoutWriter, Int8AsymmetricShiftsZeroPoints) {
  OrtLayoutOptions o;
  o.activations = OrtActivationType::kInt8;
  auto g = Write(o);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ir::Node* dq_r = Producer((*g)->FindNode("b"), 0);
  const Tensor& zp = dq_r->input(2)->initializer();
  ASSERT_EQ(zp.dtype(), DataType::kInt8);
  EXPECT_EQ(zp.data<int8_t>()[0], -128);
  EXPECT_TRUE(Nodes(**g, "Relu").empty());
}

TEST(OrtLayoutWriter, Int8SymmetricKeepsTheRelu) {
  OrtLayoutOptions o;
  o.activations = OrtActivationType::kInt8Symmetric;
  auto g = Write(o);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(Nodes(**g, "Relu").size(), 1u) << "a symmetric Q does not clamp at 0";
}

TEST(OrtLayoutWriter, Opset21WritesOutputDtypeForInt8WithoutZeroPoint) {
  OrtLayoutOptions o;
  o.activations = OrtActivationType::kInt8Symmetric;
  o.zero_points = false;
  o.opset = 21;
  auto g = Write(o);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->onnx_opset(), 21);
  for (ir::Node* q : Nodes(**g, "QuantizeLinear")) {
    EXPECT_EQ(q->input(2), nullptr);
    EXPECT_EQ(q->GetInt("output_dtype", 0), static_cast<int64_t>(DataType::kInt8));
  }
}

TEST(OrtLayoutWriter, Opset10NeedsPerTensorWeights) {
  OrtLayoutOptions o;
  o.opset = 10;
  EXPECT_FALSE(Write(o).ok());
  o.per_channel = false;
  auto g = Write(o);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->onnx_opset(), 10);
  for (ir::Node* dq : Nodes(**g, "DequantizeLinear")) {
    EXPECT_EQ(dq->input(1)->initializer().num_elements(), 1);
    EXPECT_FALSE(dq->HasAttribute("axis"));
  }
}

}  // namespace
}  // namespace qtune::quant
