// The ONNX quantization ops' rules that the reference kernels (quant_linear.cc,
// quant_integer*.cc) and the shape functions (shape/shape_fns_quant.cc) share, so that a
// shape function accepts exactly the nodes its kernel runs: which element types each opset
// allows, and how a QuantizeLinear/DequantizeLinear scale applies to x (per tensor, per
// axis or blocked).
//
// Every function returns InvalidArgument naming the node for what the ONNX spec forbids
// (wrong types, scale/zero-point shapes that do not fit the axis, attributes of a later
// opset) and Unimplemented naming the node for what the spec allows but qtune cannot hold
// or compute (the FNUZ float8 types).
#pragma once

#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "core/status.h"
#include "ir/graph.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime {

// ConvInteger, MatMulInteger, QLinearConv, QLinearMatMul (quant_integer*.cc); called by
// RegisterQuantKernels.
void RegisterQuantIntegerKernels(ReferenceRegistry& registry);

namespace quant {

// The output type of QuantizeLinear for input types x, y_scale and y_zero_point
// (kUndefined when the zero point is omitted) under `opset`: output_dtype (opset >= 21),
// else the zero point's type, else uint8.
StatusOr<DataType> QuantizeOutputType(const ir::Node& node, int64_t opset, DataType x,
                                      DataType scale, DataType zero_point);

// The output type of DequantizeLinear: x_scale's type from opset 19, float32 before.
StatusOr<DataType> DequantizeOutputType(const ir::Node& node, int64_t opset, DataType x,
                                        DataType scale, DataType zero_point);

// How the scale and zero point of a QuantizeLinear/DequantizeLinear map onto x's elements.
struct ParamLayout {
  bool per_tensor = true;
  int64_t axis_size = 1;        // x's size along the axis
  int64_t inner = 1;            // elements of x after the axis
  int64_t block = 0;            // > 0: blocked quantization along the axis
  int64_t scale_axis_size = 1;  // blocked: the scale's size along the axis

  // Index into the scale / zero point for element `i` (row-major) of x.
  int64_t ParamIndex(int64_t i) const {
    if (per_tensor) return 0;
    const int64_t along = (i / inner) % axis_size;
    if (block == 0) return along;
    const int64_t outer = i / (inner * axis_size);
    return (outer * scale_axis_size + along / block) * inner + i % inner;
  }
};

// Reads axis (opset >= 13) and block_size (opset >= 21) and checks the scale's and zero
// point's sizes against x's: one element (per tensor), a 1-D tensor of x's size along the
// axis (per axis), or, with block_size, x's rank with ceil(size / block_size) along the
// axis (blocked). `zero_point_sizes` is null when the zero point is omitted.
StatusOr<ParamLayout> ResolveParamLayout(const ir::Node& node, int64_t opset,
                                         const std::vector<int64_t>& x_sizes,
                                         const std::vector<int64_t>& scale_sizes,
                                         const std::vector<int64_t>* zero_point_sizes);

// ------------------------------------------------------------------ integer kernels
// ConvInteger, MatMulInteger, QLinearConv, QLinearMatMul and their shared input readers
// (quant_integer*.cc). Integer products accumulate exactly in int64; ConvInteger and
// MatMulInteger store the int32 result (wrapping like int32 accumulation would), the
// QLinear ops scale it in float and requantize with QuantizeToInt.

StatusOr<std::vector<Tensor>> ConvInteger(const KernelArgs& args);
StatusOr<std::vector<Tensor>> QLinearConv(const KernelArgs& args);
StatusOr<std::vector<Tensor>> MatMulInteger(const KernelArgs& args);
StatusOr<std::vector<Tensor>> QLinearMatMul(const KernelArgs& args);

// InvalidArgument naming the node unless `t` is uint8 or int8.
Status CheckByteType(const ir::Node& node, const Tensor& t, const char* what);

// A zero point of `data_type` (null: omitted, all zeros) with one element or `count`
// elements (at most 1-D), as `count` int32 values.
StatusOr<std::vector<int32_t>> ReadZeroPoints(const ir::Node& node, const Tensor* zero_point,
                                              DataType data_type, int64_t count, const char* what);

// A float32 scale (also float16/bfloat16 when `allow_half`) with one element or `count`
// elements (at most 1-D), as `count` positive finite values.
StatusOr<std::vector<float>> ReadScales(const ir::Node& node, const Tensor& scale, int64_t count,
                                        bool allow_half, const char* what);

// y = QuantizeToInt(real[i], y_scale, y_zero_point) into a tensor of y_zero_point's type
// (uint8 or int8); both must hold one element.
StatusOr<Tensor> Requantize(const ir::Node& node, const std::vector<float>& real,
                            const std::vector<int64_t>& sizes, const Tensor& y_scale,
                            const Tensor& y_zero_point, bool allow_half);

}  // namespace quant
}  // namespace qtune::runtime
