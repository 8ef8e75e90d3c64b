// Reference kernels for Reduce* ops: Sum, Mean, Max, Min, Prod, L1, L2, SumSquare,
// LogSum, LogSumExp. Axes come from input 1 (ReduceSum from opset 13, the others from 18)
// or from the "axes" attribute (earlier opsets); keepdims and noop_with_empty_axes follow
// ONNX. Floating-point inputs accumulate in double; integers accumulate in 64 bits with
// wrap-around. Reducing an empty set gives the op's identity (0 for Sum, 1 for Prod,
// -inf/lowest for Max, +inf/max for Min, NaN for a floating Mean).
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

#include "runtime/reference/broadcast.h"
#include "runtime/reference/registry.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

using Outputs = StatusOr<std::vector<Tensor>>;

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

bool FloatOnly(ReduceKind kind) {
  return kind == ReduceKind::kL2 || kind == ReduceKind::kLogSum || kind == ReduceKind::kLogSumExp;
}

// Reduced-output layout: sizes with reduced dims kept as 1, the final sizes (keepdims or
// not), and the strides mapping an input position to its output element.
struct ReduceLayout {
  std::vector<int64_t> kept_sizes;
  std::vector<int64_t> out_sizes;
  std::vector<int64_t> out_strides;  // per input dim; 0 for reduced dims
  int64_t count = 1;                 // input elements per output element
};

ReduceLayout MakeLayout(const std::vector<int64_t>& in_sizes, const std::vector<bool>& reduced,
                        bool keepdims) {
  ReduceLayout layout;
  for (size_t d = 0; d < in_sizes.size(); ++d) {
    layout.kept_sizes.push_back(reduced[d] ? 1 : in_sizes[d]);
    if (reduced[d]) layout.count *= in_sizes[d];
    if (!reduced[d] || keepdims) layout.out_sizes.push_back(reduced[d] ? 1 : in_sizes[d]);
  }
  layout.out_strides = BroadcastStrides(layout.kept_sizes, in_sizes);
  return layout;
}

template <typename T>
using AccType = std::conditional_t<std::is_floating_point_v<T>, double,
                                   std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

// Integer accumulation wraps (computed in uint64).
template <typename A>
A Plus(A a, A b) {
  if constexpr (std::is_integral_v<A>)
    return static_cast<A>(uint64_t(a) + uint64_t(b));
  else
    return a + b;
}
template <typename A>
A Times(A a, A b) {
  if constexpr (std::is_integral_v<A>)
    return static_cast<A>(uint64_t(a) * uint64_t(b));
  else
    return a * b;
}

template <typename T>
void ReduceTyped(ReduceKind kind, const Tensor& x, const ReduceLayout& layout, Tensor& y) {
  using A = AccType<T>;
  const T* in = x.data<T>();
  T* out = y.data<T>();
  const int64_t m = y.num_elements();
  A init{0};
  if (kind == ReduceKind::kProd) init = A{1};
  if (kind == ReduceKind::kMax) {
    init = std::is_floating_point_v<T> ? -std::numeric_limits<A>::infinity()
                                       : A(std::numeric_limits<T>::lowest());
  }
  if (kind == ReduceKind::kMin) {
    init = std::is_floating_point_v<T> ? std::numeric_limits<A>::infinity()
                                       : A(std::numeric_limits<T>::max());
  }
  std::vector<A> acc(m, init);
  // LogSumExp subtracts each output's maximum before exponentiating.
  std::vector<double> shift(m, 0.0);
  if (kind == ReduceKind::kLogSumExp) {
    shift.assign(m, -std::numeric_limits<double>::infinity());
    BroadcastWalker walker(x.sizes(), {layout.out_strides});
    for (int64_t i = 0; i < x.num_elements(); ++i, walker.Next()) {
      double& s = shift[walker.offset(0)];
      s = std::max(s, double(in[i]));
    }
    for (double& s : shift) {
      if (std::isinf(s)) s = 0;  // all -inf (or +inf): exp(x - 0) keeps the right answer
    }
  }
  BroadcastWalker walker(x.sizes(), {layout.out_strides});
  for (int64_t i = 0; i < x.num_elements(); ++i, walker.Next()) {
    const int64_t o = walker.offset(0);
    const A v = static_cast<A>(in[i]);
    A& a = acc[o];
    switch (kind) {
      case ReduceKind::kSum:
      case ReduceKind::kMean:
      case ReduceKind::kLogSum:
        a = Plus(a, v);
        break;
      case ReduceKind::kMax:
        if constexpr (std::is_floating_point_v<A>) {
          a = (std::isnan(a) || std::isnan(v)) ? std::numeric_limits<A>::quiet_NaN()
                                               : std::max(a, v);
        } else {
          a = std::max(a, v);
        }
        break;
      case ReduceKind::kMin:
        if constexpr (std::is_floating_point_v<A>) {
          a = (std::isnan(a) || std::isnan(v)) ? std::numeric_limits<A>::quiet_NaN()
                                               : std::min(a, v);
        } else {
          a = std::min(a, v);
        }
        break;
      case ReduceKind::kProd:
        a = Times(a, v);
        break;
      case ReduceKind::kL1:
        if constexpr (std::is_signed_v<A>)
          a = Plus(a, v < 0 ? Times(v, A(-1)) : v);
        else
          a = Plus(a, v);
        break;
      case ReduceKind::kL2:
      case ReduceKind::kSumSquare:
        a = Plus(a, Times(v, v));
        break;
      case ReduceKind::kLogSumExp:
        a += A(std::exp(double(v) - shift[o]));
        break;
    }
  }
  for (int64_t o = 0; o < m; ++o) {
    A a = acc[o];
    switch (kind) {
      case ReduceKind::kMean:
        if constexpr (std::is_floating_point_v<A>)
          a = a / A(layout.count);
        else
          a = layout.count == 0 ? A{0} : A(a / A(layout.count));
        break;
      case ReduceKind::kL2:
        a = A(std::sqrt(double(a)));
        break;
      case ReduceKind::kLogSum:
        a = A(std::log(double(a)));
        break;
      case ReduceKind::kLogSumExp:
        a = A(std::log(double(a)) + shift[o]);
        break;
      default:
        break;
    }
    out[o] = static_cast<T>(a);
  }
}

