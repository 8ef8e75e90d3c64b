#include "runtime/control/control_flow.h"
#include "runtime/control/control_kernels.h"

namespace qtune::runtime {

SubgraphOptions ShapeOnlyBodyOptions() {
  SubgraphOptions options;
  options.optimize = false;
  return options;
}

SubgraphOptions KernelBodyOptions(const CompileOptions& options) {
  SubgraphOptions body;
  body.compile = options;
  body.optimize = options.fuse;
  return body;
}

std::optional<KernelChoice> PlainLayoutChoice(std::unique_ptr<Kernel> kernel,
                                              const KernelRequest& request) {
  return KernelChoice{std::move(kernel), std::vector<Layout>(request.inputs.size(), Layout::kPlain),
                      std::vector<Layout>(request.outputs.size(), Layout::kPlain), -1};
}

StatusOr<std::optional<KernelChoice>> CreateControlFlowKernel(const KernelRequest& request,
                                                              const CompileOptions& options) {
  const ir::Node& node = request.node;
  if (!node.domain().empty() && node.domain() != "ai.onnx") return NotApplicable();
  const std::string& op = node.op_type();
  if (op == "If") return CreateIfKernel(request, options);
  if (op == "Loop") return CreateLoopKernel(request, options);
  if (op == "Scan") return CreateScanKernel(request, options);
  return NotApplicable();
}

}  // namespace qtune::runtime
