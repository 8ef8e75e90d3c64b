#include "runtime/reference/reference_executor.h"

#include <unordered_map>
#include <unordered_set>

#include "core/shape.h"
#include "runtime/control/control_flow.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime {
namespace {

Status CheckInput(const ir::Value& declared, const Tensor& given) {
  const std::string who = "graph input '" + declared.name() + "'";
  if (!given.is_valid()) return InvalidArgumentError(who + " is an empty tensor");
  if (declared.dtype() != DataType::kUndefined && given.dtype() != declared.dtype()) {
    return InvalidArgumentError(who + " must be " + std::string(DataTypeName(declared.dtype())) +
                                " but a " + std::string(DataTypeName(given.dtype())) +
                                " tensor was given");
  }
  const std::optional<Shape>& shape = declared.type().shape;
  if (!shape.has_value()) return Status::Ok();
  if (shape->rank() != given.rank()) {
    return InvalidArgumentError(who + " has shape " + shape->ToString() + " (rank " +
                                std::to_string(shape->rank()) + ") but a tensor of rank " +
                                std::to_string(given.rank()) + " [" + SizesToString(given.sizes()) +
                                "] was given");
  }
  for (size_t d = 0; d < shape->rank(); ++d) {
    const Dim& dim = shape->dim(d);
    if (dim.is_known() && dim.value != given.size(d)) {
      return InvalidArgumentError(who + " has shape " + shape->ToString() + " but a tensor of [" +
                                  SizesToString(given.sizes()) + "] was given (dim " +
                                  std::to_string(d) + ")");
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<NamedTensors> RunReference(const ir::Graph& graph, const NamedTensors& inputs,
                                    const RunReferenceOptions& options) {
  int64_t opset = graph.onnx_opset();
  if (opset == 0) opset = options.fallback_opset;
  if (opset == 0) {
    return InvalidArgumentError(
        "the graph does not import the default ONNX domain, so its opset is unknown; set "
        "info().opset_imports[\"\"] or RunReferenceOptions::fallback_opset");
  }

  std::unordered_map<const ir::Value*, Tensor> env;
  for (const auto& [name, tensor] : inputs) {
    const ir::Value* value = graph.FindValue(name);
    if (value == nullptr || !value->is_graph_input()) {
      return InvalidArgumentError("'" + name + "' is not an input of the graph");
    }
    if (env.count(value) != 0) return InvalidArgumentError("input '" + name + "' is given twice");
    RETURN_IF_ERROR(CheckInput(*value, tensor));
    env.emplace(value, tensor);
  }
  for (const ir::Value* value : graph.inputs()) {
    if (env.count(value) == 0) {
      return InvalidArgumentError("graph input '" + value->name() + "' was not given");
    }
  }
  for (const ir::Value* value : graph.initializers()) env.emplace(value, value->initializer());

  ASSIGN_OR_RETURN(std::vector<ir::Node*> order, graph.TopologicalOrder());
  // Last step that reads each value; graph outputs are never released.
  std::unordered_map<const ir::Value*, size_t> last_use;
  for (size_t step = 0; step < order.size(); ++step) {
    for (const ir::Value* v : order[step]->inputs()) {
      if (v != nullptr) last_use[v] = step;
    }
    for (const ir::Value* v : order[step]->implicit_inputs()) last_use[v] = step;
    for (const ir::Value* v : order[step]->outputs()) {
      if (v != nullptr && last_use.count(v) == 0) last_use[v] = step;
    }
  }
  std::vector<std::vector<const ir::Value*>> release_after(order.size());
  for (const auto& [value, step] : last_use) {
    if (!value->is_graph_output() && !value->is_initializer()) {
      release_after[step].push_back(value);
    }
  }

  NamedTensors computed;  // every node output, in execution order (keep_all_values only)
  std::vector<Tensor> args;
  for (size_t step = 0; step < order.size(); ++step) {
    const ir::Node& node = *order[step];
    args.clear();
    for (const ir::Value* v : node.inputs()) {
      if (v == nullptr) {
        args.emplace_back();
        continue;
      }
      auto it = env.find(v);
      if (it == env.end()) {
        return InvalidArgumentError(node.DebugName() + ": input '" + v->name() +
                                    "' is neither a graph input, an initializer nor produced "
                                    "by a node");
      }
      args.push_back(it->second);
    }
    std::vector<Tensor> outputs;
    if (HasSubgraphAttribute(node)) {  // If/Loop/Scan: bodies read outer values too
      std::vector<Tensor> implicit;
      for (const ir::Value* v : node.implicit_inputs()) {
        auto it = env.find(v);
        if (it == env.end()) {
          return InvalidArgumentError(node.DebugName() + ": outer value '" + v->name() +
                                      "' is not computed before the node");
        }
        implicit.push_back(it->second);
      }
      ASSIGN_OR_RETURN(outputs, EvaluateControlFlow(node, args, implicit, opset));
    } else {
      ASSIGN_OR_RETURN(outputs, EvaluateNode(node, args, opset));
    }
    for (size_t i = 0; i < node.num_outputs(); ++i) {
      const ir::Value* v = node.output(i);
      if (v == nullptr) continue;
      if (options.keep_all_values) computed.emplace_back(v->name(), outputs[i]);
      env[v] = std::move(outputs[i]);
    }
    if (!options.keep_all_values) {
      for (const ir::Value* v : release_after[step]) env.erase(v);
    }
  }

  NamedTensors result;
  std::unordered_set<std::string> returned;
  for (const ir::Value* v : graph.outputs()) {
    auto it = env.find(v);
    if (it == env.end()) {
      return InvalidArgumentError("graph output '" + v->name() + "' is never computed");
    }
    result.emplace_back(v->name(), it->second);
    returned.insert(v->name());
  }
  for (auto& [name, tensor] : computed) {
    if (returned.count(name) == 0) result.emplace_back(std::move(name), std::move(tensor));
  }
  return result;
}

}  // namespace qtune::runtime
