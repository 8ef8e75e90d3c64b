// Reference kernels that change a tensor's shape or layout without computing on its
// values: Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Expand, Shape, Size. They work
// on every storable element type. Reshape-like ops return a tensor sharing the input's
// storage (reference kernels never write their inputs).
#include <algorithm>
#include <numeric>

#include "runtime/reference/broadcast.h"
#include "runtime/reference/registry.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

using Outputs = StatusOr<std::vector<Tensor>>;

StatusOr<Tensor> ReshapeTo(const ir::Node& node, const Tensor& x, std::vector<int64_t> sizes) {
  if (NumElements(sizes) != x.num_elements()) {
    return NodeError(node, "cannot reshape " + std::to_string(x.num_elements()) +
                               " elements of shape " + Bracketed(x.sizes()) + " to " +
                               Bracketed(sizes));
  }
  return x.Reshaped(std::move(sizes));
}

// Axes given as input `index` (newer opsets) or as the "axes" attribute (older ones);
// nullopt when neither is present.
StatusOr<std::optional<std::vector<int64_t>>> AxesInputOrAttribute(const KernelArgs& a,
                                                                   size_t index) {
  if (HasInput(a, index)) {
    ASSIGN_OR_RETURN(std::vector<int64_t> axes, ReadIndices(a.node, a.inputs[index], "axes"));
    return std::optional(std::move(axes));
  }
  if (a.node.HasAttribute("axes")) return std::optional(a.node.GetInts("axes", {}));
  return std::optional<std::vector<int64_t>>();
}

// 0 copies the input dim (unless allowzero), -1 is inferred from the element count.
Outputs Reshape(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 2, 2));
  const Tensor& x = a.inputs[0];
  ASSIGN_OR_RETURN(std::vector<int64_t> shape, ReadIndices(a.node, a.inputs[1], "shape"));
  const bool allow_zero = a.node.GetInt("allowzero", 0) != 0;
  int infer_at = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allow_zero) {
      if (i >= x.rank()) {
        return NodeError(a.node, "shape " + Bracketed(shape) + " copies dimension " +
                                     std::to_string(i) + " but the input " + Bracketed(x.sizes()) +
                                     " has rank " + std::to_string(x.rank()));
      }
      shape[i] = x.size(i);
    } else if (shape[i] == -1) {
      if (infer_at >= 0) return NodeError(a.node, "shape " + Bracketed(shape) + " has two -1");
      infer_at = static_cast<int>(i);
    } else if (shape[i] < -1) {
      return NodeError(a.node, "shape " + Bracketed(shape) + " has a negative dimension");
    }
  }
  if (infer_at >= 0) {
    std::vector<int64_t> others = shape;
    others[infer_at] = 1;
    const int64_t known = NumElements(others);
    if (known <= 0 || x.num_elements() % known != 0) {
      return NodeError(a.node, "cannot reshape " + std::to_string(x.num_elements()) +
                                   " elements of shape " + Bracketed(x.sizes()) + " to " +
                                   Bracketed(shape));
    }
    shape[infer_at] = x.num_elements() / known;
  }
  ASSIGN_OR_RETURN(Tensor y, ReshapeTo(a.node, x, std::move(shape)));
  return std::vector<Tensor>{std::move(y)};
}

Outputs Flatten(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 1, 1));
  const Tensor& x = a.inputs[0];
  const int64_t rank = static_cast<int64_t>(x.rank());
  int64_t axis = a.node.GetInt("axis", 1);
  if (axis < -rank || axis > rank) {
    return NodeError(a.node, "axis " + std::to_string(axis) + " is out of range for rank " +
                                 std::to_string(rank));
  }
  if (axis < 0) axis += rank;
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.size(d);
  int64_t inner = 1;
  for (int64_t d = axis; d < rank; ++d) inner *= x.size(d);
  ASSIGN_OR_RETURN(Tensor y, ReshapeTo(a.node, x, {outer, inner}));
  return std::vector<Tensor>{std::move(y)};
}

// Axes: input 1 from opset 13, attribute before; absent means every size-1 dim.
Outputs Squeeze(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 1, 2));
  const Tensor& x = a.inputs[0];
  const int64_t rank = static_cast<int64_t>(x.rank());
  ASSIGN_OR_RETURN(auto axes_or, AxesInputOrAttribute(a, 1));
  std::vector<bool> drop(rank, false);
  if (axes_or.has_value()) {
    ASSIGN_OR_RETURN(std::vector<int64_t> axes, NormalizeAxes(a.node, *axes_or, rank));
    for (int64_t axis : axes) {
      if (x.size(axis) != 1) {
        return NodeError(a.node, "cannot squeeze axis " + std::to_string(axis) + " of size " +
                                     std::to_string(x.size(axis)) + " (input " +
                                     Bracketed(x.sizes()) + ")");
      }
      drop[axis] = true;
    }
  } else {
    for (int64_t d = 0; d < rank; ++d) drop[d] = x.size(d) == 1;
  }
  std::vector<int64_t> sizes;
  for (int64_t d = 0; d < rank; ++d) {
    if (!drop[d]) sizes.push_back(x.size(d));
  }
  ASSIGN_OR_RETURN(Tensor y, ReshapeTo(a.node, x, std::move(sizes)));
  return std::vector<Tensor>{std::move(y)};
}

