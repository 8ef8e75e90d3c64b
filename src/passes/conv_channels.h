// Per-output-channel edits of a Conv or ConvTranspose's constant weights and bias, shared
// by the passes that fold a following per-channel affine op (BatchNormalization, Mul/Add
// by constants) into the convolution.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"

namespace qtune::passes {

// Output channels of `conv` given its weights: W is [M, C/group, k...] for Conv and
// [C, M/group, k...] for ConvTranspose. 0 when the weights do not fit the group count.
int64_t ConvOutputChannels(const ir::Node& conv, const Tensor& weights);

// W scaled along its output-channel axis by `multiplier` (one per output channel).
Tensor ScaleConvWeights(const ir::Node& conv, const Tensor& weights,
                        const std::vector<double>& multiplier);

// Points conv input `index` at `tensor`: overwrites the initializer there when the conv is
// its only reader, otherwise adds a new initializer named after `base` (shared weights
// stay untouched).
Status SetConvConstant(ir::Graph& graph, ir::Node* conv, size_t index, Tensor tensor,
                       const std::string& base);

}  // namespace qtune::passes
