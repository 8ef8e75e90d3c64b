// Shape functions of the data-movement ops. Ops whose output sizes come from another
// input's values (Reshape's shape, Slice's starts, Resize's sizes, ...) need that input to
// be a compile-time constant; the shape inference walk makes shape subgraphs constant.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/shape.h"
#include "runtime/shape/checked_size.h"
#include "runtime/shape/shape_registry.h"

namespace qtune::runtime {
namespace {

// Values of constant integer input `i`; Unimplemented if it is not a compile-time constant.
StatusOr<std::vector<int64_t>> ConstantInts(const ShapeArgs& args, size_t i, const char* what) {
  if (!args.has_input(i) || !args.input(i).has_constant()) {
    return UnimplementedError(args.node.DebugName() + ": input '" + what +
                              "' is computed at run time; qtune needs it to be constant");
  }
  const Tensor& t = args.input(i).constant;
  std::vector<int64_t> out(t.num_elements());
  if (t.dtype() == DataType::kInt64) {
    std::copy(t.data<int64_t>(), t.data<int64_t>() + out.size(), out.begin());
  } else if (t.dtype() == DataType::kInt32) {
    std::copy(t.data<int32_t>(), t.data<int32_t>() + out.size(), out.begin());
  } else {
    return ShapeError(args.node, std::string("input '") + what + "' must be int32 or int64");
  }
  return out;
}

StatusOr<std::vector<float>> ConstantFloats(const ShapeArgs& args, size_t i, const char* what) {
  if (!args.has_input(i) || !args.input(i).has_constant()) {
    return UnimplementedError(args.node.DebugName() + ": input '" + what +
                              "' is computed at run time; qtune needs it to be constant");
  }
  const Tensor& t = args.input(i).constant;
  if (t.dtype() != DataType::kFloat32) return ShapeError(args.node, "scales must be float32");
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

StatusOr<int64_t> Axis(const ShapeArgs& args, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return ShapeError(args.node, "axis " + std::to_string(axis) + " is out of range for rank " +
                                     std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

std::vector<ValueInfo> One(DataType dtype, std::vector<int64_t> sizes) {
  return {MakeInfo(dtype, std::move(sizes))};
}

StatusOr<std::vector<ValueInfo>> ReshapeShape(const ShapeArgs& args) {
  const auto& in = args.input(0).sizes;
  std::vector<int64_t> shape;
  if (args.opset < 5) {
    shape = args.node.GetInts("shape", {});
  } else {
    ASSIGN_OR_RETURN(shape, ConstantInts(args, 1, "shape"));
  }
  bool allowzero = args.node.GetInt("allowzero", 0) != 0;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowzero) {
      if (i >= in.size()) return ShapeError(args.node, "shape copies a dimension that X lacks");
      shape[i] = in[i];
    }
    if (shape[i] == -1) {
      if (infer >= 0) return ShapeError(args.node, "shape has more than one -1");
      infer = static_cast<int64_t>(i);
    } else if (shape[i] < 0) {
      return ShapeError(args.node, "shape has a negative size");
    } else {
      if (!CheckedMul(known, shape[i], &known)) {
        return ShapeError(
            args.node, "shape [" + SizesToString(shape) + "] has more elements than int64 holds");
      }
    }
  }
  int64_t total = NumElements(in);
  if (infer >= 0) {
    if (known == 0 || total % known != 0) {
      return ShapeError(args.node, "cannot infer -1 reshaping [" + SizesToString(in) + "]");
    }
    shape[infer] = total / known;
  }
  if (NumElements(shape) != total) {
    return ShapeError(
        args.node, "cannot reshape [" + SizesToString(in) + "] to [" + SizesToString(shape) + "]");
  }
  return One(args.input(0).dtype, std::move(shape));
}

StatusOr<std::vector<ValueInfo>> FlattenShape(const ShapeArgs& args) {
  const auto& in = args.input(0).sizes;
  int64_t rank = static_cast<int64_t>(in.size());
  int64_t axis = args.node.GetInt("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) return ShapeError(args.node, "axis out of range");
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t& part = i < axis ? outer : inner;
    if (!CheckedMul(part, in[i], &part)) {
      return ShapeError(args.node, "[" + SizesToString(in) + "] flattened does not fit int64");
    }
  }
  return One(args.input(0).dtype, {outer, inner});
}

StatusOr<std::vector<ValueInfo>> TransposeShape(const ShapeArgs& args) {
  const auto& in = args.input(0).sizes;
  std::vector<int64_t> perm = args.node.GetInts("perm", {});
  if (perm.empty()) {
    for (int64_t i = static_cast<int64_t>(in.size()) - 1; i >= 0; --i) perm.push_back(i);
  }
  if (perm.size() != in.size()) return ShapeError(args.node, "perm does not match the rank");
  std::vector<int64_t> out;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(in.size())) return ShapeError(args.node, "bad perm");
    out.push_back(in[p]);
  }
  return One(args.input(0).dtype, std::move(out));
}

StatusOr<std::vector<int64_t>> AxesFromAttrOrInput(const ShapeArgs& args, int64_t input_opset) {
  if (args.opset >= input_opset) {
    if (!args.has_input(1)) return std::vector<int64_t>{};
    return ConstantInts(args, 1, "axes");
  }
  return args.node.GetInts("axes", {});
}

StatusOr<std::vector<ValueInfo>> SqueezeShape(const ShapeArgs& args) {
  const auto& in = args.input(0).sizes;
  ASSIGN_OR_RETURN(std::vector<int64_t> axes, AxesFromAttrOrInput(args, 13));
  std::vector<bool> drop(in.size(), false);
  for (int64_t a : axes) {
    ASSIGN_OR_RETURN(int64_t axis, Axis(args, a, static_cast<int64_t>(in.size())));
    if (in[axis] != 1) return ShapeError(args.node, "cannot squeeze a dimension that is not 1");
    drop[axis] = true;
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (axes.empty() ? in[i] != 1 : !drop[i]) out.push_back(in[i]);
  }
  return One(args.input(0).dtype, std::move(out));
}

StatusOr<std::vector<ValueInfo>> UnsqueezeShape(const ShapeArgs& args) {
  const auto& in = args.input(0).sizes;
  ASSIGN_OR_RETURN(std::vector<int64_t> axes, AxesFromAttrOrInput(args, 13));
  int64_t rank = static_cast<int64_t>(in.size() + axes.size());
  std::vector<bool> inserted(rank, false);
  for (int64_t a : axes) {
    ASSIGN_OR_RETURN(int64_t axis, Axis(args, a, rank));
    if (inserted[axis]) return ShapeError(args.node, "axes has a duplicate");
    inserted[axis] = true;
  }
  std::vector<int64_t> out;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i) out.push_back(inserted[i] ? 1 : in[next++]);
  return One(args.input(0).dtype, std::move(out));
}

