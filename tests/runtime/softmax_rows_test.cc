// SoftmaxRows (softmax_rows.h), both paths, against softmax computed in double with
// std::exp: random rows of lengths around the 16-lane boundaries, values wide enough that
// exp underflows, -infinity entries (masked scores), NaN and all -infinity rows, in place
// and split over two threads.
#include "runtime/kernels/softmax_rows.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace qtune::runtime {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> ReferenceSoftmax(const std::vector<float>& x, int64_t rows, int64_t count) {
  std::vector<float> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x.data() + r * count;
    double max = -kInf;
    for (int64_t i = 0; i < count; ++i) max = std::max<double>(max, in[i]);
    double sum = 0;
    for (int64_t i = 0; i < count; ++i) sum += std::exp(in[i] - max);
    for (int64_t i = 0; i < count; ++i)
      y[r * count + i] = static_cast<float>(std::exp(in[i] - max) / sum);
  }
  return y;
}

// Every value within 1e-6 relative of the reference, plus what rounding x - max to float
// costs (one ulp of it, 2^-23 |x - max|, is the relative error of exp of it), plus 1e-30
// absolute for values that underflow; NaN exactly where the reference has NaN.
void ExpectClose(const std::vector<float>& x, const std::vector<float>& got,
                 const std::vector<float>& want, int64_t count, const std::string& label) {
  ASSERT_EQ(got.size(), want.size());
  int reported = 0;
  for (size_t i = 0; i < got.size() && reported < 5; ++i) {
    const float* row = x.data() + i / count * count;
    float max = -kInf;
    for (int64_t j = 0; j < count; ++j) max = std::max(max, row[j]);
    const float tolerance = want[i] * (1e-6f + 1.2e-7f * std::abs(x[i] - max)) + 1e-30f;
    const bool ok = std::isnan(want[i])
                        ? std::isnan(got[i])
                        : got[i] == want[i] || std::abs(got[i] - want[i]) <= tolerance;
    if (!ok) {
      ++reported;
      ADD_FAILURE() << label << ": element " << i << " is " << got[i] << ", want " << want[i];
    }
  }
}

const SoftmaxPath kPaths[] = {SoftmaxPath::kAuto, SoftmaxPath::kPortable};
const char* PathName(SoftmaxPath path) { return path == SoftmaxPath::kAuto ? "auto" : "portable"; }

TEST(SoftmaxRows, RandomRowsMatchDoublePrecision) {
  std::mt19937 rng(7);
  for (int64_t count : {1, 2, 15, 16, 17, 31, 33, 128, 197, 1000}) {
    for (float spread : {1.0f, 30.0f, 200.0f}) {
      const int64_t rows = 5;
      std::vector<float> x(rows * count);
      std::uniform_real_distribution<float> dist(-spread, spread);
      for (float& v : x) v = dist(rng);
      const std::vector<float> want = ReferenceSoftmax(x, rows, count);
      for (SoftmaxPath path : kPaths) {
        std::vector<float> y(x.size(), -1.0f);
        SoftmaxRows(x.data(), y.data(), rows, count, 1, path);
        ExpectClose(x, y, want, count,
                    std::string(PathName(path)) + " count " + std::to_string(count) + " spread " +
                        std::to_string(spread));
      }
    }
  }
}

TEST(SoftmaxRows, MaskedNanAndAllMinusInfinityRows) {
  const int64_t count = 37;
  std::vector<float> x(4 * count);
  for (int64_t i = 0; i < count; ++i) {
    x[i] = i % 3 == 0 ? -kInf : 0.1f * i;                                     // masked positions
    x[count + i] = i == 20 ? std::numeric_limits<float>::quiet_NaN() : 0.5f;  // one NaN
    x[2 * count + i] = -kInf;                                                 // fully masked
    x[3 * count + i] = i == 36 ? -kInf : -1e4f + i;                           // large negative
  }
  const std::vector<float> want = ReferenceSoftmax(x, 4, count);
  for (SoftmaxPath path : kPaths) {
    std::vector<float> y(x.size());
    SoftmaxRows(x.data(), y.data(), 4, count, 1, path);
    ExpectClose(x, y, want, count, PathName(path));
    for (int64_t i = 0; i < count; i += 3) EXPECT_EQ(y[i], 0.0f) << PathName(path) << " " << i;
    for (int64_t i = 0; i < count; ++i) {
      EXPECT_TRUE(std::isnan(y[count + i])) << PathName(path) << ": the NaN row, element " << i;
      EXPECT_TRUE(std::isnan(y[2 * count + i])) << PathName(path) << ": all -inf, element " << i;
    }
  }
}

TEST(SoftmaxRows, InPlaceOnTwoThreadsEqualsOneThread) {
  std::mt19937 rng(11);
  const int64_t rows = 3 * 197, count = 197;  // a ViT's attention scores
  std::vector<float> x(rows * count);
  std::normal_distribution<float> dist(0.0f, 4.0f);
  for (float& v : x) v = dist(rng);
  const std::vector<float> want = ReferenceSoftmax(x, rows, count);
  for (SoftmaxPath path : kPaths) {
    std::vector<float> one = x;
    SoftmaxRows(one.data(), one.data(), rows, count, 1, path);
    ExpectClose(x, one, want, count, PathName(path));
    std::vector<float> two = x;
    SoftmaxRows(two.data(), two.data(), rows, count, 2, path);
    EXPECT_EQ(one, two) << PathName(path);
  }
}

}  // namespace
}  // namespace qtune::runtime
