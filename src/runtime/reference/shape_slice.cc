// Reference kernels that cut or extend a tensor region: Slice (attributes in opset < 10,
// inputs from 10; negative steps; ONNX clamping) and Pad (attributes in opset < 11, inputs
// from 11, axes input from 18; constant, reflect, edge and wrap modes). Every storable
// element type.
#include <algorithm>
#include <limits>

#include "runtime/reference/broadcast.h"
#include "runtime/reference/nn_util.h"
#include "runtime/reference/registry.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

using Outputs = StatusOr<std::vector<Tensor>>;

struct SliceParams {
  std::vector<int64_t> starts, ends, axes, steps;
};

StatusOr<SliceParams> ReadSliceParams(const KernelArgs& a, int64_t rank) {
  SliceParams p;
  if (a.inputs.size() >= 3) {  // opset 10+
    ASSIGN_OR_RETURN(p.starts, ReadIndices(a.node, a.inputs[1], "starts"));
    ASSIGN_OR_RETURN(p.ends, ReadIndices(a.node, a.inputs[2], "ends"));
    if (HasInput(a, 3)) {
      ASSIGN_OR_RETURN(p.axes, ReadIndices(a.node, a.inputs[3], "axes"));
    }
    if (HasInput(a, 4)) {
      ASSIGN_OR_RETURN(p.steps, ReadIndices(a.node, a.inputs[4], "steps"));
    }
  } else {  // opset 1-9
    if (!a.node.HasAttribute("starts") || !a.node.HasAttribute("ends")) {
      return NodeError(a.node, "needs starts and ends (inputs from opset 10, attributes before)");
    }
    p.starts = a.node.GetInts("starts", {});
    p.ends = a.node.GetInts("ends", {});
    p.axes = a.node.GetInts("axes", {});
  }
  const size_t n = p.starts.size();
  if (p.axes.empty()) {
    for (size_t i = 0; i < n; ++i) p.axes.push_back(static_cast<int64_t>(i));
  }
  if (p.steps.empty()) p.steps.assign(n, 1);
  if (p.ends.size() != n || p.axes.size() != n || p.steps.size() != n) {
    return NodeError(a.node, "starts, ends, axes and steps have different lengths");
  }
  ASSIGN_OR_RETURN(p.axes, NormalizeAxes(a.node, p.axes, rank));
  return p;
}

Outputs Slice(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 1, 5));
  const Tensor& x = a.inputs[0];
  const int64_t rank = static_cast<int64_t>(x.rank());
  ASSIGN_OR_RETURN(SliceParams p, ReadSliceParams(a, rank));
  std::vector<int64_t> out_sizes = x.sizes();
  std::vector<int64_t> first(rank, 0), step(rank, 1);
  for (size_t i = 0; i < p.axes.size(); ++i) {
    const int64_t axis = p.axes[i], dim = x.size(axis), s = p.steps[i];
    if (s == 0) return NodeError(a.node, "step for axis " + std::to_string(axis) + " is 0");
    int64_t start = p.starts[i], end = p.ends[i];
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    int64_t count = 0;
    if (s > 0) {
      start = std::clamp(start, int64_t{0}, dim);
      end = std::clamp(end, int64_t{0}, dim);
      count = end > start ? 1 + (end - start - 1) / s : 0;
    } else if (dim > 0) {
      start = std::clamp(start, int64_t{0}, dim - 1);
      end = std::clamp(end, int64_t{-1}, dim - 1);
      const uint64_t magnitude = uint64_t{0} - static_cast<uint64_t>(s);
      count = start > end
                  ? 1 + static_cast<int64_t>(static_cast<uint64_t>(start - end - 1) / magnitude)
                  : 0;
    }
    out_sizes[axis] = count;
    first[axis] = start;
    step[axis] = s;
  }
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(x.dtype(), out_sizes));
  if (y.num_elements() == 0) return std::vector<Tensor>{std::move(y)};
  const std::vector<int64_t> in_strides = ContiguousStrides(x.sizes());
  std::vector<int64_t> strides(rank);
  int64_t base = 0;
  for (int64_t d = 0; d < rank; ++d) {
    base += first[d] * in_strides[d];
    // With two or more elements |step| < dim, so the product fits; with one the step is
    // never taken (and may be as large as INT64_MAX).
    strides[d] = out_sizes[d] > 1 ? step[d] * in_strides[d] : 0;
  }
  BroadcastWalker walker(out_sizes, {strides});
  const size_t element_size = DataTypeSize(x.dtype());
  for (int64_t i = 0; i < y.num_elements(); ++i, walker.Next()) {
    CopyElement(y.raw_data(), i, x.raw_data(), base + walker.offset(0), element_size);
  }
  return std::vector<Tensor>{std::move(y)};
}

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

