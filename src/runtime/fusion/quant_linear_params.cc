#include "runtime/fusion/quant_linear_params.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "runtime/fusion/quant_ops.h"

namespace qtune::runtime {
namespace {

using namespace qlinear;

class Reader {
 public:
  Reader(const ir::Node& node, std::span<const QuantInput> inputs, int64_t channels)
      : node_(node), inputs_(inputs), channels_(channels) {}

  bool Has(size_t i) const { return i < inputs_.size() && inputs_[i].present(); }
  DataType Type(size_t i) const { return Has(i) ? inputs_[i].dtype : DataType::kUndefined; }

  Status Invalid(const std::string& what) const {
    return InvalidArgumentError(node_.DebugName() + ": " + what +
                                " (see the contract in runtime/fusion/quant_ops.h)");
  }

  StatusOr<const Tensor*> Value(size_t i, const char* name) const {
    if (!Has(i)) return Invalid(std::string("input ") + name + " is missing");
    if (inputs_[i].value == nullptr) {
      return Invalid(std::string("input ") + name + " must be a constant");
    }
    return inputs_[i].value;
  }

  // Positive finite float32 scales: 1 value, or `channels` when per-channel is allowed.
  StatusOr<std::vector<float>> Scales(size_t i, const char* name, bool per_channel) const {
    ASSIGN_OR_RETURN(const Tensor* t, Value(i, name));
    int64_t n = t->num_elements();
    if (t->dtype() != DataType::kFloat32 || !(n == 1 || (per_channel && n == channels_))) {
      return Invalid(std::string(name) + " is " + t->DebugString() + "; expected a float32 " +
                     (per_channel ? "scalar or [" + std::to_string(channels_) + "]" : "scalar"));
    }
    std::vector<float> v(t->data<float>(), t->data<float>() + n);
    for (float s : v) {
      if (!(s > 0.0f) || !std::isfinite(s)) {
        return Invalid(std::string(name) + " holds " + std::to_string(s) +
                       "; scales must be positive and finite");
      }
    }
    return v;
  }

  // Zero points of the quantized tensor input `of` (same type); 0 when omitted.
  StatusOr<std::vector<int32_t>> ZeroPoints(size_t i, const char* name, DataType type,
                                            bool per_channel) const {
    if (!Has(i)) return std::vector<int32_t>{0};
    ASSIGN_OR_RETURN(const Tensor* t, Value(i, name));
    int64_t n = t->num_elements();
    if (t->dtype() != type || !(n == 1 || (per_channel && n == channels_))) {
      return Invalid(std::string(name) + " is " + t->DebugString() + "; expected " +
                     std::string(DataTypeName(type)) +
                     (per_channel ? " scalar or per channel" : " scalar"));
    }
    return WidenInts(*t);
  }

 private:
  const ir::Node& node_;
  std::span<const QuantInput> inputs_;
  int64_t channels_;
};

std::vector<float> Expand(std::vector<float> v, int64_t n) {
  if (v.size() == 1) v.assign(n, v[0]);
  return v;
}

}  // namespace

bool QuantLinearParams::weight_zero_points_all_zero() const {
  for (int32_t z : w_zero_point) {
    if (z != 0) return false;
  }
  return true;
}

std::vector<int32_t> WidenInts(const Tensor& tensor) {
  std::vector<int32_t> out(tensor.num_elements());
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    out[i] =
        tensor.dtype() == DataType::kInt8 ? tensor.data<int8_t>()[i] : tensor.data<uint8_t>()[i];
  }
  return out;
}

