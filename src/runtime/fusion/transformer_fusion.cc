// Decomposed transformer ops that exporters emit, rewritten into the single ONNX op so one
// kernel runs them (exact up to float rounding):
//
//   LayerNorm over the last axis:
//     m = ReduceMean(x); d = x - m; v = ReduceMean(d^2 or d*d); n = d / Sqrt(v + eps)
//     [* gamma] [+ beta]                             -> LayerNormalization(x, gamma, beta)
//   (ReduceMean's axes as attribute before opset 18, as a constant input from 18; gamma
//   and beta constant and per channel; a missing gamma becomes ones, a missing beta is
//   left out.)
//
//   GELU, erf form:  x * 0.5 * (1 + Erf(x / sqrt2))   (Div by sqrt2 or Mul by 1/sqrt2;
//                    the 0.5 applied to x, to (1 + Erf) or to the product)  -> Gelu(x)
//   GELU, tanh form: 0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
//                    (x^3 as Pow(x, 3) or x*x*x)          -> Gelu(x, approximate="tanh")
//
// Ops are created in the default domain whatever the model's opset (LayerNormalization is
// opset 17, Gelu 20): the graph is the plan's private copy and is never saved.
#include <numbers>

#include "runtime/fusion/fusion_pipeline.h"
#include "runtime/fusion/pattern_util.h"

