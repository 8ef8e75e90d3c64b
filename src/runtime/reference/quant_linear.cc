// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear reference kernels.
//
// Integer quantization is core/quant_math.h's QuantizeToInt / DequantizeFromInt on float32
// values (x, scale and zero point are read as float32 whatever their storage type), so the
// reference and the fast kernels round and saturate identically. float8 outputs are
// x / scale + zero_point rounded to the nearest float8 (core/float_convert.h), saturating
// unless saturate = 0. int4/uint4 (held one per byte) saturate to [-8, 7] / [0, 15];
// float4e2m1 outputs are x / scale + zero_point rounded to nearest even, saturating at
// +-6. float8e8m0 scales are read as their power of two. float16/bfloat16 outputs of
// DequantizeLinear are the float32 result rounded to nearest even.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/float_convert.h"
#include "core/quant_math.h"
#include "runtime/reference/quant_kernels.h"
#include "runtime/reference/registry.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime {
namespace {

using reference::CheckInputCount;
using reference::HasInput;
using reference::LoadAsDouble;
using reference::NodeError;

float LoadFloat(const Tensor& t, int64_t i) { return static_cast<float>(LoadAsDouble(t, i)); }

std::vector<float> ReadFloats(const Tensor& t) {
  std::vector<float> values(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) values[i] = LoadFloat(t, i);
  return values;
}

// The operands of a QuantizeLinear / DequantizeLinear, checked against each other: x, its
// scale and zero point (read as float32 whatever their storage type) and how they apply to
// x's elements. Borrows from the KernelArgs it was read from.
struct LinearQuantOperands {
  const Tensor* x = nullptr;
  const Tensor* zero_point = nullptr;  // null when omitted
  DataType y_type = DataType::kUndefined;
  quant::ParamLayout layout;
  std::vector<float> scales;
  std::vector<float> zero_points;  // zeros when the zero point is omitted
};

// The scale input's value name, quoted, for errors about a (corrupt) scale initializer.
std::string ScaleName(const KernelArgs& args) {
  const auto& inputs = args.node.inputs();
  return "'" + (inputs.size() > 1 && inputs[1] != nullptr ? inputs[1]->name() : std::string()) +
         "'";
}

// quant::QuantizeOutputType or quant::DequantizeOutputType.
using OutputTypeRule = StatusOr<DataType> (*)(const ir::Node& node, int64_t opset, DataType x,
                                              DataType scale, DataType zero_point);

// Inputs: x, scale, zero point (optional). The output type follows `output_type`.
StatusOr<LinearQuantOperands> ReadLinearQuantOperands(const KernelArgs& args,
                                                      OutputTypeRule output_type) {
  RETURN_IF_ERROR(CheckInputCount(args, 2, 3));
  const Tensor& x = args.inputs[0];
  const Tensor& scale = args.inputs[1];
  const Tensor* zp = HasInput(args, 2) ? &args.inputs[2] : nullptr;
  LinearQuantOperands operands{.x = &x, .zero_point = zp};
  ASSIGN_OR_RETURN(operands.y_type, output_type(args.node, args.opset, x.dtype(), scale.dtype(),
                                                zp ? zp->dtype() : DataType::kUndefined));
  auto layout = quant::ResolveParamLayout(args.node, args.opset, x.sizes(), scale.sizes(),
                                          zp ? &zp->sizes() : nullptr);
  if (!layout.ok()) return layout.status().WithContext("scale " + ScaleName(args));
  operands.layout = *layout;
  operands.scales = ReadFloats(scale);
  operands.zero_points = zp ? ReadFloats(*zp) : std::vector<float>(operands.scales.size(), 0.0f);
  return operands;
}

// Calls visit(i, p) for every element i of x (row-major) with p the index of the scale and
// zero point that apply to it: per tensor, per axis or blocked, as `layout` says.
template <typename Visit>
void ForEachElement(const Tensor& x, const quant::ParamLayout& layout, Visit&& visit) {
  for (int64_t i = 0; i < x.num_elements(); ++i) visit(i, layout.ParamIndex(i));
}

// Calls visit(Q{}) with Q the C++ type of the integer `type` (uint8, int8, uint4, int4,
// uint16, int16, int32) and returns true; returns false for any other type.
template <typename Visit>
bool VisitIntegerType(DataType type, Visit&& visit) {
  const auto visit_if = [&]<typename Q>(DataType q_type, Q) {
    if (type != q_type) return false;
    visit(Q{});
    return true;
  };
  // int4 / uint4 are held one per byte as int8_t / uint8_t (core/dtype.h).
  return visit_if(DataType::kUint8, uint8_t{}) || visit_if(DataType::kInt8, int8_t{}) ||
         visit_if(DataType::kUint4, uint8_t{}) || visit_if(DataType::kInt4, int8_t{}) ||
         visit_if(DataType::kUint16, uint16_t{}) || visit_if(DataType::kInt16, int16_t{}) ||
         visit_if(DataType::kInt32, int32_t{});
}

bool IsSupportedFloat8(DataType type) {
  return type == DataType::kFloat8E4M3FN || type == DataType::kFloat8E5M2;
}

// The float types whose DequantizeLinear is (x - zero_point) * scale in float32.
bool IsDequantizableFloat(DataType type) {
  return IsSupportedFloat8(type) || type == DataType::kFloat4E2M1;
}

// saturate(round(v / scale) + zero_point) into a 4-bit integer range, as int32.
int32_t QuantizeTo4Bit(float v, float scale, int32_t zero_point, bool is_signed) {
  const int32_t q = QuantizeToInt<int16_t>(v, scale, zero_point);  // wide enough to clamp
  return std::clamp<int32_t>(q, is_signed ? -8 : 0, is_signed ? 7 : 15);
}

// y = saturate(round(x / y_scale) + y_zero_point).
StatusOr<std::vector<Tensor>> QuantizeLinear(const KernelArgs& args) {
  const ir::Node& node = args.node;
  ASSIGN_OR_RETURN(LinearQuantOperands in,
                   ReadLinearQuantOperands(args, &quant::QuantizeOutputType));
  for (float s : in.scales) {  // dividing by them must make sense
    if (!(s > 0) || !std::isfinite(s)) {
      return NodeError(node, "y_scale " + ScaleName(args) + " holds " + std::to_string(s) +
                                 "; quantization scales must be positive and finite");
    }
  }
  const Tensor& x = *in.x;
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(in.y_type, x.sizes()));
  if (in.y_type == DataType::kInt4 || in.y_type == DataType::kUint4) {
    const bool is_signed = in.y_type == DataType::kInt4;
    uint8_t* out = y.data<uint8_t>();
    ForEachElement(x, in.layout, [&](int64_t i, int64_t p) {
      const int32_t q = QuantizeTo4Bit(LoadFloat(x, i), in.scales[p],
                                       static_cast<int32_t>(in.zero_points[p]), is_signed);
      out[i] = static_cast<uint8_t>(static_cast<int8_t>(q));
    });
    return std::vector<Tensor>{std::move(y)};
  }
  if (in.y_type == DataType::kFloat4E2M1) {
    uint8_t* out = y.data<uint8_t>();
    ForEachElement(x, in.layout, [&](int64_t i, int64_t p) {
      out[i] = FloatToFloat4E2M1(LoadFloat(x, i) / in.scales[p] + in.zero_points[p]);
    });
    return std::vector<Tensor>{std::move(y)};
  }
  // QuantizeOutputType never yields int32, so the int32 case is not reached.
  const bool integer_output = VisitIntegerType(in.y_type, [&]<typename Q>(Q) {
    Q* out = y.data<Q>();
    ForEachElement(x, in.layout, [&](int64_t i, int64_t p) {
      out[i] =
          QuantizeToInt<Q>(LoadFloat(x, i), in.scales[p], static_cast<int32_t>(in.zero_points[p]));
    });
  });
  if (!integer_output) {
    if (!IsSupportedFloat8(in.y_type)) {
      return reference::UnsupportedType(node, in.y_type, "the output");
    }
    uint8_t* out = y.data<uint8_t>();
    const bool e4m3 = in.y_type == DataType::kFloat8E4M3FN;
    const bool saturate = node.GetInt("saturate", 1) != 0;
    ForEachElement(x, in.layout, [&](int64_t i, int64_t p) {
      const float v = LoadFloat(x, i) / in.scales[p] + in.zero_points[p];
      out[i] = e4m3 ? FloatToFloat8E4M3FN(v, saturate) : FloatToFloat8E5M2(v, saturate);
    });
  }
  return std::vector<Tensor>{std::move(y)};
}

