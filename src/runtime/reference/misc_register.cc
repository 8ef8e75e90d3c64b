// The misc group: ops that belong to none of the big families (see misc_kernels.h).
#include "runtime/reference/misc_kernels.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime {

void RegisterMiscKernels(ReferenceRegistry& registry) {
  reference::RegisterShrinkKernels(registry);
  reference::RegisterBitShiftKernels(registry);
  reference::RegisterEyeLikeKernels(registry);
  reference::RegisterReverseSequenceKernels(registry);
  reference::RegisterMvnKernels(registry);
  reference::RegisterMaxUnpoolKernels(registry);
  reference::RegisterDetKernels(registry);
  reference::RegisterEinsumKernels(registry);
  reference::RegisterTfIdfKernels(registry);
}

}  // namespace qtune::runtime
