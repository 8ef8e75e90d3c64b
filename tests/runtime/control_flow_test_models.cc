#include "runtime/control_flow_test_models.h"

#include <string>

#include "core/check.h"
#include "ir/builder.h"
#include "ir/subgraph.h"

namespace qtune::testing {
namespace {

using ir::Attribute;
using ir::GraphBuilder;
using ir::Value;

constexpr int64_t kOpset = 16;

// Names every node of a body with a prefix, so no value name repeats across scopes.
class Ops {
 public:
  Ops(GraphBuilder& b, std::string prefix) : b_(b), prefix_(std::move(prefix)) {}
  Value* Op(const std::string& type, std::vector<Value*> inputs,
            std::vector<Attribute> attributes = {}) {
    return b_.Op(type, std::move(inputs), std::move(attributes), Named());
  }
  std::vector<Value*> MultiOp(const std::string& type, std::vector<Value*> inputs, size_t n,
                              std::vector<Attribute> attributes = {}) {
    return b_.MultiOp(type, std::move(inputs), n, std::move(attributes), Named());
  }
  Value* Const(Tensor t) { return b_.Constant(std::move(t), Named()); }
  Value* Ints(std::vector<int64_t> v) {
    const int64_t n = static_cast<int64_t>(v.size());
    return Const(Tensor::FromVector<int64_t>({n}, v));
  }
  Value* Float(float v) { return Const(Tensor::FromVector<float>({1}, {v})); }