StatusOr<std::vector<ValueInfo>> ConcatShape(const ShapeArgs& args) {
  std::vector<int64_t> out = args.input(0).sizes;
  ASSIGN_OR_RETURN(int64_t axis,
                   Axis(args, args.node.GetInt("axis", 0), static_cast<int64_t>(out.size())));
  out[axis] = 0;
  for (size_t i = 0; i < args.inputs.size(); ++i) {
    if (!args.has_input(i)) continue;
    const auto& s = args.input(i).sizes;
    if (s.size() != out.size()) return ShapeError(args.node, "inputs differ in rank");
    for (size_t d = 0; d < s.size(); ++d) {
      if (static_cast<int64_t>(d) != axis && s[d] != out[d]) {
        return ShapeError(args.node, "inputs differ outside the concat axis");
      }
    }
    if (!CheckedAdd(out[axis], s[axis], &out[axis])) {
      return ShapeError(args.node, "the concatenated axis does not fit int64");
    }
  }
  return One(args.input(0).dtype, std::move(out));
}

StatusOr<std::vector<ValueInfo>> SplitShape(const ShapeArgs& args) {
  const auto& in = args.input(0).sizes;
  ASSIGN_OR_RETURN(int64_t axis,
                   Axis(args, args.node.GetInt("axis", 0), static_cast<int64_t>(in.size())));
  std::vector<int64_t> split;
  if (args.opset >= 13 && args.has_input(1)) {
    ASSIGN_OR_RETURN(split, ConstantInts(args, 1, "split"));
  } else if (args.opset < 13) {
    split = args.node.GetInts("split", {});
  }
  int64_t n = static_cast<int64_t>(args.node.num_outputs());
  if (n == 0) return ShapeError(args.node, "has no outputs");
  if (split.empty()) {
    int64_t chunk = in[axis] / n + (in[axis] % n != 0 ? 1 : 0);
    for (int64_t i = 0; i < n; ++i) split.push_back(std::min(chunk, in[axis] - chunk * i));
  }
  if (static_cast<int64_t>(split.size()) != n) return ShapeError(args.node, "split count");
  std::vector<ValueInfo> out;
  int64_t sum = 0;
  for (int64_t s : split) {
    if (s < 0) return ShapeError(args.node, "negative split size");
    std::vector<int64_t> sizes = in;
    sizes[axis] = s;
    if (!CheckedAdd(sum, s, &sum)) return ShapeError(args.node, "split sizes overflow int64");
    out.push_back(MakeInfo(args.input(0).dtype, std::move(sizes)));
  }
  if (sum != in[axis]) return ShapeError(args.node, "split sizes do not add up to the axis");
  return out;
}

