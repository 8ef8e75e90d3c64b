#include "passes/remove_identity.h"

#include "passes/pass_util.h"

namespace qtune::passes {
namespace {

// True when `input` is a compile-time false (an absent input counts as false).
bool IsConstantFalse(const ir::Value* input) {
  if (input == nullptr) return true;
  if (!IsConstant(input)) return false;
  const Tensor& t = input->initializer();
  return t.dtype() == DataType::kBool && t.num_elements() == 1 && !t.data<bool>()[0];
}

// True for a Dropout that copies its input: inference mode and no live mask output.
bool IsInferenceDropout(const ir::Node& node, int64_t opset) {
  if (IsLive(node.output(1))) return false;
  if (opset != 0 && opset < 7 && node.GetInt("is_test", 0) == 0) return false;
  return IsConstantFalse(node.input(2));  // training_mode (opset 12+)
}

bool IsCopyNode(const ir::Node& node, int64_t opset) {
  if (!IsDefaultDomain(node) || node.input(0) == nullptr || node.output(0) == nullptr) {
    return false;
  }
  if (node.op_type() == "Identity") return node.num_outputs() == 1;
  if (node.op_type() == "Dropout") return IsInferenceDropout(node, opset);
  return false;
}

}  // namespace

StatusOr<bool> RemoveIdentity(ir::Graph& graph, const PassOptions& options) {
  bool changed = false;
  const int64_t opset = graph.onnx_opset();
  for (ir::Node* node : graph.nodes()) {
    if (!IsCopyNode(*node, opset)) continue;
    ir::Value* in = node->input(0);
    ir::Value* out = node->output(0);
    if (HasImplicitUse(out)) continue;
    if (!out->is_graph_output()) {
      graph.ReplaceAllUsesWith(out, in);
      // Uses of `in` by this node itself remain; RemoveNode drops them.
      RETURN_IF_ERROR(graph.RemoveNode(node));
      changed = true;
      continue;
    }
    // `out` is a graph output: `in` must be able to take its name.
    if (in->producer() == nullptr || in->is_graph_output() || HasImplicitUse(in)) continue;
    if (out->type().dtype != DataType::kUndefined) in->set_type(out->type());
    RETURN_IF_ERROR(ReplaceNodeOutputKeepingName(graph, node, out, in));
    changed = true;
  }
  return changed;
}

}  // namespace qtune::passes
