// Shape functions of CenterCropPad (the sizes in `shape` on `axes`) and Col2Im
// ([N, C / prod(block_shape), image_shape...]). Both read sizes from an input's values, so
// that input must be a compile-time constant; otherwise the node is deferred to run time.
// Knowing the sizes here lets the compiler check the plan's memory before anything runs
// (the reference kernels alone would allocate whatever a model asks for).
#include "core/shape.h"
#include "runtime/shape/checked_size.h"
#include "runtime/shape/shape_registry.h"

namespace qtune::runtime {
namespace {

StatusOr<std::vector<int64_t>> ConstantSizes(const ShapeArgs& args, size_t i, const char* what) {
  if (!args.has_input(i) || !args.input(i).has_constant()) {
    return ValueComputedAtRunTime(args.node, std::string("input '") + what + "' sets the sizes");
  }
  const Tensor& t = args.input(i).constant;
  std::vector<int64_t> out(static_cast<size_t>(t.num_elements()));
  for (size_t k = 0; k < out.size(); ++k) {
    if (t.dtype() == DataType::kInt64) {
      out[k] = t.data<int64_t>()[k];
    } else if (t.dtype() == DataType::kInt32) {
      out[k] = t.data<int32_t>()[k];
    } else {
      return ShapeError(args.node, std::string("input '") + what + "' must be int32 or int64");
    }
    if (out[k] < 0) {
      return ShapeError(args.node, std::string("input '") + what + "' has a negative size " +
                                       std::to_string(out[k]));
    }
  }
  return out;
}

StatusOr<std::vector<ValueInfo>> CenterCropPadShape(const ShapeArgs& args) {
  const ValueInfo& x = args.input(0);
  const int64_t rank = static_cast<int64_t>(x.sizes.size());
  ASSIGN_OR_RETURN(std::vector<int64_t> shape, ConstantSizes(args, 1, "shape"));
  std::vector<int64_t> axes = args.node.GetInts("axes", {});
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  if (shape.size() != axes.size()) {
    return ShapeError(args.node, "shape has " + std::to_string(shape.size()) + " entries for " +
                                     std::to_string(axes.size()) + " axes");
  }
  std::vector<int64_t> out = x.sizes;
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t axis = axes[k] < 0 ? axes[k] + rank : axes[k];
    if (axis < 0 || axis >= rank) {
      return ShapeError(args.node, "axis " + std::to_string(axes[k]) + " is out of range");
    }
    out[axis] = shape[k];
  }
  if (NumElements(out) < 0) return ShapeError(args.node, "the output size overflows");
  return std::vector<ValueInfo>{MakeInfo(x.dtype, out)};
}

StatusOr<std::vector<ValueInfo>> Col2ImShape(const ShapeArgs& args) {
  const ValueInfo& x = args.input(0);
  ASSIGN_OR_RETURN(std::vector<int64_t> image, ConstantSizes(args, 1, "image_shape"));
  ASSIGN_OR_RETURN(std::vector<int64_t> block, ConstantSizes(args, 2, "block_shape"));
  if (x.sizes.size() != 3) return ShapeError(args.node, "input must have rank 3");
  int64_t block_size = 1;
  for (int64_t b : block) {
    if (!CheckedMul(block_size, b, &block_size)) {
      return ShapeError(args.node, "block_shape overflows");
    }
  }
  if (block_size <= 0 || x.sizes[1] % block_size != 0) {
    return ShapeError(args.node, "input dim 1 (" + std::to_string(x.sizes[1]) +
                                     ") is not a multiple of prod(block_shape) " +
                                     std::to_string(block_size));
  }
  std::vector<int64_t> out = {x.sizes[0], x.sizes[1] / block_size};
  out.insert(out.end(), image.begin(), image.end());
  if (NumElements(out) < 0) return ShapeError(args.node, "the output size overflows");
  return std::vector<ValueInfo>{MakeInfo(x.dtype, out)};
}

}  // namespace

void RegisterCropCol2ImShapes(ShapeRegistry& r) {
  r.Register("CenterCropPad", CenterCropPadShape);
  r.Register("Col2Im", Col2ImShape);
}

}  // namespace qtune::runtime
