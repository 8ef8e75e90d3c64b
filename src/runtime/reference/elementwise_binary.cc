// Reference kernels for binary elementwise ops with multidirectional broadcasting:
// arithmetic, Pow, Mod, comparisons, logic, PRelu and the variadic Sum/Mean/Max/Min.
// Integer arithmetic wraps (two's complement) instead of overflowing; integer Div
// truncates toward zero like C; integer division by zero is an error.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "runtime/reference/broadcast.h"
#include "runtime/reference/registry.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

using Outputs = StatusOr<std::vector<Tensor>>;

template <typename T>
constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Unsigned type at least as wide as unsigned int, so wrapped arithmetic never promotes
// to a signed int.
template <typename T>
using WrapType = std::common_type_t<std::make_unsigned_t<T>, unsigned>;

template <typename T>
T AddOp(T a, T b) {
  if constexpr (kIsInt<T>)
    return static_cast<T>(WrapType<T>(a) + WrapType<T>(b));
  else
    return a + b;
}
template <typename T>
T SubOp(T a, T b) {
  if constexpr (kIsInt<T>)
    return static_cast<T>(WrapType<T>(a) - WrapType<T>(b));
  else
    return a - b;
}
template <typename T>
T MulOp(T a, T b) {
  if constexpr (kIsInt<T>)
    return static_cast<T>(WrapType<T>(a) * WrapType<T>(b));
  else
    return a * b;
}
// REQUIRES: b != 0 for integers.
template <typename T>
T DivOp(T a, T b) {
  if constexpr (kIsInt<T> && std::is_signed_v<T>) {
    if (b == -1) return SubOp<T>(0, a);  // avoids the INT_MIN / -1 trap
  }
  return a / b;
}
template <typename T>
T MaxOp(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  }
  return std::max(a, b);
}
template <typename T>
T MinOp(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  }
  return std::min(a, b);
}

// out = fn(a, b) over the broadcast shape. Both inputs must have the same dtype, in kSet
// (narrow floats computed in float32). The output is bool when kBoolOut, else a's dtype.
template <unsigned kSet, bool kBoolOut, typename Fn>
StatusOr<Tensor> BinaryTensors(const ir::Node& node, const Tensor& a, const Tensor& b, Fn fn) {
  if (a.dtype() != b.dtype()) {
    return NodeError(node, "input types differ (" + std::string(DataTypeName(a.dtype())) + " and " +
                               std::string(DataTypeName(b.dtype())) + ")");
  }
  const std::vector<int64_t> shapes[] = {a.sizes(), b.sizes()};
  ASSIGN_OR_RETURN(std::vector<int64_t> out_sizes, BroadcastShapes(node, shapes));
  if constexpr ((kSet & kFloatTypes) != 0) {
    if (IsNarrowFloat(a.dtype())) {
      auto af = ToFloat32(a), bf = ToFloat32(b);
      if (!af.ok()) return af.status().WithContext(node.DebugName());
      if (!bf.ok()) return bf.status().WithContext(node.DebugName());
      ASSIGN_OR_RETURN(Tensor r, (BinaryTensors<kFloatTypes, kBoolOut>(node, *af, *bf, fn)));
      if constexpr (kBoolOut) return r;
      return FromFloat32(r, a.dtype());
    }
  }
  return Dispatch<kSet>(node, a.dtype(), [&](auto tag) -> StatusOr<Tensor> {
    using T = typename decltype(tag)::type;
    using O = std::conditional_t<kBoolOut, bool, T>;
    ASSIGN_OR_RETURN(Tensor out,
                     Tensor::Allocate(kBoolOut ? DataType::kBool : a.dtype(), out_sizes));
    BroadcastBinary(a.data<T>(), a.sizes(), b.data<T>(), b.sizes(), out.data<O>(), out_sizes,
                    [&](T x, T y) { return static_cast<O>(fn(x, y)); });
    return out;
  });
}

template <unsigned kSet, bool kBoolOut, typename Fn>
Outputs Binary(const KernelArgs& args, Fn fn) {
  RETURN_IF_ERROR(CheckInputCount(args, 2, 2));
  ASSIGN_OR_RETURN(Tensor out,
                   (BinaryTensors<kSet, kBoolOut>(args.node, args.inputs[0], args.inputs[1], fn)));
  return std::vector<Tensor>{std::move(out)};
}

Status CheckNoIntegerZero(const ir::Node& node, const Tensor& divisor) {
  if (!IsInteger(divisor.dtype())) return Status::Ok();
  for (int64_t i = 0; i < divisor.num_elements(); ++i) {
    if (LoadAsDouble(divisor, i) == 0) return NodeError(node, "integer division by zero");
  }
  return Status::Ok();
}

