// Runs a graph node by node on RunValues, for tests of the value kernels: sequence and
// optional ops through runtime::ValueKernelRegistry, SequenceMap through
// runtime::RunSequenceMap (its body run node by node too), Identity on a non-tensor through
// runtime::ValueIdentity, every other node through its reference kernel. No compilation,
// no plan: If/Loop/Scan nodes are Unimplemented here.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/run_value.h"
#include "core/status.h"
#include "ir/graph.h"
#include "ir/subgraph.h"
#include "runtime/reference/registry.h"
#include "runtime/reference/value_kernels.h"

namespace qtune::testing {

using ValueMap = std::map<std::string, RunValue>;

inline StatusOr<std::vector<RunValue>> RunNodeByNode(const ir::Graph& graph, ValueMap values);

// SequenceMap through runtime::RunSequenceMap, its body parsed and run node by node.
inline StatusOr<std::vector<RunValue>> RunSequenceMapNode(const ir::Graph& graph,
                                                          const runtime::ValueKernelArgs& args) {
  const ir::Attribute* body = args.node.FindAttribute("body");
  if (body == nullptr || body->graphs.size() != 1) {
    return InvalidArgumentError(args.node.DebugName() + " has no body");
  }
  ir::SubgraphContext context{.model = &graph.info(), .what = "body"};
  for (const RunValue& in : args.inputs) {
    context.formal_input_types.push_back(in.is_sequence() ? in.elem_dtype() : in.tensor().dtype());
  }
  ASSIGN_OR_RETURN(std::unique_ptr<ir::Graph> body_graph,
                   ir::ParseSubgraph(body->graphs[0], context));
  const ir::Graph& g = *body_graph;
  runtime::SequenceMapBody run = [&g](std::span<const Tensor> in) -> StatusOr<std::vector<Tensor>> {
    ValueMap values;
    for (size_t i = 0; i < in.size(); ++i) values[g.inputs()[i]->name()] = RunValue::Of(in[i]);
    ASSIGN_OR_RETURN(std::vector<RunValue> out, RunNodeByNode(g, std::move(values)));
    std::vector<Tensor> tensors;
    for (const RunValue& v : out) tensors.push_back(v.tensor());
    return tensors;
  };
  return runtime::RunSequenceMap(args, run);
}

// Runs `graph` node by node from `values` (its inputs by name); returns the graph outputs.
inline StatusOr<std::vector<RunValue>> RunNodeByNode(const ir::Graph& graph, ValueMap values) {
  for (const ir::Value* init : graph.initializers()) {
    values[init->name()] = RunValue::Of(init->initializer());
  }
  const int64_t opset = graph.onnx_opset();
  ASSIGN_OR_RETURN(std::vector<ir::Node*> order, graph.TopologicalOrder());
  for (const ir::Node* node : order) {
    std::vector<RunValue> inputs;
    for (const ir::Value* in : node->inputs()) {
      inputs.push_back(in == nullptr ? RunValue() : values.at(in->name()));
    }
    const bool all_tensors =
        std::all_of(inputs.begin(), inputs.end(), [](const RunValue& v) { return v.is_tensor(); });
    std::vector<RunValue> outputs;
    const runtime::ValueKernelArgs args{.node = *node, .inputs = inputs, .opset = opset};
    if (runtime::ValueKernel kernel = runtime::ValueKernelRegistry::Get().FindFor(*node)) {
      ASSIGN_OR_RETURN(outputs, kernel(args));
    } else if (node->op_type() == "SequenceMap") {
      ASSIGN_OR_RETURN(outputs, RunSequenceMapNode(graph, args));
    } else if (node->op_type() == "Identity" && !all_tensors) {
      ASSIGN_OR_RETURN(outputs, runtime::ValueIdentity(args));
    } else if (all_tensors) {
      std::vector<Tensor> tensors;
      for (const RunValue& v : inputs) tensors.push_back(v.tensor());
      ASSIGN_OR_RETURN(std::vector<Tensor> out, runtime::EvaluateNode(*node, tensors, opset));
      for (Tensor& t : out) outputs.push_back(RunValue::Of(std::move(t)));
    } else {
      return UnimplementedError(node->DebugName() + " takes a sequence or optional");
    }
    for (size_t i = 0; i < node->num_outputs() && i < outputs.size(); ++i) {
      if (node->output(i) != nullptr) values[node->output(i)->name()] = outputs[i];
    }
  }
  std::vector<RunValue> results;
  for (const ir::Value* out : graph.outputs()) results.push_back(values.at(out->name()));
  return results;
}

}  // namespace qtune::testing
