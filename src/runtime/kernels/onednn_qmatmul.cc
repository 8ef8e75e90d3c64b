// (being written)
#include "runtime/kernels/kernel.h"

namespace qtune::runtime {

StatusOr<std::optional<KernelChoice>> CreateOnednnQMatMulKernel(const KernelRequest& request) {
  return NotApplicable();
}

}  // namespace qtune::runtime
