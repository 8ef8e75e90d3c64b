// ResNet-18 as torchvision lays it out, built with GraphBuilder: the architecture with
// seeded random weights, for speed, fusion and op-count tests and benchmarks that must not
// depend on a downloaded model. Accuracy with these weights is meaningless.
//
//   std::unique_ptr<Graph> g = BuildResNet18({.seed = 7});
//
// Layout (opset 13): input "input" f32 [N,3,224,224] -> Conv 7x7/2 + BatchNormalization +
// Relu -> MaxPool 3x3/2 -> 4 stages of 2 BasicBlocks (64, 128, 256, 512 channels; the
// first block of stages 2-4 has stride 2 and a 1x1 Conv + BatchNormalization downsample
// on its shortcut) -> GlobalAveragePool -> Flatten -> Gemm 512->1000 -> output "logits".
// That is 20 Conv, 20 BatchNormalization, 17 Relu, 8 residual Add, 1 MaxPool, 1 Gemm.
//
// Weights are He-initialized (normal, std sqrt(2 / fan_in)); BatchNormalization gets
// running statistics near (0, 1) and a smaller scale on each block's last
// BatchNormalization, so activations stay finite and of moderate size through the 8
// residual Adds.
#pragma once

#include <cstdint>
#include <memory>

#include "ir/graph.h"

namespace qtune::ir {

struct ResNet18Options {
  uint64_t seed = 1;
  // The batch dimension: > 0 a fixed size, 0 the symbolic dimension "N".
  int64_t batch = 0;
  int64_t num_classes = 1000;
};

// REQUIRES: options.batch >= 0, options.num_classes > 0. The result passes Verify().
std::unique_ptr<Graph> BuildResNet18(const ResNet18Options& options = {});

}  // namespace qtune::ir
