// qtune's integer fused operators (domain "qtune"). The QDQ fusion (qdq_fusion.cc) rewrites
// DequantizeLinear -> op -> QuantizeLinear patterns into them so that one int8 oneDNN
// primitive runs the whole pattern. Each has a reference kernel (the integer reference:
// exact int32/int64 accumulation, then float scaling) registered as "qtune::<op>", and a
// shape function under its bare op type.
//
// A quantized tensor is q (uint8 or int8) with a float32 scale s and a zero point z of q's
// type; its real value is s * (q - z). Quantizing a real value v gives
// saturate(round_half_to_even(v / s) + z) (ONNX QuantizeLinear).
//
// qtune::QConv
//   inputs  0 X (u8|s8)        1 x_scale (f32 scalar)      2 x_zero_point (scalar, X's type)
//           3 W (s8|u8, OIHW, constant)  4 w_scale (f32 scalar or [O])
//           5 w_zero_point (scalar or [O], W's type)       6 B (f32 [O], optional)
//           7 y_scale (f32 scalar, optional)   8 y_zero_point (u8|s8 scalar, optional)
//           9 Sum (optional)   10 sum_scale   11 sum_zero_point (both present iff Sum is
//             quantized u8|s8; Sum is f32 when they are omitted)
//   attributes: Conv's (auto_pad, dilations, group, kernel_shape, pads, strides) and
//     FusedConv's activation / activation_params / post_linear (fused_ops.h)
//   Y_real = post_linear(activation(Conv(dq(X), dq(W)) + B + dq(Sum)))
//   Y = y_scale given ? quantize(Y_real, y_scale, y_zero_point) : Y_real (float32).
//   The output type is y_zero_point's type; y_zero_point is required with y_scale.
//
// qtune::QConvTranspose
//   inputs  0..8 as QConv (qlinear numbering), except W (s8|u8, [C_in, C_out/group, kH, kW],
//           constant) whose w_scale / w_zero_point are scalars or [C_out]: per output
//           channel, i.e. along W's axis 1 (for group g, channel g * C_out/group + W's
//           index on axis 1). No Sum (inputs 9..11 must be absent).
//   attributes: ConvTranspose's (auto_pad, dilations, group, kernel_shape, output_padding,
//     output_shape, pads, strides) and activation / activation_params (as FusedConv)
//   Y_real = activation(ConvTranspose(dq(X), dq(W)) + B); Y as for QConv.
//   The QDQ fusion only creates it for group 1. Its reference is not an integer one: it
//   dequantizes X and W and runs the float ConvTranspose reference.
//
// qtune::QMatMul
//   inputs  0 A (u8|s8, [..., M, K])  1 a_scale  2 a_zero_point
//           3 W (s8|u8, [K, N], constant)  4 w_scale (scalar or [N])  5 w_zero_point
//           6 B (f32 [N], optional)  7 y_scale (optional)  8 y_zero_point (optional)
//   attributes: activation / activation_params (as FusedConv)
//   Y_real = activation(MatMul(dq(A), dq(W)) + B); Y as for QConv.
//
// qtune::QAdd
//   inputs  0 A  1 a_scale  2 a_zero_point  3 B  4 b_scale  5 b_zero_point
//           6 y_scale  7 y_zero_point      (A, B: u8|s8 of equal sizes; scalars per tensor)
//   attributes: activation ("" or "Relu")
//   Y = quantize(activation(dq(A) + dq(B)), y_scale, y_zero_point)
//
// qtune::QLookup
//   inputs  0 X (u8|s8)  1 Table (constant, 256 elements of the output type u8|s8)
//   Y[i] = Table[X[i] - min(X's type)]: any per-tensor DQ -> elementwise float chain -> Q
//   computed once for all 256 codes (qdq_lookup_fusion.cc builds the table with the
//   reference kernels, so it is exact).
#pragma once

#include <cstddef>

namespace qtune::runtime {

inline constexpr char kQConv[] = "QConv";
inline constexpr char kQConvTranspose[] = "QConvTranspose";
inline constexpr char kQMatMul[] = "QMatMul";
inline constexpr char kQAdd[] = "QAdd";
inline constexpr char kQLookup[] = "QLookup";

// An AveragePool or GlobalAveragePool the pass-through fusion (qdq_passthrough_fusion.cc)
// runs on the int8/uint8 data of a DQ -> pool -> Q pair with one scale s and zero point z
// carries them as these attributes (float, int; on Compile's private copy only). Its kernel
// then computes what the QDQ graph computes, bit for bit as the reference tier runs it
// unfused: every tap dequantized to float32, summed in double, the mean rounded to float32,
// then quantize(mean, s, z). Rounding the exact integer mean instead differs from the graph
// where the mean is a tie (k + 0.5): often, as sums of integers divided by even counts are.
inline constexpr char kPoolScaleAttribute[] = "qtune_qdq_scale";
inline constexpr char kPoolZeroPointAttribute[] = "qtune_qdq_zero_point";

// Input positions shared by QConv, QConvTranspose and QMatMul.
namespace qlinear {
inline constexpr size_t kX = 0, kXScale = 1, kXZeroPoint = 2, kW = 3, kWScale = 4, kWZeroPoint = 5,
                        kBias = 6, kYScale = 7, kYZeroPoint = 8, kSum = 9, kSumScale = 10,
                        kSumZeroPoint = 11;
}  // namespace qlinear

class ReferenceRegistry;
// References of QConv, QConvTranspose and QMatMul (quant_fused_reference.cc) and QAdd
// (quant_add_reference.cc).
void RegisterQuantFusedReference(ReferenceRegistry& registry);
void RegisterQuantAddReference(ReferenceRegistry& registry);
void RegisterQuantLookupReference(ReferenceRegistry& registry);  // quant_lookup.cc

}  // namespace qtune::runtime
