// Integer references of qtune::QConv and qtune::QMatMul (being written).
#include "runtime/fusion/quant_ops.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime {

void RegisterQuantFusedReference(ReferenceRegistry& registry) {}

}  // namespace qtune::runtime