namespace qtune::runtime {
namespace {

using pattern::ExclusiveProducer;
using pattern::IsDefaultOp;
using pattern::Near;
using pattern::SoleConsumer;
using pattern::SplitScalar;

// ---------------------------------------------------------------- LayerNormalization

const TypeAndSizes* Find(const SizesByName& sizes, const ir::Value* value) {
  if (value == nullptr) return nullptr;
  auto it = sizes.find(value->name());
  return it == sizes.end() ? nullptr : &it->second;
}

// True for a ReduceMean over the last axis of its rank-`rank` input, keeping dims.
bool IsLastAxisMean(const ir::Node* node, size_t rank) {
  if (!IsDefaultOp(node, "ReduceMean") || node->GetInt("keepdims", 1) != 1 || rank == 0) {
    return false;
  }
  std::vector<int64_t> axes;
  if (node->input(1) != nullptr) {
    const ir::Value* v = node->input(1);
    if (!v->is_initializer() || v->initializer().dtype() != DataType::kInt64) return false;
    const Tensor& t = v->initializer();
    axes.assign(t.data<int64_t>(), t.data<int64_t>() + t.num_elements());
  } else {
    axes = node->GetInts("axes", {});
  }
  const int64_t last = static_cast<int64_t>(rank) - 1;
  return axes.size() == 1 && (axes[0] == -1 || axes[0] == last);
}

// A float32 constant that only varies along the last of `rank` axes (size `channels`):
// its values as a [channels] tensor.
std::optional<Tensor> PerChannel(const ir::Value* value, size_t rank, int64_t channels) {
  if (value == nullptr || !value->is_initializer()) return std::nullopt;
  const Tensor& t = value->initializer();
  if (t.dtype() != DataType::kFloat32 || t.rank() > rank) return std::nullopt;
  for (size_t i = 0; i + 1 < t.rank(); ++i) {
    if (t.size(i) != 1) return std::nullopt;
  }
  if (t.num_elements() == channels) {
    StatusOr<Tensor> flat = t.Reshaped({channels});
    if (flat.ok()) return *flat;
    return std::nullopt;
  }
  if (t.num_elements() != 1) return std::nullopt;
  Tensor filled = *Tensor::Allocate(DataType::kFloat32, {channels});
  for (float& v : filled.span<float>()) v = t.data<float>()[0];
  return filled;
}

struct LayerNormMatch {
  ir::Value* x = nullptr;
  int64_t channels = 0;
  float epsilon = 0;
  std::optional<Tensor> scale, bias;  // [C]
  std::vector<ir::Node*> nodes;       // the whole chain; the last one gives the result
};

// The square of `d` feeding only ReduceMean: Pow(d, 2) or Mul(d, d).
bool IsSquareOf(const ir::Node* node, const ir::Value* d) {
  if (IsDefaultOp(node, "Pow")) {
    return node->input(0) == d && Near(pattern::Scalar(node->input(1)), 2.0);
  }
  return IsDefaultOp(node, "Mul") && node->input(0) == d && node->input(1) == d;
}

std::optional<LayerNormMatch> SelectLayerNorm(ir::Node* mean_node, const SizesByName& sizes) {
  if (!IsDefaultOp(mean_node, "ReduceMean")) return std::nullopt;
  LayerNormMatch m;
  m.x = mean_node->input(0);
  const TypeAndSizes* x_info = Find(sizes, m.x);
  if (x_info == nullptr || x_info->dtype != DataType::kFloat32 || x_info->sizes.empty()) {
    return std::nullopt;
  }
  const size_t rank = x_info->sizes.size();
  const int64_t channels = x_info->sizes.back();
  m.channels = channels;
  if (!IsLastAxisMean(mean_node, rank)) return std::nullopt;
  ir::Node* sub = SoleConsumer(mean_node->output(0));
  if (!IsDefaultOp(sub, "Sub") || sub->input(0) != m.x || sub->input(1) != mean_node->output(0)) {
    return std::nullopt;
  }
  // d = x - mean feeds exactly the square and the final Div.
  ir::Value* d = sub->output(0);
  if (d->is_graph_output()) return std::nullopt;
  ir::Node* square = nullptr;
  ir::Node* div = nullptr;
  for (const ir::Use& use : d->uses()) {
    if (IsSquareOf(use.node, d) && (square == nullptr || square == use.node)) {
      square = use.node;
    } else if (IsDefaultOp(use.node, "Div") && use.input_index == 0 && div == nullptr) {
      div = use.node;
    } else {
      return std::nullopt;
    }
  }
  if (square == nullptr || div == nullptr) return std::nullopt;
  ir::Node* variance = SoleConsumer(square->output(0));
  if (!IsLastAxisMean(variance, rank)) return std::nullopt;
  ir::Node* add_eps = SoleConsumer(variance->output(0));
  auto eps = IsDefaultOp(add_eps, "Add") ? SplitScalar(add_eps) : std::nullopt;
  if (!eps || eps->first != variance->output(0)) return std::nullopt;
  m.epsilon = eps->second;
  ir::Node* sqrt = SoleConsumer(add_eps->output(0));
  if (!IsDefaultOp(sqrt, "Sqrt") || SoleConsumer(sqrt->output(0)) != div ||
      div->input(1) != sqrt->output(0)) {
    return std::nullopt;
  }
  m.nodes = {mean_node, sub, square, variance, add_eps, sqrt, div};
  // Optional per-channel affine: * gamma, then + beta.
  for (const char* op : {"Mul", "Add"}) {
    ir::Value* tail = m.nodes.back()->output(0);
    ir::Node* next = SoleConsumer(tail);
    if (!IsDefaultOp(next, op) || next->num_inputs() != 2) continue;
    ir::Value* other = next->input(0) == tail ? next->input(1) : next->input(0);
    std::optional<Tensor> values = PerChannel(other, rank, channels);
    if (!values) continue;
    (std::string(op) == "Mul" ? m.scale : m.bias) = std::move(values);
    m.nodes.push_back(next);
  }
  // The affine must not have broadcast the result beyond x's sizes.
  const TypeAndSizes* y_info = Find(sizes, m.nodes.back()->output(0));
  if (y_info == nullptr || y_info->sizes != x_info->sizes) return std::nullopt;
  return m;
}

Status ApplyLayerNorm(ir::Graph& graph, LayerNormMatch m) {
  ir::Value* result = m.nodes.back()->output(0);
  if (!m.scale) {  // LayerNormalization requires Scale
    ASSIGN_OR_RETURN(m.scale, Tensor::Allocate(DataType::kFloat32, {m.channels}));
    for (float& v : m.scale->span<float>()) v = 1.0f;
  }
  ir::NodeSpec spec;
  spec.op_type = "LayerNormalization";
  spec.name = graph.UniqueNodeName(m.nodes.front()->name() + "_LayerNormalization");
  ASSIGN_OR_RETURN(ir::Value * scale,
                   graph.AddInitializer(graph.UniqueValueName(result->name() + "_ln_scale"),
                                        std::move(*m.scale)));
  spec.inputs = {m.x, scale};
  if (m.bias) {
    ASSIGN_OR_RETURN(ir::Value * bias,
                     graph.AddInitializer(graph.UniqueValueName(result->name() + "_ln_bias"),
                                          std::move(*m.bias)));
    spec.inputs.push_back(bias);
  }
  spec.attributes = {ir::Attribute::Int("axis", -1), ir::Attribute::Float("epsilon", m.epsilon)};
  pattern::CarryPrecision(*m.nodes.front(), spec);
  return pattern::ReplaceChain(graph, std::move(spec), result, m.nodes).status();
}

// ---------------------------------------------------------------- Gelu

struct GeluMatch {
  ir::Value* x = nullptr;
  bool tanh = false;
  std::vector<ir::Node*> nodes;  // the whole chain
  ir::Value* result = nullptr;
};

// The input side of the erf form: Div(x, sqrt2) or Mul(x, 1/sqrt2) feeding only `erf`.
bool SelectErfInput(ir::Node* erf, GeluMatch& m) {
  ir::Node* scale = ExclusiveProducer(erf->input(0), erf);
  auto split = SplitScalar(scale);
  if (!split) return false;
  bool div = IsDefaultOp(scale, "Div") && scale->input(1) != split->first &&
             Near(split->second, std::numbers::sqrt2, 1e-5);
  bool mul = IsDefaultOp(scale, "Mul") && Near(split->second, 1 / std::numbers::sqrt2, 1e-5);
  if (!div && !mul) return false;
  m.x = split->first;
  m.nodes = {scale, erf};
  return true;
}

// x^3 as Pow(x, 3) or Mul(Mul(x, x), x) in either order, feeding only `consumer`.
std::optional<std::vector<ir::Node*>> SelectCube(const ir::Value* cube, const ir::Node* consumer,
                                                 const ir::Value* x) {
  ir::Node* node = ExclusiveProducer(cube, consumer);
  if (IsDefaultOp(node, "Pow") && node->input(0) == x && Near(pattern::Scalar(node->input(1)), 3)) {
    return std::vector<ir::Node*>{node};
  }
  if (!IsDefaultOp(node, "Mul")) return std::nullopt;
  for (int square_index : {0, 1}) {
    ir::Node* square = ExclusiveProducer(node->input(square_index), node);
    if (node->input(1 - square_index) == x && IsDefaultOp(square, "Mul") && square->input(0) == x &&
        square->input(1) == x) {
      return std::vector<ir::Node*>{square, node};
    }
  }
  return std::nullopt;
}

// The input side of the tanh form: sqrt(2/pi) * (x + 0.044715 * x^3) feeding only `tanh`.
bool SelectTanhInput(ir::Node* tanh, GeluMatch& m) {
  ir::Node* outer = ExclusiveProducer(tanh->input(0), tanh);
  auto k = IsDefaultOp(outer, "Mul") ? SplitScalar(outer) : std::nullopt;
  if (!k || !Near(k->second, std::sqrt(2 / std::numbers::pi), 1e-5)) return false;
  ir::Node* sum = ExclusiveProducer(k->first, outer);
  if (!IsDefaultOp(sum, "Add") || sum->num_inputs() != 2) return false;
  for (int cubic_index : {0, 1}) {
    ir::Node* cubic = ExclusiveProducer(sum->input(cubic_index), sum);
    auto c = IsDefaultOp(cubic, "Mul") ? SplitScalar(cubic) : std::nullopt;
    if (!c || !Near(c->second, 0.044715, 1e-5)) continue;
    ir::Value* x = sum->input(1 - cubic_index);
    auto cube = SelectCube(c->first, cubic, x);
    if (!cube) continue;
    m.x = x;
    m.tanh = true;
    m.nodes = *cube;
    m.nodes.insert(m.nodes.end(), {cubic, sum, outer, tanh});
    return true;
  }
  return false;
}

// The output side shared by both forms: (1 + t) multiplied by x and by 0.5 in any order.
bool SelectGeluTail(ir::Node* t_node, GeluMatch& m) {
  ir::Node* add = SoleConsumer(t_node->output(0));
  auto one = IsDefaultOp(add, "Add") ? SplitScalar(add) : std::nullopt;
  if (!one || !Near(one->second, 1.0)) return false;
  ir::Value* a = add->output(0);
  ir::Node* mul = SoleConsumer(a);
  if (!IsDefaultOp(mul, "Mul") || mul->num_inputs() != 2) return false;
  m.nodes.insert(m.nodes.end(), {add, mul});
  if (auto half = SplitScalar(mul)) {  // (1 + t) * 0.5, then * x
    ir::Node* last = SoleConsumer(mul->output(0));
    if (!Near(half->second, 0.5) || !IsDefaultOp(last, "Mul")) return false;
    ir::Value* other = last->input(0) == mul->output(0) ? last->input(1) : last->input(0);
    if (other != m.x) return false;
    m.nodes.push_back(last);
    m.result = last->output(0);
    return true;
  }
  ir::Value* other = mul->input(0) == a ? mul->input(1) : mul->input(0);
  if (other == m.x) {  // (1 + t) * x, then * 0.5
    ir::Node* last = SoleConsumer(mul->output(0));
    auto half = IsDefaultOp(last, "Mul") ? SplitScalar(last) : std::nullopt;
    if (!half || !Near(half->second, 0.5)) return false;
    m.nodes.push_back(last);
    m.result = last->output(0);
    return true;
  }
  // (x * 0.5) * (1 + t)
  ir::Node* half_x = ExclusiveProducer(other, mul);
  auto half = IsDefaultOp(half_x, "Mul") ? SplitScalar(half_x) : std::nullopt;
  if (!half || half->first != m.x || !Near(half->second, 0.5)) return false;
  m.nodes.push_back(half_x);
  m.result = mul->output(0);
  return true;
}

std::optional<GeluMatch> SelectGelu(ir::Node* node) {
  GeluMatch m;
  bool head = IsDefaultOp(node, "Erf")    ? SelectErfInput(node, m)
              : IsDefaultOp(node, "Tanh") ? SelectTanhInput(node, m)
                                          : false;
  if (!head || !SelectGeluTail(node, m)) return std::nullopt;
  return m;
}

Status ApplyGelu(ir::Graph& graph, const GeluMatch& m) {
  ir::NodeSpec spec;
  spec.op_type = "Gelu";
  spec.name = graph.UniqueNodeName(m.nodes.front()->name() + "_Gelu");
  spec.inputs = {m.x};
  if (m.tanh) spec.attributes = {ir::Attribute::String("approximate", "tanh")};
  pattern::CarryPrecision(*m.nodes.front(), spec);
  return pattern::ReplaceChain(graph, std::move(spec), m.result, m.nodes).status();
}

}  // namespace

StatusOr<int> FuseDecomposedLayerNorm(ir::Graph& graph, const SizesByName& sizes) {
  return pattern::FuseAll(
      graph, [&](ir::Node* node) { return SelectLayerNorm(node, sizes); }, ApplyLayerNorm);
}

StatusOr<int> FuseDecomposedGelu(ir::Graph& graph) {
  return pattern::FuseAll(graph, SelectGelu, ApplyGelu);
}

}  // namespace qtune::runtime
