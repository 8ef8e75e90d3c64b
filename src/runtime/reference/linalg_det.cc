// Det: the determinant of each square matrix in the last two dims of X [..., M, M],
// giving [...]. LU decomposition with partial pivoting in double; float types (float16
// and bfloat16 too). An empty matrix (M = 0) has determinant 1.
#include <cmath>
#include <utility>

#include "runtime/reference/misc_kernels.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

// Destroys `m` (row-major n x n).
double Determinant(std::vector<double>& m, int64_t n) {
  double det = 1.0;
  for (int64_t col = 0; col < n; ++col) {
    int64_t pivot = col;
    for (int64_t r = col + 1; r < n; ++r) {
      if (std::abs(m[r * n + col]) > std::abs(m[pivot * n + col])) pivot = r;
    }
    if (m[pivot * n + col] == 0.0) return 0.0;
    if (pivot != col) {
      for (int64_t c = 0; c < n; ++c) std::swap(m[pivot * n + c], m[col * n + c]);
      det = -det;
    }
    const double diagonal = m[col * n + col];
    det *= diagonal;
    for (int64_t r = col + 1; r < n; ++r) {
      const double factor = m[r * n + col] / diagonal;
      for (int64_t c = col; c < n; ++c) m[r * n + c] -= factor * m[col * n + c];
    }
  }
  return det;
}

StatusOr<std::vector<Tensor>> Det(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 1, 1));
  const Tensor& x = a.inputs[0];
  const DataType type = x.dtype();
  if (type != DataType::kFloat32 && type != DataType::kFloat64 && type != DataType::kFloat16 &&
      type != DataType::kBfloat16) {
    return UnsupportedType(a.node, type, "input X");
  }
  const size_t rank = x.rank();
  if (rank < 2 || x.size(rank - 1) != x.size(rank - 2)) {
    return NodeError(a.node, "input X is " + x.DebugString() +
                                 "; Det needs square matrices in the last two dims [..., M, M]");
  }
  const int64_t n = x.size(rank - 1);
  std::vector<int64_t> out_sizes(x.sizes().begin(), x.sizes().end() - 2);
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(type, out_sizes));
  std::vector<double> m(n * n);
  for (int64_t b = 0; b < y.num_elements(); ++b) {
    for (int64_t i = 0; i < n * n; ++i) m[i] = LoadAsDouble(x, b * n * n + i);
    StoreFromDouble(y, b, Determinant(m, n));
  }
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

void RegisterDetKernels(ReferenceRegistry& registry) { registry.Register("Det", Det); }

}  // namespace qtune::runtime::reference
