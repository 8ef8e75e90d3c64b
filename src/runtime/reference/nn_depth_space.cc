// DepthToSpace (DCR and CRD modes) and SpaceToDepth on [N, C, H, W] tensors of any element
// type: pure data movement, one element at a time.
#include <cstring>
#include <vector>

#include "runtime/reference/nn_kernels.h"
#include "runtime/reference/nn_util.h"

namespace qtune::runtime::nn {
namespace {

StatusOr<int64_t> ReadBlocksize(const ir::Node& node, const Tensor& x) {
  if (x.rank() != 4) {
    return NodeInvalid(node, "input is " + x.DebugString() + "; expected rank 4 (N, C, H, W)");
  }
  const int64_t block = node.GetInt("blocksize", 0);
  if (block <= 0) return NodeInvalid(node, "attribute blocksize must be given and positive");
  return block;
}

void CopyElement(const Tensor& x, int64_t from, Tensor& y, int64_t to) {
  const size_t size = DataTypeSize(x.dtype());
  std::memcpy(static_cast<std::byte*>(y.raw_data()) + to * size,
              static_cast<const std::byte*>(x.raw_data()) + from * size, size);
}

}  // namespace

KernelResult DepthToSpace(const KernelArgs& args) {
  const ir::Node& node = args.node;
  ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(args, 0, "input"));
  ASSIGN_OR_RETURN(int64_t b, ReadBlocksize(node, *x));
  const std::string mode = node.GetString("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") {
    return NodeInvalid(node, "mode '" + mode + "' is not DCR or CRD");
  }
  const int64_t n = x->size(0), c = x->size(1), h = x->size(2), w = x->size(3);
  if (c % (b * b) != 0) {
    return NodeInvalid(node, "input " + x->DebugString() + " has channels not divisible by " +
                                 "blocksize^2 = " + std::to_string(b * b));
  }
  const int64_t oc = c / (b * b);
  const bool dcr = mode == "DCR";
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(x->dtype(), {n, oc, h * b, w * b}));
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < oc; ++ic)
      for (int64_t ih = 0; ih < h; ++ih)
        for (int64_t i = 0; i < b; ++i)
          for (int64_t iw = 0; iw < w; ++iw)
            for (int64_t j = 0; j < b; ++j) {
              const int64_t source_c = dcr ? (i * b + j) * oc + ic : (ic * b + i) * b + j;
              const int64_t from = ((in * c + source_c) * h + ih) * w + iw;
              const int64_t to = ((in * oc + ic) * h * b + ih * b + i) * w * b + iw * b + j;
              CopyElement(*x, from, y, to);
            }
  return std::vector<Tensor>{y};
}

KernelResult SpaceToDepth(const KernelArgs& args) {
  const ir::Node& node = args.node;
  ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(args, 0, "input"));
  ASSIGN_OR_RETURN(int64_t b, ReadBlocksize(node, *x));
  const int64_t n = x->size(0), c = x->size(1), h = x->size(2), w = x->size(3);
  if (h % b != 0 || w % b != 0) {
    return NodeInvalid(node, "input " + x->DebugString() +
                                 " has spatial sizes not divisible by blocksize " +
                                 std::to_string(b));
  }
  const int64_t oh = h / b, ow = w / b, oc = c * b * b;
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(x->dtype(), {n, oc, oh, ow}));
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t i = 0; i < b; ++i)
        for (int64_t j = 0; j < b; ++j)
          for (int64_t ih = 0; ih < oh; ++ih)
            for (int64_t iw = 0; iw < ow; ++iw) {
              const int64_t from = ((in * c + ic) * h + ih * b + i) * w + iw * b + j;
              const int64_t to = ((in * oc + (i * b + j) * c + ic) * oh + ih) * ow + iw;
              CopyElement(*x, from, y, to);
            }
  return std::vector<Tensor>{y};
}

}  // namespace qtune::runtime::nn
