// A subgraph body (If branch, Loop/Scan body) as something the control-flow kernels can
// run: parsed into its own Graph (ir/subgraph.h), cleaned by the pass pipeline, and
// compiled into a Plan once per set of body input sizes (cached), like a Session does for
// a model. A PlanExecutor (plan/plan_executor.h) runs one such Plan on caller buffers
// through a PlanBinding, so a loop binds its buffers once and then runs iterations
// without allocating.
//
// Not thread-safe; the owning kernel runs inside one Session::Run at a time.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"
#include "ir/subgraph.h"
#include "runtime/compile.h"
#include "runtime/plan/plan.h"
#include "runtime/plan/plan_executor.h"
#include "runtime/shape/shape_registry.h"

namespace qtune::runtime {

struct SubgraphOptions {
  CompileOptions compile;
  bool optimize = true;  // run the pass pipeline on the body
};

class SubgraphProgram {
 public:
  static StatusOr<std::unique_ptr<SubgraphProgram>> Create(const std::string& bytes,
                                                           const ir::SubgraphContext& context,
                                                           const SubgraphOptions& options);
  SubgraphProgram(const SubgraphProgram&) = delete;
  SubgraphProgram& operator=(const SubgraphProgram&) = delete;

  const ir::Graph& graph() const { return *graph_; }
  size_t num_formal_inputs() const { return num_formal_; }
  size_t num_outputs() const { return graph_->outputs().size(); }
  // Names of the outer-scope values the body reads at run time (its inputs after the
  // formal ones), in input order.
  std::vector<std::string> outer_input_names() const;

  // Shape inference for one set of input sizes (one per body input): every output's
  // dtype, sizes and, where known at compile time, value.
  StatusOr<std::vector<ValueInfo>> InferOutputs(
      const std::vector<std::vector<int64_t>>& input_sizes) const;
  // The compiled body for these input sizes, compiled on first use and cached.
  StatusOr<PlanExecutor*> PlanFor(const std::vector<std::vector<int64_t>>& input_sizes);

  const std::string& what() const { return what_; }

 private:
  SubgraphProgram() = default;
  std::map<std::string, std::vector<int64_t>> SizesByName(
      const std::vector<std::vector<int64_t>>& input_sizes) const;

  std::unique_ptr<ir::Graph> graph_;
  size_t num_formal_ = 0;
  SubgraphOptions options_;
  std::string what_;
  std::map<std::vector<std::vector<int64_t>>, std::unique_ptr<PlanExecutor>> plans_;
};

// What every control-flow op needs to parse its bodies: the node, its opset context and
// what is known about its implicit inputs (outer values; constants become initializers).
struct BodyRequest {
  const ir::Node& node;
  int64_t opset;  // of the default domain; the body is parsed at the same opset
  std::span<const ValueInfo* const> implicit_inputs;  // parallel to node.implicit_inputs()
  SubgraphOptions options;
};

// Parses the node's graph attribute `attribute` with the given formal input types.
StatusOr<std::unique_ptr<SubgraphProgram>> CreateBody(const BodyRequest& request,
                                                      const std::string& attribute,
                                                      std::vector<DataType> formal_input_types);

// Sizes of the body's outer inputs, taken from the node's implicit inputs by name; and
// the index into node.implicit_inputs() of each.
struct OuterBinding {
  std::vector<std::vector<int64_t>> sizes;
  std::vector<size_t> implicit_index;
};
StatusOr<OuterBinding> BindOuterInputs(const SubgraphProgram& body, const BodyRequest& request);

}  // namespace qtune::runtime