StatusOr<std::vector<ValueInfo>> SliceShape(const ShapeArgs& args) {
  const auto& in = args.input(0).sizes;
  int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (args.opset < 10) {
    starts = args.node.GetInts("starts", {});
    ends = args.node.GetInts("ends", {});
    axes = args.node.GetInts("axes", {});
  } else {
    ASSIGN_OR_RETURN(starts, ConstantInts(args, 1, "starts"));
    ASSIGN_OR_RETURN(ends, ConstantInts(args, 2, "ends"));
    if (args.has_input(3)) {
      ASSIGN_OR_RETURN(axes, ConstantInts(args, 3, "axes"));
    }
    if (args.has_input(4)) {
      ASSIGN_OR_RETURN(steps, ConstantInts(args, 4, "steps"));
    }
  }
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    return ShapeError(args.node, "starts, ends, axes and steps differ in length");
  }
  std::vector<int64_t> out = in;
  for (size_t i = 0; i < starts.size(); ++i) {
    ASSIGN_OR_RETURN(int64_t axis, Axis(args, axes[i], rank));
    int64_t dim = in[axis], step = steps[i];
    if (step == 0) return ShapeError(args.node, "step is 0");
    if (dim == 0) {  // nothing to slice (and the clamps below would have lo > hi)
      out[axis] = 0;
      continue;
    }
    auto clamp = [&](int64_t v, int64_t lo, int64_t hi) {
      if (v < 0) v += dim;
      return std::clamp(v, lo, hi);
    };
    int64_t start = step > 0 ? clamp(starts[i], 0, dim) : clamp(starts[i], 0, dim - 1);
    int64_t end = step > 0 ? clamp(ends[i], 0, dim) : clamp(ends[i], -1, dim - 1);
    // Large positive/negative sentinels (INT64_MAX/MIN) land on the clamps above.
    // Written so that no step (up to INT64_MIN/MAX) overflows: start, end in [-1, dim].
    int64_t magnitude = step > 0 ? step
                        : step == std::numeric_limits<int64_t>::min()
                            ? std::numeric_limits<int64_t>::max()
                            : -step;
    int64_t distance = step > 0 ? end - start : start - end;
    out[axis] = distance > 0 ? (distance - 1) / magnitude + 1 : 0;
  }
  return One(args.input(0).dtype, std::move(out));
}

StatusOr<std::vector<ValueInfo>> GatherShape(const ShapeArgs& args) {
  const auto& data = args.input(0).sizes;
  const auto& indices = args.input(1).sizes;
  ASSIGN_OR_RETURN(int64_t axis,
                   Axis(args, args.node.GetInt("axis", 0), static_cast<int64_t>(data.size())));
  std::vector<int64_t> out(data.begin(), data.begin() + axis);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), data.begin() + axis + 1, data.end());
  return One(args.input(0).dtype, std::move(out));
}

// Upsample and Resize before opset 11: one scale per dimension, output floor(in * scale).
StatusOr<std::vector<ValueInfo>> ScaledShape(const ShapeArgs& args) {
  const auto& in = args.input(0).sizes;
  std::vector<float> scales;
  if (args.node.op_type() == "Upsample" && args.opset < 9) {
    scales = args.node.GetFloats("scales", {});
  } else {
    ASSIGN_OR_RETURN(scales, ConstantFloats(args, 1, "scales"));
  }
  if (scales.size() != in.size()) return ShapeError(args.node, "scales do not match the rank");
  std::vector<int64_t> out(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (!SizeFromDouble(std::floor(static_cast<double>(in[i]) * scales[i]), &out[i])) {
      return ShapeError(args.node, "scale " + std::to_string(scales[i]) + " of dim " +
                                       std::to_string(i) + " gives no valid size");
    }
  }
  return One(args.input(0).dtype, std::move(out));
}

