// Shrink: y = x + bias where x < -lambd, x - bias where x > lambd, else 0. Every numeric
// type (the narrow floats too); computed in double and stored back with the usual rules
// (integers truncate toward zero and saturate).
#include "runtime/reference/misc_kernels.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

StatusOr<std::vector<Tensor>> Shrink(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 1, 1));
  const Tensor& x = a.inputs[0];
  if (x.dtype() == DataType::kBool || x.dtype() == DataType::kString) {
    return UnsupportedType(a.node, x.dtype(), "input");
  }
  const double lambd = a.node.GetFloat("lambd", 0.5f);
  const double bias = a.node.GetFloat("bias", 0.0f);
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(x.dtype(), x.sizes()));
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const double v = LoadAsDouble(x, i);
    StoreFromDouble(y, i, v < -lambd ? v + bias : (v > lambd ? v - bias : 0.0));
  }
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

void RegisterShrinkKernels(ReferenceRegistry& registry) { registry.Register("Shrink", Shrink); }

}  // namespace qtune::runtime::reference
