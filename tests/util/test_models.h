// Models for tests that need a whole real-sized network but not trained weights: ResNet-18
// built with qtune's graph builder (ir/resnet.h), so a clone of the repository alone runs
// every speed, fusion and op-count check.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ir/graph.h"

namespace qtune::testing {

// The fixed seed of the ResNet-18 every test uses (printed by ResNet18File()).
inline constexpr uint64_t kResNet18Seed = 1;

// ResNet-18 (torchvision layout, opset 13, symbolic batch) with kResNet18Seed weights.
std::unique_ptr<ir::Graph> BuildTestResNet18();

// The same model as an .onnx file, written once per process under the temp folder and
// removed at exit. CHECK-fails if it cannot be written.
const std::string& ResNet18File();

}  // namespace qtune::testing
