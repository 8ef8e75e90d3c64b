// Reference kernels for unary elementwise ops: activations, math functions, rounding,
// Not, Identity, Dropout (inference), IsNaN/IsInf. float16/bfloat16/float8 inputs are
// computed in float32 and rounded back.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <type_traits>

#include "runtime/reference/registry.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

using Outputs = StatusOr<std::vector<Tensor>>;

template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<T>;

// Applies op to every element of a tensor whose C++ type is T; the output has the input's
// dtype and sizes.
template <typename T, typename Op>
StatusOr<Tensor> MapTyped(const Tensor& x, Op op) {
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(x.dtype(), x.sizes()));
  const T* in = x.data<T>();
  T* out = y.data<T>();
  for (int64_t i = 0; i < x.num_elements(); ++i) out[i] = static_cast<T>(op(in[i]));
  return y;
}

// y = op(x) with the input's dtype, for the types in kSet (narrow floats via float32 when
// kSet includes kFloatTypes).
template <unsigned kSet, typename Op>
Outputs Unary(const KernelArgs& args, Op op) {
  RETURN_IF_ERROR(CheckInputCount(args, 1, 1));
  const Tensor& x = args.inputs[0];
  if constexpr ((kSet & kFloatTypes) != 0) {
    if (IsNarrowFloat(x.dtype())) {
      auto xf = ToFloat32(x);
      if (!xf.ok()) return xf.status().WithContext(args.node.DebugName());
      ASSIGN_OR_RETURN(Tensor yf, MapTyped<float>(*xf, op));
      auto y = FromFloat32(yf, x.dtype());
      if (!y.ok()) return y.status().WithContext(args.node.DebugName());
      return std::vector<Tensor>{std::move(y).value()};
    }
  }
  return Dispatch<kSet>(args.node, x.dtype(), [&](auto tag) -> Outputs {
    using T = typename decltype(tag)::type;
    ASSIGN_OR_RETURN(Tensor y, MapTyped<T>(x, op));
    return std::vector<Tensor>{std::move(y)};
  });
}

// Generic lambdas below are instantiated for every T of their type set; float-only math
// is guarded with if constexpr so integer instantiations compile.
#define FLOAT_OP(expr) [=](auto v) { return expr; }

