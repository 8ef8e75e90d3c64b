// RoiAlign (opsets 10 and 16), after onnx/reference/ops/op_roi_align.py (ONNX Runtime's
// algorithm).
//
// Each region of interest (x1, y1, x2, y2) is scaled by spatial_scale and, with
// coordinate_transformation_mode half_pixel (opset 16's default; opset 10 has only
// output_half_pixel), shifted by -0.5 pixel. Without the shift a region is at least 1x1.
// It is cut into output_height x output_width bins; each bin is sampled on a grid of
// sampling_ratio^2 points (0: ceil(region size / output size) per axis) with bilinear
// interpolation, and `mode` avg averages the samples, max takes the largest weighted
// corner value (ONNX Runtime's definition). Samples more than one pixel outside the input
// count as 0.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "runtime/reference/float_buffer.h"
#include "runtime/reference/sampling_kernels.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

constexpr int64_t kMaxSamples = int64_t{1} << 26;

// The four corners of one bilinear sample and their weights (all 0 outside the input).
struct Sample {
  std::array<int64_t, 4> offset{};
  std::array<double, 4> weight{};
};

Sample BilinearSample(double y, double x, int64_t height, int64_t width) {
  Sample s;
  if (y < -1.0 || y > static_cast<double>(height) || x < -1.0 || x > static_cast<double>(width)) {
    return s;
  }
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  auto y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x);
  int64_t y_high = y_low + 1, x_high = x_low + 1;
  if (y_low >= height - 1) {
    y_high = y_low = height - 1;
    y = static_cast<double>(y_low);
  }
  if (x_low >= width - 1) {
    x_high = x_low = width - 1;
    x = static_cast<double>(x_low);
  }
  const double ly = y - static_cast<double>(y_low), lx = x - static_cast<double>(x_low);
  const double hy = 1.0 - ly, hx = 1.0 - lx;
  s.offset = {y_low * width + x_low, y_low * width + x_high, y_high * width + x_low,
              y_high * width + x_high};
  s.weight = {hy * hx, hy * lx, ly * hx, ly * lx};
  return s;
}

struct RoiOptions {
  bool max_mode = false;
  bool half_pixel = true;
  int64_t out_h = 1, out_w = 1;
  int64_t sampling_ratio = 0;
  double spatial_scale = 1.0;
};

StatusOr<RoiOptions> ReadOptions(const KernelArgs& args) {
  const ir::Node& node = args.node;
  RoiOptions o;
  const std::string mode = node.GetString("mode", "avg");
  if (mode != "avg" && mode != "max")
    return NodeError(node, "mode '" + mode + "' is not avg or max");
  o.max_mode = mode == "max";
  const std::string transform = node.GetString(
      "coordinate_transformation_mode", args.opset >= 16 ? "half_pixel" : "output_half_pixel");
  if (transform != "half_pixel" && transform != "output_half_pixel") {
    return NodeError(node, "coordinate_transformation_mode '" + transform +
                               "' is not half_pixel or output_half_pixel");
  }
  o.half_pixel = transform == "half_pixel";
  o.out_h = node.GetInt("output_height", 1);
  o.out_w = node.GetInt("output_width", 1);
  o.sampling_ratio = node.GetInt("sampling_ratio", 0);
  o.spatial_scale = node.GetFloat("spatial_scale", 1.0f);
  if (o.out_h < 1 || o.out_w < 1 || o.out_h > (1 << 20) || o.out_w > (1 << 20) ||
      o.sampling_ratio < 0 || o.sampling_ratio > 1024) {
    return NodeError(node, "output_height and output_width must be >= 1 and sampling_ratio >= 0");
  }
  return o;
}