#define TYPED_OP(name) [](auto x, auto y) { return name<decltype(x)>(x, y); }

Outputs Add(const KernelArgs& a) { return Binary<kNumericTypes, false>(a, TYPED_OP(AddOp)); }
Outputs Sub(const KernelArgs& a) { return Binary<kNumericTypes, false>(a, TYPED_OP(SubOp)); }
Outputs Mul(const KernelArgs& a) { return Binary<kNumericTypes, false>(a, TYPED_OP(MulOp)); }
Outputs Div(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 2, 2));
  RETURN_IF_ERROR(CheckNoIntegerZero(a.node, a.inputs[1]));
  return Binary<kNumericTypes, false>(a, TYPED_OP(DivOp));
}

Outputs Mod(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 2, 2));
  RETURN_IF_ERROR(CheckNoIntegerZero(a.node, a.inputs[1]));
  bool c_fmod = a.node.GetInt("fmod", 0) != 0;
  if (IsFloatingPoint(a.inputs[0].dtype()) && !c_fmod) {
    return NodeError(a.node, "fmod must be 1 for floating-point inputs");
  }
  return Binary<kNumericTypes, false>(a, [c_fmod](auto x, auto y) {
    using T = decltype(x);
    if constexpr (std::is_floating_point_v<T>) {
      return static_cast<T>(std::fmod(x, y));
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (y == -1) return T{0};
      }
      T r = static_cast<T>(x % y);  // sign of the dividend (C fmod)
      if constexpr (std::is_signed_v<T>) {
        if (!c_fmod && r != 0 && ((r < 0) != (y < 0))) r = static_cast<T>(r + y);  // Python
      }
      return r;
    }
  });
}

// Integer power by squaring, wrapping like repeated multiplication. Negative exponents
// give the truncated reciprocal (0 unless |base| == 1).
template <typename T, typename E>
T IntPow(T base, E exponent) {
  if (exponent < 0) {
    if (base == 1) return 1;
    if constexpr (std::is_signed_v<T>) {
      if (base == -1) return (exponent % 2 == 0) ? T{1} : T{-1};
    }
    return 0;
  }
  WrapType<T> result = 1, b = static_cast<WrapType<T>>(base);
  for (uint64_t e = static_cast<uint64_t>(exponent); e != 0; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return static_cast<T>(result);
}

template <typename T, typename E>
T PowElement(T base, E exponent) {
  if constexpr (kIsInt<T> && kIsInt<E>) {
    return IntPow(base, exponent);
  } else if constexpr (kIsInt<T>) {
    return SaturateCast<T>(std::pow(double(base), double(exponent)));
  } else {
    return static_cast<T>(std::pow(double(base), double(exponent)));
  }
}

StatusOr<Tensor> PowTensors(const ir::Node& node, const Tensor& x, const Tensor& y) {
  const std::vector<int64_t> shapes[] = {x.sizes(), y.sizes()};
  ASSIGN_OR_RETURN(std::vector<int64_t> out_sizes, BroadcastShapes(node, shapes));
  return Dispatch<kNumericTypes>(node, x.dtype(), [&](auto xt) -> StatusOr<Tensor> {
    using T = typename decltype(xt)::type;
    return Dispatch<kNumericTypes>(node, y.dtype(), [&](auto yt) -> StatusOr<Tensor> {
      using E = typename decltype(yt)::type;
      ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(x.dtype(), out_sizes));
      BroadcastBinary(x.data<T>(), x.sizes(), y.data<E>(), y.sizes(), out.data<T>(), out_sizes,
                      PowElement<T, E>);
      return out;
    });
  });
}

// The output has the base's type; the exponent may be of any numeric type.
Outputs Pow(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 2, 2));
  Tensor x = a.inputs[0], y = a.inputs[1];
  const DataType x_type = x.dtype();
  for (Tensor* t : {&x, &y}) {
    if (!IsNarrowFloat(t->dtype())) continue;
    auto f = ToFloat32(*t);
    if (!f.ok()) return f.status().WithContext(a.node.DebugName());
    *t = std::move(f).value();
  }
  ASSIGN_OR_RETURN(Tensor out, PowTensors(a.node, x, y));
  if (IsNarrowFloat(x_type)) {
    ASSIGN_OR_RETURN(out, FromFloat32(out, x_type));
  }
  return std::vector<Tensor>{std::move(out)};
}

