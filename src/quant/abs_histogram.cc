#include "quant/abs_histogram.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace qtune::quant {
namespace {

// The smallest power of two strictly greater than `value` (> 0, finite).
double PowerOfTwoAbove(double value) {
  int exponent = 0;
  std::frexp(value, &exponent);  // value = f * 2^exponent, f in [0.5, 1)
  return std::ldexp(1.0, exponent);
}

}  // namespace

AbsHistogram::AbsHistogram(int bins) : counts_(static_cast<size_t>(std::max(bins, 2)), 0) {}

StatusOr<AbsHistogram> AbsHistogram::Make(int bins) {
  if (bins < 2 || bins > (1 << 20)) {
    return InvalidArgumentError("histogram bins must be in [2, 1048576], got " +
                                std::to_string(bins));
  }
  return AbsHistogram(bins);
}

int AbsHistogram::used_bins() const {
  for (int i = num_bins(); i > 0; --i) {
    if (counts_[i - 1] != 0) return i;
  }
  return 0;
}

void AbsHistogram::GrowTo(double new_limit) {
  if (limit_ == 0.0) {  // nothing binned yet: every bin is empty
    limit_ = new_limit;
    return;
  }
  const size_t n = counts_.size();
  while (limit_ < new_limit) {
    for (size_t i = 0; i < n; ++i) {
      int64_t c = counts_[i];
      counts_[i] = 0;
      counts_[i / 2] += c;  // i / 2 <= i, so the source was read before it is overwritten
    }
    limit_ *= 2.0;
  }
}

void AbsHistogram::Add(std::span<const float> values) {
  float batch_max = 0.0f;
  int64_t batch_nonfinite = 0;
  for (float v : values) {
    float a = std::fabs(v);
    if (!std::isfinite(a)) {
      ++batch_nonfinite;
      continue;
    }
    batch_max = std::max(batch_max, a);
  }
  nonfinite_ += batch_nonfinite;
  total_ += static_cast<int64_t>(values.size()) - batch_nonfinite;
  max_abs_ = std::max(max_abs_, batch_max);
  if (batch_max > 0.0f) GrowTo(PowerOfTwoAbove(batch_max));

  const int64_t last = static_cast<int64_t>(counts_.size()) - 1;
  // counts / limit_: exact when the bin count is a power of two.
  const double per_unit = limit_ > 0.0 ? static_cast<double>(counts_.size()) / limit_ : 0.0;
  for (float v : values) {
    double a = std::fabs(static_cast<double>(v));
    if (!std::isfinite(a)) continue;
    if (a == 0.0) {
      ++zeros_;
      continue;
    }
    int64_t bin = static_cast<int64_t>(a * per_unit);
    ++counts_[static_cast<size_t>(std::min(bin, last))];
  }
}

void AbsHistogram::Merge(const AbsHistogram& other) {
  zeros_ += other.zeros_;
  nonfinite_ += other.nonfinite_;
  total_ += other.total_;
  max_abs_ = std::max(max_abs_, other.max_abs_);
  if (other.limit_ == 0.0) return;
  if (other.limit_ > limit_) GrowTo(other.limit_);
  if (other.limit_ == limit_) {
    for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
    return;
  }
  AbsHistogram grown = other;  // other.limit_ < limit_: bring a copy up to our range
  grown.GrowTo(limit_);
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += grown.counts_[i];
}

}  // namespace qtune::quant
