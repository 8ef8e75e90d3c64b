#include "passes/remove_dead_nodes.h"

#include <algorithm>

#include "passes/pass_util.h"

namespace qtune::passes {
namespace {

bool IsDead(const ir::Node& node) {
  return std::none_of(node.outputs().begin(), node.outputs().end(), IsLive);
}

}  // namespace

StatusOr<bool> RemoveDeadNodes(ir::Graph& graph, const PassOptions& options) {
  bool changed = false;
  // Walking consumers before producers removes a dead chain in one sweep when the node
  // list is topologically sorted; the outer loop covers any other order.
  for (bool removed = true; removed;) {
    removed = false;
    std::vector<ir::Node*> nodes = graph.nodes();
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      if (!IsDead(**it)) continue;
      RETURN_IF_ERROR(graph.RemoveNode(*it));
      removed = true;
    }
    changed |= removed;
  }
  std::vector<ir::Value*> initializers = graph.initializers();
  for (ir::Value* init : initializers) {
    if (IsLive(init) || init->is_graph_input()) continue;
    RETURN_IF_ERROR(graph.RemoveValue(init));
    changed = true;
  }
  return changed;
}

}  // namespace qtune::passes
