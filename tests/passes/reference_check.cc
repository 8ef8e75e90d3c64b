#include "reference_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "runtime/reference/reference_executor.h"
#include "runtime/reference/registry.h"

namespace qtune::passes::testing {

PassOptions ReferenceOptions() {
  PassOptions options;
  options.verify_after_each_pass = true;
  options.evaluator = &runtime::EvaluateNode;
  return options;
}

std::vector<std::pair<std::string, Tensor>> RandomInputs(const ir::Graph& graph,
                                                         const CompareOptions& options) {
  std::vector<std::pair<std::string, Tensor>> inputs;
  std::mt19937 rng(options.seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (const ir::Value* in : graph.inputs()) {
    std::vector<int64_t> sizes;
    auto given = options.input_sizes.find(in->name());
    if (given != options.input_sizes.end()) {
      sizes = given->second;
    } else if (in->type().shape.has_value() && in->type().shape->is_fully_known()) {
      sizes = in->type().shape->sizes();
    } else {
      ADD_FAILURE() << "input '" << in->name() << "' needs sizes in CompareOptions";
      continue;
    }
    if (in->dtype() != DataType::kFloat32) {
      ADD_FAILURE() << "input '" << in->name() << "' is not float32";
      continue;
    }
    auto tensor = Tensor::Allocate(DataType::kFloat32, sizes);
    EXPECT_TRUE(tensor.ok()) << tensor.status().ToString();
    if (!tensor.ok()) continue;
    for (float& v : tensor->span<float>()) v = dist(rng);
    inputs.emplace_back(in->name(), *tensor);
  }
  return inputs;
}

namespace {

void ExpectClose(const std::string& name, const Tensor& before, const Tensor& after,
                 const CompareOptions& options) {
  ASSERT_EQ(before.dtype(), after.dtype()) << name;
  ASSERT_EQ(before.sizes(), after.sizes()) << name;
  if (before.dtype() != DataType::kFloat32) {
    EXPECT_TRUE(std::equal(before.bytes().begin(), before.bytes().end(), after.bytes().begin()))
        << name << " differs (seed " << options.seed << ")";
    return;
  }
  auto b = before.span<float>();
  auto a = after.span<float>();
  int64_t worst = -1;
  double worst_excess = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    double diff = std::fabs(static_cast<double>(a[i]) - b[i]);
    double excess = diff - (options.atol + options.rtol * std::fabs(b[i]));
    if (std::isnan(diff) != std::isnan(static_cast<double>(b[i]))) excess = INFINITY;
    if (excess > worst_excess) {
      worst_excess = excess;
      worst = static_cast<int64_t>(i);
    }
  }
  EXPECT_EQ(worst, -1) << "output '" << name << "' differs after the passes (seed " << options.seed
                       << "): element " << worst << " was " << (worst >= 0 ? b[worst] : 0)
                       << ", now " << (worst >= 0 ? a[worst] : 0);
}

}  // namespace

void ExpectSameOutputs(const ir::Graph& before, const ir::Graph& after,
                       const CompareOptions& options) {
  auto inputs = RandomInputs(before, options);
  auto expected = runtime::RunReference(before, inputs);
  if (!expected.ok() && expected.status().code() == StatusCode::kUnimplemented) {
    GTEST_SKIP() << "the reference executor cannot run this graph yet: "
                 << expected.status().ToString();
  }
  ASSERT_TRUE(expected.ok()) << "before: " << expected.status().ToString();
  auto actual = runtime::RunReference(after, inputs);
  ASSERT_TRUE(actual.ok()) << "after: " << actual.status().ToString();
  ASSERT_EQ(expected->size(), actual->size());
  for (size_t i = 0; i < expected->size(); ++i) {
    ASSERT_EQ((*expected)[i].first, (*actual)[i].first) << "output " << i << " was renamed";
    ExpectClose((*expected)[i].first, (*expected)[i].second, (*actual)[i].second, options);
  }
}

}  // namespace qtune::passes::testing