Outputs Relu(const KernelArgs& a) {
  // v < 0, not v > 0: NaN passes through, as in ONNX Runtime and numpy.
  return Unary<kFloatTypes | kSignedTypes>(a, [](auto v) { return v < 0 ? decltype(v){0} : v; });
}
Outputs LeakyRelu(const KernelArgs& a) {
  double alpha = a.node.GetFloat("alpha", 0.01f);
  return Unary<kFloatTypes>(a, FLOAT_OP(v < 0 ? alpha * v : v));
}
Outputs Sigmoid(const KernelArgs& a) {
  return Unary<kFloatTypes>(a, FLOAT_OP(1 / (1 + std::exp(-v))));
}
Outputs HardSigmoid(const KernelArgs& a) {
  double alpha = a.node.GetFloat("alpha", 0.2f), beta = a.node.GetFloat("beta", 0.5f);
  return Unary<kFloatTypes>(a, FLOAT_OP(std::clamp(alpha * v + beta, 0.0, 1.0)));
}
Outputs HardSwish(const KernelArgs& a) {
  return Unary<kFloatTypes>(a, FLOAT_OP(v * std::clamp(v / 6.0 + 0.5, 0.0, 1.0)));
}
Outputs Tanh(const KernelArgs& a) { return Unary<kFloatTypes>(a, FLOAT_OP(std::tanh(v))); }
Outputs Erf(const KernelArgs& a) { return Unary<kFloatTypes>(a, FLOAT_OP(std::erf(v))); }
Outputs Gelu(const KernelArgs& a) {
  std::string approximate = a.node.GetString("approximate", "none");
  if (approximate == "none") {
    return Unary<kFloatTypes>(a, FLOAT_OP(0.5 * v * (1 + std::erf(v / std::numbers::sqrt2))));
  }
  if (approximate == "tanh") {
    const double k = std::sqrt(2 / std::numbers::pi);
    return Unary<kFloatTypes>(a,
                              FLOAT_OP(0.5 * v * (1 + std::tanh(k * (v + 0.044715 * v * v * v)))));
  }
  return NodeError(a.node, "approximate must be 'none' or 'tanh', not '" + approximate + "'");
}
Outputs Exp(const KernelArgs& a) { return Unary<kFloatTypes>(a, FLOAT_OP(std::exp(v))); }
Outputs Log(const KernelArgs& a) { return Unary<kFloatTypes>(a, FLOAT_OP(std::log(v))); }
Outputs Sqrt(const KernelArgs& a) { return Unary<kFloatTypes>(a, FLOAT_OP(std::sqrt(v))); }
Outputs Reciprocal(const KernelArgs& a) { return Unary<kFloatTypes>(a, FLOAT_OP(1 / v)); }
Outputs Floor(const KernelArgs& a) { return Unary<kFloatTypes>(a, FLOAT_OP(std::floor(v))); }
Outputs Ceil(const KernelArgs& a) { return Unary<kFloatTypes>(a, FLOAT_OP(std::ceil(v))); }
// Halves round to even (the default floating-point rounding mode).
Outputs Round(const KernelArgs& a) { return Unary<kFloatTypes>(a, FLOAT_OP(std::nearbyint(v))); }
Outputs Softplus(const KernelArgs& a) {
  // log(1 + exp(v)), written so that large |v| neither overflows nor loses digits.
  return Unary<kFloatTypes>(
      a, FLOAT_OP(std::max(v, decltype(v){0}) + std::log1p(std::exp(-std::abs(v)))));
}
Outputs Softsign(const KernelArgs& a) {
  return Unary<kFloatTypes>(a, FLOAT_OP(v / (1 + std::abs(v))));
}
Outputs Elu(const KernelArgs& a) {
  double alpha = a.node.GetFloat("alpha", 1.0f);
  return Unary<kFloatTypes>(a, FLOAT_OP(v < 0 ? alpha * std::expm1(v) : v));
}
Outputs Selu(const KernelArgs& a) {
  double alpha = a.node.GetFloat("alpha", 1.67326319217681884765625f);
  double gamma = a.node.GetFloat("gamma", 1.05070102214813232421875f);
  return Unary<kFloatTypes>(a, FLOAT_OP(v <= 0 ? gamma * alpha * std::expm1(v) : gamma * v));
}
Outputs Celu(const KernelArgs& a) {
  double alpha = a.node.GetFloat("alpha", 1.0f);
  return Unary<kFloatTypes>(a, FLOAT_OP(v < 0 ? alpha * std::expm1(v / alpha) : double(v)));
}
Outputs ThresholdedRelu(const KernelArgs& a) {
  double alpha = a.node.GetFloat("alpha", 1.0f);
  return Unary<kFloatTypes>(a, FLOAT_OP(v > alpha ? v : decltype(v){0}));
}
Outputs Sin(const KernelArgs& a) { return Unary<kFloatTypes>(a, FLOAT_OP(std::sin(v))); }
Outputs Cos(const KernelArgs& a) { return Unary<kFloatTypes>(a, FLOAT_OP(std::cos(v))); }
Outputs Tan(const KernelArgs& a) { return Unary<kFloatTypes>(a, FLOAT_OP(std::tan(v))); }
Outputs Atan(const KernelArgs& a) { return Unary<kFloatTypes>(a, FLOAT_OP(std::atan(v))); }
Outputs Asin(const KernelArgs& a) { return Unary<kFloatTypes>(a, FLOAT_OP(std::asin(v))); }
Outputs Acos(const KernelArgs& a) { return Unary<kFloatTypes>(a, FLOAT_OP(std::acos(v))); }
Outputs Sinh(const KernelArgs& a) { return Unary<kFloatTypes>(a, FLOAT_OP(std::sinh(v))); }
Outputs Cosh(const KernelArgs& a) { return Unary<kFloatTypes>(a, FLOAT_OP(std::cosh(v))); }
Outputs Asinh(const KernelArgs& a) { return Unary<kFloatTypes>(a, FLOAT_OP(std::asinh(v))); }
Outputs Acosh(const KernelArgs& a) { return Unary<kFloatTypes>(a, FLOAT_OP(std::acosh(v))); }
Outputs Atanh(const KernelArgs& a) { return Unary<kFloatTypes>(a, FLOAT_OP(std::atanh(v))); }
// x * tanh(softplus(x)), opset 18.
Outputs Mish(const KernelArgs& a) {
  return Unary<kFloatTypes>(a, FLOAT_OP(v * std::tanh(std::max(double(v), 0.0) +
                                                      std::log1p(std::exp(-std::abs(double(v)))))));
}

Outputs Abs(const KernelArgs& a) {
  return Unary<kNumericTypes>(a, [](auto v) {
    using T = decltype(v);
    if constexpr (kIsFloat<T>) {
      return std::abs(v);
    } else if constexpr (std::is_signed_v<T>) {
      // Two's-complement wrap for the most negative value, as C and numpy do.
      using U = std::make_unsigned_t<T>;
      return v < 0 ? static_cast<T>(U{0} - static_cast<U>(v)) : v;
    } else {
      return v;
    }
  });
}
Outputs Neg(const KernelArgs& a) {
  return Unary<kFloatTypes | kSignedTypes>(a, [](auto v) {
    using T = decltype(v);
    if constexpr (kIsFloat<T>) {
      return -v;
    } else {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(U{0} - static_cast<U>(v));
    }
  });
}
Outputs Sign(const KernelArgs& a) {
  return Unary<kNumericTypes>(a, [](auto v) {
    using T = decltype(v);
    return v > T{0} ? T{1} : (v < T{0} ? static_cast<T>(-1) : v);  // keeps 0, -0, NaN
  });
}
Outputs Not(const KernelArgs& a) {
  return Unary<kBoolType>(a, [](bool v) { return !v; });
}

