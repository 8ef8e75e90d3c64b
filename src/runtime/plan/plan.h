// A Plan: the graph compiled for one set of concrete input sizes. Plain data: dense
// integer ids for values, a list of steps (one kernel each) in execution order, and the
// arena layout from the memory planner. It can print itself.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "ir/graph.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"

namespace qtune::runtime {

struct PlanValue {
  enum class Kind : uint8_t {
    kInput,         // bound to the caller's tensor at run time
    kConstant,      // known at compile time (initializers, folded shape computations)
    kIntermediate,  // lives in the arena at `arena_offset`
    kOutput,        // a graph output: allocated for the caller at each run
    kAlias,         // the bytes of value `alias_of` seen in another layout (when both
                    // layouts order the bytes alike, e.g. [N,C,1,1] plain and nhwc) or
                    // with other sizes (a view: Reshape, Squeeze, ..., see view_ops.h)
  };
  std::string name;
  Kind kind = Kind::kIntermediate;
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> sizes;  // logical (ONNX) sizes
  Layout layout = Layout::kPlain;
  int64_t arena_offset = -1;
  int alias_of = -1;  // for kAlias
  Tensor constant;    // for kConstant, in `layout`

  std::vector<int64_t> physical_sizes() const { return PhysicalSizes(sizes, layout); }
  int64_t byte_size() const;
};

struct PlanStep {
  std::string node_name;  // the graph node, or "reorder <value>" for inserted reorders
  std::string op_type;
  std::unique_ptr<Kernel> kernel;
  std::vector<int> inputs;   // value ids; -1 for an omitted input
  std::vector<int> outputs;  // value ids; -1 for an omitted output
  int inplace_input = -1;    // see KernelChoice::inplace_input
  // The executor checks this step's outputs for NaN and inf (plan/non_finite.h).
  bool check_non_finite = false;
  Precision precision = Precision::kFloat32;  // what the kernel computes in
  // > 0: OpenMP's thread count while this step runs (1 for a small step of a plan of
  // several threads, step_threads.h); 0: the plan's.
  int threads = 0;
  // The kernel registration that served the step (KernelRegistration::name, "reference"
  // for the fallback), or "" for steps the compiler makes itself (reorders, empty
  // outputs, control flow).
  std::string registration;
  // The kernels Compile tried before this one and why each did not serve the node
  // (kernel_registry.h); printed by ToString({.explain_kernels = true}).
  std::vector<KernelRejection> passed_over;
  // Filled when the session profiles: total time in this step and how often it ran.
  double profile_ms = 0;
  int64_t profile_runs = 0;
};

struct PlanPrintOptions {
  // Per step also its precision when not fp32, and the kernels passed over with the reasons
  // (`qtune run --print-plan --explain-kernels`).
  bool explain_kernels = false;
};

struct Plan {
  // The graph the steps were compiled from (after fusions); kernels refer to its nodes.
  std::unique_ptr<ir::Graph> graph;
  std::vector<PlanValue> values;
  std::vector<PlanStep> steps;
  std::vector<int> input_ids;   // in graph input order
  std::vector<int> output_ids;  // in graph output order
  int64_t arena_bytes = 0;
  int threads = 1;
  int views = 0;  // Reshape/Squeeze/Unsqueeze/Flatten nodes run as kAlias values, no step

  // One line per step: index, op, node, implementation, inputs -> outputs with sizes and
  // layouts; then the arena size.
  std::string ToString(const PlanPrintOptions& options = {}) const;
  // Profiled time per (op type, implementation), most expensive first, with each one's
  // share of the total. Empty unless the session ran with profiling.
  std::string ProfileToString() const;
};

}  // namespace qtune::runtime