// y = (x - x_zero_point) * x_scale.
StatusOr<std::vector<Tensor>> DequantizeLinear(const KernelArgs& args) {
  const ir::Node& node = args.node;
  ASSIGN_OR_RETURN(LinearQuantOperands in,
                   ReadLinearQuantOperands(args, &quant::DequantizeOutputType));
  for (size_t p = 0; p < in.scales.size(); ++p) {
    if (!std::isfinite(in.scales[p])) {
      return NodeError(
          node,
          "x_scale " + ScaleName(args) + " holds " + std::to_string(in.scales[p]) + " at index " +
              std::to_string(p) +
              (args.inputs[1].dtype() == DataType::kFloat8E8M0 ? " (float8e8m0 0xFF is NaN)" : "") +
              "; scales must be finite");
    }
  }
  const Tensor& x = *in.x;
  // Integer zero points exactly (an int32 one need not fit a float).
  std::vector<int32_t> zp_ints(in.zero_points.size(), 0);
  if (in.zero_point != nullptr && IsInteger(in.zero_point->dtype())) {
    for (size_t i = 0; i < zp_ints.size(); ++i) {
      zp_ints[i] = static_cast<int32_t>(LoadAsDouble(*in.zero_point, static_cast<int64_t>(i)));
    }
  }
  if (x.dtype() == DataType::kInt32 &&
      std::any_of(zp_ints.begin(), zp_ints.end(), [](int32_t z) { return z != 0; })) {
    return NodeError(node, "an int32 x must have a zero x_zero_point (ONNX: int32 has none)");
  }
  std::vector<float> y(x.num_elements());
  const bool integer_input = VisitIntegerType(x.dtype(), [&]<typename Q>(Q) {
    const Q* data = x.data<Q>();
    ForEachElement(x, in.layout, [&](int64_t i, int64_t p) {
      y[i] = DequantizeFromInt<Q>(data[i], in.scales[p], zp_ints[p]);
    });
  });
  if (!integer_input) {
    if (!IsDequantizableFloat(x.dtype())) return reference::UnsupportedType(node, x.dtype(), "x");
    ForEachElement(x, in.layout, [&](int64_t i, int64_t p) {
      y[i] = (LoadFloat(x, i) - in.zero_points[p]) * in.scales[p];
    });
  }
  ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(in.y_type, x.sizes()));
  for (int64_t i = 0; i < x.num_elements(); ++i) reference::StoreFromDouble(out, i, y[i]);
  return std::vector<Tensor>{std::move(out)};
}

