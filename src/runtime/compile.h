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

struct CompileOptions {
  int threads = 1;         // intra-op threads (oneDNN bakes them into primitives)
  bool use_onednn = true;  // false: reference kernels only (the oracle)
  bool fuse = true;        // run the runtime fusions (FusedConv, ...)
  bool bf16 = false;       // fp32 Conv/MatMul/Gemm compute in bfloat16 (KernelRequest::bf16)
  // Per node: these nodes (by name, as in the graph given to Compile; a runtime fusion's
  // node counts when it was built from one of them) compute in bfloat16 even when `bf16`
  // is false. The per-layer `bf16` format of `qtune quantize --auto`.
  std::set<std::string> bf16_nodes;
};

// True when `node_name` is one of `bf16_nodes` or a fused node made from one (the runtime
// fusions name their node "<first node>_<tag>[_N]", e.g. "conv1_fused", "mm_bias").
bool IsBf16Node(const std::set<std::string>& bf16_nodes, const std::string& node_name);

// Unsupported ops are reported before anything runs, with op type, node name and opset.
StatusOr<std::unique_ptr<Plan>> Compile(
    const ir::Graph& graph, const std::map<std::string, std::vector<int64_t>>& input_sizes,
    const CompileOptions& options);

}  // namespace qtune::runtime