StatusOr<Tensor> ReduceTensor(const KernelArgs& a, ReduceKind kind, const Tensor& x,
                              const ReduceLayout& layout) {
  constexpr unsigned kAny = kNumericTypes;
  return Dispatch<kAny>(a.node, x.dtype(), [&](auto tag) -> StatusOr<Tensor> {
    using T = typename decltype(tag)::type;
    if (FloatOnly(kind) && !std::is_floating_point_v<T>) return UnsupportedType(a.node, x.dtype());
    ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(x.dtype(), layout.out_sizes));
    ReduceTyped<T>(kind, x, layout, y);
    return y;
  });
}

Outputs Reduce(const KernelArgs& a, ReduceKind kind) {
  RETURN_IF_ERROR(CheckInputCount(a, 1, 2));
  const Tensor& x = a.inputs[0];
  const int64_t rank = static_cast<int64_t>(x.rank());
  std::vector<int64_t> axes;
  if (HasInput(a, 1)) {
    ASSIGN_OR_RETURN(axes, ReadIndices(a.node, a.inputs[1], "axes"));
  } else {
    axes = a.node.GetInts("axes", {});
  }
  const bool keepdims = a.node.GetInt("keepdims", 1) != 0;
  if (axes.empty() && a.node.GetInt("noop_with_empty_axes", 0) != 0) {
    return std::vector<Tensor>{x};
  }
  std::vector<bool> reduced(rank, axes.empty());
  ASSIGN_OR_RETURN(axes, NormalizeAxes(a.node, axes, rank));
  for (int64_t axis : axes) reduced[axis] = true;
  const ReduceLayout layout = MakeLayout(x.sizes(), reduced, keepdims);
  if (IsNarrowFloat(x.dtype())) {
    auto xf = ToFloat32(x);
    if (!xf.ok()) return xf.status().WithContext(a.node.DebugName());
    ASSIGN_OR_RETURN(Tensor yf, ReduceTensor(a, kind, *xf, layout));
    ASSIGN_OR_RETURN(Tensor y, FromFloat32(yf, x.dtype()));
    return std::vector<Tensor>{std::move(y)};
  }
  ASSIGN_OR_RETURN(Tensor y, ReduceTensor(a, kind, x, layout));
  return std::vector<Tensor>{std::move(y)};
}

Outputs ReduceSum(const KernelArgs& a) { return Reduce(a, ReduceKind::kSum); }
Outputs ReduceMean(const KernelArgs& a) { return Reduce(a, ReduceKind::kMean); }
Outputs ReduceMax(const KernelArgs& a) { return Reduce(a, ReduceKind::kMax); }
Outputs ReduceMin(const KernelArgs& a) { return Reduce(a, ReduceKind::kMin); }
Outputs ReduceProd(const KernelArgs& a) { return Reduce(a, ReduceKind::kProd); }
Outputs ReduceL1(const KernelArgs& a) { return Reduce(a, ReduceKind::kL1); }
Outputs ReduceL2(const KernelArgs& a) { return Reduce(a, ReduceKind::kL2); }
Outputs ReduceSumSquare(const KernelArgs& a) { return Reduce(a, ReduceKind::kSumSquare); }
Outputs ReduceLogSum(const KernelArgs& a) { return Reduce(a, ReduceKind::kLogSum); }
Outputs ReduceLogSumExp(const KernelArgs& a) { return Reduce(a, ReduceKind::kLogSumExp); }

}  // namespace

void RegisterReduceKernels(ReferenceRegistry& r) {
  r.Register("ReduceSum", ReduceSum);
  r.Register("ReduceMean", ReduceMean);
  r.Register("ReduceMax", ReduceMax);
  r.Register("ReduceMin", ReduceMin);
  r.Register("ReduceProd", ReduceProd);
  r.Register("ReduceL1", ReduceL1);
  r.Register("ReduceL2", ReduceL2);
  r.Register("ReduceSumSquare", ReduceSumSquare);
  r.Register("ReduceLogSum", ReduceLogSum);
  r.Register("ReduceLogSumExp", ReduceLogSumExp);
}

}  // namespace qtune::runtime::reference
