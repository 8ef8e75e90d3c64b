// Shape functions of the neural-network ops: Conv, ConvTranspose, pools, Gemm, MatMul.
#include <cmath>
#include <limits>

#include "runtime/shape/shape_registry.h"

namespace qtune::runtime {
namespace {

struct WindowAttrs {
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: begins then ends
  std::string auto_pad;
  bool ceil_mode = false;
};

StatusOr<WindowAttrs> ReadWindow(const ShapeArgs& args, size_t spatial,
                                 std::vector<int64_t> kernel) {
  const ir::Node& n = args.node;
  WindowAttrs w;
  w.kernel = n.GetInts("kernel_shape", std::move(kernel));
  w.strides = n.GetInts("strides", std::vector<int64_t>(spatial, 1));
  w.dilations = n.GetInts("dilations", std::vector<int64_t>(spatial, 1));
  w.pads = n.GetInts("pads", std::vector<int64_t>(2 * spatial, 0));
  w.auto_pad = n.GetString("auto_pad", "NOTSET");
  w.ceil_mode = n.GetInt("ceil_mode", 0) != 0;
  if (w.kernel.size() != spatial || w.strides.size() != spatial || w.dilations.size() != spatial ||
      w.pads.size() != 2 * spatial) {
    return ShapeError(n, "kernel_shape/strides/dilations/pads do not match " +
                             std::to_string(spatial) + " spatial dims");
  }
  for (size_t i = 0; i < spatial; ++i) {
    if (w.kernel[i] <= 0 || w.strides[i] <= 0 || w.dilations[i] <= 0) {
      return ShapeError(n, "kernel_shape, strides and dilations must be positive");
    }
  }
  return w;
}

// Window arithmetic runs in 128 bits: every operand is an int64 (sizes, attributes), so a
// product of two plus a few sums cannot overflow there; the result must fit int64.
using Wide = __int128;

StatusOr<int64_t> ToSize(const ir::Node& node, Wide size) {
  if (size > std::numeric_limits<int64_t>::max() || size < std::numeric_limits<int64_t>::min()) {
    return ShapeError(node, "an output size does not fit int64 (kernel, strides, dilations, pads)");
  }
  return static_cast<int64_t>(size);
}

// Output spatial size of a sliding window (Conv and the pools).
StatusOr<int64_t> WindowOutput(const ir::Node& node, const WindowAttrs& w, size_t i, int64_t in) {
  Wide effective = Wide{w.kernel[i] - 1} * w.dilations[i] + 1;
  Wide stride = w.strides[i];
  if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") {
    return ToSize(node, (in + stride - 1) / stride);
  }
  Wide padded = in;
  if (w.auto_pad == "NOTSET") {
    padded += Wide{w.pads[i]} + w.pads[i + w.kernel.size()];
  } else if (w.auto_pad != "VALID") {
    return ShapeError(node, "unknown auto_pad '" + w.auto_pad + "'");
  }
  if (padded < effective) return ShapeError(node, "the window is larger than the padded input");
  Wide span = padded - effective;
  Wide out = (w.ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  // With ceil_mode the last window must start inside the input or left padding.
  if (w.ceil_mode && (out - 1) * stride >= in + Wide{w.pads[i]}) --out;
  return ToSize(node, out);
}

StatusOr<std::vector<ValueInfo>> ConvShape(const ShapeArgs& args) {
  if (!args.has_input(0) || !args.has_input(1)) return ShapeError(args.node, "needs X and W");
  const auto& x = args.input(0).sizes;
  const auto& wt = args.input(1).sizes;
  if (x.size() < 3 || wt.size() != x.size()) {
    return ShapeError(args.node, "X and W must have the same rank >= 3");
  }
  size_t spatial = x.size() - 2;
  ASSIGN_OR_RETURN(WindowAttrs w, ReadWindow(args, spatial, {wt.begin() + 2, wt.end()}));
  int64_t group = args.node.GetInt("group", 1);
  if (group <= 0 || Wide{x[1]} != Wide{wt[1]} * group) {
    return ShapeError(args.node, "input channels " + std::to_string(x[1]) + " != weight channels " +
                                     std::to_string(wt[1]) + " x group " + std::to_string(group));
  }
  std::vector<int64_t> out = {x[0], wt[0]};
  for (size_t i = 0; i < spatial; ++i) {
    ASSIGN_OR_RETURN(int64_t o, WindowOutput(args.node, w, i, x[i + 2]));
    out.push_back(o);
  }
  return std::vector<ValueInfo>{MakeInfo(args.input(0).dtype, std::move(out))};
}

StatusOr<std::vector<ValueInfo>> ConvTransposeShape(const ShapeArgs& args) {
  if (!args.has_input(0) || !args.has_input(1)) return ShapeError(args.node, "needs X and W");
  const auto& x = args.input(0).sizes;
  const auto& wt = args.input(1).sizes;
  if (x.size() < 3 || wt.size() != x.size()) {
    return ShapeError(args.node, "X and W must have the same rank >= 3");
  }
  size_t spatial = x.size() - 2;
  ASSIGN_OR_RETURN(WindowAttrs w, ReadWindow(args, spatial, {wt.begin() + 2, wt.end()}));
  int64_t group = args.node.GetInt("group", 1);
  if (group <= 0) return ShapeError(args.node, "group must be positive");
  ASSIGN_OR_RETURN(int64_t channels, ToSize(args.node, Wide{wt[1]} * group));
  std::vector<int64_t> out = {x[0], channels};
  std::vector<int64_t> output_shape = args.node.GetInts("output_shape", {});
  std::vector<int64_t> output_padding =
      args.node.GetInts("output_padding", std::vector<int64_t>(spatial, 0));
  if ((!output_shape.empty() && output_shape.size() < spatial) ||
      output_padding.size() != spatial) {
    return ShapeError(args.node, "output_shape/output_padding do not match " +
                                     std::to_string(spatial) + " spatial dims");
  }
  for (size_t i = 0; i < spatial; ++i) {
    if (!output_shape.empty()) {
      out.push_back(output_shape[output_shape.size() - spatial + i]);
      continue;
    }
    Wide effective = Wide{w.kernel[i] - 1} * w.dilations[i] + 1;
    Wide o = Wide{w.strides[i]} * (Wide{x[i + 2]} - 1) + output_padding[i] + effective;
    if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") {
      o = Wide{x[i + 2]} * w.strides[i];
    } else if (w.auto_pad == "NOTSET") {
      o -= Wide{w.pads[i]} + w.pads[i + spatial];
    }
    if (o <= 0) return ShapeError(args.node, "computed a non-positive output size");
    ASSIGN_OR_RETURN(int64_t size, ToSize(args.node, o));
    out.push_back(size);
  }
  return std::vector<ValueInfo>{MakeInfo(args.input(0).dtype, std::move(out))};
}

StatusOr<std::vector<ValueInfo>> PoolShape(const ShapeArgs& args) {
  if (!args.has_input(0)) return ShapeError(args.node, "needs X");
  const auto& x = args.input(0).sizes;
  if (x.size() < 3) return ShapeError(args.node, "X must have rank >= 3");
  size_t spatial = x.size() - 2;
  if (!args.node.HasAttribute("kernel_shape")) {
    return ShapeError(args.node, "attribute kernel_shape is required");
  }
  ASSIGN_OR_RETURN(WindowAttrs w, ReadWindow(args, spatial, {}));
  std::vector<int64_t> out = {x[0], x[1]};
  for (size_t i = 0; i < spatial; ++i) {
    ASSIGN_OR_RETURN(int64_t o, WindowOutput(args.node, w, i, x[i + 2]));
    out.push_back(o);
  }
  std::vector<ValueInfo> infos = {MakeInfo(args.input(0).dtype, out)};
  if (args.node.num_outputs() > 1) infos.push_back(MakeInfo(DataType::kInt64, out));
  return infos;
}

StatusOr<std::vector<ValueInfo>> GlobalPoolShape(const ShapeArgs& args) {
  if (!args.has_input(0)) return ShapeError(args.node, "needs X");
  std::vector<int64_t> out = args.input(0).sizes;
  if (out.size() < 3) return ShapeError(args.node, "X must have rank >= 3");
  for (size_t i = 2; i < out.size(); ++i) out[i] = 1;
  return std::vector<ValueInfo>{MakeInfo(args.input(0).dtype, std::move(out))};
}

StatusOr<std::vector<ValueInfo>> GemmShape(const ShapeArgs& args) {
  if (!args.has_input(0) || !args.has_input(1)) return ShapeError(args.node, "needs A and B");
  const auto& a = args.input(0).sizes;
  const auto& b = args.input(1).sizes;
  if (a.size() != 2 || b.size() != 2) return ShapeError(args.node, "A and B must be 2-D");
  bool ta = args.node.GetInt("transA", 0) != 0;
  bool tb = args.node.GetInt("transB", 0) != 0;
  int64_t m = ta ? a[1] : a[0], k = ta ? a[0] : a[1];
  int64_t kb = tb ? b[1] : b[0], n = tb ? b[0] : b[1];
  if (k != kb) {
    return ShapeError(
        args.node, "inner dimensions differ: " + std::to_string(k) + " vs " + std::to_string(kb));
  }
  return std::vector<ValueInfo>{MakeInfo(args.input(0).dtype, {m, n})};
}

StatusOr<std::vector<ValueInfo>> MatMulShape(const ShapeArgs& args) {
  if (!args.has_input(0) || !args.has_input(1)) return ShapeError(args.node, "needs A and B");
  std::vector<int64_t> a = args.input(0).sizes;
  std::vector<int64_t> b = args.input(1).sizes;
  if (a.empty() || b.empty()) return ShapeError(args.node, "inputs must not be scalars");
  bool a_vector = a.size() == 1, b_vector = b.size() == 1;
  if (a_vector) a.insert(a.begin(), 1);
  if (b_vector) b.push_back(1);
  if (a.back() != b[b.size() - 2]) {
    return ShapeError(args.node, "inner dimensions differ: " + std::to_string(a.back()) + " vs " +
                                     std::to_string(b[b.size() - 2]));
  }
  std::vector<int64_t> batch_a(a.begin(), a.end() - 2), batch_b(b.begin(), b.end() - 2);
  ASSIGN_OR_RETURN(std::vector<int64_t> out, BroadcastSizes(args.node, batch_a, batch_b));
  if (!a_vector) out.push_back(a[a.size() - 2]);
  if (!b_vector) out.push_back(b.back());
  return std::vector<ValueInfo>{MakeInfo(args.input(0).dtype, std::move(out))};
}

}  // namespace

void RegisterNnShapes(ShapeRegistry& registry) {
  registry.Register("Conv", ConvShape);
  registry.Register("FusedConv", ConvShape);  // qtune domain: Conv + sum + activation
  registry.Register("ConvTranspose", ConvTransposeShape);
  registry.Register("MaxPool", PoolShape);
  registry.Register("AveragePool", PoolShape);
  registry.Register("LpPool", PoolShape);
  registry.Register("GlobalAveragePool", GlobalPoolShape);
  registry.Register("GlobalMaxPool", GlobalPoolShape);
  registry.Register("GlobalLpPool", GlobalPoolShape);
  registry.Register("Gemm", GemmShape);
  registry.Register("MatMul", MatMulShape);
  registry.Register("MatMulBias", MatMulShape);  // qtune domain: MatMul + bias [N]
}

}  // namespace qtune::runtime
