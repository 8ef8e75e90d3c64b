#include "quant/residual.h"

#include <deque>
#include <optional>
#include <set>
#include <utility>

#include "quant/graph_patterns.h"

namespace qtune::quant {
namespace {

// Whether `target` is reached walking backwards from `start` (inclusive) over non-constant
// inputs, expanding at most kMaxBlockNodes producers. With `through_linear`, only paths
// that pass at least one linear op (graph_patterns.h) count.
bool ReachesBackward(const ir::Value* start, const ir::Value* target, bool through_linear) {
  std::deque<std::pair<const ir::Value*, bool>> queue = {{start, false}};
  std::set<std::pair<const ir::Value*, bool>> seen = {{start, false}};
  int expanded = 0;
  while (!queue.empty()) {
    auto [value, passed_linear] = queue.front();
    queue.pop_front();
    if (value == target && (passed_linear || !through_linear)) return true;
    const ir::Node* producer = value->producer();
    if (producer == nullptr) continue;
    if (++expanded > kMaxBlockNodes) return false;
    bool next_passed = passed_linear || IsLinearWithConstantWeight(*producer);
    for (const ir::Value* input : producer->inputs()) {
      if (input == nullptr || IsConstantValue(input)) continue;
      if (seen.insert({input, next_passed}).second) queue.push_back({input, next_passed});
    }
  }
  return false;
}

std::optional<ResidualAdd> MatchOrientation(const ir::Node& add, int branch) {
  const ir::Value* branch_value = add.input(branch);
  const ir::Value* shortcut = add.input(1 - branch);
  std::optional<const ir::Node*> linear = LinearProducerThroughEpilogue(branch_value);
  if (!linear) return std::nullopt;
  const ir::Value* linear_input = (*linear)->input(0);
  ResidualAdd match{&add, branch, 1 - branch, *linear, nullptr};
  if (ReachesBackward(linear_input, shortcut, /*through_linear=*/false)) return match;
  std::optional<const ir::Node*> downsample = LinearProducerThroughEpilogue(shortcut);
  if (downsample && *downsample != *linear &&
      ReachesBackward(linear_input, (*downsample)->input(0), /*through_linear=*/true)) {
    match.downsample_linear = *downsample;
    return match;
  }
  return std::nullopt;
}

}  // namespace

std::vector<ResidualAdd> FindResidualAdds(const ir::Graph& graph) {
  std::vector<ResidualAdd> found;
  for (const ir::Node* node : graph.nodes()) {
    if (node->op_type() != "Add" || node->num_inputs() != 2) continue;
    if (!(node->domain().empty() || node->domain() == "ai.onnx")) continue;
    const ir::Value* a = node->input(0);
    const ir::Value* b = node->input(1);
    if (a == nullptr || b == nullptr || a == b || IsConstantValue(a) || IsConstantValue(b)) {
      continue;
    }
    std::optional<ResidualAdd> first = MatchOrientation(*node, 0);
    std::optional<ResidualAdd> second = MatchOrientation(*node, 1);
    if (first.has_value() == second.has_value()) continue;  // neither, or ambiguous
    found.push_back(first ? *first : *second);
  }
  return found;
}

}  // namespace qtune::quant
