// The quantization parameters of qtune::QConv and qtune::QMatMul (quant_ops.h), read and
// checked once by one function so that the integer reference and the oneDNN kernels agree
// on what every input means. Both tiers then work from a QuantLinearParams.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"

namespace qtune::runtime {

// One node input as the parameter reader sees it: its type, and its value when known
// (always at run time; only for constants when a fast kernel is created).
struct QuantInput {
  DataType dtype = DataType::kUndefined;  // kUndefined: the input is omitted
  const Tensor* value = nullptr;          // null: not known (not a constant)
  bool present() const { return dtype != DataType::kUndefined; }
};

enum class QuantSumKind { kNone, kFloat, kQuantized };

struct QuantLinearParams {
  DataType x_type = DataType::kUint8;
  float x_scale = 1.0f;
  int32_t x_zero_point = 0;
  DataType w_type = DataType::kInt8;
  std::vector<float> w_scale;         // one per output channel (a scalar is expanded)
  std::vector<int32_t> w_zero_point;  // one per output channel
  std::vector<float> bias;            // one per output channel, or empty
  bool quantized_output = false;      // y_scale given: output is y_type, else float32
  DataType y_type = DataType::kFloat32;
  float y_scale = 1.0f;
  int32_t y_zero_point = 0;
  QuantSumKind sum = QuantSumKind::kNone;
  DataType sum_type = DataType::kUndefined;
  float sum_scale = 1.0f;  // kQuantized only
  int32_t sum_zero_point = 0;

  bool weight_zero_points_all_zero() const;
};

// Reads inputs 1, 2 and 4..11 of a QConv/QMatMul (quant_ops.h numbering) for a layer with
// `channels` output channels (QConv: W's dimension 0; QMatMul: W's dimension 1). Every
// present parameter input must have a value; the data inputs X (0), W (3) and Sum (9) are
// read for their types only. InvalidArgument naming the node for anything the contract
// does not allow (wrong types or counts, non-positive or non-finite scales, y_scale without
// y_zero_point, a Sum scale without a zero point). REQUIRES: inputs.size() <= 12.
StatusOr<QuantLinearParams> ReadQuantLinearParams(const ir::Node& node,
                                                  std::span<const QuantInput> inputs,
                                                  int64_t channels);

// The same, from the tensors a reference kernel receives (invalid tensor = omitted).
StatusOr<QuantLinearParams> ReadQuantLinearParams(const ir::Node& node,
                                                  std::span<const Tensor> inputs, int64_t channels);

// Widens an int8/uint8 tensor's elements to int32.
std::vector<int32_t> WidenInts(const Tensor& tensor);

}  // namespace qtune::runtime
