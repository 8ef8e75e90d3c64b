// Resize (opsets 10, 11-13, 18-19) and Upsample (opsets 7-9): read the op's inputs and
// attributes into a ResizePlan and interpolate (nn_resize_interpolate.cc).
//
// Resize-10 and Upsample use asymmetric coordinates; their nearest mode rounds down when
// upsampling and up when downsampling, as ONNX Runtime does (ONNX leaves it unspecified).
#include "runtime/reference/nn_resize.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "runtime/reference/nn_kernels.h"
#include "runtime/reference/nn_util.h"

namespace qtune::runtime::nn {
namespace {

StatusOr<InterpolationMode> ParseMode(const ir::Node& node, bool allow_cubic) {
  const std::string mode = node.GetString("mode", "nearest");
  if (mode == "nearest") return InterpolationMode::kNearest;
  if (mode == "linear" || mode == "bilinear" || mode == "trilinear") {
    return InterpolationMode::kLinear;
  }
  if (mode == "cubic" && allow_cubic) return InterpolationMode::kCubic;
  return NodeInvalid(node, "mode '" + mode + "' is not supported; use nearest, linear" +
                               (allow_cubic ? " or cubic" : ""));
}

StatusOr<CoordinateMode> ParseCoordinateMode(const ir::Node& node) {
  const std::string mode = node.GetString("coordinate_transformation_mode", "half_pixel");
  if (mode == "half_pixel") return CoordinateMode::kHalfPixel;
  if (mode == "half_pixel_symmetric") return CoordinateMode::kHalfPixelSymmetric;
  if (mode == "pytorch_half_pixel") return CoordinateMode::kPytorchHalfPixel;
  if (mode == "align_corners") return CoordinateMode::kAlignCorners;
  if (mode == "asymmetric") return CoordinateMode::kAsymmetric;
  if (mode == "tf_half_pixel_for_nn") return CoordinateMode::kTfHalfPixelForNn;
  if (mode == "tf_crop_and_resize") return CoordinateMode::kTfCropAndResize;
  return NodeInvalid(node, "coordinate_transformation_mode '" + mode + "' is not supported");
}

StatusOr<NearestMode> ParseNearestMode(const ir::Node& node) {
  const std::string mode = node.GetString("nearest_mode", "round_prefer_floor");
  if (mode == "round_prefer_floor") return NearestMode::kRoundPreferFloor;
  if (mode == "round_prefer_ceil") return NearestMode::kRoundPreferCeil;
  if (mode == "floor") return NearestMode::kFloor;
  if (mode == "ceil") return NearestMode::kCeil;
  return NodeInvalid(node, "nearest_mode '" + mode + "' is not supported");
}

// Output sizes and coordinate scales from per-dimension scales: floor(input * scale).
Status ApplyScales(const ir::Node& node, const std::vector<double>& scales, ResizePlan* plan) {
  for (size_t d = 0; d < scales.size(); ++d) {
    if (!(scales[d] > 0)) {
      return NodeInvalid(node, "scales " + std::to_string(scales[d]) + " for dimension " +
                                   std::to_string(d) + " is not positive");
    }
    plan->scales[d] = scales[d];
    plan->output_sizes[d] =
        static_cast<int64_t>(std::floor(static_cast<double>(plan->input_sizes[d]) * scales[d]));
  }
  return Status::Ok();
}

// Resize opset 11+: roi, scales, sizes inputs and (18+) axes, keep_aspect_ratio_policy.
Status PlanResize11(const KernelArgs& args, ResizePlan* plan) {
  const ir::Node& node = args.node;
  const int64_t rank = static_cast<int64_t>(plan->input_sizes.size());
  ASSIGN_OR_RETURN(plan->coordinate_mode, ParseCoordinateMode(node));
  ASSIGN_OR_RETURN(plan->nearest_mode, ParseNearestMode(node));
  plan->cubic_coeff_a = node.GetFloat("cubic_coeff_a", -0.75f);
  plan->exclude_outside = node.GetInt("exclude_outside", 0) != 0;
  plan->extrapolation_value = node.GetFloat("extrapolation_value", 0.0f);
  if (node.GetInt("antialias", 0) != 0 && plan->mode != InterpolationMode::kNearest) {
    return NodeUnimplemented(node, "antialias=1 is not supported");
  }
  // axes: which dimensions roi, scales and sizes refer to.
  std::vector<int64_t> axes;
  for (int64_t a : node.GetInts("axes", {})) {
    ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(node, a, rank));
    if (std::find(axes.begin(), axes.end(), axis) != axes.end()) {
      return NodeInvalid(node, "axes repeats dimension " + std::to_string(axis));
    }
    axes.push_back(axis);
  }
  if (axes.empty() && !node.HasAttribute("axes")) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  const size_t n = axes.size();
  const Tensor* roi = OptionalInput(args, 1);
  const Tensor* scales = OptionalInput(args, 2);
  const Tensor* sizes = OptionalInput(args, 3);
  if (scales != nullptr && scales->num_elements() == 0) scales = nullptr;
  if (sizes != nullptr && sizes->num_elements() == 0) sizes = nullptr;
  if ((scales == nullptr) == (sizes == nullptr)) {
    return NodeInvalid(node, "exactly one of the inputs scales and sizes must be given");
  }
  if (roi != nullptr && roi->num_elements() > 0 &&
      plan->coordinate_mode == CoordinateMode::kTfCropAndResize) {
    ASSIGN_OR_RETURN(std::vector<double> values, ReadFloats(node, *roi, "roi"));
    if (values.size() != 2 * n) {
      return NodeInvalid(node, "roi has " + std::to_string(values.size()) + " values; expected " +
                                   std::to_string(2 * n));
    }
    for (size_t i = 0; i < n; ++i) {
      plan->roi_start[axes[i]] = values[i];
      plan->roi_end[axes[i]] = values[n + i];
    }
  }
  if (scales != nullptr) {
    ASSIGN_OR_RETURN(std::vector<double> values, ReadFloats(node, *scales, "scales"));
    if (values.size() != n) {
      return NodeInvalid(node, "scales has " + std::to_string(values.size()) +
                                   " values; expected " + std::to_string(n));
    }
    std::vector<double> full(rank, 1.0);
    for (size_t i = 0; i < n; ++i) full[axes[i]] = values[i];
    return ApplyScales(node, full, plan);
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> values, ReadInts(node, *sizes, "sizes"));
  if (values.size() != n) {
    return NodeInvalid(node, "sizes has " + std::to_string(values.size()) + " values; expected " +
                                 std::to_string(n));
  }
  for (size_t i = 0; i < n; ++i) {
    if (values[i] < 0) return NodeInvalid(node, "sizes has a negative value");
    plan->output_sizes[axes[i]] = values[i];
    plan->scales[axes[i]] =
        static_cast<double>(values[i]) / static_cast<double>(plan->input_sizes[axes[i]]);
  }
  const std::string policy = node.GetString("keep_aspect_ratio_policy", "stretch");
  if (policy == "stretch") return Status::Ok();
  if (policy != "not_larger" && policy != "not_smaller") {
    return NodeInvalid(node, "keep_aspect_ratio_policy '" + policy + "' is not supported");
  }
  double scale = plan->scales[axes[0]];
  for (int64_t axis : axes) {
    scale = policy == "not_larger" ? std::min(scale, plan->scales[axis])
                                   : std::max(scale, plan->scales[axis]);
  }
  for (int64_t axis : axes) {
    plan->scales[axis] = scale;
    plan->output_sizes[axis] =
        static_cast<int64_t>(scale * static_cast<double>(plan->input_sizes[axis]) + 0.5);
  }
  return Status::Ok();
}

ResizePlan IdentityPlan(const Tensor& x) {
  ResizePlan plan;
  plan.input_sizes = x.sizes();
  plan.output_sizes = x.sizes();
  plan.scales.assign(x.rank(), 1.0);
  plan.roi_start.assign(x.rank(), 0.0);
  plan.roi_end.assign(x.rank(), 1.0);
  return plan;
}

}  // namespace

