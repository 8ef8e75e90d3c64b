// Calibrator: streams the values of one float tensor over many batches and picks its
// clipping range (TensorRange) by one of four methods (CalibratorKind):
//   max        amax = max |x| (exact)
//   percentile amax = the configured percentile of |x| (histogram based)
//   entropy    TensorRT's KL-divergence choice over the |x| histogram, 128 levels (int8)
//   mse        the amax minimizing the expected quantization error for the target format
//              (int8 symmetric or float8 e4m3)
// min and max are always tracked exactly. docs/calibration.md describes the methods.
//
// Memory is bounded by the histogram (CalibratorConfig::bins counts), whatever the data
// size. The result does not depend on how the data was split into batches or in which
// order batches came (see abs_histogram.h), and two calibrators fed disjoint data can be
// merged (parallel calibration).
//
// Thread safety: none; one calibrator per thread, then Merge().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "core/status.h"
#include "quant/abs_histogram.h"
#include "quant/quant_types.h"

namespace qtune::quant {

class Calibrator {
 public:
  // Validates the configuration: percentile in (0, 100], bins in [2, 2^20] (entropy needs
  // at least 256), and entropy only for int8 (its 128-level model does not describe the
  // float8 grid: use mse or max for fp8_e4m3).
  static StatusOr<std::unique_ptr<Calibrator>> Create(const CalibratorConfig& config,
                                                      QuantFormat format);
  Calibrator(const Calibrator&) = delete;
  Calibrator& operator=(const Calibrator&) = delete;

  // Observes more values of the tensor. NaN and +-inf are counted (nonfinite()) and
  // otherwise ignored.
  void Observe(std::span<const float> values);
  // Adds what `other` observed. Fails if the configurations or formats differ.
  Status Merge(const Calibrator& other);

  // The range of everything observed so far. FailedPrecondition if no finite value was
  // observed. amax is in [0, max(|min|, |max|)]; 0 when every value was zero.
  StatusOr<TensorRange> Result() const;

  const CalibratorConfig& config() const { return config_; }
  QuantFormat format() const { return format_; }
  int64_t nonfinite() const { return nonfinite_; }
  // Present for the histogram methods (percentile, entropy, mse).
  const std::optional<AbsHistogram>& histogram() const { return histogram_; }

 private:
  Calibrator(const CalibratorConfig& config, QuantFormat format);

  CalibratorConfig config_;
  QuantFormat format_;
  float min_ = 0.0f;
  float max_ = 0.0f;
  int64_t samples_ = 0;  // finite values observed
  int64_t nonfinite_ = 0;
  std::optional<AbsHistogram> histogram_;
};

}  // namespace qtune::quant
