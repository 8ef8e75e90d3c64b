#include "runtime/reference/nn_util.h"

#include <algorithm>

#include "core/shape.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::nn {

Status NodeInvalid(const ir::Node& node, const std::string& what) {
  return InvalidArgumentError(node.DebugName() + ": " + what);
}

Status NodeUnimplemented(const ir::Node& node, const std::string& what) {
  return UnimplementedError(node.DebugName() + ": " + what);
}

std::string SizesText(const std::vector<int64_t>& sizes) {
  return "[" + SizesToString(sizes) + "]";
}

const Tensor* OptionalInput(const KernelArgs& args, size_t index) {
  if (index >= args.inputs.size() || !args.inputs[index].is_valid()) return nullptr;
  return &args.inputs[index];
}

StatusOr<const Tensor*> RequiredInput(const KernelArgs& args, size_t index, std::string_view name) {
  const Tensor* tensor = OptionalInput(args, index);
  if (tensor == nullptr) {
    return NodeInvalid(args.node, "required input " + std::to_string(index) + " (" +
                                      std::string(name) + ") is missing");
  }
  return tensor;
}

bool OutputRequested(const ir::Node& node, size_t index) { return node.output(index) != nullptr; }

Status CheckFloatType(const ir::Node& node, const Tensor& tensor, std::string_view name) {
  if (tensor.dtype() == DataType::kFloat32 || tensor.dtype() == DataType::kFloat64) {
    return Status::Ok();
  }
  return NodeUnimplemented(node, "input " + std::string(name) + " is " + tensor.DebugString() +
                                     "; the reference kernel supports float32 and float64");
}

Status CheckSameType(const ir::Node& node, const Tensor& a, std::string_view a_name,
                     const Tensor& b, std::string_view b_name) {
  if (a.dtype() == b.dtype()) return Status::Ok();
  return NodeInvalid(node, "input " + std::string(b_name) + " is " + b.DebugString() + " but " +
                               std::string(a_name) + " is " + a.DebugString() +
                               "; their types must match");
}

Status CheckNumElements(const ir::Node& node, const Tensor& tensor, std::string_view name,
                        int64_t count) {
  if (tensor.num_elements() == count) return Status::Ok();
  return NodeInvalid(node, "input " + std::string(name) + " is " + tensor.DebugString() +
                               "; expected " + std::to_string(count) + " elements");
}

StatusOr<int64_t> NormalizeAxis(const ir::Node& node, int64_t axis, int64_t rank) {
  int64_t normalized = axis < 0 ? axis + rank : axis;
  if (normalized < 0 || normalized >= rank) {
    return NodeInvalid(
        node, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  return normalized;
}

StatusOr<std::vector<int64_t>> ReadInts(const ir::Node& node, const Tensor& tensor,
                                        std::string_view name) {
  if (tensor.dtype() == DataType::kInt64) {
    auto s = tensor.span<int64_t>();
    return std::vector<int64_t>(s.begin(), s.end());
  }
  if (tensor.dtype() == DataType::kInt32) {
    auto s = tensor.span<int32_t>();
    return std::vector<int64_t>(s.begin(), s.end());
  }
  return NodeInvalid(
      node, "input " + std::string(name) + " is " + tensor.DebugString() + "; expected int64");
}

StatusOr<std::vector<double>> ReadFloats(const ir::Node& node, const Tensor& tensor,
                                         std::string_view name) {
  if (tensor.dtype() == DataType::kFloat32) {
    auto s = tensor.span<float>();
    return std::vector<double>(s.begin(), s.end());
  }
  if (tensor.dtype() == DataType::kFloat64) {
    auto s = tensor.span<double>();
    return std::vector<double>(s.begin(), s.end());
  }
  return NodeInvalid(
      node, "input " + std::string(name) + " is " + tensor.DebugString() + "; expected float32");
}

int64_t Product(const std::vector<int64_t>& sizes, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < sizes.size(); ++i) p *= sizes[i];
  return p;
}

bool NextIndex(std::vector<int64_t>& index, const std::vector<int64_t>& sizes) {
  for (size_t i = index.size(); i-- > 0;) {
    if (++index[i] < sizes[i]) return true;
    index[i] = 0;
  }
  return false;
}

bool BroadcastStrides(const std::vector<int64_t>& source, const std::vector<int64_t>& target,
                      std::vector<int64_t>* strides) {
  if (source.size() > target.size()) return false;
  std::vector<int64_t> source_strides = reference::ContiguousStrides(source);
  size_t offset = target.size() - source.size();
  strides->assign(target.size(), 0);
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == target[offset + i]) {
      (*strides)[offset + i] = source[i] == 1 ? 0 : source_strides[i];
    } else if (source[i] != 1) {
      return false;
    }
  }
  return true;
}

bool BroadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                     std::vector<int64_t>* out) {
  size_t rank = std::max(a.size(), b.size());
  out->assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    (*out)[i] = da == 1 ? db : da;
  }
  return true;
}

