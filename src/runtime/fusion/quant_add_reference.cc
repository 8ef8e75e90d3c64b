// Reference of qtune::QAdd (being written).
#include "runtime/fusion/quant_ops.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime {

void RegisterQuantAddReference(ReferenceRegistry& registry) {}

}  // namespace qtune::runtime
