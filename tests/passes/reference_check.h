// Numerical before/after checks for the pass tests: runs two graphs with the reference
// executor (runtime::RunReference) on the same seeded random inputs and compares every
// graph output by name. Tests only: the passes library itself never links the runtime.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "ir/graph.h"
#include "passes/pass.h"

namespace qtune::passes::testing {

struct CompareOptions {
  uint32_t seed = 1;
  // An output element passes when |after - before| <= atol + rtol * |before|.
  double rtol = 1e-5;
  double atol = 1e-6;
  // Sizes for graph inputs whose declared shape is not fully known, by input name.
  std::map<std::string, std::vector<int64_t>> input_sizes;
};

// PassOptions for tests: Verify after every pass, runtime::EvaluateNode as evaluator.
PassOptions ReferenceOptions();

// Seeded random inputs for every graph input (float32 uniform in [-1, 1)); sizes from the
// declared shape or options.input_sizes. Fails the test for other dtypes or unknown sizes.
std::vector<std::pair<std::string, Tensor>> RandomInputs(const ir::Graph& graph,
                                                         const CompareOptions& options);

// Runs both graphs on the same random inputs and expects equal output names, shapes,
// dtypes and values within tolerance. Prints the seed and the worst element on failure.
// Skips the test when the reference executor has no kernel for some op of `before`.
void ExpectSameOutputs(const ir::Graph& before, const ir::Graph& after,
                       const CompareOptions& options = {});

}  // namespace qtune::passes::testing