// y = x < 0 ? slope * x : x, with slope broadcast to x.
Outputs PRelu(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 2, 2));
  const std::vector<int64_t> shapes[] = {a.inputs[0].sizes(), a.inputs[1].sizes()};
  ASSIGN_OR_RETURN(std::vector<int64_t> out_sizes, BroadcastShapes(a.node, shapes));
  if (out_sizes != a.inputs[0].sizes()) {
    return NodeError(a.node, "slope of shape [" + SizesToString(a.inputs[1].sizes()) +
                                 "] does not broadcast to X of shape [" +
                                 SizesToString(a.inputs[0].sizes()) + "]");
  }
  return Binary<kFloatTypes | kSignedTypes, false>(
      a, [](auto x, auto s) { return x < 0 ? MulOp<decltype(x)>(s, x) : x; });
}

// Folds a variadic op over its inputs with broadcasting.
template <unsigned kSet, typename Fn>
StatusOr<Tensor> Fold(const KernelArgs& a, Fn fn) {
  if (a.inputs.empty()) return NodeError(a.node, "needs at least one input");
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    if (!a.inputs[i].is_valid())
      return NodeError(a.node, "input " + std::to_string(i) + " is missing");
  }
  Tensor acc = a.inputs[0];
  if (a.inputs.size() == 1) {
    // Still check the type.
    RETURN_IF_ERROR(Dispatch<kSet>(a.node,
                                   IsNarrowFloat(acc.dtype()) ? DataType::kFloat32 : acc.dtype(),
                                   [](auto) { return Status::Ok(); }));
  }
  for (size_t i = 1; i < a.inputs.size(); ++i) {
    ASSIGN_OR_RETURN(acc, (BinaryTensors<kSet, false>(a.node, acc, a.inputs[i], fn)));
  }
  return acc;
}

Outputs Sum(const KernelArgs& a) {
  ASSIGN_OR_RETURN(Tensor out, Fold<kNumericTypes>(a, TYPED_OP(AddOp)));
  return std::vector<Tensor>{std::move(out)};
}
Outputs Max(const KernelArgs& a) {
  ASSIGN_OR_RETURN(Tensor out, Fold<kNumericTypes>(a, TYPED_OP(MaxOp)));
  return std::vector<Tensor>{std::move(out)};
}
Outputs Min(const KernelArgs& a) {
  ASSIGN_OR_RETURN(Tensor out, Fold<kNumericTypes>(a, TYPED_OP(MinOp)));
  return std::vector<Tensor>{std::move(out)};
}
Outputs Mean(const KernelArgs& a) {
  ASSIGN_OR_RETURN(Tensor sum, Fold<kFloatTypes>(a, TYPED_OP(AddOp)));
  ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(sum.dtype(), sum.sizes()));
  const double n = static_cast<double>(a.inputs.size());
  for (int64_t i = 0; i < sum.num_elements(); ++i) {
    StoreFromDouble(out, i, LoadAsDouble(sum, i) / n);
  }
  return std::vector<Tensor>{std::move(out)};
}

Outputs Equal(const KernelArgs& a) {
  return Binary<kAllTypes, true>(a, [](auto x, auto y) { return x == y; });
}
Outputs Less(const KernelArgs& a) {
  return Binary<kNumericTypes, true>(a, [](auto x, auto y) { return x < y; });
}
Outputs LessOrEqual(const KernelArgs& a) {
  return Binary<kNumericTypes, true>(a, [](auto x, auto y) { return x <= y; });
}
Outputs Greater(const KernelArgs& a) {
  return Binary<kNumericTypes, true>(a, [](auto x, auto y) { return x > y; });
}
Outputs GreaterOrEqual(const KernelArgs& a) {
  return Binary<kNumericTypes, true>(a, [](auto x, auto y) { return x >= y; });
}
Outputs And(const KernelArgs& a) {
  return Binary<kBoolType, false>(a, [](bool x, bool y) { return x && y; });
}
Outputs Or(const KernelArgs& a) {
  return Binary<kBoolType, false>(a, [](bool x, bool y) { return x || y; });
}
Outputs Xor(const KernelArgs& a) {
  return Binary<kBoolType, false>(a, [](bool x, bool y) { return x != y; });
}

#undef TYPED_OP

}  // namespace

void RegisterBinaryKernels(ReferenceRegistry& r) {
  r.Register("Add", Add);
  r.Register("Sub", Sub);
  r.Register("Mul", Mul);
  r.Register("Div", Div);
  r.Register("Mod", Mod);
  r.Register("Pow", Pow);
  r.Register("PRelu", PRelu);
  r.Register("Sum", Sum);
  r.Register("Mean", Mean);
  r.Register("Max", Max);
  r.Register("Min", Min);
  r.Register("Equal", Equal);
  r.Register("Less", Less);
  r.Register("LessOrEqual", LessOrEqual);
  r.Register("Greater", Greater);
  r.Register("GreaterOrEqual", GreaterOrEqual);
  r.Register("And", And);
  r.Register("Or", Or);
  r.Register("Xor", Xor);
}

}  // namespace qtune::runtime::reference
