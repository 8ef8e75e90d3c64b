// Reference kernels that move image data between sizes given as input values:
// CenterCropPad (opset 18: each axis in `axes`, default all, is center-cropped or
// zero-padded to the size in `shape`; an odd difference takes the extra element from the
// end) and Col2Im (opset 18: sums the columns [N, C * prod(block_shape), L] of sliding
// blocks back into images [N, C, image_shape...], with dilations, pads and strides).
#include <algorithm>

#include "runtime/reference/registry.h"
#include "runtime/reference/tensor_util.h"
#include "runtime/shape/checked_size.h"

namespace qtune::runtime::reference {
namespace {

using Outputs = StatusOr<std::vector<Tensor>>;

StatusOr<Tensor> AllocateFor(const ir::Node& node, DataType type, std::vector<int64_t> sizes) {
  auto t = Tensor::Allocate(type, std::move(sizes));
  if (!t.ok()) return t.status().WithContext(node.DebugName());
  return t;
}

Outputs CenterCropPad(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 2, 2));
  const Tensor& x = a.inputs[0];
  const int64_t rank = static_cast<int64_t>(x.rank());
  ASSIGN_OR_RETURN(std::vector<int64_t> shape, ReadIndices(a.node, a.inputs[1], "shape"));
  std::vector<int64_t> axes(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) axes[d] = d;
  if (a.node.HasAttribute("axes")) {
    ASSIGN_OR_RETURN(axes, NormalizeAxes(a.node, a.node.GetInts("axes", {}), rank));
  }
  if (shape.size() != axes.size()) {
    return NodeError(a.node, "shape has " + std::to_string(shape.size()) + " entries for " +
                                 std::to_string(axes.size()) + " axes");
  }
  std::vector<int64_t> out_sizes = x.sizes();
  // offset[d]: the input index of output index 0 along d (negative when padding).
  std::vector<int64_t> offset(static_cast<size_t>(rank), 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t d = axes[k], dim = x.size(d), target = shape[k];
    if (target < 0) {
      return NodeError(a.node, "shape has a negative size " + std::to_string(target));
    }
    out_sizes[d] = target;
    offset[d] = dim >= target ? (dim - target) / 2 : -((target - dim) / 2);
  }
  ASSIGN_OR_RETURN(Tensor y, AllocateFor(a.node, x.dtype(), out_sizes));  // zero-filled
  const std::vector<int64_t> in_strides = ContiguousStrides(x.sizes());
  const size_t element_size = DataTypeSize(x.dtype());
  for (int64_t i = 0; i < y.num_elements(); ++i) {
    int64_t rest = i, src = 0;
    bool inside = true;
    for (int64_t d = rank; d-- > 0;) {
      const int64_t coord = rest % out_sizes[d] + offset[d];
      rest /= out_sizes[d];
      if (coord < 0 || coord >= x.size(d)) {
        inside = false;
        break;
      }
      src += coord * in_strides[d];
    }
    if (inside) CopyElement(y.raw_data(), i, x.raw_data(), src, element_size);
  }
  return std::vector<Tensor>{std::move(y)};
}

// The geometry of one Col2Im node: per spatial dim the image size, block size, dilation,
// pads, stride and the number of block positions.
struct Col2ImGeometry {
  std::vector<int64_t> image, block, dilations, pads_begin, pads_end, strides, positions;
  int64_t block_size = 1, num_positions = 1;
};

