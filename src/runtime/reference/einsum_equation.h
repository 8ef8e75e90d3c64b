// Einsum's equation, parsed against the input sizes: the index space the reference kernel
// loops over and the output sizes the shape function reports. Numpy's rules: letters
// a-z and A-Z name dims, a letter repeated within one term takes a diagonal, "..." stands
// for broadcast leading dims; without "->" the output is the ellipsis dims followed by the
// letters that occur once, in ASCII order. Spaces are ignored.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"

namespace qtune::runtime::reference {

struct EinsumPlan {
  // The index space: the output dims first (in output order), then the summed letters.
  std::vector<int64_t> loop_sizes;
  size_t num_output_dims = 0;  // loop_sizes[0, num_output_dims) are the output's sizes
  // Per input, its element stride along each loop dim (0 where it does not depend on it;
  // a repeated letter adds its strides, which walks the diagonal).
  std::vector<std::vector<int64_t>> input_strides;

  std::vector<int64_t> output_sizes() const {
    return {loop_sizes.begin(), loop_sizes.begin() + static_cast<ptrdiff_t>(num_output_dims)};
  }
};

// InvalidArgument naming the node for a malformed equation, a term count or rank that does
// not match the inputs, letters whose sizes differ, or ellipsis dims that do not broadcast.
StatusOr<EinsumPlan> PlanEinsum(const ir::Node& node, const std::string& equation,
                                const std::vector<std::vector<int64_t>>& input_sizes);

}  // namespace qtune::runtime::reference
