// What every graph pass shares: its options and its signature.
//
// A pass is a free function `StatusOr<bool> Pass(ir::Graph&, const PassOptions&)` in its
// own file. It returns true when it changed the graph, false when it left it exactly as it
// was, and an error only for a real failure (a kernel error while folding, a broken
// invariant), never for "this pattern does not apply here". Every pass keeps the names of
// the graph outputs unchanged and leaves a graph that passes ir::Verify().
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"

namespace qtune::passes {

// Runs one node on concrete inputs (one per node input; an omitted optional input is an
// invalid Tensor) under the given default-domain opset, returning one tensor per output.
// Passes may not depend on the runtime, so the runtime hands its reference kernels in
// here (runtime::EvaluateNode has exactly this signature). Must return Unimplemented for
// ops it does not support.
using NodeEvaluator = std::function<StatusOr<std::vector<Tensor>>(
    const ir::Node& node, std::span<const Tensor> inputs, int64_t opset)>;

#ifdef NDEBUG
inline constexpr bool kVerifyPassesByDefault = false;
#else
inline constexpr bool kVerifyPassesByDefault = true;
#endif

struct PassOptions {
  // Evaluates nodes for constant folding. Null disables folding (fold_constants then
  // reports "unchanged").
  NodeEvaluator evaluator;
  // Folding never creates an initializer larger than this: a small graph such as
  // ConstantOfShape([4096, 4096, 64]) stays a node rather than becoming a huge weight.
  int64_t max_folded_tensor_bytes = int64_t{16} << 20;
  // RunPipeline runs ir::Verify() before the first pass and after every pass, and reports
  // the first pass that broke an invariant. Tests set this to true.
  bool verify_after_each_pass = kVerifyPassesByDefault;
  // RunPipeline repeats the pass list until no pass changes the graph, at most this often.
  int max_pipeline_iterations = 8;
};

using PassFn = StatusOr<bool> (*)(ir::Graph& graph, const PassOptions& options);

}  // namespace qtune::passes
