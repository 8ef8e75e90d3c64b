#include "quant/calibrator.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "quant/amax_search.h"

namespace qtune::quant {
namespace {

constexpr int kEntropyLevels = 128;  // int8: 127 positive levels plus zero, as TensorRT
constexpr int kEntropyMinBins = 2 * kEntropyLevels;

}  // namespace

Calibrator::Calibrator(const CalibratorConfig& config, QuantFormat format)
    : config_(config), format_(format) {
  if (config.kind != CalibratorKind::kMax) histogram_.emplace(config.bins);
}

StatusOr<std::unique_ptr<Calibrator>> Calibrator::Create(const CalibratorConfig& config,
                                                         QuantFormat format) {
  const std::string name = CalibratorName(config.kind);
  if (config.kind != CalibratorKind::kMax) {
    auto histogram = AbsHistogram::Make(config.bins);
    if (!histogram.ok()) return histogram.status().WithContext(name + " calibrator");
  }
  if (config.kind == CalibratorKind::kPercentile &&
      !(config.percentile > 0.0 && config.percentile <= 100.0)) {
    return InvalidArgumentError("percentile calibrator: percentile must be in (0, 100], got " +
                                std::to_string(config.percentile) + " (e.g. 99.99)");
  }
  if (config.kind == CalibratorKind::kEntropy) {
    if (config.bins < kEntropyMinBins) {
      return InvalidArgumentError("entropy calibrator: needs at least " +
                                  std::to_string(kEntropyMinBins) + " histogram bins, got " +
                                  std::to_string(config.bins) + " (the default is 2048)");
    }
    if (format != QuantFormat::kInt8) {
      return InvalidArgumentError(
          std::string("entropy calibrator: its 128-level model describes the int8 grid, not ") +
          QuantFormatName(format) + "; use the mse or max calibrator for " +
          QuantFormatName(format));
    }
  }
  return std::unique_ptr<Calibrator>(new Calibrator(config, format));
}

void Calibrator::Observe(std::span<const float> values) {
  float lo = min_, hi = max_;
  int64_t finite = 0;
  bool first = samples_ == 0;
  for (float v : values) {
    if (!std::isfinite(v)) continue;
    if (first) {
      lo = hi = v;
      first = false;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    ++finite;
  }
  min_ = lo;
  max_ = hi;
  samples_ += finite;
  nonfinite_ += static_cast<int64_t>(values.size()) - finite;
  if (histogram_) histogram_->Add(values);
}

Status Calibrator::Merge(const Calibrator& other) {
  if (other.config_.kind != config_.kind || other.config_.bins != config_.bins ||
      other.config_.percentile != config_.percentile || other.format_ != format_) {
    return InvalidArgumentError("cannot merge calibrators of different configurations");
  }
  if (other.samples_ > 0) {
    min_ = samples_ > 0 ? std::min(min_, other.min_) : other.min_;
    max_ = samples_ > 0 ? std::max(max_, other.max_) : other.max_;
  }
  samples_ += other.samples_;
  nonfinite_ += other.nonfinite_;
  if (histogram_) histogram_->Merge(*other.histogram_);
  return Status::Ok();
}

StatusOr<TensorRange> Calibrator::Result() const {
  if (samples_ == 0) {
    return FailedPreconditionError(nonfinite_ > 0 ? "every observed value was NaN or infinite"
                                                  : "no values were observed");
  }
  TensorRange range;
  range.min = min_;
  range.max = max_;
  range.samples = samples_;
  const float max_abs = std::max(std::fabs(min_), std::fabs(max_));
  double amax = max_abs;
  switch (config_.kind) {
    case CalibratorKind::kMax:
      break;
    case CalibratorKind::kPercentile:
      amax = PercentileAmax(*histogram_, config_.percentile);
      break;
    case CalibratorKind::kEntropy:
      amax = EntropyAmax(*histogram_, kEntropyLevels, kEntropyLevels);
      break;
    case CalibratorKind::kMse:
      amax = MseAmax(*histogram_, format_);
      break;
  }
  range.amax = std::clamp(static_cast<float>(amax), 0.0f, max_abs);
  return range;
}

}  // namespace qtune::quant
