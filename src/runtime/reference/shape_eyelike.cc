// EyeLike: a 2-D tensor of the input's sizes with ones on diagonal k (k > 0 above the main
// diagonal, k < 0 below) and zeros elsewhere; type from the dtype attribute, else the
// input's. Only the input's sizes are read.
#include "runtime/reference/misc_kernels.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

StatusOr<std::vector<Tensor>> EyeLike(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 1, 1));
  const Tensor& x = a.inputs[0];
  if (x.rank() != 2) {
    return NodeError(a.node, "input is " + x.DebugString() + "; EyeLike needs a 2-D tensor");
  }
  DataType type = x.dtype();
  if (a.node.HasAttribute("dtype")) {
    const int64_t dtype = a.node.GetInt("dtype", 0);
    if (!IsKnownDataType(static_cast<int32_t>(dtype))) {
      return NodeError(a.node, "attribute dtype " + std::to_string(dtype) + " is not a data type");
    }
    type = static_cast<DataType>(dtype);
  }
  if (type == DataType::kString) return UnsupportedType(a.node, type, "output");
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(type, x.sizes()));
  const int64_t rows = x.size(0), cols = x.size(1);
  const int64_t k = a.node.GetInt("k", 0);
  // (A k outside (-rows, cols) leaves all zeros; checking first keeps r + k from overflowing.)
  for (int64_t r = 0; r < rows && k > -rows && k < cols; ++r) {
    const int64_t c = r + k;
    if (c >= 0 && c < cols) StoreFromDouble(y, r * cols + c, 1.0);
  }
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

void RegisterEyeLikeKernels(ReferenceRegistry& registry) { registry.Register("EyeLike", EyeLike); }

}  // namespace qtune::runtime::reference
