// Helpers shared by the reference NN kernels (nn_*.cc): input access, error messages that
// name the node, row-major index arithmetic, broadcasting and the sliding-window geometry
// of Conv, ConvTranspose and the pools.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime::nn {

// ------------------------------------------------------------------------ errors

// "Conv 'conv1': <what>" as InvalidArgument / Unimplemented.
Status NodeInvalid(const ir::Node& node, const std::string& what);
Status NodeUnimplemented(const ir::Node& node, const std::string& what);
// "[1x3x224x224]"
std::string SizesText(const std::vector<int64_t>& sizes);

// ------------------------------------------------------------------------ inputs, outputs

// Null when input `index` is omitted (absent, or an invalid Tensor).
const Tensor* OptionalInput(const KernelArgs& args, size_t index);
// InvalidArgument naming the node and `name` when input `index` is omitted.
StatusOr<const Tensor*> RequiredInput(const KernelArgs& args, size_t index, std::string_view name);
// True when the node has output `index` and its name is not empty.
bool OutputRequested(const ir::Node& node, size_t index);
// Unimplemented unless `tensor` is float32 or float64.
Status CheckFloatType(const ir::Node& node, const Tensor& tensor, std::string_view name);
// InvalidArgument unless both tensors have the same dtype.
Status CheckSameType(const ir::Node& node, const Tensor& a, std::string_view a_name,
                     const Tensor& b, std::string_view b_name);
// InvalidArgument unless `tensor` has exactly `count` elements.
Status CheckNumElements(const ir::Node& node, const Tensor& tensor, std::string_view name,
                        int64_t count);
// Normalizes a possibly negative axis into [0, rank); InvalidArgument otherwise.
StatusOr<int64_t> NormalizeAxis(const ir::Node& node, int64_t axis, int64_t rank);
// Reads an int64 or int32 tensor (e.g. Resize's sizes) as int64 values.
StatusOr<std::vector<int64_t>> ReadInts(const ir::Node& node, const Tensor& tensor,
                                        std::string_view name);
// Reads a float32 or float64 tensor as double values.
StatusOr<std::vector<double>> ReadFloats(const ir::Node& node, const Tensor& tensor,
                                         std::string_view name);

// ------------------------------------------------------------------------ indexing

int64_t Product(const std::vector<int64_t>& sizes, size_t begin, size_t end);
inline int64_t Product(const std::vector<int64_t>& sizes) {
  return Product(sizes, 0, sizes.size());
}
// Advances `index` (a multi-index into `sizes`) to the next one in row-major order.
// Returns false, with `index` back at all zeros, after the last one.
bool NextIndex(std::vector<int64_t>& index, const std::vector<int64_t>& sizes);
// Strides that read `source` broadcast (numpy rules, right-aligned) to `target`: 0 where a
// source dimension of 1 is stretched. False when `source` does not broadcast to `target`.
bool BroadcastStrides(const std::vector<int64_t>& source, const std::vector<int64_t>& target,
                      std::vector<int64_t>* strides);
// Numpy broadcast of two shapes; false when they are incompatible.
bool BroadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                     std::vector<int64_t>* out);

// ------------------------------------------------------------------------ windows

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };
StatusOr<AutoPad> ParseAutoPad(const ir::Node& node);

// The sliding window of a Conv or pool over the spatial dimensions.
struct WindowGeometry {
  std::vector<int64_t> input;  // spatial input sizes
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads_begin;
  std::vector<int64_t> pads_end;
  std::vector<int64_t> output;  // spatial output sizes
};

struct WindowOptions {
  bool ceil_mode = false;      // pools: round the output size up
  bool read_dilations = true;  // AveragePool before opset 19 has none
};

// Reads strides, dilations, pads and auto_pad from the node (checking their lengths against
// the spatial rank) and computes pads and output sizes as ONNX Conv and the pools define.
StatusOr<WindowGeometry> ComputeWindowGeometry(const ir::Node& node, std::vector<int64_t> input,
                                               std::vector<int64_t> kernel,
                                               const WindowOptions& options);

// One kernel position of a window that lands inside the input.
struct WindowTap {
  int64_t kernel_offset;  // row-major offset into the kernel
  int64_t input_offset;   // row-major offset into the spatial input
};

// The taps of the window at spatial output position `out_index`, and how many kernel
// positions fall inside the padded input [-pads_begin, input + pads_end).
struct Window {
  std::vector<WindowTap> taps;
  int64_t padded_count = 0;
};
void ComputeWindow(const WindowGeometry& geometry, const std::vector<int64_t>& out_index,
                   Window* window);

}  // namespace qtune::runtime::nn