 private:
  ir::OpOptions Named() {
    ir::OpOptions o;
    o.name = prefix_ + "_" + std::to_string(counter_++);
    return o;
  }
  GraphBuilder& b_;
  std::string prefix_;
  int counter_ = 0;
};

Attribute Body(const std::string& name, GraphBuilder& body, size_t num_outer) {
  auto attribute = ir::SubgraphAttribute(name, *body.Build(), num_outer);
  QTUNE_CHECK(attribute.ok());
  return std::move(attribute).value();
}

void Typed(GraphBuilder& b, Value* v, DataType dtype, std::vector<int64_t> sizes) {
  b.SetType(v, dtype, Shape::FromSizes(sizes));
}

// The front end of one VAD branch: Conv1d -> Relu -> mean over time -> projection.
// Returns the branch body; `outer_projection` reads wp/bp from the enclosing graph.
Attribute VadBranch(const std::string& name, int64_t kernel, int64_t pad, bool outer_projection,
                    std::mt19937& rng) {
  GraphBuilder b(kOpset);
  Ops ops(b, name);
  Value* x = b.Input("x", DataType::kFloat32, Shape({Dim::Known(1), Dim::Symbolic("N")}));
  Value* wp = nullptr;
  Value* bp = nullptr;
  if (outer_projection) {
    wp = b.Input("wp8", DataType::kFloat32, {64, 128});
    bp = b.Input("bp8", DataType::kFloat32, {128});
  } else {
    wp = b.Initializer(name + "_wp", RandomFloats({64, 128}, rng, 0.125f));
    bp = b.Initializer(name + "_bp", RandomFloats({128}, rng, 0.1f));
  }
  Value* w = b.Initializer(name + "_w", RandomFloats({64, 1, kernel}, rng, 0.5f));
  Value* bias = b.Initializer(name + "_b", RandomFloats({64}, rng, 0.1f));
  Value* x3 = ops.Op("Unsqueeze", {x, ops.Ints({1})});
  Value* conv = ops.Op("Conv", {x3, w, bias},
                       {Attribute::Ints("kernel_shape", {kernel}), Attribute::Ints("strides", {8}),
                        Attribute::Ints("pads", {pad, pad})});
  Value* mean = ops.Op("ReduceMean", {ops.Op("Relu", {conv})},
                       {Attribute::Ints("axes", {2}), Attribute::Int("keepdims", 0)});
  Value* feat = ops.Op("Relu", {ops.Op("Add", {ops.Op("MatMul", {mean, wp}), bp})});
  Typed(b, feat, DataType::kFloat32, {1, 128});
  b.Output(feat);
  return Body(name, b, outer_projection ? 3 : 1);
}

}  // namespace

Tensor RandomFloats(const std::vector<int64_t>& sizes, std::mt19937& rng, float scale) {
  auto t = Tensor::Allocate(DataType::kFloat32, sizes);
  QTUNE_CHECK(t.ok());
  std::uniform_real_distribution<float> dist(-scale, scale);
  for (float& v : t->span<float>()) v = dist(rng);
  return std::move(t).value();
}

std::unique_ptr<ir::Graph> BuildVadModel(uint64_t seed) {
  std::mt19937 rng(static_cast<uint32_t>(seed));
  GraphBuilder b(kOpset);
  Ops ops(b, "vad");
  Value* x = b.Input("x", DataType::kFloat32, Shape({Dim::Known(1), Dim::Symbolic("N")}));
  Value* sr = b.Input("sr", DataType::kInt64, std::vector<int64_t>{});
  Value* state = b.Input("state", DataType::kFloat32, {2, 1, 128});
  Value* wp8 = b.Initializer("wp8", RandomFloats({64, 128}, rng, 0.125f));
  Value* bp8 = b.Initializer("bp8", RandomFloats({128}, rng, 0.1f));
  Value* is16k = ops.Op("Equal", {sr, ops.Const(Tensor::Scalar<int64_t>(16000))});
  Value* feat = ops.Op(
      "If", {is16k},
      {VadBranch("then_branch", 16, 4, false, rng), VadBranch("else_branch", 8, 0, true, rng)});
  b.graph().SetImplicitInputs(b.last_node(), {x, wp8, bp8});
  Typed(b, feat, DataType::kFloat32, {1, 128});

  Value* h = ops.Op("Gather", {state, ops.Const(Tensor::Scalar<int64_t>(0))});
  Value* c = ops.Op("Gather", {state, ops.Const(Tensor::Scalar<int64_t>(1))});
  Value* wx = b.Initializer("lstm_wx", RandomFloats({128, 512}, rng, 0.1f));
  Value* wh = b.Initializer("lstm_wh", RandomFloats({128, 512}, rng, 0.1f));
  Value* bg = b.Initializer("lstm_b", RandomFloats({512}, rng, 0.1f));
  Value* gates =
      ops.Op("Add", {ops.Op("Add", {ops.Op("MatMul", {feat, wx}), ops.Op("MatMul", {h, wh})}), bg});
  std::vector<Value*> g =
      ops.MultiOp("Split", {gates, ops.Ints({128, 128, 128, 128})}, 4, {Attribute::Int("axis", 1)});
  Value* i_gate = ops.Op("Sigmoid", {g[0]});
  Value* f_gate = ops.Op("Sigmoid", {g[1]});
  Value* cell = ops.Op("Tanh", {g[2]});
  Value* o_gate = ops.Op("Sigmoid", {g[3]});
  Value* c2 = ops.Op("Add", {ops.Op("Mul", {f_gate, c}), ops.Op("Mul", {i_gate, cell})});
  Value* h2 = ops.Op("Mul", {o_gate, ops.Op("Tanh", {c2})});
  Value* state_n =
      b.Op("Concat",
           {ops.Op("Unsqueeze", {h2, ops.Ints({0})}), ops.Op("Unsqueeze", {c2, ops.Ints({0})})},
           {Attribute::Int("axis", 0)}, {.name = "vad_state", .output_names = {"stateN"}});
  Value* wo = b.Initializer("out_w", RandomFloats({128, 1}, rng, 0.3f));
  Value* bo = b.Initializer("out_b", RandomFloats({1}, rng, 0.1f));
  Value* logit = ops.Op("Add", {ops.Op("MatMul", {ops.Op("Relu", {h2}), wo}), bo});
  Value* prob = b.Op("Sigmoid", {logit}, {}, {.name = "vad_prob", .output_names = {"prob"}});
  Typed(b, prob, DataType::kFloat32, {1, 1});
  Typed(b, state_n, DataType::kFloat32, {2, 1, 128});
  b.Output(prob);
  b.Output(state_n);
  return b.Build();
}

std::unique_ptr<ir::Graph> BuildLoopAccumulate(bool runtime_trip) {
  GraphBuilder body(kOpset);
  {
    Ops ops(body, "acc");
    body.Input("i", DataType::kInt64, std::vector<int64_t>{});
    Value* cond = body.Input("cond_in", DataType::kBool, std::vector<int64_t>{});
    Value* y = body.Input("y_in", DataType::kFloat32, {3});
    Value* x = body.Input("x", DataType::kFloat32, {3});
    Value* y2 = ops.Op("Add", {y, x});
    Value* it = ops.Op("Cast", {body.graph().inputs()[0]}, {Attribute::Int("to", 1)});
    Value* scan = ops.Op("Mul", {y2, it});
    Value* cond_out = ops.Op("Identity", {cond});
    Typed(body, cond_out, DataType::kBool, {});
    Typed(body, y2, DataType::kFloat32, {3});
    Typed(body, scan, DataType::kFloat32, {3});
    body.Output(cond_out);
    body.Output(y2);
    body.Output(scan);
  }
  GraphBuilder b(kOpset);
  Ops ops(b, "main");
  Value* x = b.Input("x", DataType::kFloat32, {3});
  Value* m = runtime_trip ? b.Input("M", DataType::kInt64, std::vector<int64_t>{})
                          : ops.Const(Tensor::Scalar<int64_t>(5));
  Value* cond = ops.Const(Tensor::Scalar<bool>(true));
  Value* y0 = b.Initializer("y0", Tensor::FromVector<float>({3}, {0, 0, 0}));
  std::vector<Value*> outs = b.MultiOp("Loop", {m, cond, y0}, 2, {Body("body", body, 1)},
                                       {.name = "accumulate", .output_names = {"y", "scan"}});
  b.graph().SetImplicitInputs(b.last_node(), {x});
  Typed(b, outs[0], DataType::kFloat32, {3});
  b.SetType(outs[1], DataType::kFloat32, Shape({Dim::Symbolic("M"), Dim::Known(3)}));
  b.Output(outs[0]);
  b.Output(outs[1]);
  return b.Build();
}

std::unique_ptr<ir::Graph> BuildLoopUntil() {
  GraphBuilder body(kOpset);
  {
    Ops ops(body, "until");
    body.Input("i", DataType::kInt64, std::vector<int64_t>{});
    body.Input("cond_in", DataType::kBool, std::vector<int64_t>{});
    Value* s = body.Input("s_in", DataType::kFloat32, {1});
    Value* limit = body.Input("limit", DataType::kFloat32, {1});
    Value* s2 = ops.Op("Add", {s, ops.Float(1.5f)});
    Value* more = ops.Op("Squeeze", {ops.Op("Less", {s2, limit})});
    Typed(body, more, DataType::kBool, {});
    Typed(body, s2, DataType::kFloat32, {1});
    body.Output(more);
    body.Output(s2);
  }
  GraphBuilder b(kOpset);
  Value* m = b.Input("M", DataType::kInt64, std::vector<int64_t>{});
  Value* limit = b.Input("limit", DataType::kFloat32, {1});
  Value* s0 = b.Initializer("s0", Tensor::FromVector<float>({1}, {0}));
  Value* s = b.Op("Loop", {m, nullptr, s0}, {Body("body", body, 1)},
                  {.name = "until", .output_names = {"s"}});
  b.graph().SetImplicitInputs(b.last_node(), {limit});
  Typed(b, s, DataType::kFloat32, {1});
  b.Output(s);
  return b.Build();
}

std::unique_ptr<ir::Graph> BuildLoopGrowing(bool runtime_trip) {
  GraphBuilder body(kOpset);
  {
    Ops ops(body, "grow");
    Value* i = body.Input("i", DataType::kInt64, std::vector<int64_t>{});
    Value* cond = body.Input("cond_in", DataType::kBool, std::vector<int64_t>{});
    Value* v = body.Input("v_in", DataType::kFloat32, Shape({Dim::Symbolic("T"), Dim::Known(2)}));
    Value* first = ops.Op("Slice", {v, ops.Ints({0}), ops.Ints({1}), ops.Ints({0})});
    Value* row = ops.Op("Add", {first, ops.Op("Cast", {i}, {Attribute::Int("to", 1)})});
    Value* v2 = ops.Op("Concat", {v, row}, {Attribute::Int("axis", 0)});
    Value* cond_out = ops.Op("Identity", {cond});
    Typed(body, cond_out, DataType::kBool, {});
    body.SetType(v2, DataType::kFloat32, Shape({Dim::Symbolic("T2"), Dim::Known(2)}));
    body.Output(cond_out);
    body.Output(v2);
  }
  GraphBuilder b(kOpset);
  Ops ops(b, "main");
  Value* v0 = b.Input("v0", DataType::kFloat32, {1, 2});
  Value* m = runtime_trip ? b.Input("M", DataType::kInt64, std::vector<int64_t>{})
                          : ops.Const(Tensor::Scalar<int64_t>(4));
  Value* v = b.Op("Loop", {m, nullptr, v0}, {Body("body", body, 0)},
                  {.name = "grow", .output_names = {"v"}});
  b.SetType(v, DataType::kFloat32, Shape({Dim::Symbolic("T"), Dim::Known(2)}));
  b.Output(v);
  return b.Build();
}

std::unique_ptr<ir::Graph> BuildLoopWithIf() {
  auto branch = [](const std::string& name, bool negate) {
    GraphBuilder g(kOpset);
    Ops ops(g, "lif_" + name);
    Value* x = g.Input("x", DataType::kFloat32, {2});
    Value* scale = g.Input("scale", DataType::kFloat32, {1});
    Value* v = negate ? ops.Op("Neg", {x}) : ops.Op("Mul", {x, scale});
    Typed(g, v, DataType::kFloat32, {2});
    g.Output(v);
    return Body(name, g, 2);
  };
  GraphBuilder body(kOpset);
  {
    Ops ops(body, "lif");
    Value* i = body.Input("i", DataType::kInt64, std::vector<int64_t>{});
    Value* cond = body.Input("cond_in", DataType::kBool, std::vector<int64_t>{});
    Value* acc = body.Input("acc_in", DataType::kFloat32, {2});
    Value* x = body.Input("x", DataType::kFloat32, {2});
    Value* scale = body.Input("scale", DataType::kFloat32, {1});
    Value* even = ops.Op("Equal", {ops.Op("Mod", {i, ops.Const(Tensor::Scalar<int64_t>(2))}),
                                   ops.Const(Tensor::Scalar<int64_t>(0))});
    Value* term = ops.Op("If", {even}, {branch("then_branch", false), branch("else_branch", true)});
    body.graph().SetImplicitInputs(body.last_node(), {x, scale});
    Typed(body, term, DataType::kFloat32, {2});
    Value* acc2 = ops.Op("Add", {acc, term});
    Value* cond_out = ops.Op("Identity", {cond});
    Typed(body, cond_out, DataType::kBool, {});
    Typed(body, acc2, DataType::kFloat32, {2});
    body.Output(cond_out);
    body.Output(acc2);
  }
  GraphBuilder b(kOpset);
  Ops ops(b, "main");
  Value* x = b.Input("x", DataType::kFloat32, {2});
  Value* scale = b.Input("scale", DataType::kFloat32, {1});
  Value* acc0 = b.Initializer("acc0", Tensor::FromVector<float>({2}, {0, 0}));
  Value* acc = b.Op("Loop", {ops.Const(Tensor::Scalar<int64_t>(4)), nullptr, acc0},
                    {Body("body", body, 2)}, {.name = "loop_if", .output_names = {"acc"}});
  b.graph().SetImplicitInputs(b.last_node(), {x, scale});
  Typed(b, acc, DataType::kFloat32, {2});
  b.Output(acc);
  return b.Build();
}

std::unique_ptr<ir::Graph> BuildScanRnn(int64_t axis, bool reverse) {
  std::mt19937 rng(21);
  GraphBuilder body(kOpset);
  Value* w = nullptr;
  {
    Ops ops(body, "rnn");
    Value* h = body.Input("h_in", DataType::kFloat32, {1, 8});
    Value* x = body.Input("x_t", DataType::kFloat32, {1, 4});
    Value* w_outer = body.Input("W", DataType::kFloat32, {4, 8});
    Value* u = body.Initializer("rnn_U", RandomFloats({8, 8}, rng, 0.4f));
    Value* h2 =
        ops.Op("Tanh", {ops.Op("Add", {ops.Op("MatMul", {x, w_outer}), ops.Op("MatMul", {h, u})})});
    Typed(body, h2, DataType::kFloat32, {1, 8});
    Value* h_out = ops.Op("Identity", {h2});
    Typed(body, h_out, DataType::kFloat32, {1, 8});
    body.Output(h2);
    body.Output(h_out);
  }
  GraphBuilder b(kOpset);
  std::vector<int64_t> seq_sizes =
      axis == 0 ? std::vector<int64_t>{6, 1, 4} : std::vector<int64_t>{1, 6, 4};
  Value* seq = b.Input("seq", DataType::kFloat32, seq_sizes);
  Value* h0 = b.Input("h0", DataType::kFloat32, {1, 8});
  w = b.Initializer("W", RandomFloats({4, 8}, rng, 0.5f));
  std::vector<Value*> outs =
      b.MultiOp("Scan", {h0, seq}, 2,
                {Body("body", body, 1), Attribute::Int("num_scan_inputs", 1),
                 Attribute::Ints("scan_input_axes", {axis}),
                 Attribute::Ints("scan_input_directions", {reverse ? 1 : 0})},
                {.name = "rnn", .output_names = {"h_final", "hs"}});
  b.graph().SetImplicitInputs(b.last_node(), {w});
  Typed(b, outs[0], DataType::kFloat32, {1, 8});
  Typed(b, outs[1], DataType::kFloat32, {6, 1, 8});
  b.Output(outs[0]);
  b.Output(outs[1]);
  return b.Build();
}

}  // namespace qtune::testing
