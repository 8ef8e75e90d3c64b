#include "quant/quant_types.h"

namespace qtune::quant {

const char* QuantFormatName(QuantFormat format) {
  switch (format) {
    case QuantFormat::kInt8:
      return "int8";
    case QuantFormat::kFp8E4M3:
      return "fp8_e4m3";
  }
  return "?";
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
