// If, Loop and Scan on a static-shaped engine.
//
// Each op's bodies are parsed into graphs of their own (subgraph_program.h) and compiled
// for the sizes they will see; the kernels run those nested plans. Sizes must be known
// when the outer plan is compiled:
//   If    the outputs come from the branches: a compile-time condition selects one branch
//         (only it is compiled); with a run-time condition both branches must give every
//         output the same data type and sizes, else Unimplemented naming the node.
//   Loop  the body is compiled once for the sizes of its inputs and run per iteration.
//   Scan  Loop-carried values whose sizes change from one iteration to the next need the
//         number of iterations at compile time (Scan: always; Loop: a constant M and a
//         condition that cannot end the loop early); the body is then compiled once per
//         distinct set of sizes. Loop scan outputs need that number too (their first
//         dimension). Otherwise Unimplemented naming the node and the value.
// Outer-scope values known at compile time (weights) are compiled into the bodies as
// constants; the others reach the kernel as extra step inputs after the node's own
// (compile.cc passes a node's implicit inputs that way).
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "core/status.h"
#include "runtime/compile.h"
#include "runtime/kernels/kernel.h"
#include "runtime/shape/shape_registry.h"

namespace qtune::runtime {

// Shape functions (registered by shape_fns_control.cc).
StatusOr<std::vector<ValueInfo>> InferIfShapes(const ShapeArgs& args);
StatusOr<std::vector<ValueInfo>> InferLoopShapes(const ShapeArgs& args);
StatusOr<std::vector<ValueInfo>> InferScanShapes(const ShapeArgs& args);

// Kernels for If, Loop and Scan of the default domain, or nullopt for any other node.
// request.inputs holds the node's inputs followed by its implicit inputs; `options` are
// the options the bodies are compiled with (those of the enclosing plan).
StatusOr<std::optional<KernelChoice>> CreateControlFlowKernel(const KernelRequest& request,
                                                              const CompileOptions& options);

// True when the node has a graph attribute (a body).
bool HasSubgraphAttribute(const ir::Node& node);
// The reference executor's If/Loop/Scan (control_reference.cc): bodies run through
// RunReference iteration by iteration, with no compile-time sizes (so run-time trip counts
// with scan outputs work here). `implicit_inputs` is parallel to node.implicit_inputs().
StatusOr<std::vector<Tensor>> EvaluateControlFlow(const ir::Node& node,
                                                  std::span<const Tensor> inputs,
                                                  std::span<const Tensor> implicit_inputs,
                                                  int64_t opset);

// Stacks equally sized tensors along a new axis `axis` (reversed when `reverse`): Loop and
// Scan scan outputs. InvalidArgument naming the node when their sizes differ.
StatusOr<Tensor> StackScanOutputs(const ir::Node& node, const std::vector<Tensor>& parts,
                                  int64_t axis, bool reverse);

}  // namespace qtune::runtime
