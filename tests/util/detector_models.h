// A small detector whose export includes its post-processing, for tests of data-dependent
// sizes: image [1,3,16,16] -> Conv 8 -> Relu -> Conv 5 (1x1) -> [1,5,256]; boxes = channels
// 0-3 transposed to [1,256,4], scores = Sigmoid(channel 4) [1,1,256] -> NonMaxSuppression
// (at most 20 boxes, IoU 0.5, score 0.55) -> the kept boxes "detections" [k,4]. How many
// boxes it keeps depends on the image.
#pragma once

#include <memory>
#include <random>

#include "ir/graph.h"

namespace qtune::testing {

// Weights drawn from `rng` (uniform, small).
std::unique_ptr<ir::Graph> BuildDetectorWithNms(std::mt19937& rng);

}  // namespace qtune::testing
