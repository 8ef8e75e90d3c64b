// ConvInteger and QLinearConv reference kernels (contract: quant_kernels.h).
//
// Both accumulate sum((x - x_zero_point) * (w - w_zero_point[m])) exactly in int64 over the
// window taps that fall inside the input (AccumulateIntegerConv, quant_integer_accumulate.h);
// a padded position contributes nothing, which is padding x with its zero point.
// ConvInteger stores the sum as int32. QLinearConv adds the int32 bias B[m], scales by
// x_scale * w_scale[m] (in double, rounded once to float) and requantizes with y_scale /
// y_zero_point.
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/reference/quant_integer_accumulate.h"
#include "runtime/reference/quant_kernels.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::quant {
namespace {

// x (input 0) and w (input `w_index`) of a ConvInteger / QLinearConv: uint8/int8 tensors
// with Conv shapes. The zero points are left for the caller to fill in.
StatusOr<IntegerConvOperands> ReadConvOperands(const KernelArgs& args, size_t w_index) {
  const Tensor& x = args.inputs[0];
  const Tensor& w = args.inputs[w_index];
  RETURN_IF_ERROR(CheckByteType(args.node, x, "x"));
  RETURN_IF_ERROR(CheckByteType(args.node, w, "w"));
  RETURN_IF_ERROR(CheckIntegerConvShapes(args.node, x, w, ConvOperandNames{}).status());
  return IntegerConvOperands{.x = &x, .w = &w};
}

}  // namespace

// Inputs: x, w, x_zero_point (optional, one element), w_zero_point (optional, one or M).
StatusOr<std::vector<Tensor>> ConvInteger(const KernelArgs& args) {
  RETURN_IF_ERROR(reference::CheckInputCount(args, 2, 4));
  ASSIGN_OR_RETURN(IntegerConvOperands operands, ReadConvOperands(args, 1));
  const ir::Node& node = args.node;
  const int64_t c_out = operands.w->size(0);
  const Tensor* x_zp_tensor = reference::HasInput(args, 2) ? &args.inputs[2] : nullptr;
  const Tensor* w_zp_tensor = reference::HasInput(args, 3) ? &args.inputs[3] : nullptr;
  ASSIGN_OR_RETURN(std::vector<int32_t> x_zp,
                   ReadZeroPoints(node, x_zp_tensor, operands.x->dtype(), 1, "x_zero_point"));
  ASSIGN_OR_RETURN(std::vector<int32_t> w_zp,
                   ReadZeroPoints(node, w_zp_tensor, operands.w->dtype(), c_out, "w_zero_point"));
  operands.x_zero_point = x_zp[0];
  operands.w_zero_points = &w_zp;
  ASSIGN_OR_RETURN(IntegerConvAccumulation acc, AccumulateIntegerConv(node, operands));
  ASSIGN_OR_RETURN(Tensor y, WrapToInt32(acc.sums, acc.y_sizes));
  return std::vector<Tensor>{std::move(y)};
}

// Inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B.
StatusOr<std::vector<Tensor>> QLinearConv(const KernelArgs& args) {
  RETURN_IF_ERROR(reference::CheckInputCount(args, 8, 9));
  ASSIGN_OR_RETURN(IntegerConvOperands operands, ReadConvOperands(args, 3));
  const ir::Node& node = args.node;
  const int64_t c_out = operands.w->size(0);
  ASSIGN_OR_RETURN(std::vector<float> x_scale,
                   ReadScales(node, args.inputs[1], 1, false, "x_scale"));
  ASSIGN_OR_RETURN(std::vector<int32_t> x_zp,
                   ReadZeroPoints(node, &args.inputs[2], operands.x->dtype(), 1, "x_zero_point"));
  ASSIGN_OR_RETURN(std::vector<float> w_scale,
                   ReadScales(node, args.inputs[4], c_out, false, "w_scale"));
  ASSIGN_OR_RETURN(
      std::vector<int32_t> w_zp,
      ReadZeroPoints(node, &args.inputs[5], operands.w->dtype(), c_out, "w_zero_point"));
  std::vector<int64_t> bias(c_out, 0);
  if (reference::HasInput(args, 8)) {
    const Tensor& b = args.inputs[8];
    if (b.dtype() != DataType::kInt32 || b.rank() != 1 || b.size(0) != c_out) {
      return reference::NodeError(
          node, "B is " + b.DebugString() + "; expected int32[" + std::to_string(c_out) + "]");
    }
    for (int64_t m = 0; m < c_out; ++m) bias[m] = b.data<int32_t>()[m];
  }
  operands.x_zero_point = x_zp[0];
  operands.w_zero_points = &w_zp;
  ASSIGN_OR_RETURN(IntegerConvAccumulation acc, AccumulateIntegerConv(node, operands));
  std::vector<float> real(acc.sums.size());
  for (size_t i = 0; i < acc.sums.size(); ++i) {
    const int64_t m = acc.ChannelOf(static_cast<int64_t>(i));
    real[i] =
        static_cast<float>(static_cast<double>(acc.sums[i] + bias[m]) * x_scale[0] * w_scale[m]);
  }
  ASSIGN_OR_RETURN(Tensor y,
                   Requantize(node, real, acc.y_sizes, args.inputs[6], args.inputs[7], false));
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace qtune::runtime::quant