StatusOr<AutoPad> ParseAutoPad(const ir::Node& node) {
  std::string value = node.GetString("auto_pad", "NOTSET");
  if (value == "NOTSET" || value.empty()) return AutoPad::kNotSet;
  if (value == "SAME_UPPER") return AutoPad::kSameUpper;
  if (value == "SAME_LOWER") return AutoPad::kSameLower;
  if (value == "VALID") return AutoPad::kValid;
  return NodeInvalid(
      node, "auto_pad '" + value + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
}

namespace {

StatusOr<std::vector<int64_t>> ReadPositiveInts(const ir::Node& node, std::string_view name,
                                                size_t count) {
  std::vector<int64_t> values = node.GetInts(name, std::vector<int64_t>(count, 1));
  if (values.size() != count) {
    return NodeInvalid(node, "attribute " + std::string(name) + " has " +
                                 std::to_string(values.size()) + " values; expected " +
                                 std::to_string(count));
  }
  for (int64_t v : values) {
    if (v <= 0) return NodeInvalid(node, "attribute " + std::string(name) + " must be positive");
  }
  return values;
}

int64_t CeilDiv(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

}  // namespace

StatusOr<WindowGeometry> ComputeWindowGeometry(const ir::Node& node, std::vector<int64_t> input,
                                               std::vector<int64_t> kernel,
                                               const WindowOptions& options) {
  const size_t rank = input.size();
  WindowGeometry g;
  g.input = std::move(input);
  g.kernel = std::move(kernel);
  if (g.kernel.size() != rank) {
    return NodeInvalid(node, "kernel has " + std::to_string(g.kernel.size()) +
                                 " spatial dimensions but the input has " + std::to_string(rank));
  }
  for (int64_t k : g.kernel) {
    if (k <= 0)
      return NodeInvalid(node, "kernel_shape " + SizesText(g.kernel) + " is not positive");
  }
  ASSIGN_OR_RETURN(g.strides, ReadPositiveInts(node, "strides", rank));
  if (options.read_dilations) {
    ASSIGN_OR_RETURN(g.dilations, ReadPositiveInts(node, "dilations", rank));
  } else {
    g.dilations.assign(rank, 1);
  }
  ASSIGN_OR_RETURN(AutoPad auto_pad, ParseAutoPad(node));
  std::vector<int64_t> pads = node.GetInts("pads", std::vector<int64_t>(2 * rank, 0));
  if (pads.size() != 2 * rank) {
    return NodeInvalid(node, "attribute pads has " + std::to_string(pads.size()) +
                                 " values; expected " + std::to_string(2 * rank));
  }
  g.pads_begin.assign(rank, 0);
  g.pads_end.assign(rank, 0);
  g.output.assign(rank, 0);
  // Attributes may be as large as int64 holds: each must be at most 2^61 and the window
  // extent is computed in 128 bits, so that no sum or product below overflows.
  constexpr int64_t kMaxAttribute = int64_t{1} << 61;
  for (const std::vector<int64_t>* values : {&g.kernel, &g.strides, &g.dilations, &pads}) {
    for (int64_t v : *values) {
      if (v > kMaxAttribute) {
        return NodeInvalid(node, "kernel, strides, dilations and pads must be at most 2^61");
      }
    }
  }
  for (int64_t in : g.input) {
    if (in > kMaxAttribute) {
      return NodeInvalid(node, "input spatial sizes " + SizesText(g.input) + " above 2^61");
    }
  }
  for (size_t i = 0; i < rank; ++i) {
    const int64_t in = g.input[i];
    const int64_t s = g.strides[i];
    const __int128 extent_wide = (__int128{g.kernel[i]} - 1) * g.dilations[i] + 1;
    if (extent_wide > kMaxAttribute) {
      return NodeInvalid(node, "the window (kernel " + SizesText(g.kernel) + ", dilations " +
                                   SizesText(g.dilations) + ") spans more than 2^61 elements");
    }
    const int64_t extent = static_cast<int64_t>(extent_wide);
    if (auto_pad == AutoPad::kSameUpper || auto_pad == AutoPad::kSameLower) {
      g.output[i] = CeilDiv(in, s);
      int64_t total = std::max<int64_t>(0, (g.output[i] - 1) * s + extent - in);
      int64_t small = total / 2;
      g.pads_begin[i] = auto_pad == AutoPad::kSameUpper ? small : total - small;
      g.pads_end[i] = total - g.pads_begin[i];
      continue;
    }
    if (auto_pad == AutoPad::kNotSet) {
      g.pads_begin[i] = pads[i];
      g.pads_end[i] = pads[rank + i];
      if (pads[i] < 0 || pads[rank + i] < 0) {
        return NodeInvalid(node, "attribute pads has a negative value");
      }
    }
    const int64_t span = in + g.pads_begin[i] + g.pads_end[i] - extent;
    if (span < 0) {
      return NodeInvalid(node, "the window (kernel " + SizesText(g.kernel) + ", dilations " +
                                   SizesText(g.dilations) + ") is larger than the padded input " +
                                   SizesText(g.input) + " in spatial dimension " +
                                   std::to_string(i));
    }
    g.output[i] = (options.ceil_mode ? CeilDiv(span, s) : span / s) + 1;
    // A window may not start in the end padding (ONNX, PyTorch).
    if (options.ceil_mode && (g.output[i] - 1) * s >= in + g.pads_begin[i]) --g.output[i];
  }
  return g;
}

void ComputeWindow(const WindowGeometry& g, const std::vector<int64_t>& out_index, Window* window) {
  const size_t rank = g.kernel.size();
  window->taps.clear();
  window->padded_count = 0;
  std::vector<int64_t> k(rank, 0);
  int64_t kernel_offset = 0;
  do {
    bool inside = true;
    bool inside_padded = true;
    int64_t input_offset = 0;
    for (size_t i = 0; i < rank; ++i) {
      int64_t p = out_index[i] * g.strides[i] - g.pads_begin[i] + k[i] * g.dilations[i];
      if (p < -g.pads_begin[i] || p >= g.input[i] + g.pads_end[i]) inside_padded = false;
      if (p < 0 || p >= g.input[i]) inside = false;
      input_offset = input_offset * g.input[i] + p;
    }
    if (inside_padded) ++window->padded_count;
    if (inside) window->taps.push_back({kernel_offset, input_offset});
    ++kernel_offset;
  } while (NextIndex(k, g.kernel));
}

}  // namespace qtune::runtime::nn
