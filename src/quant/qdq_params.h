// Quantization parameters (scale, zero point) and weight quantization for the QDQ export.
// Pure arithmetic on tensors; no graph. See export_qdq.h for the rules.
#pragma once

#include <optional>
#include <string>

#include "core/status.h"
#include "core/tensor.h"
#include "quant/quant_types.h"

namespace qtune::quant {

// Largest magnitude of each format (int8 symmetric: 127; fp8 e4m3fn: 448).
float FormatMax(QuantFormat format);

// Per-tensor parameters of one activation quantizer.
struct ActivationParams {
  float scale = 1.0f;
  int32_t zero_point = 0;    // uint8 zero point for asymmetric int8; else 0
  bool is_unsigned = false;  // uint8 (asymmetric) instead of int8
  float amax = 0.0f;         // the amax the scale came from (symmetric) or max(|lo|, |hi|)
};

// Scale and zero point from a range. Symmetric formats use range.amax; asymmetric int8
// (config.symmetric == false) uses [min(range.min, 0), max(range.max, 0)]. A dead range
// (amax <= 0, NaN or inf) gets the tiny scale kMinExportScale; never 0.
ActivationParams ComputeActivationParams(const TensorRange& range, const QuantizerConfig& config);

// A range covering both (for scale groups): widest min/max, largest amax.
TensorRange MergeRanges(const TensorRange& a, const TensorRange& b);

// A weight quantized symmetrically, per channel along `axis` or per tensor.
struct QuantizedWeight {
  Tensor scale;       // float32: scalar (per tensor) or [channels]
  Tensor data;        // int8 or float8e4m3fn, the weight's sizes (float_weights: unused)
  Tensor zero_point;  // of data's type: scalar or [channels], all zero
  float amax = 0.0f;  // largest channel amax
  int64_t channels = 1;
};

// REQUIRES nothing; errors: `weight` not float32, axis out of range. `name` is for errors.
// With `store_quantized` false only scale / zero point are computed (data stays invalid).
StatusOr<QuantizedWeight> QuantizeWeight(const Tensor& weight, const QuantizerConfig& config,
                                         bool store_quantized, const std::string& name);

// The float16 bits of a scale tensor, or nullopt when some element is not a normal float16
// (overflow, underflow to subnormal/zero, NaN).
std::optional<Tensor> ScaleToFloat16(const Tensor& scale);

}  // namespace qtune::quant
