// Concrete shape propagation through a whole graph for given input sizes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "runtime/shape/shape_registry.h"

namespace qtune::runtime {

struct ShapeInferenceOptions {
  // Nodes whose inputs are all compile-time constants and whose inputs hold at most this
  // many elements in total are evaluated with the reference kernels, so shape subgraphs
  // (Shape -> Gather -> Concat -> Reshape) become constants.
  int64_t max_constant_eval_elements = 1 << 16;
};

using ValueInfoMap = std::unordered_map<const ir::Value*, ValueInfo>;

// Walks the graph in topological order. `input_sizes` gives the concrete sizes of every
// graph input (by name); initializers are constants. A node is handled by, in order:
// Shape/Size of a value with known sizes (constant result); constant evaluation (see
// options); its shape function; or, for ops without one, a run of its reference kernel on
// zero-filled inputs. Errors name the node and the input sizes it saw.
StatusOr<ValueInfoMap> InferShapes(const ir::Graph& graph,
                                   const std::map<std::string, std::vector<int64_t>>& input_sizes,
                                   const ShapeInferenceOptions& options);

}  // namespace qtune::runtime
