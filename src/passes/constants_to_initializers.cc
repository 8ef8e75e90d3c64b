#include "passes/constants_to_initializers.h"

#include <optional>

#include "passes/pass_util.h"

namespace qtune::passes {
namespace {

// The dense tensor a Constant node produces, or nullopt if it holds something an
// initializer cannot (sparse or string data) or is malformed.
std::optional<Tensor> ConstantValue(const ir::Node& node) {
  for (const ir::Attribute& a : node.attributes()) {
    if (a.name == "value" && a.type == ir::AttributeType::kTensor && a.t.is_valid()) {
      return a.t;
    }
    if (a.name == "value_float" && a.type == ir::AttributeType::kFloat) {
      return Tensor::Scalar<float>(a.f);
    }
    if (a.name == "value_int" && a.type == ir::AttributeType::kInt) {
      return Tensor::Scalar<int64_t>(a.i);
    }
    if (a.name == "value_floats" && a.type == ir::AttributeType::kFloats) {
      return Tensor::FromVector<float>({static_cast<int64_t>(a.floats.size())}, a.floats);
    }
    if (a.name == "value_ints" && a.type == ir::AttributeType::kInts) {
      return Tensor::FromVector<int64_t>({static_cast<int64_t>(a.ints.size())}, a.ints);
    }
  }
  return std::nullopt;
}

}  // namespace

StatusOr<bool> ConstantsToInitializers(ir::Graph& graph, const PassOptions& options) {
  bool changed = false;
  for (ir::Node* node : graph.nodes()) {
    if (node->op_type() != "Constant" || !IsDefaultDomain(*node)) continue;
    if (node->num_outputs() != 1 || !IsLive(node->output(0))) continue;
    std::optional<Tensor> value = ConstantValue(*node);
    if (!value.has_value()) continue;
    RETURN_IF_ERROR(ReplaceNodeWithInitializers(graph, node, {*value}));
    changed = true;
  }
  return changed;
}

}  // namespace qtune::passes
