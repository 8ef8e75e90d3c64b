// Internal to runtime/control: the per-op kernel factories and what they share.
#pragma once

#include <memory>
#include <optional>

#include "runtime/compile.h"
#include "runtime/control/subgraph_program.h"
#include "runtime/kernels/kernel.h"

namespace qtune::runtime {

// Bodies parsed only for shape inference: no pass pipeline, nothing compiled.
SubgraphOptions ShapeOnlyBodyOptions();
// Bodies the kernels run: cleaned by the pass pipeline (when the enclosing compile fuses)
// and compiled with the enclosing plan's options.
SubgraphOptions KernelBodyOptions(const CompileOptions& options);
// Every input (node inputs, then implicit ones) and output in the plain layout.
std::optional<KernelChoice> PlainLayoutChoice(std::unique_ptr<Kernel> kernel,
                                              const KernelRequest& request);

StatusOr<std::optional<KernelChoice>> CreateIfKernel(const KernelRequest& request,
                                                     const CompileOptions& options);
StatusOr<std::optional<KernelChoice>> CreateLoopKernel(const KernelRequest& request,
                                                       const CompileOptions& options);
StatusOr<std::optional<KernelChoice>> CreateScanKernel(const KernelRequest& request,
                                                       const CompileOptions& options);

}  // namespace qtune::runtime
