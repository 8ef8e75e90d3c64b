// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear reference kernels.
//
// Integer quantization is core/quant_math.h's QuantizeToInt / DequantizeFromInt on float32
// values (x, scale and zero point are read as float32 whatever their storage type), so the
// reference and the fast kernels round and saturate identically. float8 outputs are
// x / scale + zero_point rounded to the nearest float8 (core/float_convert.h), saturating
// unless saturate = 0. float16/bfloat16 outputs of DequantizeLinear are the float32 result
// rounded to nearest even.
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

// The scales of a QuantizeLinear: dividing by them must make sense.
Status CheckQuantizeScales(const ir::Node& node, const std::vector<float>& scales) {
  for (float s : scales) {
    if (!(s > 0) || !std::isfinite(s)) {
      return NodeError(node, "y_scale holds " + std::to_string(s) +
                                 "; quantization scales must be positive and finite");
    }
  }
  return Status::Ok();
}

template <typename Q>
void QuantizeInts(const Tensor& x, const quant::ParamLayout& layout,
                  const std::vector<float>& scales, const std::vector<float>& zero_points,
                  Tensor& y) {
  Q* out = y.data<Q>();
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const int64_t p = layout.ParamIndex(i);
    out[i] = QuantizeToInt<Q>(LoadFloat(x, i), scales[p], static_cast<int32_t>(zero_points[p]));
  }
}

void QuantizeFloat8(const Tensor& x, const quant::ParamLayout& layout,
                    const std::vector<float>& scales, const std::vector<float>& zero_points,
                    bool saturate, Tensor& y) {
  uint8_t* out = y.data<uint8_t>();
  const bool e4m3 = y.dtype() == DataType::kFloat8E4M3FN;
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const int64_t p = layout.ParamIndex(i);
    const float v = LoadFloat(x, i) / scales[p] + zero_points[p];
    out[i] = e4m3 ? FloatToFloat8E4M3FN(v, saturate) : FloatToFloat8E5M2(v, saturate);
  }
}

// y = saturate(round(x / y_scale) + y_zero_point).
StatusOr<std::vector<Tensor>> QuantizeLinear(const KernelArgs& args) {
  const ir::Node& node = args.node;
  RETURN_IF_ERROR(CheckInputCount(args, 2, 3));
  const Tensor& x = args.inputs[0];
  const Tensor& scale = args.inputs[1];
  const Tensor* zp = HasInput(args, 2) ? &args.inputs[2] : nullptr;
  ASSIGN_OR_RETURN(DataType y_type,
                   quant::QuantizeOutputType(node, args.opset, x.dtype(), scale.dtype(),
                                             zp ? zp->dtype() : DataType::kUndefined));
  ASSIGN_OR_RETURN(quant::ParamLayout layout,
                   quant::ResolveParamLayout(node, args.opset, x.sizes(), scale.sizes(),
                                             zp ? &zp->sizes() : nullptr));
  const std::vector<float> scales = ReadFloats(scale);
  RETURN_IF_ERROR(CheckQuantizeScales(node, scales));
  const std::vector<float> zero_points =
      zp ? ReadFloats(*zp) : std::vector<float>(scales.size(), 0.0f);
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(y_type, x.sizes()));
  switch (y_type) {
    case DataType::kUint8:
      QuantizeInts<uint8_t>(x, layout, scales, zero_points, y);
      break;
    case DataType::kInt8:
      QuantizeInts<int8_t>(x, layout, scales, zero_points, y);
      break;
    case DataType::kUint16:
      QuantizeInts<uint16_t>(x, layout, scales, zero_points, y);
      break;
    case DataType::kInt16:
      QuantizeInts<int16_t>(x, layout, scales, zero_points, y);
      break;
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E5M2:
      QuantizeFloat8(x, layout, scales, zero_points, node.GetInt("saturate", 1) != 0, y);
      break;
    default:
      return reference::UnsupportedType(node, y_type, "the output");
  }
  return std::vector<Tensor>{std::move(y)};
}

template <typename Q>
void DequantizeInts(const Tensor& x, const quant::ParamLayout& layout,
                    const std::vector<float>& scales, const std::vector<int32_t>& zero_points,
                    std::vector<float>& y) {
  const Q* in = x.data<Q>();
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const int64_t p = layout.ParamIndex(i);
    y[i] = DequantizeFromInt<Q>(in[i], scales[p], zero_points[p]);
  }
}

// y = (x - x_zero_point) * x_scale.
StatusOr<std::vector<Tensor>> DequantizeLinear(const KernelArgs& args) {
  const ir::Node& node = args.node;
  RETURN_IF_ERROR(CheckInputCount(args, 2, 3));
  const Tensor& x = args.inputs[0];
  const Tensor& scale = args.inputs[1];
  const Tensor* zp = HasInput(args, 2) ? &args.inputs[2] : nullptr;
  ASSIGN_OR_RETURN(DataType y_type,
                   quant::DequantizeOutputType(node, args.opset, x.dtype(), scale.dtype(),
                                               zp ? zp->dtype() : DataType::kUndefined));
  ASSIGN_OR_RETURN(quant::ParamLayout layout,
                   quant::ResolveParamLayout(node, args.opset, x.sizes(), scale.sizes(),
                                             zp ? &zp->sizes() : nullptr));
  const std::vector<float> scales = ReadFloats(scale);
  for (float s : scales) {
    if (!std::isfinite(s)) {
      return NodeError(node, "x_scale holds " + std::to_string(s) + "; scales must be finite");
    }
  }
  const std::vector<float> zp_floats =
      zp ? ReadFloats(*zp) : std::vector<float>(scales.size(), 0.0f);
  std::vector<int32_t> zp_ints(zp_floats.size(), 0);
  if (zp != nullptr && IsInteger(zp->dtype())) {
    for (size_t i = 0; i < zp_ints.size(); ++i) {
      zp_ints[i] = static_cast<int32_t>(LoadAsDouble(*zp, static_cast<int64_t>(i)));
    }
  }
  if (x.dtype() == DataType::kInt32 &&
      std::any_of(zp_ints.begin(), zp_ints.end(), [](int32_t z) { return z != 0; })) {
    return NodeError(node, "an int32 x must have a zero x_zero_point (ONNX: int32 has none)");
  }
  std::vector<float> y(x.num_elements());
  switch (x.dtype()) {
    case DataType::kUint8:
      DequantizeInts<uint8_t>(x, layout, scales, zp_ints, y);
      break;
    case DataType::kInt8:
      DequantizeInts<int8_t>(x, layout, scales, zp_ints, y);
      break;
    case DataType::kUint16:
      DequantizeInts<uint16_t>(x, layout, scales, zp_ints, y);
      break;
    case DataType::kInt16:
      DequantizeInts<int16_t>(x, layout, scales, zp_ints, y);
      break;
    case DataType::kInt32:
      DequantizeInts<int32_t>(x, layout, scales, zp_ints, y);
      break;
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E5M2:
      for (int64_t i = 0; i < x.num_elements(); ++i) {
        const int64_t p = layout.ParamIndex(i);
        y[i] = (LoadFloat(x, i) - zp_floats[p]) * scales[p];
      }
      break;
    default:
      return reference::UnsupportedType(node, x.dtype(), "x");
  }
  ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(y_type, x.sizes()));
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
