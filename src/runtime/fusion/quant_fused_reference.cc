// Integer references of qtune::QConv and qtune::QMatMul (contract: quant_ops.h). The
// products (x - x_zp) * (w - w_zp[o]) accumulate exactly in int64; only then does float
// arithmetic start: real = acc * x_scale * w_scale[o] + B[o] + dq(Sum) in double, rounded
// once to float, the activation (ApplyActivation, as FusedConv), and QuantizeToInt with
// y_scale/y_zero_point (or float32 output when y_scale is omitted). Any faster tier is
// tested against these.
#include <cstdint>
#include <vector>

#include "core/quant_math.h"
#include "runtime/fusion/fused_ops.h"
#include "runtime/fusion/quant_linear_params.h"
#include "runtime/fusion/quant_ops.h"
#include "runtime/reference/nn_util.h"
#include "runtime/reference/quant_integer_accumulate.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime {
namespace {

using namespace qlinear;

// Float value of Sum's element i (dequantized when it is quantized).
double SumValue(const QuantLinearParams& p, const Tensor& sum, int64_t i) {
  if (p.sum == QuantSumKind::kFloat) return sum.data<float>()[i];
  int32_t q = sum.dtype() == DataType::kInt8 ? sum.data<int8_t>()[i] : sum.data<uint8_t>()[i];
  return static_cast<double>(p.sum_scale) * (q - p.sum_zero_point);
}

// The shared tail: `acc` holds integer accumulators in output order (row-major logical
// sizes `y_sizes`); channel(i) says which output channel element i belongs to.
template <typename ChannelOf>
StatusOr<std::vector<Tensor>> Finish(const KernelArgs& args, const QuantLinearParams& p,
                                     const std::vector<int64_t>& acc,
                                     const std::vector<int64_t>& y_sizes, ChannelOf channel) {
  const Tensor* sum = p.sum == QuantSumKind::kNone ? nullptr : &args.inputs[kSum];
  int64_t n = static_cast<int64_t>(acc.size());
  if (sum != nullptr && sum->sizes() != y_sizes) {
    return InvalidArgumentError(args.node.DebugName() + ": Sum is " + sum->DebugString() +
                                " but the output is " + nn::SizesText(y_sizes) +
                                "; they must be equal");
  }
  std::vector<float> real(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t o = channel(i);
    double v = static_cast<double>(acc[i]) * p.x_scale * p.w_scale[o];
    if (!p.bias.empty()) v += p.bias[o];
    if (sum != nullptr) v += SumValue(p, *sum, i);
    real[i] = static_cast<float>(v);
  }
  ApplyActivation(ReadActivation(args.node), real.data(), n);
  DataType out_type = p.quantized_output ? p.y_type : DataType::kFloat32;
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(out_type, y_sizes));
  for (int64_t i = 0; i < n; ++i) {
    if (out_type == DataType::kFloat32) {
      y.data<float>()[i] = real[i];
    } else if (out_type == DataType::kInt8) {
      y.data<int8_t>()[i] = QuantizeToInt<int8_t>(real[i], p.y_scale, p.y_zero_point);
    } else {
      y.data<uint8_t>()[i] = QuantizeToInt<uint8_t>(real[i], p.y_scale, p.y_zero_point);
    }
  }
  return std::vector<Tensor>{std::move(y)};
}

StatusOr<std::vector<Tensor>> QConvReference(const KernelArgs& args) {
  const ir::Node& node = args.node;
  ASSIGN_OR_RETURN(const Tensor* x, nn::RequiredInput(args, kX, "X"));
  ASSIGN_OR_RETURN(const Tensor* w, nn::RequiredInput(args, kW, "W"));
  const quant::ConvOperandNames names{.x = "X", .w = "W"};
  ASSIGN_OR_RETURN(int64_t c_out, quant::CheckIntegerConvShapes(node, *x, *w, names));
  ASSIGN_OR_RETURN(QuantLinearParams p, ReadQuantLinearParams(node, args.inputs, c_out));
  const quant::IntegerConvOperands operands{.x = x,
                                            .w = w,
                                            .x_zero_point = p.x_zero_point,
                                            .w_zero_points = &p.w_zero_point,
                                            .names = names};
  ASSIGN_OR_RETURN(quant::IntegerConvAccumulation acc,
                   quant::AccumulateIntegerConv(node, operands));
  return Finish(args, p, acc.sums, acc.y_sizes, [&](int64_t i) { return acc.ChannelOf(i); });
}

StatusOr<std::vector<Tensor>> QMatMulReference(const KernelArgs& args) {
  const ir::Node& node = args.node;
  ASSIGN_OR_RETURN(const Tensor* a, nn::RequiredInput(args, kX, "A"));
  ASSIGN_OR_RETURN(const Tensor* w, nn::RequiredInput(args, kW, "W"));
  if (a->rank() < 2 || w->rank() != 2 || a->sizes().back() != w->size(0)) {
    return nn::NodeInvalid(node, "A is " + a->DebugString() + " and W " + w->DebugString() +
                                     "; expected A [..., M, K] and W [K, N]");
  }
  const int64_t k = w->size(0), n = w->size(1), rows = a->num_elements() / k;
  ASSIGN_OR_RETURN(QuantLinearParams p, ReadQuantLinearParams(node, args.inputs, n));
  const std::vector<int32_t> ac = quant::CenteredBytes(*a, {p.x_zero_point}, 0);
  std::vector<int32_t> wc = WidenInts(*w);
  for (size_t i = 0; i < wc.size(); ++i) wc[i] -= p.w_zero_point[i % n];
  std::vector<int64_t> acc(rows * n, 0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t kk = 0; kk < k; ++kk) {
      const int64_t av = ac[r * k + kk];
      for (int64_t j = 0; j < n; ++j) acc[r * n + j] += av * wc[kk * n + j];
    }
  }
  std::vector<int64_t> y_sizes = a->sizes();
  y_sizes.back() = n;
  return Finish(args, p, acc, y_sizes, [&](int64_t i) { return i % n; });
}

}  // namespace

void RegisterQuantFusedReference(ReferenceRegistry& registry) {
  registry.Register("qtune::QConv", QConvReference);
  registry.Register("qtune::QMatMul", QMatMulReference);
}

}  // namespace qtune::runtime
