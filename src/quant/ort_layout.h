// The QDQ layout ONNX Runtime's quantize_static (QDQ format) writes, for
// `qtune quantize --target ort` and for tests that need third-party-layout models:
//
//   - one QuantizeLinear -> DequantizeLinear pair per activation tensor, SHARED by every
//     reader of that tensor (a residual block's input feeds its first Conv, the
//     downsample Conv and the Add through the same DequantizeLinear);
//   - the inputs and outputs of every quantizable op get a pair: Conv, ConvTranspose,
//     Gemm, MatMul (so a Q/DQ pair follows each Conv/MatMul output), Add and Concat of
//     two activations, pooling and data movement; MaxPool / Reshape / Flatten /
//     Transpose / Squeeze / Unsqueeze / Resize share one scale between input and output;
//   - a Relu or Clip right after a quantized op is removed and the op's output Q takes
//     its range (exact: an asymmetric Q of a range starting at 0 clamps at 0), as ONNX
//     Runtime does;
//   - activations uint8 asymmetric per tensor; weights int8 symmetric per output channel
//     (Conv axis 0, ConvTranspose axis 1, Gemm/MatMul the N axis) stored as int8 behind a
//     DequantizeLinear WITH an explicit zero-point tensor of zeros;
//   - biases of Conv/ConvTranspose/Gemm as DequantizeLinear(int32 constant, scale =
//     s_x * s_w per channel, int32 zero points of zeros, axis 0).
//
// Graph outputs keep their float tensors (no pair is written on a graph output).
// OrtLayoutOptions covers every ONNX-legal variation the engine's QDQ fusion must accept.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "ir/graph.h"
#include "quant/export_qdq.h"
#include "quant/placement.h"
#include "quant/quant_types.h"
#include "quant/recipe.h"

namespace qtune::quant {

enum class OrtActivationType {
  kUint8,          // asymmetric uint8 (ONNX Runtime's default, QUInt8)
  kInt8,           // asymmetric int8 (QInt8): the uint8 parameters with zero point - 128
  kInt8Symmetric,  // symmetric int8, zero point 0 (ActivationSymmetric=True)
};

struct OrtLayoutOptions {
  OrtActivationType activations = OrtActivationType::kUint8;
  bool per_channel = true;  // false: one scale per weight (and per bias)
  // false: omit every zero-point input the ONNX form allows to omit (all-zero weight and
  // bias zero points, uint8 zero points of 0, int8 zero points of 0 at opset >= 21 through
  // QuantizeLinear's output_dtype).
  bool zero_points = true;
  bool int32_bias = true;          // false: biases stay float initializers
  bool remove_activations = true;  // Relu/Clip after a quantized op fold into its Q
  // Default-domain opset of the result: 0 keeps the graph's (at least 13, or 10 for
  // per-tensor weights); 13, 19, 21 upgrade; 10 relabels a graph whose ops all have their
  // opset-10 meaning (Conv, Gemm, pooling, Relu, Add...) and needs per_channel = false.
  int64_t opset = 0;
  CalibratorConfig calibrator;  // of every activation site
};

// The sites of the layout for `graph` (a cleaned float graph: BN folded, constants as
// initializers), with shape inference for `input_sizes` telling float tensors from the
// others. Activation sites have empty consumer lists (every reader shares the pair). When
// `recipe` is given, a Conv/Gemm/MatMul whose input quantizer it removes stays float.
StatusOr<QuantPlan> PlanOrtLayout(const ir::Graph& graph, const InputSizes& input_sizes,
                                  const OrtLayoutOptions& options, const Recipe* recipe = nullptr);

// Writes the layout into `graph` (the graph PlanOrtLayout saw) from a plan whose
// activation sites carry calibrated ranges. The result passes ir::Verify. On error the
// graph may be partly rewritten.
StatusOr<ExportReport> ExportOrtLayout(ir::Graph& graph, const QuantPlan& plan,
                                       const OrtLayoutOptions& options);

}  // namespace qtune::quant
