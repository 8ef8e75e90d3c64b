// Separable interpolation: for each axis and output index, the input indices and weights
// that contribute (1 for nearest, 2 for linear, 4 for cubic, edge-clamped); every output
// element is the sum over the cartesian product of its axes' taps, as in ONNX's reference
// implementation of Resize.
#include <cmath>
#include <vector>

#include "runtime/reference/nn_resize.h"
#include "runtime/reference/nn_util.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::nn {
namespace {

struct Tap {
  int64_t index;
  double weight;
};

struct AxisTaps {
  std::vector<std::vector<Tap>> taps;  // per output index
  std::vector<bool> outside;           // tf_crop_and_resize: sample lies outside the input
};

// The input coordinate of output index `x` along one axis.
double OriginalCoordinate(const ResizePlan& plan, size_t axis, double x) {
  const double in = static_cast<double>(plan.input_sizes[axis]);
  const double scale = plan.scales[axis];
  const double out = scale * in;  // fractional, as ONNX's reference
  switch (plan.coordinate_mode) {
    case CoordinateMode::kHalfPixel:
      return (x + 0.5) / scale - 0.5;
    case CoordinateMode::kHalfPixelSymmetric: {
      const double adjustment = static_cast<double>(plan.output_sizes[axis]) / out;
      const double offset = in / 2 * (1 - adjustment);
      return offset + (x + 0.5) / scale - 0.5;
    }
    case CoordinateMode::kPytorchHalfPixel:
      return plan.output_sizes[axis] > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case CoordinateMode::kAlignCorners:
      return out == 1 ? 0.0 : x * (in - 1) / (out - 1);
    case CoordinateMode::kAsymmetric:
      return x / scale;
    case CoordinateMode::kTfHalfPixelForNn:
      return (x + 0.5) / scale;
    case CoordinateMode::kTfCropAndResize: {
      const double start = plan.roi_start[axis];
      const double end = plan.roi_end[axis];
      if (out == 1) return (end - start) * (in - 1) / 2 + start * (in - 1);
      return x * (end - start) * (in - 1) / (out - 1) + start * (in - 1);
    }
  }
  return x;
}

int64_t NearestIndex(NearestMode mode, double x, double scale) {
  const double lower = std::floor(x);
  const double ratio = x - lower;
  if (ratio == 0) return static_cast<int64_t>(lower);
  bool up = false;
  switch (mode) {
    case NearestMode::kRoundPreferFloor:
      up = ratio > 0.5;
      break;
    case NearestMode::kRoundPreferCeil:
      up = ratio >= 0.5;
      break;
    case NearestMode::kFloor:
      up = false;
      break;
    case NearestMode::kCeil:
      up = true;
      break;
    case NearestMode::kSimple:
      up = scale < 1;
      break;
  }
  return static_cast<int64_t>(lower) + (up ? 1 : 0);
}

std::vector<double> CubicCoefficients(double ratio, double a) {
  const double r1 = ratio + 1, r0 = ratio, s0 = 1 - ratio, s1 = 2 - ratio;
  return {((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a, ((a + 2) * r0 - (a + 3)) * r0 * r0 + 1,
          ((a + 2) * s0 - (a + 3)) * s0 * s0 + 1, ((a * s1 - 5 * a) * s1 + 8 * a) * s1 - 4 * a};
}

AxisTaps ComputeAxisTaps(const ResizePlan& plan, size_t axis) {
  const int64_t in = plan.input_sizes[axis];
  const int64_t out = plan.output_sizes[axis];
  auto clamp = [in](int64_t i) { return std::min(std::max<int64_t>(i, 0), in - 1); };
  AxisTaps result;
  result.taps.resize(out);
  result.outside.assign(out, false);
  for (int64_t o = 0; o < out; ++o) {
    const double x = OriginalCoordinate(plan, axis, static_cast<double>(o));
    std::vector<Tap>& taps = result.taps[o];
    if (plan.coordinate_mode == CoordinateMode::kTfCropAndResize &&
        (x < 0 || x > static_cast<double>(in - 1))) {
      result.outside[o] = true;
      continue;
    }
    const int64_t lower = static_cast<int64_t>(std::floor(x));
    const double ratio = x - std::floor(x);
    switch (plan.mode) {
      case InterpolationMode::kNearest:
        taps.push_back({clamp(NearestIndex(plan.nearest_mode, x, plan.scales[axis])), 1.0});
        break;
      case InterpolationMode::kLinear:
        taps.push_back({clamp(lower), 1 - ratio});
        if (ratio != 0) taps.push_back({clamp(lower + 1), ratio});
        break;
      case InterpolationMode::kCubic: {
        std::vector<double> coefficients = CubicCoefficients(ratio, plan.cubic_coeff_a);
        double sum = 0;
        for (int64_t k = 0; k < 4; ++k) {
          const int64_t i = lower - 1 + k;
          if (plan.exclude_outside && (i < 0 || i >= in)) coefficients[k] = 0;
          sum += coefficients[k];
        }
        for (int64_t k = 0; k < 4; ++k) {
          double w = plan.exclude_outside ? coefficients[k] / sum : coefficients[k];
          if (w != 0) taps.push_back({clamp(lower - 1 + k), w});
        }
        break;
      }
    }
  }
  return result;
}

template <typename T>
void RunInterpolate(const ResizePlan& plan, const std::vector<AxisTaps>& axes, const Tensor& x,
                    Tensor& y) {
  const size_t rank = plan.input_sizes.size();
  const std::vector<int64_t> in_strides = reference::ContiguousStrides(plan.input_sizes);
  const T* xd = x.data<T>();
  T* yd = y.data<T>();
  std::vector<int64_t> out_index(rank, 0);
  std::vector<const std::vector<Tap>*> taps(rank);
  std::vector<int64_t> tap_counts(rank), tap_index(rank);
  for (int64_t yi = 0; yi < y.num_elements(); ++yi, NextIndex(out_index, plan.output_sizes)) {
    bool outside = false;
    for (size_t d = 0; d < rank; ++d) {
      outside = outside || axes[d].outside[out_index[d]];
      taps[d] = &axes[d].taps[out_index[d]];
      tap_counts[d] = static_cast<int64_t>(taps[d]->size());
    }
    if (outside) {
      yd[yi] = static_cast<T>(plan.extrapolation_value);
      continue;
    }
    if (plan.mode == InterpolationMode::kNearest) {  // one tap per axis: copy exactly
      int64_t offset = 0;
      for (size_t d = 0; d < rank; ++d) offset += (*taps[d])[0].index * in_strides[d];
      yd[yi] = xd[offset];
      continue;
    }
    double acc = 0;
    std::fill(tap_index.begin(), tap_index.end(), 0);
    do {
      double weight = 1;
      int64_t offset = 0;
      for (size_t d = 0; d < rank; ++d) {
        const Tap& tap = (*taps[d])[tap_index[d]];
        weight *= tap.weight;
        offset += tap.index * in_strides[d];
      }
      acc += weight * static_cast<double>(xd[offset]);
    } while (NextIndex(tap_index, tap_counts));
    yd[yi] = static_cast<T>(acc);
  }
}

}  // namespace

StatusOr<Tensor> Interpolate(const ir::Node& node, const ResizePlan& plan, const Tensor& x) {
  const bool is_float = x.dtype() == DataType::kFloat32 || x.dtype() == DataType::kFloat64;
  const bool nearest = plan.mode == InterpolationMode::kNearest;
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(x.dtype(), plan.output_sizes));
  if (y.num_elements() == 0) return y;
  if (x.num_elements() == 0) {
    return NodeInvalid(node, "cannot resize the empty input " + x.DebugString() + " to " +
                                 SizesText(plan.output_sizes));
  }
  std::vector<AxisTaps> axes;
  for (size_t d = 0; d < plan.input_sizes.size(); ++d) axes.push_back(ComputeAxisTaps(plan, d));
  switch (x.dtype()) {
    case DataType::kFloat32:
      RunInterpolate<float>(plan, axes, x, y);
      return y;
    case DataType::kFloat64:
      RunInterpolate<double>(plan, axes, x, y);
      return y;
    default:
      break;
  }
  if (nearest && !is_float) {
    switch (x.dtype()) {
      case DataType::kInt8:
        RunInterpolate<int8_t>(plan, axes, x, y);
        return y;
      case DataType::kUint8:
        RunInterpolate<uint8_t>(plan, axes, x, y);
        return y;
      case DataType::kInt32:
        RunInterpolate<int32_t>(plan, axes, x, y);
        return y;
      case DataType::kInt64:
        RunInterpolate<int64_t>(plan, axes, x, y);
        return y;
      default:
        break;
    }
  }
  return NodeUnimplemented(node, "input X is " + x.DebugString() +
                                     "; the reference kernel resizes float32/float64 (and "
                                     "int8/uint8/int32/int64 in nearest mode)");
}

}  // namespace qtune::runtime::nn
