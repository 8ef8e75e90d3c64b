#include "ir/verify.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace qtune::ir {
namespace {

std::string Quote(const std::string& s) { return "'" + s + "'"; }

// Every value reachable from the graph's lists, each once, in a stable order.
struct ValueIndex {
  std::vector<const Value*> all;
  std::unordered_set<const Value*> set;
  void Add(const Value* v) {
    if (v != nullptr && set.insert(v).second) all.push_back(v);
  }
};

Status CheckValueInGraph(const Graph& graph, const std::unordered_set<const Node*>& nodes,
                         const Value* v, const std::string& user) {
  if (graph.FindValue(v->name()) != v) {
    return InvalidArgumentError(user + " reads value " + Quote(v->name()) +
                                ", which does not belong to this graph");
  }
  if (v->is_graph_input() || v->is_initializer()) return Status::Ok();
  const Node* producer = v->producer();
  if (producer == nullptr || nodes.count(producer) == 0) {
    return InvalidArgumentError(user + " reads " + Quote(v->name()) +
                                ", which is neither a graph input, an initializer nor the output "
                                "of a node in the graph");
  }
  return Status::Ok();
}

Status CheckDataType(const Value* v) {
  const DataType dtype = v->dtype();
  if (dtype != DataType::kUndefined && !IsKnownDataType(static_cast<int32_t>(dtype))) {
    return InvalidArgumentError("value " + Quote(v->name()) + " has unknown data type " +
                                std::to_string(static_cast<int32_t>(dtype)));
  }
  if (v->is_initializer()) {
    const Tensor& t = v->initializer();
    if (v->dtype() != t.dtype() || !v->type().shape.has_value() ||
        *v->type().shape != Shape::FromSizes(t.sizes())) {
      return InvalidArgumentError("initializer " + Quote(v->name()) + " is declared as " +
                                  std::string(DataTypeName(v->dtype())) +
                                  (v->type().shape ? v->type().shape->ToString() : "[?]") +
                                  " but holds " + t.DebugString());
    }
  }
  return Status::Ok();
}

}  // namespace

Status Verify(const Graph& graph) {
  const std::vector<Node*> nodes = graph.nodes();
  std::unordered_set<const Node*> node_set(nodes.begin(), nodes.end());

  // Graph inputs and initializers.
  ValueIndex values;
  for (const Value* v : graph.inputs()) {
    if (!v->is_graph_input() || v->producer() != nullptr || v->is_initializer()) {
      return InvalidArgumentError("graph input " + Quote(v->name()) +
                                  " is not marked as a plain graph input");
    }
    values.Add(v);
  }
  for (const Value* v : graph.initializers()) {
    if (!v->is_initializer() || v->producer() != nullptr) {
      return InvalidArgumentError("initializer " + Quote(v->name()) + " holds no tensor");
    }
    values.Add(v);
  }

  // Nodes: names, outputs, inputs; the expected use-lists.
  std::unordered_set<std::string> node_names;
  std::unordered_map<const Value*, std::vector<Use>> expected_uses;
  for (Node* n : nodes) {
    if (n->op_type().empty())
      return InvalidArgumentError("a node named " + Quote(n->name()) + " has no op_type");
    if (!n->name().empty() && !node_names.insert(n->name()).second) {
      return InvalidArgumentError("node name " + Quote(n->name()) + " is used by two nodes");
    }
    for (size_t i = 0; i < n->num_outputs(); ++i) {
      const Value* out = n->output(i);
      if (out == nullptr) continue;
      if (out->producer() != n || out->producer_output_index() != static_cast<int>(i)) {
        return InvalidArgumentError(n->DebugName() + " output " + Quote(out->name()) +
                                    " does not point back to its producer");
      }
      values.Add(out);
    }
  }
  for (Node* n : nodes) {
    for (size_t i = 0; i < n->num_inputs(); ++i) {
      const Value* in = n->input(i);
      if (in == nullptr) continue;
      RETURN_IF_ERROR(CheckValueInGraph(graph, node_set, in, n->DebugName()));
      expected_uses[in].push_back({n, static_cast<int>(i)});
    }
    for (const Value* in : n->implicit_inputs()) {
      if (in == nullptr) return InvalidArgumentError(n->DebugName() + " has a null implicit input");
      RETURN_IF_ERROR(CheckValueInGraph(graph, node_set, in, n->DebugName() + " (in a subgraph)"));
      expected_uses[in].push_back({n, Use::kImplicitInput});
    }
  }

  // Names, types and use-lists of every value.
  std::unordered_set<std::string> value_names;
  auto use_order = [](const Use& a, const Use& b) {
    return std::tie(a.node, a.input_index) < std::tie(b.node, b.input_index);
  };
  for (const Value* v : values.all) {
    if (v->name().empty()) return InvalidArgumentError("a value has an empty name");
    if (!value_names.insert(v->name()).second || graph.FindValue(v->name()) != v) {
      return InvalidArgumentError("value name " + Quote(v->name()) + " is used twice");
    }
    RETURN_IF_ERROR(CheckDataType(v));
    std::vector<Use> actual = v->uses();
    std::vector<Use>& expected = expected_uses[v];
    std::sort(actual.begin(), actual.end(), use_order);
    std::sort(expected.begin(), expected.end(), use_order);
    if (actual != expected) {
      return InvalidArgumentError(
          "the use-list of " + Quote(v->name()) + " has " + std::to_string(actual.size()) +
          " entries but the nodes read it " + std::to_string(expected.size()) + " times");
    }
  }

  // Graph outputs.
  std::unordered_set<const Value*> outputs;
  for (const Value* v : graph.outputs()) {
    if (v == nullptr || values.set.count(v) == 0) {
      return InvalidArgumentError("graph output " + Quote(v == nullptr ? "" : v->name()) +
                                  " is not a value of the graph");
    }
    if (!v->is_graph_output() || !outputs.insert(v).second) {
      return InvalidArgumentError("graph output " + Quote(v->name()) +
                                  " is listed twice or not marked as an output");
    }
  }
  for (const Value* v : values.all) {
    if (v->is_graph_output() && outputs.count(v) == 0) {
      return InvalidArgumentError("value " + Quote(v->name()) +
                                  " is marked as a graph output but is not in the output list");
    }
  }

  auto order = graph.TopologicalOrder();
  return order.status();
}

}  // namespace qtune::ir
