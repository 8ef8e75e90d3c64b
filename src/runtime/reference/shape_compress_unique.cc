// Reference kernels whose output sizes depend on the input values: Compress (the slices
// along `axis`, or the elements of the flattened input, where a 1-D condition is true; a
// condition shorter than the axis counts as false past its end) and Unique (Y, indices,
// inverse_indices, counts over the flattened input or the slices along `axis`; sorted = 1
// orders them ascending, lexicographically for slices, with NaN last and NaNs equal;
// sorted = 0 keeps the order of first occurrence).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "runtime/reference/registry.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

using Outputs = StatusOr<std::vector<Tensor>>;

// Splits sizes around `axis` into outer x dim x inner.
struct AxisSplit {
  int64_t outer = 1, dim = 1, inner = 1;
};

AxisSplit SplitAt(const std::vector<int64_t>& sizes, int64_t axis) {
  AxisSplit s;
  for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d) {
    if (d < axis) s.outer *= sizes[d];
    if (d == axis) s.dim = sizes[d];
    if (d > axis) s.inner *= sizes[d];
  }
  return s;
}

// Copies the slices `picks` (indices along the split's dim) of `x` into a new tensor of
// `out_sizes`.
StatusOr<Tensor> TakeSlices(const ir::Node& node, const Tensor& x, const AxisSplit& s,
                            const std::vector<int64_t>& picks, std::vector<int64_t> out_sizes) {
  auto y = Tensor::Allocate(x.dtype(), std::move(out_sizes));
  if (!y.ok()) return y.status().WithContext(node.DebugName());
  const size_t element_size = DataTypeSize(x.dtype());
  const int64_t n = static_cast<int64_t>(picks.size());
  const size_t run = static_cast<size_t>(s.inner) * element_size;
  const auto* src = static_cast<const std::byte*>(x.raw_data());
  auto* dst = static_cast<std::byte*>(y->raw_data());
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t j = 0; j < n; ++j) {
      if (run == 0) continue;
      std::copy_n(src + ((o * s.dim + picks[j]) * s.inner) * element_size, run,
                  dst + ((o * n + j) * s.inner) * element_size);
    }
  }
  return y;
}

Outputs Compress(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 2, 2));
  const Tensor& x = a.inputs[0];
  const Tensor& condition = a.inputs[1];
  if (condition.rank() != 1) {
    return NodeError(a.node, "condition must be 1-D, got " + Bracketed(condition.sizes()));
  }
  const bool flatten = !a.node.HasAttribute("axis");
  std::vector<int64_t> sizes = flatten ? std::vector<int64_t>{x.num_elements()} : x.sizes();
  int64_t axis = 0;
  if (!flatten) {
    ASSIGN_OR_RETURN(
        axis, NormalizeAxis(a.node, a.node.GetInt("axis", 0), static_cast<int64_t>(x.rank())));
  }
  const AxisSplit s = SplitAt(sizes, axis);
  std::vector<int64_t> picks;
  for (int64_t i = 0; i < condition.num_elements(); ++i) {
    if (LoadAsDouble(condition, i) == 0) continue;
    if (i >= s.dim) {
      return NodeError(a.node,
                       "condition is true at " + std::to_string(i) + ", past the input's length " +
                           std::to_string(s.dim) +
                           (flatten ? " (flattened)" : " along axis " + std::to_string(axis)));
    }
    picks.push_back(i);
  }
  sizes[axis] = static_cast<int64_t>(picks.size());
  ASSIGN_OR_RETURN(Tensor y, TakeSlices(a.node, x, s, picks, sizes));
  return std::vector<Tensor>{std::move(y)};
}

// Three-way comparison of two slices, element by element in C order of the other dims.
template <typename T>
int CompareValues(T p, T q) {
  if constexpr (std::is_floating_point_v<T>) {
    const bool p_nan = std::isnan(p), q_nan = std::isnan(q);
    if (p_nan || q_nan) return p_nan == q_nan ? 0 : (p_nan ? 1 : -1);
  }
  return p < q ? -1 : (q < p ? 1 : 0);
}

