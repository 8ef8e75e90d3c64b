// Compile: graph + concrete input sizes -> Plan. Pure: the same graph, sizes and options
// give the same plan. The graph should already be cleaned by the pass pipeline; Compile
// infers sizes, fuses a private copy (the plan owns it) and picks a kernel per node.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "runtime/plan/plan.h"

namespace qtune::runtime {

class KernelRegistry;

struct CompileOptions {
  int threads = 1;         // intra-op threads (oneDNN bakes them into primitives)
  bool use_onednn = true;  // false: reference kernels only (the oracle)
  bool fuse = true;        // run the runtime fusions (FusedConv, ...)
  bool bf16 = false;       // fp32 Conv/MatMul/Gemm compute in bfloat16 (Precision::kBfloat16)
  // Per node: these nodes (by name, as in the graph given to Compile) compute in bfloat16
  // even when `bf16` is false; a runtime fusion's node inherits the precision of the node
  // it was built from (kPrecisionAttribute). The per-layer `bf16` format of
  // `qtune quantize --auto`. PlanStep::precision says what each step computes in.
  std::set<std::string> bf16_nodes;
  // The kernels to choose from; nullptr: KernelRegistry::Builtin(). Tests pass their own.
  const KernelRegistry* registry = nullptr;
};

// Unsupported ops are reported before anything runs, with op type, node name and opset.
StatusOr<std::unique_ptr<Plan>> Compile(
    const ir::Graph& graph, const std::map<std::string, std::vector<int64_t>>& input_sizes,
    const CompileOptions& options);

}  // namespace qtune::runtime
