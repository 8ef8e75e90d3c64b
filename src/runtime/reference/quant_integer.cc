// Shared input readers of the integer reference kernels (ConvInteger, MatMulInteger,
// QLinearConv, QLinearMatMul; contract: quant_kernels.h) and their registration. The
// kernels themselves live in quant_integer_conv.cc and quant_integer_matmul.cc.
#include <cmath>
#include <string>
#include <vector>

#include "core/quant_math.h"
#include "runtime/reference/quant_kernels.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime {
namespace quant {
namespace {

using reference::Bracketed;
using reference::NodeError;

// One element, or `count` elements in at most one dimension.
Status CheckCount(const ir::Node& node, const Tensor& t, int64_t count, const char* what) {
  if (t.rank() <= 1 && (t.num_elements() == 1 || t.num_elements() == count)) return Status::Ok();
  return NodeError(node, std::string(what) + " is " + Bracketed(t.sizes()) +
                             "; expected one element" +
                             (count != 1 ? " or a 1-D tensor of " + std::to_string(count) : ""));
}

}  // namespace

Status CheckByteType(const ir::Node& node, const Tensor& t, const char* what) {
  if (t.dtype() == DataType::kUint8 || t.dtype() == DataType::kInt8) return Status::Ok();
  return NodeError(node, std::string(what) + " is " + t.DebugString() + "; expected uint8 or int8");
}

StatusOr<std::vector<int32_t>> ReadZeroPoints(const ir::Node& node, const Tensor* zero_point,
                                              DataType data_type, int64_t count, const char* what) {
  std::vector<int32_t> values(count, 0);
  if (zero_point == nullptr) return values;
  if (zero_point->dtype() != data_type) {
    return NodeError(node, std::string(what) + " is " + zero_point->DebugString() +
                               "; it must have its data's type " +
                               std::string(DataTypeName(data_type)));
  }
  RETURN_IF_ERROR(CheckCount(node, *zero_point, count, what));
  for (int64_t i = 0; i < count; ++i) {
    const int64_t at = zero_point->num_elements() == 1 ? 0 : i;
    values[i] = static_cast<int32_t>(reference::LoadAsDouble(*zero_point, at));
  }
  return values;
}

StatusOr<std::vector<float>> ReadScales(const ir::Node& node, const Tensor& scale, int64_t count,
                                        bool allow_half, const char* what) {
  const DataType type = scale.dtype();
  if (type != DataType::kFloat32 &&
      !(allow_half && (type == DataType::kFloat16 || type == DataType::kBfloat16))) {
    return NodeError(node, std::string(what) + " is " + scale.DebugString() + "; expected float32" +
                               (allow_half ? ", float16 or bfloat16" : ""));
  }
  RETURN_IF_ERROR(CheckCount(node, scale, count, what));
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t at = scale.num_elements() == 1 ? 0 : i;
    values[i] = static_cast<float>(reference::LoadAsDouble(scale, at));
    if (!(values[i] > 0) || !std::isfinite(values[i])) {
      return NodeError(node, std::string(what) + " holds " + std::to_string(values[i]) +
                                 "; scales must be positive and finite");
    }
  }
  return values;
}

StatusOr<Tensor> Requantize(const ir::Node& node, const std::vector<float>& real,
                            const std::vector<int64_t>& sizes, const Tensor& y_scale,
                            const Tensor& y_zero_point, bool allow_half) {
  RETURN_IF_ERROR(CheckByteType(node, y_zero_point, "y_zero_point"));
  ASSIGN_OR_RETURN(std::vector<float> scale, ReadScales(node, y_scale, 1, allow_half, "y_scale"));
  ASSIGN_OR_RETURN(std::vector<int32_t> zp,
                   ReadZeroPoints(node, &y_zero_point, y_zero_point.dtype(), 1, "y_zero_point"));
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(y_zero_point.dtype(), sizes));
  for (size_t i = 0; i < real.size(); ++i) {
    if (y.dtype() == DataType::kUint8) {
      y.data<uint8_t>()[i] = QuantizeToInt<uint8_t>(real[i], scale[0], zp[0]);
    } else {
      y.data<int8_t>()[i] = QuantizeToInt<int8_t>(real[i], scale[0], zp[0]);
    }
  }
  return y;
}

}  // namespace quant

void RegisterQuantIntegerKernels(ReferenceRegistry& registry) {
  registry.Register("ConvInteger", &quant::ConvInteger);
  registry.Register("QLinearConv", &quant::QLinearConv);
  registry.Register("MatMulInteger", &quant::MatMulInteger);
  registry.Register("QLinearMatMul", &quant::QLinearMatMul);
}

}  // namespace qtune::runtime