// Source coordinate for output coordinate `c` (already shifted by the begin pad) in a dim
// of size n, or -1 for "use the constant".
int64_t PadSource(int64_t c, int64_t n, PadMode mode) {
  if (c >= 0 && c < n) return c;
  switch (mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kEdge:
      return std::clamp(c, int64_t{0}, n - 1);
    case PadMode::kWrap:
      return ((c % n) + n) % n;
    case PadMode::kReflect: {
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      int64_t r = ((c % period) + period) % period;
      return r < n ? r : period - r;
    }
  }
  return -1;
}

Outputs Pad(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 1, 4));
  const Tensor& x = a.inputs[0];
  const int64_t rank = static_cast<int64_t>(x.rank());
  const std::string mode_name = a.node.GetString("mode", "constant");
  PadMode mode;
  if (mode_name == "constant")
    mode = PadMode::kConstant;
  else if (mode_name == "reflect")
    mode = PadMode::kReflect;
  else if (mode_name == "edge")
    mode = PadMode::kEdge;
  else if (mode_name == "wrap")
    mode = PadMode::kWrap;
  else
    return NodeError(a.node, "unknown mode '" + mode_name + "'");

  std::vector<int64_t> pads;
  ASSIGN_OR_RETURN(Tensor value, Tensor::Allocate(x.dtype(), {}));  // zero by default
  if (a.inputs.size() >= 2) {                                       // opset 11+
    ASSIGN_OR_RETURN(pads, ReadIndices(a.node, a.inputs[1], "pads"));
    if (HasInput(a, 2)) {
      const Tensor& v = a.inputs[2];
      if (v.dtype() != x.dtype() || v.num_elements() != 1) {
        return NodeError(a.node, "constant_value " + v.DebugString() +
                                     " must be one element of the input's type " +
                                     std::string(DataTypeName(x.dtype())));
      }
      value = v;
    }
  } else {  // opset 1-10
    pads = a.node.GetInts("pads", {});
    StoreFromDouble(value, 0, a.node.GetFloat("value", 0.0f));
  }
  std::vector<int64_t> axes;
  if (HasInput(a, 3)) {
    ASSIGN_OR_RETURN(axes, ReadIndices(a.node, a.inputs[3], "axes"));
    ASSIGN_OR_RETURN(axes, NormalizeAxes(a.node, axes, rank));
  } else {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  const int64_t n_axes = static_cast<int64_t>(axes.size());
  if (static_cast<int64_t>(pads.size()) != 2 * n_axes) {
    return NodeError(a.node, "pads has " + std::to_string(pads.size()) + " entries; expected 2 x " +
                                 std::to_string(n_axes));
  }
  std::vector<int64_t> begin(rank, 0), out_sizes = x.sizes();
  for (int64_t i = 0; i < n_axes; ++i) {
    const int64_t axis = axes[i];
    begin[axis] = pads[i];
    out_sizes[axis] += pads[i] + pads[i + n_axes];
    if (out_sizes[axis] < 0) {
      return NodeError(a.node, "pads remove more than the " + std::to_string(x.size(axis)) +
                                   " elements of axis " + std::to_string(axis));
    }
    if (mode != PadMode::kConstant && x.size(axis) == 0 && out_sizes[axis] > 0) {
      return NodeError(a.node, "cannot pad an empty axis in " + mode_name + " mode");
    }
  }
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(x.dtype(), out_sizes));
  const std::vector<int64_t> in_strides = ContiguousStrides(x.sizes());
  const size_t element_size = DataTypeSize(x.dtype());
  std::vector<int64_t> counter(rank, 0);
  for (int64_t i = 0; i < y.num_elements(); ++i) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank && src >= 0; ++d) {
      const int64_t c = PadSource(counter[d] - begin[d], x.size(d), mode);
      src = c < 0 ? -1 : src + c * in_strides[d];
    }
    if (src >= 0) {
      CopyElement(y.raw_data(), i, x.raw_data(), src, element_size);
    } else {
      CopyElement(y.raw_data(), i, value.raw_data(), 0, element_size);
    }
    nn::NextIndex(counter, out_sizes);
  }
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

void RegisterSliceKernels(ReferenceRegistry& r) {
  r.Register("Slice", Slice);
  r.Register("Pad", Pad);
}

}  // namespace qtune::runtime::reference