// Axes: input 1 from opset 13, attribute before; they index the output's dims.
Outputs Unsqueeze(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 1, 2));
  const Tensor& x = a.inputs[0];
  ASSIGN_OR_RETURN(auto axes_or, AxesInputOrAttribute(a, 1));
  if (!axes_or.has_value()) return NodeError(a.node, "axes are missing");
  const int64_t out_rank = static_cast<int64_t>(x.rank() + axes_or->size());
  ASSIGN_OR_RETURN(std::vector<int64_t> axes, NormalizeAxes(a.node, *axes_or, out_rank));
  std::vector<bool> inserted(out_rank, false);
  for (int64_t axis : axes) inserted[axis] = true;
  std::vector<int64_t> sizes;
  size_t next = 0;
  for (int64_t d = 0; d < out_rank; ++d) sizes.push_back(inserted[d] ? 1 : x.size(next++));
  ASSIGN_OR_RETURN(Tensor y, ReshapeTo(a.node, x, std::move(sizes)));
  return std::vector<Tensor>{std::move(y)};
}

Outputs Transpose(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 1, 1));
  const Tensor& x = a.inputs[0];
  const size_t rank = x.rank();
  std::vector<int64_t> perm(rank);
  std::iota(perm.rbegin(), perm.rend(), 0);  // default: reverse the dims
  perm = a.node.GetInts("perm", perm);
  std::vector<bool> seen(rank, false);
  bool valid = perm.size() == rank;
  for (int64_t p : perm) {
    valid = valid && p >= 0 && p < static_cast<int64_t>(rank) && !seen[p];
    if (valid) seen[p] = true;
  }
  if (!valid) {
    return NodeError(a.node, "perm " + Bracketed(perm) + " is not a permutation of the " +
                                 std::to_string(rank) + " input dims");
  }
  std::vector<int64_t> in_strides = ContiguousStrides(x.sizes());
  std::vector<int64_t> out_sizes(rank), strides(rank);
  for (size_t d = 0; d < rank; ++d) {
    out_sizes[d] = x.size(perm[d]);
    strides[d] = in_strides[perm[d]];
  }
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(x.dtype(), out_sizes));
  BroadcastWalker walker(out_sizes, {strides});
  const size_t element_size = DataTypeSize(x.dtype());
  for (int64_t i = 0; i < y.num_elements(); ++i, walker.Next()) {
    CopyElement(y.raw_data(), i, x.raw_data(), walker.offset(0), element_size);
  }
  return std::vector<Tensor>{std::move(y)};
}

// Bidirectional broadcast of the input against `shape`.
Outputs Expand(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 2, 2));
  const Tensor& x = a.inputs[0];
  ASSIGN_OR_RETURN(std::vector<int64_t> shape, ReadIndices(a.node, a.inputs[1], "shape"));
  for (int64_t s : shape) {
    if (s < 0) return NodeError(a.node, "shape " + Bracketed(shape) + " has a negative dim");
  }
  const std::vector<int64_t> shapes[] = {x.sizes(), shape};
  ASSIGN_OR_RETURN(std::vector<int64_t> out_sizes, BroadcastShapes(a.node, shapes));
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(x.dtype(), out_sizes));
  BroadcastWalker walker(out_sizes, {BroadcastStrides(x.sizes(), out_sizes)});
  const size_t element_size = DataTypeSize(x.dtype());
  for (int64_t i = 0; i < y.num_elements(); ++i, walker.Next()) {
    CopyElement(y.raw_data(), i, x.raw_data(), walker.offset(0), element_size);
  }
  return std::vector<Tensor>{std::move(y)};
}

// Opset 15 start/end select a range of dims; both clamp to [0, rank].
Outputs ShapeOp(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 1, 1));
  const std::vector<int64_t>& sizes = a.inputs[0].sizes();
  const int64_t rank = static_cast<int64_t>(sizes.size());
  auto clamp = [rank](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
  int64_t start = clamp(a.node.GetInt("start", 0));
  int64_t end = clamp(a.node.GetInt("end", rank));
  std::vector<int64_t> dims;
  for (int64_t d = start; d < end; ++d) dims.push_back(sizes[d]);
  const int64_t n = static_cast<int64_t>(dims.size());
  return std::vector<Tensor>{Tensor::FromVector<int64_t>({n}, dims)};
}

Outputs Size(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 1, 1));
  return std::vector<Tensor>{Tensor::Scalar<int64_t>(a.inputs[0].num_elements())};
}

}  // namespace

void RegisterReshapeKernels(ReferenceRegistry& r) {
  r.Register("Reshape", Reshape);
  r.Register("Flatten", Flatten);
  r.Register("Squeeze", Squeeze);
  r.Register("Unsqueeze", Unsqueeze);
  r.Register("Transpose", Transpose);
  r.Register("Expand", Expand);
  r.Register("Shape", ShapeOp);
  r.Register("Size", Size);
}

}  // namespace qtune::runtime::reference