KernelResult Resize(const KernelArgs& args) {
  const ir::Node& node = args.node;
  ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(args, 0, "X"));
  ResizePlan plan = IdentityPlan(*x);
  ASSIGN_OR_RETURN(plan.mode, ParseMode(node, /*allow_cubic=*/args.opset >= 11));
  if (args.opset >= 11) {
    RETURN_IF_ERROR(PlanResize11(args, &plan));
  } else {
    ASSIGN_OR_RETURN(const Tensor* scales, RequiredInput(args, 1, "scales"));
    ASSIGN_OR_RETURN(std::vector<double> values, ReadFloats(node, *scales, "scales"));
    RETURN_IF_ERROR(CheckNumElements(node, *scales, "scales", static_cast<int64_t>(x->rank())));
    plan.coordinate_mode = CoordinateMode::kAsymmetric;
    plan.nearest_mode = NearestMode::kSimple;
    RETURN_IF_ERROR(ApplyScales(node, values, &plan));
  }
  ASSIGN_OR_RETURN(Tensor y, Interpolate(node, plan, *x));
  return std::vector<Tensor>{y};
}

KernelResult Upsample(const KernelArgs& args) {
  const ir::Node& node = args.node;
  ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(args, 0, "X"));
  if (args.opset < 7) {
    return NodeUnimplemented(node,
                             "Upsample before opset 7 (height_scale/width_scale) is not "
                             "supported");
  }
  ResizePlan plan = IdentityPlan(*x);
  ASSIGN_OR_RETURN(plan.mode, ParseMode(node, /*allow_cubic=*/false));
  plan.coordinate_mode = CoordinateMode::kAsymmetric;
  plan.nearest_mode = NearestMode::kSimple;
  std::vector<double> scales;
  if (args.opset >= 9) {
    ASSIGN_OR_RETURN(const Tensor* scales_input, RequiredInput(args, 1, "scales"));
    ASSIGN_OR_RETURN(scales, ReadFloats(node, *scales_input, "scales"));
  } else {
    if (!node.HasAttribute("scales")) {
      return NodeInvalid(node, "required attribute scales is missing");
    }
    std::vector<float> attribute = node.GetFloats("scales", {});
    scales.assign(attribute.begin(), attribute.end());
  }
  if (scales.size() != x->rank()) {
    return NodeInvalid(node, "scales has " + std::to_string(scales.size()) + " values but X is " +
                                 x->DebugString());
  }
  RETURN_IF_ERROR(ApplyScales(node, scales, &plan));
  ASSIGN_OR_RETURN(Tensor y, Interpolate(node, plan, *x));
  return std::vector<Tensor>{y};
}

}  // namespace qtune::runtime::nn
