#include "quant/qdq_params.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/float_convert.h"
#include "core/quant_math.h"
#include "quant/export_qdq.h"

namespace qtune::quant {
namespace {

bool IsUsableAmax(float amax) { return std::isfinite(amax) && amax > 0.0f; }

float ScaleFromAmax(float amax, float format_max) {
  if (!IsUsableAmax(amax)) return kMinExportScale;
  return std::max(amax / format_max, kMinExportScale);
}

}  // namespace

float FormatMax(QuantFormat format) { return format == QuantFormat::kFp8E4M3 ? 448.0f : 127.0f; }

ActivationParams ComputeActivationParams(const TensorRange& range, const QuantizerConfig& config) {
  ActivationParams params;
  if (config.format == QuantFormat::kInt8 && !config.symmetric) {
    params.is_unsigned = true;
    float lo = std::isfinite(range.min) ? std::min(range.min, 0.0f) : 0.0f;
    float hi = std::isfinite(range.max) ? std::max(range.max, 0.0f) : 0.0f;
    // A clipping calibrator (percentile, entropy, mse) chose amax below max |x|: it bounds
    // both ends of the asymmetric range too. (With max, amax = max |x| changes nothing.)
    if (std::isfinite(range.amax) && range.amax > 0.0f) {
      lo = std::max(lo, -range.amax);
      hi = std::min(hi, range.amax);
    }
    params.amax = std::max(-lo, hi);
    if (hi - lo <= 0.0f) {
      params.scale = kMinExportScale;
      params.zero_point = 0;
      return params;
    }
    params.scale = std::max((hi - lo) / 255.0f, kMinExportScale);
    float zp = RoundHalfToEven(-lo / params.scale);
    params.zero_point = static_cast<int32_t>(std::clamp(zp, 0.0f, 255.0f));
    return params;
  }
  params.amax = range.amax;
  params.scale = ScaleFromAmax(range.amax, FormatMax(config.format));
  return params;
}

TensorRange MergeRanges(const TensorRange& a, const TensorRange& b) {
  TensorRange r;
  r.min = std::min(a.min, b.min);
  r.max = std::max(a.max, b.max);
  r.amax = std::max(a.amax, b.amax);
  r.samples = a.samples + b.samples;
  return r;
}

StatusOr<QuantizedWeight> QuantizeWeight(const Tensor& weight, const QuantizerConfig& config,
                                         bool store_quantized, const std::string& name) {
  if (weight.dtype() != DataType::kFloat32) {
    return UnimplementedError(fmt::format(
        "weight '{}' is {}; the exporter quantizes float32 weights only (convert the model to "
        "float32 first)",
        name, DataTypeName(weight.dtype())));
  }
  const auto& sizes = weight.sizes();
  const int64_t rank = static_cast<int64_t>(sizes.size());
  int64_t axis = -1;
  if (config.axis.has_value()) {
    axis = *config.axis < 0 ? *config.axis + rank : *config.axis;
    if (axis < 0 || axis >= rank) {
      return InvalidArgumentError(fmt::format(
          "weight '{}' has rank {}; per-channel axis {} is out of range (fix the recipe's axis)",
          name, rank, *config.axis));
    }
  }
  QuantizedWeight out;
  out.channels = axis < 0 ? 1 : sizes[axis];
  int64_t inner = 1;  // elements between consecutive channel steps
  for (int64_t d = axis + 1; axis >= 0 && d < rank; ++d) inner *= sizes[d];
  const int64_t total = weight.num_elements();
  auto channel_of = [&](int64_t i) { return axis < 0 ? 0 : (i / inner) % out.channels; };

  std::vector<float> amax(static_cast<size_t>(out.channels), 0.0f);
  auto w = weight.span<float>();
  for (int64_t i = 0; i < total; ++i) {
    float a = std::fabs(w[i]);
    if (!std::isfinite(a)) {
      return InvalidArgumentError(fmt::format(
          "weight '{}' holds a non-finite value at element {}; fix the model", name, i));
    }
    float& m = amax[channel_of(i)];
    m = std::max(m, a);
  }
  const float format_max = FormatMax(config.format);
  std::vector<float> scales(amax.size());
  for (size_t c = 0; c < amax.size(); ++c) {
    scales[c] = ScaleFromAmax(amax[c], format_max);
    out.amax = std::max(out.amax, amax[c]);
  }
  std::vector<int64_t> param_sizes;
  if (axis >= 0) param_sizes = {out.channels};
  out.scale = Tensor::FromVector<float>(param_sizes, scales);
  const DataType qtype =
      config.format == QuantFormat::kFp8E4M3 ? DataType::kFloat8E4M3FN : DataType::kInt8;
  ASSIGN_OR_RETURN(out.zero_point, Tensor::Allocate(qtype, param_sizes));
  if (!store_quantized) return out;

  ASSIGN_OR_RETURN(out.data, Tensor::Allocate(qtype, sizes));
  auto* q = static_cast<uint8_t*>(out.data.raw_data());
  for (int64_t i = 0; i < total; ++i) {
    float s = scales[channel_of(i)];
    if (qtype == DataType::kInt8) {
      int8_t v = QuantizeToInt<int8_t>(w[i], s, 0);
      q[i] = static_cast<uint8_t>(v);
    } else {
      q[i] = FloatToFloat8E4M3FN(w[i] / s, /*saturate=*/true);
    }
  }
  return out;
}

std::optional<Tensor> ScaleToFloat16(const Tensor& scale) {
  if (scale.dtype() != DataType::kFloat32) return std::nullopt;
  auto allocated = Tensor::Allocate(DataType::kFloat16, scale.sizes());
  if (!allocated.ok()) return std::nullopt;
  Tensor out = std::move(allocated).value();
  auto* bits = static_cast<uint16_t*>(out.raw_data());
  auto in = scale.span<float>();
  for (size_t i = 0; i < in.size(); ++i) {
    uint16_t h = FloatToHalf(in[i]);
    float back = HalfToFloat(h);
    if (!std::isfinite(back) || std::fabs(back) < 6.103515625e-05f) return std::nullopt;
    bits[i] = h;
  }
  return out;
}

}  // namespace qtune::quant
