// Reference kernel for CumSum (axis as a scalar input; exclusive and reverse attributes).
// Floating-point sums accumulate in double; integers wrap.
#include <type_traits>

#include "runtime/reference/registry.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

using Outputs = StatusOr<std::vector<Tensor>>;

template <typename T>
void CumSumTyped(const Tensor& x, int64_t axis, bool exclusive, bool reverse, Tensor& y) {
  using A = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.size(d);
  for (int64_t d = axis + 1; d < static_cast<int64_t>(x.rank()); ++d) inner *= x.size(d);
  const int64_t n = x.size(axis);
  const T* in = x.data<T>();
  T* out = y.data<T>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      A acc{0};
      for (int64_t s = 0; s < n; ++s) {
        const int64_t k = reverse ? n - 1 - s : s;
        const int64_t at = (o * n + k) * inner + i;
        if (exclusive) out[at] = static_cast<T>(acc);
        acc = static_cast<A>(acc + static_cast<A>(in[at]));
        if (!exclusive) out[at] = static_cast<T>(acc);
      }
    }
  }
}

Outputs CumSum(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 2, 2));
  const Tensor& x = a.inputs[0];
  if (x.rank() == 0) return NodeError(a.node, "input must have rank >= 1");
  ASSIGN_OR_RETURN(int64_t axis, ReadIndexScalar(a.node, a.inputs[1], "axis"));
  ASSIGN_OR_RETURN(axis, NormalizeAxis(a.node, axis, static_cast<int64_t>(x.rank())));
  const bool exclusive = a.node.GetInt("exclusive", 0) != 0;
  const bool reverse = a.node.GetInt("reverse", 0) != 0;
  const bool narrow = IsNarrowFloat(x.dtype());
  Tensor src = x;
  if (narrow) {
    auto f = ToFloat32(x);
    if (!f.ok()) return f.status().WithContext(a.node.DebugName());
    src = std::move(f).value();
  }
  ASSIGN_OR_RETURN(Tensor y,
                   Dispatch<kNumericTypes>(a.node, src.dtype(), [&](auto tag) -> StatusOr<Tensor> {
                     using T = typename decltype(tag)::type;
                     ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(src.dtype(), src.sizes()));
                     CumSumTyped<T>(src, axis, exclusive, reverse, out);
                     return out;
                   }));
  if (narrow) {
    ASSIGN_OR_RETURN(y, FromFloat32(y, x.dtype()));
  }
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

void RegisterCumSumKernels(ReferenceRegistry& r) { r.Register("CumSum", CumSum); }

}  // namespace qtune::runtime::reference