// The output shares the input's storage (reference kernels never write their inputs).
Outputs Identity(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 1, 1));
  return std::vector<Tensor>{a.inputs[0]};
}

// Inference-mode Dropout: output = input, mask (if requested) all true. Training mode
// with ratio 0 drops nothing and is the same; any other ratio is random (unsupported).
Outputs Dropout(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 1, 3));
  if (HasInput(a, 2)) {
    ASSIGN_OR_RETURN(double training, ReadScalarAsDouble(a.node, a.inputs[2], "training_mode"));
    double ratio = 0.5;
    if (HasInput(a, 1)) {
      ASSIGN_OR_RETURN(ratio, ReadScalarAsDouble(a.node, a.inputs[1], "ratio"));
    }
    if (training != 0 && ratio != 0) {
      return NodeUnimplemented(a.node, "training_mode=true drops values at random (ratio " +
                                           std::to_string(ratio) + "); qtune runs inference");
    }
  }
  std::vector<Tensor> out{a.inputs[0]};
  if (a.node.num_outputs() > 1) {
    ASSIGN_OR_RETURN(Tensor mask, FilledTensor(DataType::kBool, a.inputs[0].sizes(), 1));
    out.push_back(std::move(mask));
  }
  return out;
}

template <typename Pred>
Outputs FloatPredicate(const KernelArgs& a, Pred pred) {
  RETURN_IF_ERROR(CheckInputCount(a, 1, 1));
  const Tensor& x = a.inputs[0];
  if (!IsFloatingPoint(x.dtype())) return UnsupportedType(a.node, x.dtype());
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(DataType::kBool, x.sizes()));
  bool* out = y.data<bool>();
  for (int64_t i = 0; i < x.num_elements(); ++i) out[i] = pred(LoadAsDouble(x, i));
  return std::vector<Tensor>{std::move(y)};
}
Outputs IsNaN(const KernelArgs& a) {
  return FloatPredicate(a, [](double v) { return std::isnan(v); });
}
Outputs IsInf(const KernelArgs& a) {
  bool positive = a.node.GetInt("detect_positive", 1) != 0;
  bool negative = a.node.GetInt("detect_negative", 1) != 0;
  return FloatPredicate(
      a, [=](double v) { return std::isinf(v) && ((v > 0 && positive) || (v < 0 && negative)); });
}

#undef FLOAT_OP

}  // namespace

void RegisterUnaryKernels(ReferenceRegistry& r) {
  r.Register("Relu", Relu);
  r.Register("LeakyRelu", LeakyRelu);
  r.Register("Sigmoid", Sigmoid);
  r.Register("HardSigmoid", HardSigmoid);
  r.Register("HardSwish", HardSwish);
  r.Register("Tanh", Tanh);
  r.Register("Erf", Erf);
  r.Register("Gelu", Gelu);
  r.Register("Exp", Exp);
  r.Register("Log", Log);
  r.Register("Sqrt", Sqrt);
  r.Register("Reciprocal", Reciprocal);
  r.Register("Floor", Floor);
  r.Register("Ceil", Ceil);
  r.Register("Round", Round);
  r.Register("Softplus", Softplus);
  r.Register("Softsign", Softsign);
  r.Register("Elu", Elu);
  r.Register("Selu", Selu);
  r.Register("Celu", Celu);
  r.Register("ThresholdedRelu", ThresholdedRelu);
  r.Register("Sin", Sin);
  r.Register("Cos", Cos);
  r.Register("Tan", Tan);
  r.Register("Atan", Atan);
  r.Register("Asin", Asin);
  r.Register("Acos", Acos);
  r.Register("Sinh", Sinh);
  r.Register("Cosh", Cosh);
  r.Register("Asinh", Asinh);
  r.Register("Acosh", Acosh);
  r.Register("Atanh", Atanh);
  r.Register("Mish", Mish);
  r.Register("Abs", Abs);
  r.Register("Neg", Neg);
  r.Register("Sign", Sign);
  r.Register("Not", Not);
  r.Register("Identity", Identity);
  r.Register("Dropout", Dropout);
  r.Register("IsNaN", IsNaN);
  r.Register("IsInf", IsInf);
}

}  // namespace qtune::runtime::reference
