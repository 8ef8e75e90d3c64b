// ExtractGraph: a graph made of some of another graph's nodes, for the stages of a
// GraphRunner (dynamic/graph_runner.h). The values those nodes read and none of them
// produces become the new graph's inputs, or initializers where a constant is given.
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"

namespace qtune::runtime {

struct ExtractOptions {
  // Boundary values given as constants (by name): initializers of the new graph. The
  // source's own initializers are always copied (shared, not duplicated).
  std::map<std::string, Tensor> constants;
  // Types of the other boundary values (by name); a value not listed keeps its type in
  // the source graph.
  std::map<std::string, ir::TensorType> input_types;
  // Names of the values the new graph outputs, in order; each must be produced by one of
  // the nodes.
  std::vector<std::string> outputs;
};

// `nodes` are nodes of `source` in topological order. Node names, attributes (bodies
// included) and implicit inputs are kept; the model info (opsets) is copied.
StatusOr<std::unique_ptr<ir::Graph>> ExtractGraph(const ir::Graph& source,
                                                  std::span<const ir::Node* const> nodes,
                                                  const ExtractOptions& options);

}  // namespace qtune::runtime
