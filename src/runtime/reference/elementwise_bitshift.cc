// BitShift (direction "LEFT" or "RIGHT") of unsigned integers with multidirectional
// broadcasting. A shift by the type's bit width or more gives 0 (C++ leaves it undefined;
// numpy's result depends on the CPU).
#include <limits>
#include <type_traits>

#include "runtime/reference/broadcast.h"
#include "runtime/reference/misc_kernels.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

StatusOr<std::vector<Tensor>> BitShift(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 2, 2));
  const Tensor& x = a.inputs[0];
  const Tensor& y = a.inputs[1];
  if (x.dtype() != y.dtype()) {
    return NodeError(
        a.node, "X " + x.DebugString() + " and Y " + y.DebugString() + " must have the same type");
  }
  const std::string direction = a.node.GetString("direction", "");
  if (direction != "LEFT" && direction != "RIGHT") {
    return NodeError(
        a.node, "attribute direction is '" + direction + "'; it must be \"LEFT\" or \"RIGHT\"");
  }
  const bool left = direction == "LEFT";
  const std::vector<int64_t> shapes[] = {x.sizes(), y.sizes()};
  ASSIGN_OR_RETURN(std::vector<int64_t> out_sizes, BroadcastShapes(a.node, shapes));
  ASSIGN_OR_RETURN(Tensor z, Tensor::Allocate(x.dtype(), out_sizes));
  RETURN_IF_ERROR(Dispatch<kUnsignedTypes>(a.node, x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    constexpr T kBits = std::numeric_limits<T>::digits;
    BroadcastBinary(x.data<T>(), x.sizes(), y.data<T>(), y.sizes(), z.data<T>(), out_sizes,
                    [left](T v, T s) -> T {
                      if (s >= kBits) return T{0};
                      return left ? static_cast<T>(v << s) : static_cast<T>(v >> s);
                    });
    return Status::Ok();
  }));
  return std::vector<Tensor>{std::move(z)};
}

}  // namespace

void RegisterBitShiftKernels(ReferenceRegistry& registry) {
  registry.Register("BitShift", BitShift);
}

}  // namespace qtune::runtime::reference
