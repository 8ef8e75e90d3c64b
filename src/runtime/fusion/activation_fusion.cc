// Decomposed activations exporters emit, rewritten into the single ONNX op:
//   x * Clip(x + 3, 0, 6) / 6   (any order of the final Mul and Div/Mul-by-1/6) -> HardSwish(x)
//   Clip(x + 3, 0, 6) / 6                                                       -> HardSigmoid(x)
// so that the conv fusions can absorb them and one kernel runs them. The rewrite is exact
// up to float rounding. Ops are created in the default domain even when the model's opset
// predates HardSwish: the graph is the plan's private copy and is never saved.
#include <cmath>
#include <optional>

#include "runtime/fusion/fusion_pipeline.h"

namespace qtune::runtime {
namespace {

bool IsDefaultOp(const ir::Node* node, const char* op) {
  return node != nullptr && node->op_type() == op &&
         (node->domain().empty() || node->domain() == "ai.onnx");
}

ir::Node* SoleConsumer(const ir::Value* value) {
  if (value == nullptr || value->is_graph_output() || value->uses().size() != 1) return nullptr;
  const ir::Use& use = value->uses()[0];
  return use.input_index == ir::Use::kImplicitInput ? nullptr : use.node;
}

std::optional<float> Scalar(const ir::Value* value) {
  if (value == nullptr || !value->is_initializer()) return std::nullopt;
  const Tensor& t = value->initializer();
  if (t.num_elements() != 1 || t.dtype() != DataType::kFloat32) return std::nullopt;
  return t.data<float>()[0];
}

bool Near(std::optional<float> v, float expected) {
  return v && std::fabs(*v - expected) <= 1e-6f * std::max(1.0f, std::fabs(expected));
}

// For a binary node with one scalar-constant operand: the other operand and the constant.
std::optional<std::pair<ir::Value*, float>> SplitConstant(const ir::Node* node) {
  if (node->num_inputs() != 2) return std::nullopt;
  if (auto c = Scalar(node->input(1))) return std::make_pair(node->input(0), *c);
  if (auto c = Scalar(node->input(0))) return std::make_pair(node->input(1), *c);
  return std::nullopt;
}

bool IsClip0To6(const ir::Node* clip, int64_t opset) {
  if (!IsDefaultOp(clip, "Clip")) return false;
  if (opset < 11) return clip->GetFloat("min", -1) == 0.0f && clip->GetFloat("max", -1) == 6.0f;
  return Near(Scalar(clip->input(1)), 0.0f) && Near(Scalar(clip->input(2)), 6.0f);
}

// Divides by 6 (Div by 6 or Mul by 1/6).
bool IsDivideBySix(const ir::Node* node) {
  if (IsDefaultOp(node, "Div")) return Near(Scalar(node->input(1)), 6.0f);
  if (IsDefaultOp(node, "Mul")) {
    auto split = SplitConstant(node);
    return split && Near(split->second, 1.0f / 6.0f);
  }
  return false;
}

// The non-constant operand of a Mul that is not `known`.
ir::Value* OtherOperand(const ir::Node* mul, const ir::Value* known) {
  return mul->input(0) == known ? mul->input(1) : mul->input(0);
}

struct ActivationMatch {
  ir::Value* x = nullptr;
  std::vector<ir::Node*> nodes;  // in order; the last one's output is the result
  bool hard_swish = false;
};

std::optional<ActivationMatch> Select(const ir::Graph& graph, ir::Node* add) {
  if (!IsDefaultOp(add, "Add")) return std::nullopt;
  auto split = SplitConstant(add);
  if (!split || !Near(split->second, 3.0f)) return std::nullopt;
  ir::Value* x = split->first;
  ir::Node* clip = SoleConsumer(add->output(0));
  if (!IsClip0To6(clip, graph.onnx_opset())) return std::nullopt;
  ir::Node* next = SoleConsumer(clip->output(0));
  if (next == nullptr) return std::nullopt;
  if (IsDivideBySix(next)) {
    ir::Node* mul = SoleConsumer(next->output(0));
    if (IsDefaultOp(mul, "Mul") && OtherOperand(mul, next->output(0)) == x) {
      return ActivationMatch{x, {add, clip, next, mul}, true};
    }
    return ActivationMatch{x, {add, clip, next}, false};
  }
  if (IsDefaultOp(next, "Mul") && OtherOperand(next, clip->output(0)) == x) {
    ir::Node* div = SoleConsumer(next->output(0));
    if (IsDivideBySix(div)) return ActivationMatch{x, {add, clip, next, div}, true};
  }
  return std::nullopt;
}

Status Apply(ir::Graph& graph, const ActivationMatch& m) {
  ir::Value* result = m.nodes.back()->output(0);
  std::string name = result->name();
  ir::NodeSpec spec;
  spec.op_type = m.hard_swish ? "HardSwish" : "HardSigmoid";
  spec.name = graph.UniqueNodeName(m.nodes.front()->name() + "_" + spec.op_type);
  spec.inputs = {m.x};
  spec.output_names = {graph.UniqueValueName(name + "_fused")};
  if (!m.hard_swish) {
    spec.attributes = {ir::Attribute::Float("alpha", 1.0f / 6.0f),
                       ir::Attribute::Float("beta", 0.5f)};
  }
  ASSIGN_OR_RETURN(ir::Node * fused, graph.AddNode(std::move(spec)));
  graph.ReplaceAllUsesWith(result, fused->output(0));
  for (auto it = m.nodes.rbegin(); it != m.nodes.rend(); ++it) {
    RETURN_IF_ERROR(graph.RemoveNode(*it));
  }
  return graph.RenameValue(fused->output(0), name);
}

}  // namespace

StatusOr<int> FuseDecomposedActivations(ir::Graph& graph) {
  int count = 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (ir::Node* node : graph.nodes()) {
      if (auto match = Select(graph, node)) {
        RETURN_IF_ERROR(Apply(graph, *match));
        ++count;
        changed = true;
        break;
      }
    }
  }
  return count;
}

}  // namespace qtune::runtime
