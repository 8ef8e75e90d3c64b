// Compile: graph + concrete input sizes -> Plan. Pure: the same graph, sizes and options
// give the same plan. The graph should already be cleaned by the pass pipeline; Compile
// infers sizes, fuses a private copy (the plan owns it) and picks a kernel per node.
#pragma once

#include <map>
#include <memory>
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
};

// Unsupported ops are reported before anything runs, with op type, node name and opset.
StatusOr<std::unique_ptr<Plan>> Compile(
    const ir::Graph& graph, const std::map<std::string, std::vector<int64_t>>& input_sizes,
    const CompileOptions& options);

}  // namespace qtune::runtime
