#include "quant/quant_types.h"

namespace qtune::quant {

const std::vector<FormatInfo>& AllFormats() {
  // One row per QuantFormat, in enum order.
  static const std::vector<FormatInfo> formats = {
      {QuantFormat::kInt8, "int8", "", 8, false, false, 0, 0, false, 0},
      {QuantFormat::kFp8E4M3, "fp8_e4m3", "fp8 e4m3", 8, false, false, 0, 0, false, 0},
      {QuantFormat::kInt4, "int4", "", 4, true, true, 64, 0, true, 0},
      // Block scales of 8 bits (E4M3 / E8M0); NVFP4's one fp32 scale per tensor is not
      // counted per weight.
      {QuantFormat::kNvfp4, "nvfp4", "", 4, true, true, 16, 16, false, 8},
      {QuantFormat::kMxfp8, "mxfp8", "", 8, true, true, 32, 32, false, 8},
  };
  return formats;
}

const FormatInfo& FormatInfoOf(QuantFormat format) {
  return AllFormats().at(static_cast<size_t>(format));
}

const char* QuantFormatName(QuantFormat format) {
  const auto& all = AllFormats();
  size_t i = static_cast<size_t>(format);
  return i < all.size() ? all[i].name : "?";
}

std::string FormatNameList() {
  std::string out;
  for (const FormatInfo& f : AllFormats()) out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

const char* WeightAlgorithmName(WeightAlgorithm algorithm) {
  switch (algorithm) {
    case WeightAlgorithm::kRtn:
      return "rtn";
    case WeightAlgorithm::kClip:
      return "clip";
    case WeightAlgorithm::kAwq:
      return "awq";
  }
  return "?";
}

std::optional<WeightAlgorithm> ParseWeightAlgorithm(const std::string& text) {
  for (WeightAlgorithm a : {WeightAlgorithm::kRtn, WeightAlgorithm::kClip, WeightAlgorithm::kAwq}) {
    if (text == WeightAlgorithmName(a)) return a;
  }
  return std::nullopt;
}

const char* ScaleTypeName(ScaleType type) { return type == ScaleType::kFloat16 ? "fp16" : "fp32"; }

double EffectiveBits(const QuantizerConfig& config, int64_t reduction_length) {
  const FormatInfo& info = FormatInfoOf(config.format);
  const int64_t group = config.block_size > 0 ? config.block_size : reduction_length;
  double bits = info.bits;
  if (group <= 0) return bits;
  const int scale_bits = info.fixed_scale_bits > 0                  ? info.fixed_scale_bits
                         : config.scale_type == ScaleType::kFloat16 ? 16
                                                                    : 32;
  bits += static_cast<double>(scale_bits) / static_cast<double>(group);
  if (!config.symmetric && info.zero_point_allowed) {
    bits += static_cast<double>(info.bits) / static_cast<double>(group);
  }
  return bits;
}

const char* CalibratorName(CalibratorKind kind) {
  switch (kind) {
    case CalibratorKind::kMax:
      return "max";
    case CalibratorKind::kPercentile:
      return "percentile";
    case CalibratorKind::kEntropy:
      return "entropy";
    case CalibratorKind::kMse:
      return "mse";
  }
  return "?";
}

const char* TargetName(Target target) {
  switch (target) {
    case Target::kCpu:
      return "cpu";
    case Target::kTrt:
      return "trt";
    case Target::kOrt:
      return "ort";
  }
  return "?";
}

}  // namespace qtune::quant
