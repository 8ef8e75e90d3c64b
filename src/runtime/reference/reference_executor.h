// Runs a whole graph with the reference kernels, node by node in topological order. It
// is slow and simple on purpose: the oracle that compiled plans and passes are checked
// against, and a per-layer debugging aid (keep_all_values).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"

namespace qtune::runtime {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

struct RunReferenceOptions {
  // Also return every value a node computed (not only the graph outputs).
  bool keep_all_values = false;
  // Opset used when the graph does not import the default ONNX domain (0 = treat that
  // as an error).
  int64_t fallback_opset = 0;
};

// Feeds `inputs` (one per graph input, by name, any order) to `graph` and returns the
// graph outputs in the graph's order. With options.keep_all_values, those are followed
// by every other node output in execution order.
//
// Errors: InvalidArgument naming the input for a missing, unknown or repeated input, or
// one whose dtype, rank or known dims differ from the graph's declaration; the error of
// the first node that fails (which names the node). Intermediate tensors are released
// after their last use unless keep_all_values is set.
//
// Returned tensors may share storage with `inputs`, initializers or Constant attributes
// (e.g. through Identity or Reshape); the caller must not write into them in place.
StatusOr<NamedTensors> RunReference(const ir::Graph& graph, const NamedTensors& inputs,
                                    const RunReferenceOptions& options = {});

}  // namespace qtune::runtime
