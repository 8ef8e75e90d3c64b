// Integer references of qtune::QConv and qtune::QMatMul (contract: quant_ops.h), and the
// dequantize -> float ConvTranspose -> quantize reference of qtune::QConvTranspose. The
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

// Dequantizes X and W (W's channel: axis 1 within its group, quant_ops.h), runs the float
// "ConvTranspose" reference with B, applies the activation, and quantizes (or returns
// float32).
StatusOr<std::vector<Tensor>> QConvTransposeReference(const KernelArgs& args) {
  const ir::Node& node = args.node;
  ASSIGN_OR_RETURN(const Tensor* x, nn::RequiredInput(args, kX, "X"));
  ASSIGN_OR_RETURN(const Tensor* w, nn::RequiredInput(args, kW, "W"));
  const int64_t group = node.GetInt("group", 1);
  if (w->rank() < 3 || group <= 0 || w->size(0) % group != 0) {
    return nn::NodeInvalid(node, "W is " + w->DebugString() + " with group " +
                                     std::to_string(group) +
                                     "; expected [C_in, C_out/group, k...] with C_in % group == 0");
  }
  if (args.inputs.size() > kSum && args.inputs[kSum].is_valid())
    return nn::NodeInvalid(node, "QConvTranspose has no Sum");
  const int64_t c_out_group = w->size(1), c_out = c_out_group * group;
  const int64_t per_group_in = w->size(0) / group;
  const int64_t window = w->num_elements() / (w->size(0) * c_out_group);
  ASSIGN_OR_RETURN(QuantLinearParams p, ReadQuantLinearParams(node, args.inputs, c_out));
  ASSIGN_OR_RETURN(Tensor xf, Tensor::Allocate(DataType::kFloat32, x->sizes()));
  const std::vector<int32_t> xi = WidenInts(*x);
  for (int64_t i = 0; i < x->num_elements(); ++i) {
    xf.data<float>()[i] = p.x_scale * static_cast<float>(xi[i] - p.x_zero_point);
  }
  ASSIGN_OR_RETURN(Tensor wf, Tensor::Allocate(DataType::kFloat32, w->sizes()));
  const std::vector<int32_t> wi = WidenInts(*w);
  for (int64_t i = 0; i < w->num_elements(); ++i) {
    const int64_t in_channel = i / (c_out_group * window);
    const int64_t o = in_channel / per_group_in * c_out_group + (i / window) % c_out_group;
    wf.data<float>()[i] = p.w_scale[o] * static_cast<float>(wi[i] - p.w_zero_point[o]);
  }
  std::vector<Tensor> float_inputs = {xf, wf};
  if (!p.bias.empty()) float_inputs.push_back(args.inputs[kBias]);
  ReferenceKernel conv_transpose = ReferenceRegistry::Get().Find("ConvTranspose");
  if (conv_transpose == nullptr) return InternalError("no ConvTranspose reference kernel");
  ASSIGN_OR_RETURN(std::vector<Tensor> real,
                   conv_transpose(KernelArgs{node, float_inputs, args.opset}));
  ApplyActivation(ReadActivation(node), real[0].data<float>(), real[0].num_elements());
  if (!p.quantized_output) return real;
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(p.y_type, real[0].sizes()));
  const float* r = real[0].data<float>();
  for (int64_t i = 0; i < y.num_elements(); ++i) {
    if (p.y_type == DataType::kInt8) {
      y.data<int8_t>()[i] = QuantizeToInt<int8_t>(r[i], p.y_scale, p.y_zero_point);
    } else {
      y.data<uint8_t>()[i] = QuantizeToInt<uint8_t>(r[i], p.y_scale, p.y_zero_point);
    }
  }
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

void RegisterQuantFusedReference(ReferenceRegistry& registry) {
  registry.Register("qtune::QConv", QConvReference);
  registry.Register("qtune::QConvTranspose", QConvTransposeReference);
  registry.Register("qtune::QMatMul", QMatMulReference);
}

}  // namespace qtune::runtime