StatusOr<Col2ImGeometry> MakeGeometry(const KernelArgs& a) {
  Col2ImGeometry g;
  ASSIGN_OR_RETURN(g.image, ReadIndices(a.node, a.inputs[1], "image_shape"));
  ASSIGN_OR_RETURN(g.block, ReadIndices(a.node, a.inputs[2], "block_shape"));
  const size_t n = g.image.size();
  if (n == 0 || g.block.size() != n) {
    return NodeError(a.node,
                     "image_shape and block_shape must have one entry per spatial dim, "
                     "got " +
                         std::to_string(n) + " and " + std::to_string(g.block.size()));
  }
  g.dilations = a.node.GetInts("dilations", std::vector<int64_t>(n, 1));
  g.strides = a.node.GetInts("strides", std::vector<int64_t>(n, 1));
  std::vector<int64_t> pads = a.node.GetInts("pads", std::vector<int64_t>(2 * n, 0));
  if (g.dilations.size() != n || g.strides.size() != n || pads.size() != 2 * n) {
    return NodeError(a.node, "dilations and strides need " + std::to_string(n) +
                                 " entries and pads " + std::to_string(2 * n));
  }
  g.pads_begin.assign(pads.begin(), pads.begin() + n);
  g.pads_end.assign(pads.begin() + n, pads.end());
  for (size_t d = 0; d < n; ++d) {
    if (g.image[d] < 0 || g.block[d] < 1 || g.dilations[d] < 1 || g.strides[d] < 1 ||
        g.pads_begin[d] < 0 || g.pads_end[d] < 0) {
      return NodeError(a.node,
                       "image_shape and pads must be >= 0, block_shape, dilations and "
                       "strides >= 1");
    }
    // positions = (image + pads - dilation * (block - 1) - 1) / stride + 1, checked.
    int64_t span = 0, padded = 0, reach = 0;
    if (!CheckedMul(g.dilations[d], g.block[d] - 1, &reach) ||
        !CheckedAdd(g.image[d], g.pads_begin[d], &padded) ||
        !CheckedAdd(padded, g.pads_end[d], &padded) || !CheckedAdd(reach, 1, &reach) ||
        !CheckedSub(padded, reach, &span) || span < 0) {
      return NodeError(
          a.node, "the block does not fit the padded image along spatial dim " + std::to_string(d));
    }
    g.positions.push_back(span / g.strides[d] + 1);
    if (!CheckedMul(g.block_size, g.block[d], &g.block_size) ||
        !CheckedMul(g.num_positions, g.positions.back(), &g.num_positions)) {
      return NodeError(a.node, "block_shape or the number of blocks overflows");
    }
  }
  return g;
}

template <typename T>
void SumBlocks(const Col2ImGeometry& g, const T* cols, T* image, int64_t image_size) {
  const size_t n = g.image.size();
  std::vector<int64_t> offset(n), position(n);
  for (int64_t k = 0; k < g.block_size; ++k) {
    for (int64_t rest = k, d = static_cast<int64_t>(n); d-- > 0;) {
      offset[d] = rest % g.block[d];
      rest /= g.block[d];
    }
    for (int64_t p = 0; p < g.num_positions; ++p) {
      for (int64_t rest = p, d = static_cast<int64_t>(n); d-- > 0;) {
        position[d] = rest % g.positions[d];
        rest /= g.positions[d];
      }
      int64_t target = 0;
      bool inside = true;
      for (size_t d = 0; d < n && inside; ++d) {
        const int64_t coord =
            position[d] * g.strides[d] - g.pads_begin[d] + offset[d] * g.dilations[d];
        inside = coord >= 0 && coord < g.image[d];
        target = target * g.image[d] + coord;
      }
      if (inside && target < image_size) image[target] += cols[k * g.num_positions + p];
    }
  }
}

Outputs Col2Im(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 3, 3));
  const Tensor& x = a.inputs[0];
  if (x.rank() != 3) {
    return NodeError(a.node,
                     "input must be [N, C * prod(block_shape), L], got " + Bracketed(x.sizes()));
  }
  ASSIGN_OR_RETURN(Col2ImGeometry g, MakeGeometry(a));
  if (x.size(1) % g.block_size != 0 || x.size(2) != g.num_positions) {
    return NodeError(a.node, "input " + Bracketed(x.sizes()) + " does not match block_shape " +
                                 Bracketed(g.block) + " (dim 1 a multiple of " +
                                 std::to_string(g.block_size) + ") and " +
                                 std::to_string(g.num_positions) + " block positions (dim 2)");
  }
  const int64_t batch = x.size(0), channels = x.size(1) / g.block_size;
  std::vector<int64_t> out_sizes = {batch, channels};
  out_sizes.insert(out_sizes.end(), g.image.begin(), g.image.end());
  if (NumElements(out_sizes) < 0) return NodeError(a.node, "the output size overflows");
  ASSIGN_OR_RETURN(Tensor y, AllocateFor(a.node, x.dtype(), out_sizes));
  const int64_t image_size = NumElements(g.image);
  RETURN_IF_ERROR(Dispatch<kNumericTypes>(a.node, x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* in = x.data<T>();
    T* out = y.data<T>();
    for (int64_t plane = 0; plane < batch * channels; ++plane) {
      SumBlocks<T>(g, in + plane * g.block_size * g.num_positions, out + plane * image_size,
                   image_size);
    }
    return Status::Ok();
  }));
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

void RegisterCropCol2ImKernels(ReferenceRegistry& r) {
  r.Register("CenterCropPad", CenterCropPad);
  r.Register("Col2Im", Col2Im);
}

}  // namespace qtune::runtime::reference
