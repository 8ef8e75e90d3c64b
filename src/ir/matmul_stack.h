// A stack of fully connected layers (MatMul + bias Add + Relu), built with GraphBuilder:
// the decode step of a transformer's feed-forward part at batch 1, where every weight is
// read once per run and the time is the time to stream the weights from memory. For the
// batch-1 MatMul benchmark (`qtune_make_model matmul_stack`, docs/performance.md) and its
// tests.
//
//   std::unique_ptr<Graph> g = BuildMatMulStack({.layers = 4, .width = 2048});
//
// Layout (opset 13): input "x" f32 [batch, width] -> `layers` x (MatMul W[width,width]
// + Add b[width] + Relu) -> output "y" f32 [batch, width]. Weights are uniform in
// +-sqrt(3 / width) (unit variance through the layers), biases in +-0.1, seeded.
#pragma once

#include <cstdint>
#include <memory>

#include "ir/graph.h"

namespace qtune::ir {

struct MatMulStackOptions {
  uint64_t seed = 1;
  int64_t layers = 4;
  int64_t width = 2048;
  int64_t batch = 1;  // > 0: a fixed size; 0: the symbolic dimension "N"
};

// REQUIRES: layers > 0, width > 0, batch >= 0. The result passes Verify().
std::unique_ptr<Graph> BuildMatMulStack(const MatMulStackOptions& options = {});

}  // namespace qtune::ir
