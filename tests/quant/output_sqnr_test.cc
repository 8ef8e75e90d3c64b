// The accuracy fallback's score (output_sqnr.h): NaN or inf in a quantized output is never
// "reached" (it once scored +inf: NaN noise fails `noise > 0`).
#include "quant/output_sqnr.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace qtune::quant {
namespace {

std::vector<runtime::NamedTensors> OneBatch(const std::string& name, std::vector<float> values) {
  Tensor t = Tensor::Allocate(DataType::kFloat32, {static_cast<int64_t>(values.size())}).value();
  std::copy(values.begin(), values.end(), t.data<float>());
  runtime::NamedTensors batch;
  batch.emplace_back(name, std::move(t));
  return {std::move(batch)};
}

TEST(OutputSqnrTest, IdenticalOutputsScorePlusInfinity) {
  OutputSqnr s = MeasureOutputSqnr(OneBatch("y", {1, 2, 3}), OneBatch("y", {1, 2, 3}));
  EXPECT_EQ(s.db, std::numeric_limits<double>::infinity());
  EXPECT_TRUE(s.non_finite_output.empty());
}

TEST(OutputSqnrTest, NoisyOutputsScoreTheirSqnr) {
  OutputSqnr s = MeasureOutputSqnr(OneBatch("y", {3, 4}), OneBatch("y", {3, 4.5f}));
  EXPECT_NEAR(s.db, 10.0 * std::log10(25.0 / 0.25), 1e-9);
}

TEST(OutputSqnrTest, NanInTheQuantizedOutputScoresMinusInfinityAndIsNamed) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  OutputSqnr s = MeasureOutputSqnr(OneBatch("logits", {1, 2, 3}), OneBatch("logits", {1, nan, 3}));
  EXPECT_EQ(s.db, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(s.non_finite_output, "logits");
  EXPECT_FALSE(s.db >= 30.0);  // the fallback's "reached" test
}

TEST(OutputSqnrTest, AllNanQuantizedOutputScoresMinusInfinity) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  OutputSqnr s = MeasureOutputSqnr(OneBatch("y", {1, 2}), OneBatch("y", {nan, nan}));
  EXPECT_EQ(s.db, -std::numeric_limits<double>::infinity());
}

TEST(OutputSqnrTest, InfinityInTheQuantizedOutputScoresMinusInfinity) {
  const float inf = std::numeric_limits<float>::infinity();
  OutputSqnr s = MeasureOutputSqnr(OneBatch("y", {1, 2}), OneBatch("y", {1, -inf}));
  EXPECT_EQ(s.db, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(s.non_finite_output, "y");
}

TEST(OutputSqnrTest, FirstNonFiniteOutputNamesTheTensor) {
  EXPECT_EQ(FirstNonFiniteOutput(OneBatch("y", {1, 2})), "");
  EXPECT_EQ(FirstNonFiniteOutput(OneBatch("z", {1, std::nanf("")})), "z");
}

}  // namespace
}  // namespace qtune::quant
