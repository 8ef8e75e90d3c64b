// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear reference kernels.
// (Skeleton: the kernels are being written; registration lands with them.)
#include "runtime/reference/registry.h"

namespace qtune::runtime {

void RegisterQuantKernels(ReferenceRegistry& registry) {}

}  // namespace qtune::runtime
