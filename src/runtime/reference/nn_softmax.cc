// Softmax, LogSoftmax and Hardmax. Before opset 13 the input is coerced to 2-D at `axis`
// (default 1) and the op runs over each row of prod(shape[axis:]) values; from opset 13 it
// runs along the single dimension `axis` (default -1). Softmax subtracts the maximum first.
#include <cmath>
#include <limits>
#include <vector>

#include "runtime/reference/nn_kernels.h"
#include "runtime/reference/nn_util.h"

namespace qtune::runtime::nn {
namespace {

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

// The op runs over `count` values `stride` apart, for each of outer * stride starting points.
struct SoftmaxShape {
  int64_t outer = 1;
  int64_t count = 1;
  int64_t stride = 1;
};

template <typename T>
Tensor RunSoftmax(const SoftmaxShape& s, SoftmaxKind kind, const Tensor& x, Tensor y) {
  const T* xd = x.data<T>();
  T* yd = y.data<T>();
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t inner = 0; inner < s.stride; ++inner) {
      const int64_t base = o * s.count * s.stride + inner;
      auto at = [&](int64_t i) { return base + i * s.stride; };
      int64_t argmax = 0;
      for (int64_t i = 1; i < s.count; ++i) {
        if (xd[at(i)] > xd[at(argmax)]) argmax = i;
      }
      if (kind == SoftmaxKind::kHardmax) {
        for (int64_t i = 0; i < s.count; ++i) yd[at(i)] = static_cast<T>(i == argmax ? 1 : 0);
        continue;
      }
      const double max = static_cast<double>(xd[at(argmax)]);
      double sum = 0;
      for (int64_t i = 0; i < s.count; ++i) sum += std::exp(static_cast<double>(xd[at(i)]) - max);
      const double log_sum = std::log(sum);
      for (int64_t i = 0; i < s.count; ++i) {
        const double shifted = static_cast<double>(xd[at(i)]) - max;
        yd[at(i)] = static_cast<T>(kind == SoftmaxKind::kSoftmax ? std::exp(shifted) / sum
                                                                 : shifted - log_sum);
      }
    }
  }
  return y;
}

KernelResult SoftmaxFamily(const KernelArgs& args, SoftmaxKind kind) {
  const ir::Node& node = args.node;
  ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(args, 0, "input"));
  RETURN_IF_ERROR(CheckFloatType(node, *x, "input"));
  const int64_t rank = static_cast<int64_t>(x->rank());
  const bool coerce_2d = args.opset < 13;
  SoftmaxShape s;
  if (rank > 0) {
    ASSIGN_OR_RETURN(int64_t axis,
                     NormalizeAxis(node, node.GetInt("axis", coerce_2d ? 1 : -1), rank));
    s.outer = Product(x->sizes(), 0, axis);
    if (coerce_2d) {
      s.count = Product(x->sizes(), axis, rank);
    } else {
      s.count = x->size(axis);
      s.stride = Product(x->sizes(), axis + 1, rank);
    }
  }
  if (s.count == 0 || s.outer == 0 || s.stride == 0) s.outer = 0;
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(x->dtype(), x->sizes()));
  if (x->dtype() == DataType::kFloat64) {
    return std::vector<Tensor>{RunSoftmax<double>(s, kind, *x, y)};
  }
  return std::vector<Tensor>{RunSoftmax<float>(s, kind, *x, y)};
}

}  // namespace

KernelResult Softmax(const KernelArgs& args) { return SoftmaxFamily(args, SoftmaxKind::kSoftmax); }
KernelResult LogSoftmax(const KernelArgs& args) {
  return SoftmaxFamily(args, SoftmaxKind::kLogSoftmax);
}
KernelResult Hardmax(const KernelArgs& args) { return SoftmaxFamily(args, SoftmaxKind::kHardmax); }

}  // namespace qtune::runtime::nn
