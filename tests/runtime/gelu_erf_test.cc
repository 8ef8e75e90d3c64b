// GeluErf (gelu_erf.h), both paths, against x / 2 * (1 + erf(x / sqrt(2))) in double:
// values across every polynomial piece and past its end, lengths around the 16-lane
// boundary, in place, split over two threads, and the special values.
#include "runtime/kernels/gelu_erf.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace qtune::runtime {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

double GeluDouble(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

// The approximation of erf is within 7.6e-9 and the float arithmetic adds a few ulp:
// |y - gelu(x)| <= 2e-7 (1 + |x|) covers both; the decomposed float graph itself is no
// closer (1 + erf(x / sqrt(2)) cancels for negative x).
void ExpectClose(const std::vector<float>& x, const std::vector<float>& y,
                 const std::string& label) {
  int reported = 0;
  for (size_t i = 0; i < x.size() && reported < 5; ++i) {
    const double want = GeluDouble(x[i]);
    if (std::abs(y[i] - want) > 2e-7 * (1.0 + std::abs(x[i]))) {
      ++reported;
      ADD_FAILURE() << label << ": gelu(" << x[i] << ") is " << y[i] << ", want " << want;
    }
  }
}

const GeluPath kPaths[] = {GeluPath::kAuto, GeluPath::kScalar};
const char* PathName(GeluPath path) { return path == GeluPath::kAuto ? "auto" : "scalar"; }

TEST(GeluErf, DenseSweepMatchesDoublePrecision) {
  // Every 1/1024 from -8 to 8: all 15 pieces, both signs, each piece's edges, and the
  // constant range from 5.5 on.
  std::vector<float> x;
  for (int i = -8 * 1024; i <= 8 * 1024; ++i) x.push_back(static_cast<float>(i) / 1024.0f);
  for (GeluPath path : kPaths) {
    std::vector<float> y(x.size());
    GeluErf(x.data(), y.data(), static_cast<int64_t>(x.size()), 1, path);
    ExpectClose(x, y, PathName(path));
  }
}

TEST(GeluErf, RandomLengthsInPlaceAndThreads) {
  std::mt19937 rng(3);
  std::normal_distribution<float> value(0.0f, 3.0f);
  for (int64_t n : {1, 15, 16, 17, 31, 33, 100, 197 * 768}) {
    std::vector<float> x(n);
    for (float& v : x) v = value(rng);
    for (GeluPath path : kPaths) {
      for (int threads : {1, 2}) {
        const std::string label = std::string(PathName(path)) + " n=" + std::to_string(n) +
                                  " threads=" + std::to_string(threads);
        std::vector<float> y(n + 1, 42.0f);  // one past the end must stay untouched
        GeluErf(x.data(), y.data(), n, threads, path);
        ExpectClose(x, y, label);
        EXPECT_EQ(y[n], 42.0f) << label << ": wrote past the end";
        std::vector<float> in_place = x;
        GeluErf(in_place.data(), in_place.data(), n, threads, path);
        EXPECT_EQ(in_place, std::vector<float>(y.begin(), y.end() - 1)) << label << " in place";
      }
    }
  }
}

TEST(GeluErf, SpecialValuesAsTheDecomposedGraph) {
  // -inf * (1 + erf(-inf)) = -inf * 0 = NaN in the graph Div-Erf-Add-Mul-Mul.
  const std::vector<float> x = {0.0f,  -0.0f,  kInf,   -kInf,   std::nanf(""),
                                1e30f, -1e30f, 1e-30f, -100.0f, 100.0f};
  for (GeluPath path : kPaths) {
    std::vector<float> y(x.size());
    GeluErf(x.data(), y.data(), static_cast<int64_t>(x.size()), 1, path);
    const std::string label = PathName(path);
    EXPECT_EQ(y[0], 0.0f) << label;
    EXPECT_EQ(y[1], 0.0f) << label;
    EXPECT_EQ(y[2], kInf) << label;
    EXPECT_TRUE(std::isnan(y[3])) << label << ": " << y[3];
    EXPECT_TRUE(std::isnan(y[4])) << label << ": " << y[4];
    EXPECT_EQ(y[5], 1e30f) << label;
    EXPECT_EQ(y[6], 0.0f) << label;
    EXPECT_NEAR(y[7], 0.5e-30f, 1e-37f) << label;
    EXPECT_EQ(y[8], 0.0f) << label;
    EXPECT_EQ(y[9], 100.0f) << label;
  }
}

}  // namespace
}  // namespace qtune::runtime