// uint8 with the range [min(x), max(x)] widened to include 0: y_scale = range / 255,
// y_zero_point = saturate(round(-min / y_scale)), y = QuantizeToInt(x). An all-zero (or
// empty) x has range 0: y_scale is 0 as the formula says, and y and y_zero_point are 0.
StatusOr<std::vector<Tensor>> DynamicQuantizeLinear(const KernelArgs& args) {
  const ir::Node& node = args.node;
  RETURN_IF_ERROR(CheckInputCount(args, 1, 1));
  const Tensor& x = args.inputs[0];
  if (x.dtype() != DataType::kFloat32) {
    return NodeError(node, "x is " + x.DebugString() + "; DynamicQuantizeLinear takes float32");
  }
  const float* in = x.data<float>();
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    if (std::isnan(in[i])) return NodeError(node, "x holds NaN; its range is undefined");
    lo = std::min(lo, in[i]);
    hi = std::max(hi, in[i]);
  }
  if (!std::isfinite(lo) || !std::isfinite(hi)) {
    return NodeError(node, "x holds an infinity; its range is unbounded");
  }
  const float scale = (hi - lo) / 255.0f;
  uint8_t zero_point = 0;
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(DataType::kUint8, x.sizes()));
  if (scale > 0) {
    const float intermediate = std::clamp(0.0f - lo / scale, 0.0f, 255.0f);
    zero_point = static_cast<uint8_t>(RoundHalfToEven(intermediate));
    uint8_t* out = y.data<uint8_t>();
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      out[i] = QuantizeToInt<uint8_t>(in[i], scale, zero_point);
    }
  }
  return std::vector<Tensor>{std::move(y), Tensor::Scalar<float>(scale),
                             Tensor::Scalar<uint8_t>(zero_point)};
}

}  // namespace

void RegisterQuantKernels(ReferenceRegistry& registry) {
  registry.Register("QuantizeLinear", &QuantizeLinear);
  registry.Register("DequantizeLinear", &DequantizeLinear);
  registry.Register("DynamicQuantizeLinear", &DynamicQuantizeLinear);
  RegisterQuantIntegerKernels(registry);
}

}  // namespace qtune::runtime
