// The reference loss kernels (loss_nll.cc): NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss. They compute in double and return the input's element type
// (float16, bfloat16, float32, float64); targets are int32 or int64.
#pragma once

#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime::reference {

// input [N, C, d1..dk] (log-probabilities), target [N, d1..dk], optional weight [C] ->
// loss: [N, d1..dk] with reduction none, else a scalar.
StatusOr<std::vector<Tensor>> NegativeLogLikelihoodLoss(const KernelArgs& args);
// scores [N, C, d1..dk] -> loss as above, and optionally log_prob [N, C, d1..dk] (the
// log-softmax over C).
StatusOr<std::vector<Tensor>> SoftmaxCrossEntropyLoss(const KernelArgs& args);

}  // namespace qtune::runtime::reference
