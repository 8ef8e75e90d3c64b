#include "passes/pass_util.h"

#include <utility>

#include "core/check.h"

namespace qtune::passes {

bool IsDefaultDomain(const ir::Node& node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

bool IsConstant(const ir::Value* value) {
  return value != nullptr && value->is_initializer() && !value->is_graph_input();
}

bool IsLive(const ir::Value* value) {
  return value != nullptr && (!value->uses().empty() || value->is_graph_output());
}

bool HasImplicitUse(const ir::Value* value) {
  for (const ir::Use& use : value->uses()) {
    if (use.input_index == ir::Use::kImplicitInput) return true;
  }
  return false;
}

Status ReplaceNodeWithInitializers(ir::Graph& graph, ir::Node* node,
                                   const std::vector<Tensor>& outputs) {
  std::vector<std::pair<ir::Value*, std::string>> renames;
  for (size_t i = 0; i < node->num_outputs(); ++i) {
    ir::Value* out = node->output(i);
    if (!IsLive(out)) continue;
    QTUNE_CHECK(i < outputs.size() && outputs[i].is_valid());
    ASSIGN_OR_RETURN(
        ir::Value * init,
        graph.AddInitializer(graph.UniqueValueName(out->name() + "_folded"), outputs[i]));
    graph.ReplaceAllUsesWith(out, init);
    renames.emplace_back(init, out->name());
  }
  RETURN_IF_ERROR(graph.RemoveNode(node));
  for (auto& [init, name] : renames) RETURN_IF_ERROR(graph.RenameValue(init, std::move(name)));
  return Status::Ok();
}

Status ReplaceNodeOutputKeepingName(ir::Graph& graph, ir::Node* node, ir::Value* old_value,
                                    ir::Value* replacement) {
  QTUNE_CHECK(old_value->producer() == node);
  std::string name = old_value->name();
  graph.ReplaceAllUsesWith(old_value, replacement);
  RETURN_IF_ERROR(graph.RemoveNode(node));
  return graph.RenameValue(replacement, std::move(name));
}

}  // namespace qtune::passes
