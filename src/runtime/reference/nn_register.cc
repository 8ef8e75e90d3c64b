#include "runtime/reference/nn_kernels.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime {

void RegisterNnKernels(ReferenceRegistry& registry) {
  registry.Register("Conv", &nn::Conv);
  registry.Register("ConvTranspose", &nn::ConvTranspose);
}

}  // namespace qtune::runtime
