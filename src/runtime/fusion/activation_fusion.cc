// Decomposed activations exporters emit, rewritten into the single ONNX op:
//   x * Clip(x + 3, 0, 6) / 6   (any order of the final Mul and Div/Mul-by-1/6) -> HardSwish(x)
//   Clip(x + 3, 0, 6) / 6                                                       -> HardSigmoid(x)
// so that the conv fusions can absorb them and one kernel runs them. The rewrite is exact
// up to float rounding. Ops are created in the default domain even when the model's opset
// predates HardSwish: the graph is the plan's private copy and is never saved.
#include <cmath>
#include <optional>

#include "runtime/fusion/fusion_pipeline.h"
#include "runtime/fusion/pattern_util.h"

namespace qtune::runtime {
namespace {

using pattern::IsDefaultOp;
using pattern::Near;
using pattern::Scalar;
using pattern::SoleConsumer;
using pattern::SplitScalar;

bool IsClip0To6(const ir::Node* clip, int64_t opset) {
  if (!IsDefaultOp(clip, "Clip")) return false;
  if (opset < 11) return clip->GetFloat("min", -1) == 0.0f && clip->GetFloat("max", -1) == 6.0f;
  return Near(Scalar(clip->input(1)), 0.0f) && Near(Scalar(clip->input(2)), 6.0f);
}

// Divides by 6 (Div by 6 or Mul by 1/6).
bool IsDivideBySix(const ir::Node* node) {
  if (IsDefaultOp(node, "Div")) return Near(Scalar(node->input(1)), 6.0f);
  if (IsDefaultOp(node, "Mul")) {
    auto split = SplitScalar(node);
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
  auto split = SplitScalar(add);
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
  ir::NodeSpec spec;
  spec.op_type = m.hard_swish ? "HardSwish" : "HardSigmoid";
  spec.name = graph.UniqueNodeName(m.nodes.front()->name() + "_" + spec.op_type);
  spec.inputs = {m.x};
  if (!m.hard_swish) {
    spec.attributes = {ir::Attribute::Float("alpha", 1.0f / 6.0f),
                       ir::Attribute::Float("beta", 0.5f)};
  }
  pattern::CarryPrecision(*m.nodes.front(), spec);
  return pattern::ReplaceChain(graph, std::move(spec), m.nodes.back()->output(0), m.nodes).status();
}

}  // namespace

StatusOr<int> FuseDecomposedActivations(ir::Graph& graph) {
  return pattern::FuseAll(
      graph, [&](ir::Node* node) { return Select(graph, node); }, Apply);
}

}  // namespace qtune::runtime