// Resize opset 11+: scales or sizes (an empty tensor counts as omitted), for the dimensions
// in `axes` (opset 18; all by default), and sizes adjusted by keep_aspect_ratio_policy.
StatusOr<std::vector<ValueInfo>> ResizeShape(const ShapeArgs& args) {
  if (args.node.op_type() == "Upsample" || args.opset < 11) return ScaledShape(args);
  const auto& in = args.input(0).sizes;
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes;
  for (int64_t a : args.node.GetInts("axes", {})) {
    ASSIGN_OR_RETURN(int64_t axis, Axis(args, a, rank));
    if (std::find(axes.begin(), axes.end(), axis) != axes.end()) {
      return ShapeError(args.node, "axes repeats dimension " + std::to_string(axis));
    }
    axes.push_back(axis);
  }
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  std::vector<int64_t> sizes;
  if (args.has_input(3)) {
    ASSIGN_OR_RETURN(sizes, ConstantInts(args, 3, "sizes"));
  }
  std::vector<int64_t> out = in;
  if (sizes.empty()) {
    ASSIGN_OR_RETURN(std::vector<float> scales, ConstantFloats(args, 2, "scales"));
    if (scales.size() != axes.size()) {
      return ShapeError(args.node, "scales has " + std::to_string(scales.size()) + " values for " +
                                       std::to_string(axes.size()) + " axes");
    }
    for (size_t i = 0; i < axes.size(); ++i) {
      double size = std::floor(static_cast<double>(in[axes[i]]) * scales[i]);
      if (!SizeFromDouble(size, &out[axes[i]])) {
        return ShapeError(args.node, "scale " + std::to_string(scales[i]) + " of axis " +
                                         std::to_string(axes[i]) + " gives no valid size");
      }
    }
    return One(args.input(0).dtype, std::move(out));
  }
  if (sizes.size() != axes.size()) {
    return ShapeError(args.node, "sizes has " + std::to_string(sizes.size()) + " values for " +
                                     std::to_string(axes.size()) + " axes");
  }
  const std::string policy = args.node.GetString("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller") {
    return ShapeError(args.node, "keep_aspect_ratio_policy '" + policy + "' is not supported");
  }
  // not_larger/not_smaller: one scale for all axes, the smallest/largest sizes[i] / in.
  double scale = policy == "not_larger" ? std::numeric_limits<double>::infinity() : 0.0;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (sizes[i] < 0) return ShapeError(args.node, "sizes has a negative value");
    out[axes[i]] = sizes[i];
    double s = static_cast<double>(sizes[i]) / static_cast<double>(in[axes[i]]);
    scale = policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
  }
  if (policy != "stretch") {
    for (int64_t axis : axes) {
      if (!SizeFromDouble(scale * static_cast<double>(in[axis]) + 0.5, &out[axis])) {
        return ShapeError(args.node, "sizes with keep_aspect_ratio_policy '" + policy +
                                         "' give no valid size for axis " + std::to_string(axis));
      }
    }
  }
  return One(args.input(0).dtype, std::move(out));
}

StatusOr<std::vector<ValueInfo>> PadShape(const ShapeArgs& args) {
  const auto& in = args.input(0).sizes;
  std::vector<int64_t> pads;
  if (args.opset < 11) {
    pads = args.node.GetInts("pads", {});
  } else {
    ASSIGN_OR_RETURN(pads, ConstantInts(args, 1, "pads"));
  }
  std::vector<int64_t> axes;
  if (args.opset >= 18 && args.has_input(3)) {
    ASSIGN_OR_RETURN(axes, ConstantInts(args, 3, "axes"));
  }
  int64_t rank = static_cast<int64_t>(in.size());
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  if (pads.size() != 2 * axes.size()) return ShapeError(args.node, "pads has the wrong length");
  std::vector<int64_t> out = in;
  for (size_t i = 0; i < axes.size(); ++i) {
    ASSIGN_OR_RETURN(int64_t axis, Axis(args, axes[i], rank));
    if (!CheckedAdd(out[axis], pads[i], &out[axis]) ||
        !CheckedAdd(out[axis], pads[i + axes.size()], &out[axis])) {
      return ShapeError(args.node, "pads [" + SizesToString(pads) + "] overflow int64");
    }
    if (out[axis] < 0) return ShapeError(args.node, "pads remove more than the dimension");
  }
  return One(args.input(0).dtype, std::move(out));
}

