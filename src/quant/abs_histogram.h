// AbsHistogram: a streaming histogram of |x| with a fixed number of bins over a range
// [0, limit) that grows with the data, for the histogram calibrators (calibrator.h).
//
// The limit is always a power of two (the smallest one >= the largest |x| seen), and it
// grows by doubling: each doubling merges bins pairwise (2i, 2i+1 -> i). Because bin
// edges on a power-of-two range are nested, the counts after any sequence of Add() and
// Merge() calls depend only on the multiset of values seen, not on how they were split
// into batches or in which order they came (bit-for-bit, for even bin counts). That is
// what keeps entropy/percentile/MSE ranges from changing with the calibration batch size.
//
// Exact zeros are counted apart from the bins (zeros()), because ReLU outputs hold many
// and the calibrators treat them specially. Non-finite values (NaN, +-inf) are counted in
// nonfinite() and otherwise ignored.
//
// Memory: bins * 8 bytes, whatever the amount of data.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"

namespace qtune::quant {

class AbsHistogram {
 public:
  // REQUIRES: bins >= 2 (Make() validates user input).
  explicit AbsHistogram(int bins);
  static StatusOr<AbsHistogram> Make(int bins);

  void Add(std::span<const float> values);
  // Adds `other`'s counts. REQUIRES: other.num_bins() == num_bins().
  void Merge(const AbsHistogram& other);

  int num_bins() const { return static_cast<int>(counts_.size()); }
  // 0 until a nonzero finite value is seen; then a power of two >= max_abs().
  double limit() const { return limit_; }
  double bin_width() const { return limit_ / static_cast<double>(counts_.size()); }
  const std::vector<int64_t>& counts() const { return counts_; }
  int64_t zeros() const { return zeros_; }
  int64_t nonfinite() const { return nonfinite_; }
  // Finite values seen, zeros included.
  int64_t total() const { return total_; }
  // Largest finite |x| seen (0 if none).
  float max_abs() const { return max_abs_; }
  // Index one past the last nonzero bin (0 if every bin is empty).
  int used_bins() const;

 private:
  // Doubles limit_ until it is >= `value`, merging bins pairwise each time.
  void GrowTo(double value);

  std::vector<int64_t> counts_;
  double limit_ = 0.0;
  int64_t zeros_ = 0;
  int64_t nonfinite_ = 0;
  int64_t total_ = 0;
  float max_abs_ = 0.0f;
};

}  // namespace qtune::quant
