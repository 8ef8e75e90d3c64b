// Gemm: Y = alpha * op(A) * op(B) + beta * C, with op = optional transpose and C (optional)
// broadcast to [M, N].
#include <vector>

#include "runtime/reference/nn_kernels.h"
#include "runtime/reference/nn_util.h"

namespace qtune::runtime::nn {
namespace {

struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  double alpha = 1, beta = 1;
};

template <typename T>
Tensor RunGemm(const GemmShape& s, const Tensor& a, const Tensor& b, const Tensor* c,
               const std::vector<int64_t>& c_strides, Tensor y) {
  const T* ad = a.data<T>();
  const T* bd = b.data<T>();
  T* yd = y.data<T>();
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < s.k; ++p) {
        double av = ad[s.trans_a ? p * s.m + i : i * s.k + p];
        double bv = bd[s.trans_b ? j * s.k + p : p * s.n + j];
        acc += av * bv;
      }
      double out = s.alpha * acc;
      if (c != nullptr) {
        out += s.beta * static_cast<double>(c->data<T>()[i * c_strides[0] + j * c_strides[1]]);
      }
      yd[i * s.n + j] = static_cast<T>(out);
    }
  }
  return y;
}

}  // namespace

KernelResult Gemm(const KernelArgs& args) {
  const ir::Node& node = args.node;
  ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(args, 0, "A"));
  ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(args, 1, "B"));
  const Tensor* c = OptionalInput(args, 2);
  RETURN_IF_ERROR(CheckFloatType(node, *a, "A"));
  RETURN_IF_ERROR(CheckSameType(node, *a, "A", *b, "B"));
  if (c != nullptr) RETURN_IF_ERROR(CheckSameType(node, *a, "A", *c, "C"));
  if (a->rank() != 2 || b->rank() != 2) {
    return NodeInvalid(node, "A is " + a->DebugString() + " and B is " + b->DebugString() +
                                 "; Gemm needs two matrices");
  }
  GemmShape s;
  s.trans_a = node.GetInt("transA", 0) != 0;
  s.trans_b = node.GetInt("transB", 0) != 0;
  s.alpha = node.GetFloat("alpha", 1.0f);
  s.beta = node.GetFloat("beta", 1.0f);
  s.m = s.trans_a ? a->size(1) : a->size(0);
  s.k = s.trans_a ? a->size(0) : a->size(1);
  const int64_t k_b = s.trans_b ? b->size(1) : b->size(0);
  s.n = s.trans_b ? b->size(0) : b->size(1);
  if (k_b != s.k) {
    return NodeInvalid(node, "inner dimensions differ: A is " + a->DebugString() +
                                 (s.trans_a ? " (transposed)" : "") + ", B is " + b->DebugString() +
                                 (s.trans_b ? " (transposed)" : ""));
  }
  std::vector<int64_t> c_strides;
  if (c != nullptr && !BroadcastStrides(c->sizes(), {s.m, s.n}, &c_strides)) {
    return NodeInvalid(node, "C is " + c->DebugString() + "; it does not broadcast to [" +
                                 std::to_string(s.m) + "x" + std::to_string(s.n) + "]");
  }
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(a->dtype(), {s.m, s.n}));
  if (a->dtype() == DataType::kFloat64) {
    return std::vector<Tensor>{RunGemm<double>(s, *a, *b, c, c_strides, y)};
  }
  return std::vector<Tensor>{RunGemm<float>(s, *a, *b, c, c_strides, y)};
}

}  // namespace qtune::runtime::nn
