// Small read-only helpers the pattern fusions share: op tests, sole consumers, scalar
// constants, and removing a matched chain once its result has been rerouted.
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "runtime/fusion/fusion_pipeline.h"

namespace qtune::runtime::pattern {

inline bool IsDefaultOp(const ir::Node* node, const char* op) {
  return node != nullptr && node->op_type() == op &&
         (node->domain().empty() || node->domain() == "ai.onnx");
}

// The single consumer of `value`, if it has exactly one use and is not a graph output.
inline ir::Node* SoleConsumer(const ir::Value* value) {
  if (value == nullptr || value->is_graph_output() || value->uses().size() != 1) return nullptr;
  const ir::Use& use = value->uses()[0];
  return use.input_index == ir::Use::kImplicitInput ? nullptr : use.node;
}

// The node producing `value` if `value` feeds nothing but `consumer` (possibly through
// several of its inputs) and is not a graph output.
inline ir::Node* ExclusiveProducer(const ir::Value* value, const ir::Node* consumer) {
  if (value == nullptr || value->producer() == nullptr || value->is_graph_output()) {
    return nullptr;
  }
  for (const ir::Use& use : value->uses()) {
    if (use.node != consumer || use.input_index == ir::Use::kImplicitInput) return nullptr;
  }
  return value->producer();
}

// The value of a float32 initializer with exactly one element.
inline std::optional<float> Scalar(const ir::Value* value) {
  if (value == nullptr || !value->is_initializer()) return std::nullopt;
  const Tensor& t = value->initializer();
  if (t.num_elements() != 1 || t.dtype() != DataType::kFloat32) return std::nullopt;
  return t.data<float>()[0];
}

// True when v is within `relative` of `expected` (the constants exporters write, such as
// 1.41421 for sqrt(2), are rounded).
inline bool Near(std::optional<float> v, double expected, double relative = 1e-6) {
  return v && std::fabs(*v - expected) <= relative * std::max(1.0, std::fabs(expected));
}

// For a binary node with one scalar-constant operand: the other operand and the constant.
inline std::optional<std::pair<ir::Value*, float>> SplitScalar(const ir::Node* node) {
  if (node == nullptr || node->num_inputs() != 2) return std::nullopt;
  if (auto c = Scalar(node->input(1))) return std::make_pair(node->input(0), *c);
  if (auto c = Scalar(node->input(0))) return std::make_pair(node->input(1), *c);
  return std::nullopt;
}

// Copies the precision mark of `from` (kPrecisionAttribute) onto the node `spec` builds
// from it, unless `spec` already has one (FusedConv copies all of Conv's attributes).
inline void CarryPrecision(const ir::Node& from, ir::NodeSpec& spec) {
  const ir::Attribute* mark = from.FindAttribute(kPrecisionAttribute);
  if (mark == nullptr) return;
  for (const ir::Attribute& a : spec.attributes) {
    if (a.name == kPrecisionAttribute) return;
  }
  spec.attributes.push_back(*mark);
}

// Removes `nodes` (a matched chain whose result no longer has uses), consumers first.
inline Status RemoveChain(ir::Graph& graph, std::vector<ir::Node*> nodes) {
  while (!nodes.empty()) {
    auto unused = std::find_if(nodes.begin(), nodes.end(), [](const ir::Node* n) {
      return std::all_of(n->outputs().begin(), n->outputs().end(), [](const ir::Value* v) {
        return v == nullptr || (v->uses().empty() && !v->is_graph_output());
      });
    });
    if (unused == nodes.end()) {
      return InternalError("a fused chain still has readers of " + nodes.front()->DebugName());
    }
    RETURN_IF_ERROR(graph.RemoveNode(*unused));
    nodes.erase(unused);
  }
  return Status::Ok();
}

// Adds `spec` and makes it take over `result`: every reader of `result` reads the new
// node's output, which then gets `result`'s name. `chain` (which produced `result`) is
// removed. REQUIRES: spec has one output.
inline StatusOr<ir::Node*> ReplaceChain(ir::Graph& graph, ir::NodeSpec spec, ir::Value* result,
                                        std::vector<ir::Node*> chain) {
  std::string name = result->name();
  spec.output_names = {graph.UniqueValueName(name + "_fused")};
  ASSIGN_OR_RETURN(ir::Node * fused, graph.AddNode(std::move(spec)));
  graph.ReplaceAllUsesWith(result, fused->output(0));
  RETURN_IF_ERROR(RemoveChain(graph, std::move(chain)));
  RETURN_IF_ERROR(graph.RenameValue(fused->output(0), name));
  return fused;
}

// Applies fusions until none matches: `select(node)` returns an optional match, and
// `apply(graph, match)` rewrites it. After each rewrite the search starts again from the
// first node (a rewrite frees nodes and values that another match found in the same sweep
// could refer to). Returns how many matches were rewritten.
template <typename Select, typename Apply>
StatusOr<int> FuseAll(ir::Graph& graph, Select select, Apply apply) {
  int count = 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (ir::Node* node : graph.nodes()) {
      if (auto match = select(node)) {
        RETURN_IF_ERROR(apply(graph, std::move(*match)));
        ++count;
        changed = true;
        break;
      }
    }
  }
  return count;
}

}  // namespace qtune::runtime::pattern