template <typename T>
Outputs UniqueTyped(const KernelArgs& a, const Tensor& x, const AxisSplit& s,
                    std::vector<int64_t> sizes, int64_t axis) {
  const T* data = x.data<T>();
  auto compare = [&](int64_t p, int64_t q) {
    for (int64_t o = 0; o < s.outer; ++o) {
      for (int64_t i = 0; i < s.inner; ++i) {
        const int c =
            CompareValues(data[(o * s.dim + p) * s.inner + i], data[(o * s.dim + q) * s.inner + i]);
        if (c != 0) return c;
      }
    }
    return 0;
  };
  std::vector<int64_t> order(static_cast<size_t>(s.dim));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t p, int64_t q) { return compare(p, q) < 0; });
  // Groups of equal slices in sorted order; the first of each is its first occurrence.
  std::vector<int64_t> first, counts, group_of(static_cast<size_t>(s.dim));
  for (size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || compare(order[k - 1], order[k]) != 0) {
      first.push_back(order[k]);
      counts.push_back(0);
    }
    group_of[order[k]] = static_cast<int64_t>(first.size()) - 1;
    ++counts.back();
  }
  // rank[g]: the output position of group g.
  std::vector<int64_t> rank(first.size());
  std::iota(rank.begin(), rank.end(), 0);
  if (a.node.GetInt("sorted", 1) == 0) {
    std::vector<int64_t> by_first(first.size());
    std::iota(by_first.begin(), by_first.end(), 0);
    std::sort(by_first.begin(), by_first.end(),
              [&](int64_t g, int64_t h) { return first[g] < first[h]; });
    for (size_t k = 0; k < by_first.size(); ++k) rank[by_first[k]] = static_cast<int64_t>(k);
  }
  const int64_t n = static_cast<int64_t>(first.size());
  std::vector<int64_t> indices(first.size()), out_counts(first.size()),
      inverse(static_cast<size_t>(s.dim));
  for (int64_t g = 0; g < n; ++g) {
    indices[rank[g]] = first[g];
    out_counts[rank[g]] = counts[g];
  }
  for (int64_t j = 0; j < s.dim; ++j) inverse[j] = rank[group_of[j]];
  sizes[axis] = n;
  ASSIGN_OR_RETURN(Tensor y, TakeSlices(a.node, x, s, indices, sizes));
  std::vector<Tensor> outputs{std::move(y)};
  for (const std::vector<int64_t>* v : {&indices, &inverse, &out_counts}) {
    outputs.push_back(Tensor::FromVector<int64_t>({static_cast<int64_t>(v->size())}, *v));
  }
  return outputs;
}

Outputs Unique(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 1, 1));
  ASSIGN_OR_RETURN(Tensor x, IsNarrowFloat(a.inputs[0].dtype()) ? ToFloat32(a.inputs[0])
                                                                : StatusOr<Tensor>(a.inputs[0]));
  const bool flatten = !a.node.HasAttribute("axis");
  std::vector<int64_t> sizes = flatten ? std::vector<int64_t>{x.num_elements()} : x.sizes();
  int64_t axis = 0;
  if (!flatten) {
    ASSIGN_OR_RETURN(
        axis, NormalizeAxis(a.node, a.node.GetInt("axis", 0), static_cast<int64_t>(x.rank())));
  }
  const AxisSplit s = SplitAt(sizes, axis);
  ASSIGN_OR_RETURN(std::vector<Tensor> outputs,
                   Dispatch<kAllTypes>(a.node, x.dtype(), [&](auto tag) -> Outputs {
                     using T = typename decltype(tag)::type;
                     return UniqueTyped<T>(a, x, s, sizes, axis);
                   }));
  if (x.dtype() != a.inputs[0].dtype()) {
    ASSIGN_OR_RETURN(outputs[0], FromFloat32(outputs[0], a.inputs[0].dtype()));
  }
  return outputs;
}

}  // namespace

void RegisterCompressUniqueKernels(ReferenceRegistry& r) {
  r.Register("Compress", Compress);
  r.Register("Unique", Unique);
}

}  // namespace qtune::runtime::reference
