#include "runtime/reference/registry.h"

#include <algorithm>

#include "core/check.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime {

// Declared in registry.h as well; repeated here so this file does not depend on that line.

const ReferenceRegistry& ReferenceRegistry::Get() {
  static const ReferenceRegistry* const registry = [] {
    auto* r = new ReferenceRegistry();
    RegisterElementwiseKernels(*r);
    RegisterShapeKernels(*r);
    RegisterReductionKernels(*r);
    RegisterNnKernels(*r);
    RegisterQuantKernels(*r);
    RegisterSignalKernels(*r);
    RegisterSamplingKernels(*r);
    RegisterLossKernels(*r);
    RegisterMiscKernels(*r);
    RegisterFusedKernels(*r);  // qtune-domain fused ops (runtime/fusion)
    return r;
  }();
  return *registry;
}

// Registering an op twice is a bug in the kernel tables (two files claim the same op).
void ReferenceRegistry::Register(std::string op_type, ReferenceKernel kernel) {
  QTUNE_CHECK(kernel != nullptr);
  bool inserted = kernels_.emplace(std::move(op_type), kernel).second;
  QTUNE_CHECK(inserted);
}

ReferenceKernel ReferenceRegistry::FindFor(const ir::Node& node) const {
  if (node.domain().empty() || node.domain() == "ai.onnx") return Find(node.op_type());
  if (node.domain() == "qtune") return Find("qtune::" + node.op_type());
  // ONNX Runtime's contrib ops that qtune runs (com.microsoft::MatMulNBits).
  if (node.domain() == "com.microsoft") return Find("com.microsoft::" + node.op_type());
  return nullptr;
}

ReferenceKernel ReferenceRegistry::Find(std::string_view op_type) const {
  auto it = kernels_.find(std::string(op_type));
  return it == kernels_.end() ? nullptr : it->second;
}

std::vector<std::string> ReferenceRegistry::OpTypes() const {
  std::vector<std::string> out;
  out.reserve(kernels_.size());
  for (const auto& [name, kernel] : kernels_) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

void RegisterElementwiseKernels(ReferenceRegistry& registry) {
  reference::RegisterUnaryKernels(registry);
  reference::RegisterBinaryKernels(registry);
  reference::RegisterSelectKernels(registry);
  reference::RegisterCastKernels(registry);
}

void RegisterShapeKernels(ReferenceRegistry& registry) {
  reference::RegisterReshapeKernels(registry);
  reference::RegisterCombineKernels(registry);
  reference::RegisterSliceKernels(registry);
  reference::RegisterGatherKernels(registry);
  reference::RegisterGenerateKernels(registry);
  reference::RegisterScatterKernels(registry);
  reference::RegisterCompressUniqueKernels(registry);  // data-dependent sizes
  reference::RegisterCropCol2ImKernels(registry);
  reference::RegisterDetectionKernels(registry);
}

void RegisterReductionKernels(ReferenceRegistry& registry) {
  reference::RegisterReduceKernels(registry);
  reference::RegisterArgKernels(registry);
  reference::RegisterCumSumKernels(registry);
}

}  // namespace qtune::runtime
