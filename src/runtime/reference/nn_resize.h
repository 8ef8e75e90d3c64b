// Separable N-D interpolation shared by Resize and Upsample (nn_resize.cc parses the op's
// inputs and attributes into a ResizePlan; nn_resize_interpolate.cc runs it). Internal to
// the reference tier.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"

namespace qtune::runtime::nn {

enum class CoordinateMode {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize,
};

enum class InterpolationMode { kNearest, kLinear, kCubic };

enum class NearestMode {
  kRoundPreferFloor,
  kRoundPreferCeil,
  kFloor,
  kCeil,
  // Resize-10 and Upsample as ONNX Runtime runs them: floor when upsampling an axis, ceil
  // when downsampling it.
  kSimple,
};

// Everything interpolation needs, one entry per dimension of the input.
struct ResizePlan {
  std::vector<int64_t> input_sizes;
  std::vector<int64_t> output_sizes;
  // The scale each output coordinate is divided by (output / input unless the op fixes it).
  std::vector<double> scales;
  std::vector<double> roi_start;  // tf_crop_and_resize only, as fractions of the input
  std::vector<double> roi_end;
  CoordinateMode coordinate_mode = CoordinateMode::kHalfPixel;
  InterpolationMode mode = InterpolationMode::kNearest;
  NearestMode nearest_mode = NearestMode::kRoundPreferFloor;
  double cubic_coeff_a = -0.75;
  bool exclude_outside = false;
  double extrapolation_value = 0;
};

// Allocates and fills the output for `x`. Unimplemented (naming the node) for element types
// the mode does not support: nearest takes float32/64, int8, uint8, int32 and int64; linear
// and cubic take float32/64.
StatusOr<Tensor> Interpolate(const ir::Node& node, const ResizePlan& plan, const Tensor& x);

}  // namespace qtune::runtime::nn
