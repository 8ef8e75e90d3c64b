// MeanVarianceNormalization: Y = (X - mean) / (sqrt(variance) + 1e-9) with mean and
// population variance over `axes` (default [0, 2, 3]; negative axes count from the end),
// as ONNX's function body defines it. Float types (float16/bfloat16 too); statistics in
// double, the variance as the mean of squared deviations (never negative).
#include <cmath>

#include "runtime/reference/misc_kernels.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

bool IsFloatType(DataType type) {
  return type == DataType::kFloat32 || type == DataType::kFloat64 || type == DataType::kFloat16 ||
         type == DataType::kBfloat16;
}

// Group of each element: its index over the dims that are not reduced (row-major).
std::vector<int64_t> GroupIds(const std::vector<int64_t>& sizes, const std::vector<bool>& reduced,
                              int64_t* num_groups) {
  const int64_t rank = static_cast<int64_t>(sizes.size());
  std::vector<int64_t> group_stride(rank, 0);
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (reduced[d]) continue;
    group_stride[d] = stride;
    stride *= sizes[d];
  }
  *num_groups = stride;
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  std::vector<int64_t> ids(n);
  std::vector<int64_t> counter(rank, 0);
  int64_t id = 0;
  for (int64_t i = 0; i < n; ++i) {
    ids[i] = id;
    for (int64_t d = rank - 1; d >= 0; --d) {
      id += group_stride[d];
      if (++counter[d] < sizes[d]) break;
      id -= group_stride[d] * sizes[d];
      counter[d] = 0;
    }
  }
  return ids;
}

StatusOr<std::vector<Tensor>> MeanVarianceNormalization(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 1, 1));
  const Tensor& x = a.inputs[0];
  if (!IsFloatType(x.dtype())) return UnsupportedType(a.node, x.dtype(), "input X");
  const int64_t rank = static_cast<int64_t>(x.rank());
  ASSIGN_OR_RETURN(std::vector<int64_t> axes,
                   NormalizeAxes(a.node, a.node.GetInts("axes", {0, 2, 3}), rank));
  std::vector<bool> reduced(rank, false);
  for (int64_t axis : axes) reduced[axis] = true;
  int64_t num_groups = 0;
  const std::vector<int64_t> ids = GroupIds(x.sizes(), reduced, &num_groups);
  std::vector<double> sum(num_groups, 0.0), squares(num_groups, 0.0);
  std::vector<int64_t> count(num_groups, 0);
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    sum[ids[i]] += LoadAsDouble(x, i);
    ++count[ids[i]];
  }
  for (int64_t g = 0; g < num_groups; ++g) sum[g] = count[g] > 0 ? sum[g] / count[g] : 0.0;
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const double d = LoadAsDouble(x, i) - sum[ids[i]];
    squares[ids[i]] += d * d;
  }
  constexpr double kEpsilon = 1e-9;
  std::vector<double> denominator(num_groups);
  for (int64_t g = 0; g < num_groups; ++g) {
    denominator[g] = std::sqrt(count[g] > 0 ? squares[g] / count[g] : 0.0) + kEpsilon;
  }
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(x.dtype(), x.sizes()));
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    StoreFromDouble(y, i, (LoadAsDouble(x, i) - sum[ids[i]]) / denominator[ids[i]]);
  }
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

void RegisterMvnKernels(ReferenceRegistry& registry) {
  registry.Register("MeanVarianceNormalization", MeanVarianceNormalization);
}

}  // namespace qtune::runtime::reference