StatusOr<std::vector<ValueInfo>> ReduceShape(const ShapeArgs& args) {
  const auto& in = args.input(0).sizes;
  int64_t rank = static_cast<int64_t>(in.size());
  const std::string& op = args.node.op_type();
  bool axes_as_input = op == "ReduceSum" ? args.opset >= 13 : args.opset >= 18;
  std::vector<int64_t> axes;
  if (op == "ArgMax" || op == "ArgMin") {
    axes = {args.node.GetInt("axis", 0)};
  } else if (axes_as_input) {
    if (args.has_input(1)) {
      ASSIGN_OR_RETURN(axes, ConstantInts(args, 1, "axes"));
    }
  } else {
    axes = args.node.GetInts("axes", {});
  }
  bool keepdims = args.node.GetInt("keepdims", 1) != 0;
  if (axes.empty() && args.node.GetInt("noop_with_empty_axes", 0) != 0) {
    return One(args.input(0).dtype, in);
  }
  std::vector<bool> reduced(in.size(), axes.empty());
  for (int64_t a : axes) {
    ASSIGN_OR_RETURN(int64_t axis, Axis(args, a, rank));
    reduced[axis] = true;
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!reduced[i])
      out.push_back(in[i]);
    else if (keepdims)
      out.push_back(1);
  }
  DataType dtype = (op == "ArgMax" || op == "ArgMin") ? DataType::kInt64 : args.input(0).dtype;
  return One(dtype, std::move(out));
}

// An error naming the node when `sizes` has a negative entry or more elements than an
// int64 counts.
Status CheckSizes(const ShapeArgs& args, const std::vector<int64_t>& sizes, const char* what) {
  if (NumElements(sizes) < 0) {
    return ShapeError(args.node, std::string(what) + " [" + SizesToString(sizes) +
                                     "] has a negative size or too many elements");
  }
  return Status::Ok();
}

StatusOr<std::vector<ValueInfo>> ExpandShape(const ShapeArgs& args) {
  ASSIGN_OR_RETURN(std::vector<int64_t> shape, ConstantInts(args, 1, "shape"));
  for (int64_t s : shape) {
    if (s < 0) {
      return ShapeError(args.node, "shape [" + SizesToString(shape) + "] has a negative size");
    }
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> out, BroadcastSizes(args.node, args.input(0).sizes, shape));
  RETURN_IF_ERROR(CheckSizes(args, out, "the output"));
  return One(args.input(0).dtype, std::move(out));
}

StatusOr<std::vector<ValueInfo>> TileShape(const ShapeArgs& args) {
  ASSIGN_OR_RETURN(std::vector<int64_t> repeats, ConstantInts(args, 1, "repeats"));
  std::vector<int64_t> out = args.input(0).sizes;
  if (repeats.size() != out.size()) return ShapeError(args.node, "repeats does not match rank");
  for (size_t i = 0; i < out.size(); ++i) {
    if (repeats[i] < 0) {
      return ShapeError(args.node, "repeats [" + SizesToString(repeats) + "] has a negative entry");
    }
    if (out[i] != 0 && repeats[i] > std::numeric_limits<int64_t>::max() / out[i]) {
      return ShapeError(args.node, "repeats [" + SizesToString(repeats) + "] overflow dim " +
                                       std::to_string(i) + " of size " + std::to_string(out[i]));
    }
    out[i] *= repeats[i];
  }
  RETURN_IF_ERROR(CheckSizes(args, out, "the output"));
  return One(args.input(0).dtype, std::move(out));
}

}  // namespace

void RegisterTensorShapes(ShapeRegistry& registry) {
  registry.Register("Reshape", ReshapeShape);
  registry.Register("Flatten", FlattenShape);
  registry.Register("Transpose", TransposeShape);
  registry.Register("Squeeze", SqueezeShape);
  registry.Register("Unsqueeze", UnsqueezeShape);
  registry.Register("Concat", ConcatShape);
  registry.Register("Split", SplitShape);
  registry.Register("Slice", SliceShape);
  registry.Register("Gather", GatherShape);
  registry.Register("Resize", ResizeShape);
  registry.Register("Upsample", ResizeShape);
  registry.Register("Pad", PadShape);
  registry.Register("Expand", ExpandShape);
  registry.Register("Tile", TileShape);
  for (const char* op :
       {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
        "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp", "ArgMax", "ArgMin"}) {
    registry.Register(op, ReduceShape);
  }
}

}  // namespace qtune::runtime