StatusOr<QuantLinearParams> ReadQuantLinearParams(const ir::Node& node,
                                                  std::span<const QuantInput> inputs,
                                                  int64_t channels) {
  Reader r(node, inputs, channels);
  QuantLinearParams p;
  p.x_type = r.Type(kX);
  p.w_type = r.Type(kW);
  if (!IsInt8OrUint8(p.x_type) || !IsInt8OrUint8(p.w_type)) {
    return r.Invalid(std::string("X and W must be uint8 or int8; they are ") +
                     std::string(DataTypeName(p.x_type)) + " and " +
                     std::string(DataTypeName(p.w_type)));
  }
  ASSIGN_OR_RETURN(std::vector<float> xs, r.Scales(kXScale, "x_scale", false));
  p.x_scale = xs[0];
  ASSIGN_OR_RETURN(std::vector<int32_t> xz,
                   r.ZeroPoints(kXZeroPoint, "x_zero_point", p.x_type, false));
  p.x_zero_point = xz[0];
  ASSIGN_OR_RETURN(std::vector<float> ws, r.Scales(kWScale, "w_scale", true));
  p.w_scale = Expand(std::move(ws), channels);
  ASSIGN_OR_RETURN(std::vector<int32_t> wz,
                   r.ZeroPoints(kWZeroPoint, "w_zero_point", p.w_type, true));
  p.w_zero_point = wz.size() == 1 ? std::vector<int32_t>(channels, wz[0]) : wz;
  if (r.Has(kBias)) {
    ASSIGN_OR_RETURN(const Tensor* b, r.Value(kBias, "B"));
    if (b->dtype() != DataType::kFloat32 || b->num_elements() != channels) {
      return r.Invalid("bias B is " + b->DebugString() + "; expected float32 [" +
                       std::to_string(channels) + "]");
    }
    p.bias.assign(b->data<float>(), b->data<float>() + channels);
  }
  if (r.Has(kYScale)) {
    if (!r.Has(kYZeroPoint)) return r.Invalid("y_scale is given without y_zero_point");
    p.quantized_output = true;
    p.y_type = r.Type(kYZeroPoint);
    if (!IsInt8OrUint8(p.y_type)) return r.Invalid("y_zero_point must be uint8 or int8");
    ASSIGN_OR_RETURN(std::vector<float> ys, r.Scales(kYScale, "y_scale", false));
    p.y_scale = ys[0];
    ASSIGN_OR_RETURN(std::vector<int32_t> yz,
                     r.ZeroPoints(kYZeroPoint, "y_zero_point", p.y_type, false));
    p.y_zero_point = yz[0];
  } else if (r.Has(kYZeroPoint)) {
    return r.Invalid("y_zero_point is given without y_scale");
  }
  if (r.Has(kSum)) {
    p.sum_type = r.Type(kSum);
    bool quantized = r.Has(kSumScale) || r.Has(kSumZeroPoint);
    if (quantized) {
      if (!r.Has(kSumScale) || !r.Has(kSumZeroPoint) || !IsInt8OrUint8(p.sum_type)) {
        return r.Invalid("a quantized Sum needs a uint8/int8 Sum, sum_scale and sum_zero_point");
      }
      p.sum = QuantSumKind::kQuantized;
      ASSIGN_OR_RETURN(std::vector<float> ss, r.Scales(kSumScale, "sum_scale", false));
      p.sum_scale = ss[0];
      ASSIGN_OR_RETURN(std::vector<int32_t> sz,
                       r.ZeroPoints(kSumZeroPoint, "sum_zero_point", p.sum_type, false));
      p.sum_zero_point = sz[0];
    } else {
      if (p.sum_type != DataType::kFloat32) {
        return r.Invalid("Sum without sum_scale/sum_zero_point must be float32");
      }
      p.sum = QuantSumKind::kFloat;
    }
  } else if (r.Has(kSumScale) || r.Has(kSumZeroPoint)) {
    return r.Invalid("sum_scale/sum_zero_point are given without Sum");
  }
  return p;
}

StatusOr<QuantLinearParams> ReadQuantLinearParams(const ir::Node& node,
                                                  std::span<const Tensor> inputs,
                                                  int64_t channels) {
  std::vector<QuantInput> q(std::min<size_t>(inputs.size(), kSumZeroPoint + 1));
  for (size_t i = 0; i < q.size(); ++i) {
    if (inputs[i].is_valid()) q[i] = QuantInput{inputs[i].dtype(), &inputs[i]};
  }
  return ReadQuantLinearParams(node, q, channels);
}

}  // namespace qtune::runtime
