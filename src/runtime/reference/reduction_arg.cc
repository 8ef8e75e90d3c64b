// Reference kernels that select positions along an axis: ArgMax, ArgMin (keepdims,
// select_last_index) and TopK (k as an attribute before opset 10, an input from 10;
// largest, sorted). Ties go to the lower index (TopK, and Arg* without
// select_last_index). Narrow floats are compared through float32.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "runtime/reference/registry.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

using Outputs = StatusOr<std::vector<Tensor>>;

// Splits sizes around `axis` into outer x dim x inner.
struct AxisLayout {
  int64_t outer = 1, dim = 1, inner = 1;
};

AxisLayout MakeAxisLayout(const std::vector<int64_t>& sizes, int64_t axis) {
  AxisLayout l;
  for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d) {
    if (d < axis)
      l.outer *= sizes[d];
    else if (d == axis)
      l.dim = sizes[d];
    else
      l.inner *= sizes[d];
  }
  return l;
}

// A tensor whose values order like x's: x itself, or its float32 image for narrow floats.
StatusOr<Tensor> Comparable(const ir::Node& node, const Tensor& x) {
  if (!IsNarrowFloat(x.dtype())) return x;
  auto f = ToFloat32(x);
  if (!f.ok()) return f.status().WithContext(node.DebugName());
  return f;
}

Outputs ArgReduce(const KernelArgs& a, bool max) {
  RETURN_IF_ERROR(CheckInputCount(a, 1, 1));
  ASSIGN_OR_RETURN(Tensor x, Comparable(a.node, a.inputs[0]));
  const int64_t rank = static_cast<int64_t>(x.rank());
  ASSIGN_OR_RETURN(int64_t axis,
                   NormalizeAxis(a.node, a.node.GetInt("axis", 0), std::max<int64_t>(rank, 1)));
  const bool keepdims = a.node.GetInt("keepdims", 1) != 0;
  const bool last = a.node.GetInt("select_last_index", 0) != 0;
  const AxisLayout l = MakeAxisLayout(x.sizes(), axis);
  if (l.dim == 0) return NodeError(a.node, "cannot take the arg of an empty axis");
  std::vector<int64_t> out_sizes;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != axis)
      out_sizes.push_back(x.size(d));
    else if (keepdims)
      out_sizes.push_back(1);
  }
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(DataType::kInt64, out_sizes));
  int64_t* out = y.data<int64_t>();
  return Dispatch<kNumericTypes>(a.node, x.dtype(), [&](auto tag) -> Outputs {
    using T = typename decltype(tag)::type;
    const T* in = x.data<T>();
    for (int64_t o = 0; o < l.outer; ++o) {
      for (int64_t i = 0; i < l.inner; ++i) {
        const T* base = in + o * l.dim * l.inner + i;
        int64_t best = 0;
        for (int64_t k = 1; k < l.dim; ++k) {
          const T v = base[k * l.inner], b = base[best * l.inner];
          const bool better = max ? (v > b || (last && v == b)) : (v < b || (last && v == b));
          if (better) best = k;
        }
        out[o * l.inner + i] = best;
      }
    }
    return std::vector<Tensor>{y};
  });
}

Outputs ArgMax(const KernelArgs& a) { return ArgReduce(a, true); }
Outputs ArgMin(const KernelArgs& a) { return ArgReduce(a, false); }

// A strict weak order with NaN above every number (so sorting stays well-defined).
template <typename T>
bool Less(T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(x)) return false;
    if (std::isnan(y)) return true;
  }
  return x < y;
}

Outputs TopK(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 1, 2));
  const Tensor& x = a.inputs[0];
  ASSIGN_OR_RETURN(Tensor cmp, Comparable(a.node, x));
  const int64_t rank = static_cast<int64_t>(x.rank());
  if (rank == 0) return NodeError(a.node, "input must have rank >= 1");
  int64_t k = 0;
  if (HasInput(a, 1)) {
    ASSIGN_OR_RETURN(k, ReadIndexScalar(a.node, a.inputs[1], "K"));
  } else if (a.node.HasAttribute("k")) {
    k = a.node.GetInt("k", 0);
  } else {
    return NodeError(a.node, "K is missing (an input from opset 10, attribute k before)");
  }
  ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(a.node, a.node.GetInt("axis", -1), rank));
  const bool largest = a.node.GetInt("largest", 1) != 0;
  const AxisLayout l = MakeAxisLayout(x.sizes(), axis);
  if (k < 0 || k > l.dim) {
    return NodeError(a.node, "K = " + std::to_string(k) + " is outside [0, " +
                                 std::to_string(l.dim) + "] for axis " + std::to_string(axis));
  }
  std::vector<int64_t> out_sizes = x.sizes();
  out_sizes[axis] = k;
  ASSIGN_OR_RETURN(Tensor values, Tensor::Allocate(x.dtype(), out_sizes));
  ASSIGN_OR_RETURN(Tensor indices, Tensor::Allocate(DataType::kInt64, out_sizes));
  const size_t element_size = DataTypeSize(x.dtype());
  RETURN_IF_ERROR(Dispatch<kNumericTypes>(a.node, cmp.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* in = cmp.data<T>();
    std::vector<int64_t> order(l.dim);
    int64_t* idx_out = indices.data<int64_t>();
    for (int64_t o = 0; o < l.outer; ++o) {
      for (int64_t i = 0; i < l.inner; ++i) {
        const int64_t base = o * l.dim * l.inner + i;
        auto at = [&](int64_t j) { return in[base + j * l.inner]; };
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
          return largest ? Less(at(q), at(p)) : Less(at(p), at(q));
        });
        for (int64_t j = 0; j < k; ++j) {
          const int64_t out_index = o * k * l.inner + j * l.inner + i;
          idx_out[out_index] = order[j];
          CopyElement(values.raw_data(), out_index, x.raw_data(), base + order[j] * l.inner,
                      element_size);
        }
      }
    }
    return Status::Ok();
  }));
  return std::vector<Tensor>{std::move(values), std::move(indices)};
}

}  // namespace

void RegisterArgKernels(ReferenceRegistry& r) {
  r.Register("ArgMax", ArgMax);
  r.Register("ArgMin", ArgMin);
  r.Register("TopK", TopK);
}

}  // namespace qtune::runtime::reference
