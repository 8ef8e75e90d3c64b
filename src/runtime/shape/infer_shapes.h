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
// What shape inference knows before running a graph in which some sizes depend on values.
struct PartialShapes {
  ValueInfoMap infos;  // every value whose data type and sizes are known before running
  // Nodes whose outputs are known only by running (topological order): see
  // InferShapesPartially. Empty for a static-size graph.
  std::vector<const ir::Node*> deferred;
  Status first_deferral;  // why deferred[0] was deferred (the error InferShapes returns)
};

// Like InferShapes, but instead of refusing a node whose output sizes or kinds are known
// only at run time it defers it, and every node that reads a deferred value:
//   - ops whose output sizes depend on input values (NonZero, NonMaxSuppression, Unique,
//     Compress, ...) unless all their inputs are constants;
//   - ops that need an input's value to size their outputs (Reshape's shape, TopK's k,
//     ConstantOfShape's shape, Slice's starts, ...) when that value is computed at run time;
//   - If/Loop/Scan whose output sizes depend on the condition or the trip count;
//   - ops on sequences and optionals (runtime/reference/value_kernels.h), and graph inputs
//     of those kinds (`input_sizes` need not list them).
// An op with no kernel at all is still refused (Unimplemented), before anything runs.
StatusOr<PartialShapes> InferShapesPartially(
    const ir::Graph& graph, const std::map<std::string, std::vector<int64_t>>& input_sizes,
    const ShapeInferenceOptions& options);

// The inputs of `node` whose values (not only sizes) set its output sizes: Reshape's
// shape, Slice's starts/ends/axes/steps, TopK's k, ConstantOfShape's shape, ...
std::vector<size_t> SizeValueInputs(const ir::Node& node);

// True when `status` says a node needs a value that is computed at run time (the shape
// functions' ValueComputedAtRunTime errors).
bool IsComputedAtRunTime(const Status& status);

StatusOr<ValueInfoMap> InferShapes(const ir::Graph& graph,
                                   const std::map<std::string, std::vector<int64_t>>& input_sizes,
                                   const ShapeInferenceOptions& options);

}  // namespace qtune::runtime
