// Test helper: a naive post-training QDQ version of a float model, placed the way ONNX
// Runtime's quantize_static (QDQ format) or ModelOpt (TensorRT style) lay models out, with
// ranges from one reference run. It exists to give the int8 engine real QDQ graphs to
// run; it is not the quantizer (src/quant is).
#pragma once

#include <memory>

#include "core/status.h"
#include "ir/graph.h"
#include "runtime/reference/reference_executor.h"

namespace qtune::testing {

struct QdqStyle {
  // uint8 asymmetric activations (ONNX Runtime's CPU default) or int8 symmetric (TensorRT).
  bool unsigned_activations = true;
  // Weights as int8 initializers behind DequantizeLinear, or float initializers + Q/DQ.
  bool quantized_weights = true;
  // Per-output-channel weight scales (needs opset >= 13) or one scale per weight.
  bool per_channel = true;
  // Bias as DequantizeLinear(int32) with scale x_scale * w_scale (ONNX Runtime), or float.
  bool int32_bias = true;
  // ONNX Runtime style: Q/DQ on the inputs and outputs of every quantizable op (Conv,
  // Gemm, MatMul, Add, Concat, pooling, data movement), one shared pair per tensor.
  // false: ModelOpt/TensorRT style, Q/DQ only in front of Conv/Gemm/MatMul inputs and on
  // the shortcut input of residual Adds.
  bool quantize_all_ops = true;
};

// `model` must already be cleaned by the pass pipeline (BN folded, constants as
// initializers). `calibration` feeds one reference run that gives every tensor's range.
StatusOr<std::unique_ptr<ir::Graph>> BuildNaiveQdq(const ir::Graph& model,
                                                   const runtime::NamedTensors& calibration,
                                                   const QdqStyle& style);

}  // namespace qtune::testing
