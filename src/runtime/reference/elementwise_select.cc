// Reference kernels that select or bound values elementwise: Where (three-way broadcast,
// any element type) and Clip (min/max as attributes before opset 11, inputs from 11).
#include <algorithm>
#include <limits>

#include "runtime/reference/broadcast.h"
#include "runtime/reference/registry.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

using Outputs = StatusOr<std::vector<Tensor>>;

Outputs Where(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 3, 3));
  const Tensor& cond = a.inputs[0];
  const Tensor& x = a.inputs[1];
  const Tensor& y = a.inputs[2];
  if (cond.dtype() != DataType::kBool) {
    return NodeError(a.node,
                     "condition must be bool, not " + std::string(DataTypeName(cond.dtype())));
  }
  if (x.dtype() != y.dtype()) {
    return NodeError(a.node, "X and Y types differ (" + std::string(DataTypeName(x.dtype())) +
                                 " and " + std::string(DataTypeName(y.dtype())) + ")");
  }
  const std::vector<int64_t> shapes[] = {cond.sizes(), x.sizes(), y.sizes()};
  ASSIGN_OR_RETURN(std::vector<int64_t> out_sizes, BroadcastShapes(a.node, shapes));
  ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(x.dtype(), out_sizes));
  BroadcastWalker walker(
      out_sizes, {BroadcastStrides(cond.sizes(), out_sizes), BroadcastStrides(x.sizes(), out_sizes),
                  BroadcastStrides(y.sizes(), out_sizes)});
  const bool* c = cond.data<bool>();
  const size_t element_size = DataTypeSize(x.dtype());
  for (int64_t i = 0; i < out.num_elements(); ++i, walker.Next()) {
    if (c[walker.offset(0)]) {
      CopyElement(out.raw_data(), i, x.raw_data(), walker.offset(1), element_size);
    } else {
      CopyElement(out.raw_data(), i, y.raw_data(), walker.offset(2), element_size);
    }
  }
  return std::vector<Tensor>{std::move(out)};
}

// y = min(max(x, lo), hi); NaN stays NaN; lo > hi gives hi (as numpy.clip does).
template <typename T>
void ClipTyped(const Tensor& x, T lo, T hi, Tensor& out) {
  const T* in = x.data<T>();
  T* o = out.data<T>();
  for (int64_t i = 0; i < x.num_elements(); ++i) o[i] = std::min(std::max(in[i], lo), hi);
}

StatusOr<Tensor> ClipTensor(const KernelArgs& a, const Tensor& x) {
  // Opset 11 moved min/max from attributes to inputs; accept whichever form the node has.
  bool bounds_are_inputs = a.inputs.size() > 1;
  for (size_t i = 1; i < a.inputs.size(); ++i) {
    if (HasInput(a, i) && a.inputs[i].dtype() != a.inputs[0].dtype()) {
      return NodeError(a.node, std::string(i == 1 ? "min" : "max") + " has type " +
                                   std::string(DataTypeName(a.inputs[i].dtype())) +
                                   " but the input is " +
                                   std::string(DataTypeName(a.inputs[0].dtype())));
    }
  }
  return Dispatch<kNumericTypes>(a.node, x.dtype(), [&](auto tag) -> StatusOr<Tensor> {
    using T = typename decltype(tag)::type;
    T lo = std::numeric_limits<T>::lowest();
    T hi = std::numeric_limits<T>::max();
    if (bounds_are_inputs) {
      // Bounds have x's type, except for narrow floats (x is their float32 image here).
      auto bound = [&](const Tensor& t) -> StatusOr<T> {
        if (t.num_elements() != 1) return NodeError(a.node, "min and max must be scalars");
        if (t.dtype() == x.dtype()) return t.data<T>()[0];
        return static_cast<T>(LoadAsDouble(t, 0));
      };
      if (HasInput(a, 1)) {
        ASSIGN_OR_RETURN(lo, bound(a.inputs[1]));
      }
      if (HasInput(a, 2)) {
        ASSIGN_OR_RETURN(hi, bound(a.inputs[2]));
      }
    } else {
      auto from_float = [](float f) {
        if constexpr (std::is_floating_point_v<T>)
          return static_cast<T>(f);
        else
          return SaturateCast<T>(f);
      };
      if (const ir::Attribute* min = a.node.FindAttribute("min")) lo = from_float(min->f);
      if (const ir::Attribute* max = a.node.FindAttribute("max")) hi = from_float(max->f);
    }
    ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(x.dtype(), x.sizes()));
    ClipTyped<T>(x, lo, hi, out);
    return out;
  });
}

Outputs Clip(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 1, 3));
  const Tensor& x = a.inputs[0];
  if (IsNarrowFloat(x.dtype())) {
    auto xf = ToFloat32(x);
    if (!xf.ok()) return xf.status().WithContext(a.node.DebugName());
    ASSIGN_OR_RETURN(Tensor yf, ClipTensor(a, *xf));
    ASSIGN_OR_RETURN(Tensor y, FromFloat32(yf, x.dtype()));
    return std::vector<Tensor>{std::move(y)};
  }
  ASSIGN_OR_RETURN(Tensor y, ClipTensor(a, x));
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

void RegisterSelectKernels(ReferenceRegistry& r) {
  r.Register("Where", Where);
  r.Register("Clip", Clip);
}

}  // namespace qtune::runtime::reference
