// MatMul with numpy semantics: a 1-D A gains a leading 1 and a 1-D B a trailing 1 (both
// removed from the result); the batch dimensions broadcast.
#include <vector>

#include "runtime/reference/nn_kernels.h"
#include "runtime/reference/nn_util.h"

namespace qtune::runtime::nn {
namespace {

struct MatMulShape {
  int64_t m = 0, n = 0, k = 0;
  std::vector<int64_t> batch;
  std::vector<int64_t> a_batch_strides;  // in matrices, 0 where broadcast
  std::vector<int64_t> b_batch_strides;
  std::vector<int64_t> y_sizes;
};

template <typename T, typename Acc>
Tensor RunMatMul(const MatMulShape& s, const Tensor& a, const Tensor& b, Tensor y) {
  const T* ad = a.data<T>();
  const T* bd = b.data<T>();
  T* yd = y.data<T>();
  std::vector<int64_t> index(s.batch.size(), 0);
  const int64_t batches = Product(s.batch);
  for (int64_t batch = 0; batch < batches; ++batch, NextIndex(index, s.batch)) {
    int64_t a_matrix = 0, b_matrix = 0;
    for (size_t i = 0; i < index.size(); ++i) {
      a_matrix += index[i] * s.a_batch_strides[i];
      b_matrix += index[i] * s.b_batch_strides[i];
    }
    const T* am = ad + a_matrix * s.m * s.k;
    const T* bm = bd + b_matrix * s.k * s.n;
    T* ym = yd + batch * s.m * s.n;
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = 0; j < s.n; ++j) {
        Acc acc = 0;
        for (int64_t p = 0; p < s.k; ++p) {
          acc += static_cast<Acc>(am[i * s.k + p]) * static_cast<Acc>(bm[p * s.n + j]);
        }
        ym[i * s.n + j] = static_cast<T>(acc);
      }
    }
  }
  return y;
}

StatusOr<MatMulShape> InferMatMulShape(const ir::Node& node, const Tensor& a, const Tensor& b) {
  if (a.rank() == 0 || b.rank() == 0) {
    return NodeInvalid(node, "A is " + a.DebugString() + " and B is " + b.DebugString() +
                                 "; MatMul does not take scalars");
  }
  std::vector<int64_t> a_sizes = a.sizes();
  std::vector<int64_t> b_sizes = b.sizes();
  if (a.rank() == 1) a_sizes.insert(a_sizes.begin(), 1);
  if (b.rank() == 1) b_sizes.push_back(1);
  MatMulShape s;
  s.m = a_sizes[a_sizes.size() - 2];
  s.k = a_sizes.back();
  s.n = b_sizes.back();
  if (b_sizes[b_sizes.size() - 2] != s.k) {
    return NodeInvalid(
        node, "inner dimensions differ: A is " + a.DebugString() + ", B is " + b.DebugString());
  }
  std::vector<int64_t> a_batch(a_sizes.begin(), a_sizes.end() - 2);
  std::vector<int64_t> b_batch(b_sizes.begin(), b_sizes.end() - 2);
  if (!BroadcastShapes(a_batch, b_batch, &s.batch) ||
      !BroadcastStrides(a_batch, s.batch, &s.a_batch_strides) ||
      !BroadcastStrides(b_batch, s.batch, &s.b_batch_strides)) {
    return NodeInvalid(node, "batch dimensions of A " + a.DebugString() + " and B " +
                                 b.DebugString() + " do not broadcast");
  }
  s.y_sizes = s.batch;
  if (a.rank() > 1) s.y_sizes.push_back(s.m);
  if (b.rank() > 1) s.y_sizes.push_back(s.n);
  return s;
}

}  // namespace

KernelResult MatMul(const KernelArgs& args) {
  const ir::Node& node = args.node;
  ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(args, 0, "A"));
  ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(args, 1, "B"));
  RETURN_IF_ERROR(CheckSameType(node, *a, "A", *b, "B"));
  ASSIGN_OR_RETURN(MatMulShape s, InferMatMulShape(node, *a, *b));
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(a->dtype(), s.y_sizes));
  switch (a->dtype()) {
    case DataType::kFloat32:
      return std::vector<Tensor>{RunMatMul<float, double>(s, *a, *b, y)};
    case DataType::kFloat64:
      return std::vector<Tensor>{RunMatMul<double, double>(s, *a, *b, y)};
    // Integers wrap (modulo 2^bits) like ONNX Runtime; unsigned accumulation keeps that defined.
    case DataType::kInt32:
      return std::vector<Tensor>{RunMatMul<int32_t, uint64_t>(s, *a, *b, y)};
    case DataType::kInt64:
      return std::vector<Tensor>{RunMatMul<int64_t, uint64_t>(s, *a, *b, y)};
    case DataType::kUint32:
      return std::vector<Tensor>{RunMatMul<uint32_t, uint64_t>(s, *a, *b, y)};
    case DataType::kUint64:
      return std::vector<Tensor>{RunMatMul<uint64_t, uint64_t>(s, *a, *b, y)};
    default:
      return NodeUnimplemented(node, "input A is " + a->DebugString() +
                                         "; the reference MatMul supports float32, float64, "
                                         "int32, int64, uint32 and uint64");
  }
}

}  // namespace qtune::runtime::nn