StatusOr<std::vector<Tensor>> RoiAlignKernel(const KernelArgs& args) {
  const ir::Node& node = args.node;
  RETURN_IF_ERROR(CheckInputCount(args, 3, 3));
  const Tensor& x = args.inputs[0];
  const Tensor& rois = args.inputs[1];
  RETURN_IF_ERROR(CheckComputeFloatType(node, x, "X"));
  RETURN_IF_ERROR(CheckComputeFloatType(node, rois, "rois"));
  ASSIGN_OR_RETURN(const std::vector<int64_t> batch_indices,
                   ReadIndices(node, args.inputs[2], "batch_indices"));
  const int64_t num_rois = static_cast<int64_t>(batch_indices.size());
  if (x.rank() != 4 || rois.rank() != 2 || rois.size(1) != 4 || rois.size(0) != num_rois ||
      args.inputs[2].rank() != 1) {
    return NodeError(node, "X " + x.DebugString() + ", rois " + rois.DebugString() +
                               " and batch_indices " + args.inputs[2].DebugString() +
                               " must be [N, C, H, W], [R, 4] and [R]");
  }
  ASSIGN_OR_RETURN(const RoiOptions o, ReadOptions(args));
  const int64_t channels = x.size(1), height = x.size(2), width = x.size(3);
  if ((height == 0 || width == 0) && num_rois * channels > 0) {
    return NodeError(node, "X " + x.DebugString() + " has no pixels to sample");
  }
  RETURN_IF_ERROR(CheckOutputElements(
      node, static_cast<double>(num_rois) * channels * static_cast<double>(o.out_h) * o.out_w));
  const std::vector<double> xs = ToDoubles(x);
  const std::vector<double> boxes = ToDoubles(rois);
  std::vector<double> out(static_cast<size_t>(num_rois * channels * o.out_h * o.out_w), 0.0);
  const double offset = o.half_pixel ? 0.5 : 0.0;
  for (int64_t r = 0; r < num_rois; ++r) {
    const int64_t image = batch_indices[r];
    if (image < 0 || image >= x.size(0)) {
      return NodeError(node, "batch_indices[" + std::to_string(r) + "] = " + std::to_string(image) +
                                 " is outside X's batch of " + std::to_string(x.size(0)));
    }
    const double* box = &boxes[r * 4];
    const double start_w = box[0] * o.spatial_scale - offset;
    const double start_h = box[1] * o.spatial_scale - offset;
    double roi_w = box[2] * o.spatial_scale - offset - start_w;
    double roi_h = box[3] * o.spatial_scale - offset - start_h;
    if (!o.half_pixel) {  // malformed regions become 1x1
      roi_w = std::max(roi_w, 1.0);
      roi_h = std::max(roi_h, 1.0);
    }
    if (!std::isfinite(start_h) || !std::isfinite(start_w) || !(std::abs(roi_h) < 1e12) ||
        !(std::abs(roi_w) < 1e12)) {
      return NodeError(node, "region " + std::to_string(r) + " has non-finite or huge coordinates");
    }
    const double bin_h = roi_h / static_cast<double>(o.out_h);
    const double bin_w = roi_w / static_cast<double>(o.out_w);
    const int64_t grid_h =
        o.sampling_ratio > 0
            ? o.sampling_ratio
            : static_cast<int64_t>(std::ceil(roi_h / static_cast<double>(o.out_h)));
    const int64_t grid_w =
        o.sampling_ratio > 0
            ? o.sampling_ratio
            : static_cast<int64_t>(std::ceil(roi_w / static_cast<double>(o.out_w)));
    // Bounds the samples precomputed per region (shared by every channel).
    if (grid_h > 0 && grid_w > 0 &&
        static_cast<double>(grid_h) * static_cast<double>(grid_w) *
                static_cast<double>(o.out_h * o.out_w) >
            static_cast<double>(kMaxSamples)) {
      return NodeError(node, "region " + std::to_string(r) + " needs a sampling grid of " +
                                 std::to_string(grid_h) + "x" + std::to_string(grid_w) +
                                 " points per bin; set sampling_ratio");
    }
    const double count = std::max(static_cast<double>(grid_h) * static_cast<double>(grid_w), 1.0);
    std::vector<Sample> samples;
    for (int64_t ph = 0; ph < o.out_h; ++ph) {
      for (int64_t pw = 0; pw < o.out_w; ++pw) {
        for (int64_t iy = 0; iy < grid_h; ++iy) {
          const double y = start_h + static_cast<double>(ph) * bin_h +
                           (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(grid_h);
          for (int64_t ix = 0; ix < grid_w; ++ix) {
            const double xx = start_w + static_cast<double>(pw) * bin_w +
                              (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(grid_w);
            samples.push_back(BilinearSample(y, xx, height, width));
          }
        }
      }
    }
    const int64_t per_bin = std::max<int64_t>(grid_h, 0) * std::max<int64_t>(grid_w, 0);
    for (int64_t c = 0; c < channels; ++c) {
      const double* plane = &xs[(image * channels + c) * height * width];
      double* dst = &out[(r * channels + c) * o.out_h * o.out_w];
      for (int64_t bin = 0; bin < o.out_h * o.out_w; ++bin) {
        double value = 0;
        for (int64_t k = 0; k < per_bin; ++k) {
          const Sample& s = samples[bin * per_bin + k];
          if (o.max_mode) {
            double corner = s.weight[0] * plane[s.offset[0]];
            for (int j = 1; j < 4; ++j) corner = std::max(corner, s.weight[j] * plane[s.offset[j]]);
            value = k == 0 ? corner : std::max(value, corner);
          } else {
            for (int j = 0; j < 4; ++j) value += s.weight[j] * plane[s.offset[j]];
          }
        }
        dst[bin] = o.max_mode ? value : value / count;
      }
    }
  }
  ASSIGN_OR_RETURN(Tensor y, FromDoubles(x.dtype(), {num_rois, channels, o.out_h, o.out_w}, out));
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

StatusOr<std::vector<Tensor>> RoiAlign(const KernelArgs& args) { return RoiAlignKernel(args); }

}  // namespace qtune::runtime::reference
