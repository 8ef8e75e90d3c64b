// Integer accumulation shared by the quantized convolution and matmul references: ONNX
// ConvInteger / QLinearConv / MatMulInteger / QLinearMatMul (quant_integer_*.cc) and the
// fused qtune::QConv / qtune::QMatMul (fusion/quant_fused_reference.cc).
//
// Products of zero-point-centered uint8/int8 values accumulate exactly in int64; a padded
// convolution position contributes nothing, which is padding x with its zero point.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"

namespace qtune::runtime::quant {

// (q - zero_points[i / block]) for every element q of a uint8/int8 tensor; block = 0 applies
// zero_points[0] to every element.
// REQUIRES: t is uint8 or int8; zero_points covers every block of t.
std::vector<int32_t> CenteredBytes(const Tensor& t, const std::vector<int32_t>& zero_points,
                                   int64_t block);

// How a convolution's operands are named in error messages: "x"/"w" for the ONNX ops,
// "X"/"W" for qtune::QConv.
struct ConvOperandNames {
  const char* x = "x";
  const char* w = "w";
};

// InvalidArgument naming the node unless x is [N, C, spatial...] and w [M, C / group,
// kernel...] with equal ranks >= 3 and the node's group dividing C and M. Returns M.
StatusOr<int64_t> CheckIntegerConvShapes(const ir::Node& node, const Tensor& x, const Tensor& w,
                                         const ConvOperandNames& names);

// The operands of one integer convolution. Borrowed: they must outlive the call.
struct IntegerConvOperands {
  const Tensor* x = nullptr;                            // [N, C, spatial...], uint8 or int8
  const Tensor* w = nullptr;                            // [M, C / group, kernel...], uint8 or int8
  int32_t x_zero_point = 0;                             // per tensor
  const std::vector<int32_t>* w_zero_points = nullptr;  // M entries, one per output channel
  ConvOperandNames names;
};

struct IntegerConvAccumulation {
  std::vector<int64_t> sums;     // one per output element, row-major over y_sizes
  std::vector<int64_t> y_sizes;  // [N, M, spatial...]
  int64_t out_spatial = 1;       // product of the spatial output sizes

  // The output channel (M index) of output element i.
  int64_t ChannelOf(int64_t i) const { return (i / out_spatial) % y_sizes[1]; }
};

// sum((x - x_zero_point) * (w - w_zero_points[m])) over the window taps inside x, for every
// output element, with the node's Conv attributes (group, kernel_shape, strides, dilations,
// pads, auto_pad). InvalidArgument naming the node when kernel_shape does not match w or
// the window attributes do not fit x.
// REQUIRES: CheckIntegerConvShapes(node, *x, *w) succeeded; both tensors are uint8/int8.
StatusOr<IntegerConvAccumulation> AccumulateIntegerConv(const ir::Node& node,
                                                        const IntegerConvOperands& operands);

// An int32 tensor of `sizes` holding each of `sums` modulo 2^32, as an int32 accumulator
// would wrap (C++20 defines the conversion).
// REQUIRES: sums.size() equals the product of sizes.
StatusOr<Tensor> WrapToInt32(const std::vector<int64_t>& sums, const std::vector<int64_t>& sizes);

}  // namespace qtune::runtime::quant
