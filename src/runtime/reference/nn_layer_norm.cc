// LayerNormalization (opset 17): normalizes over the dimensions [axis, rank), then applies
// Scale and the optional bias B, both broadcast to X. The optional Mean and InvStdDev
// outputs have X's shape with the normalized dimensions set to 1, in the stash_type.
#include <cmath>
#include <vector>

#include "runtime/reference/nn_kernels.h"
#include "runtime/reference/nn_util.h"

namespace qtune::runtime::nn {
namespace {

struct LayerNormShape {
  int64_t outer = 0;
  int64_t inner = 0;
  std::vector<int64_t> scale_strides;
  std::vector<int64_t> bias_strides;
};

int64_t BroadcastOffset(int64_t flat, const std::vector<int64_t>& sizes,
                        const std::vector<int64_t>& strides) {
  int64_t offset = 0;
  for (size_t i = sizes.size(); i-- > 0;) {
    offset += (flat % sizes[i]) * strides[i];
    flat /= sizes[i];
  }
  return offset;
}

template <typename T>
void RunLayerNorm(const LayerNormShape& s, const Tensor& x, const Tensor& scale, const Tensor* bias,
                  double epsilon, Tensor& y, std::vector<double>& means,
                  std::vector<double>& inv_stds) {
  const T* xd = x.data<T>();
  const T* sd = scale.data<T>();
  T* yd = y.data<T>();
  for (int64_t o = 0; o < s.outer; ++o) {
    const T* row = xd + o * s.inner;
    double sum = 0;
    for (int64_t i = 0; i < s.inner; ++i) sum += static_cast<double>(row[i]);
    const double mean = sum / static_cast<double>(s.inner);
    double squares = 0;
    for (int64_t i = 0; i < s.inner; ++i) {
      double d = static_cast<double>(row[i]) - mean;
      squares += d * d;
    }
    const double inv_std = 1.0 / std::sqrt(squares / static_cast<double>(s.inner) + epsilon);
    means[o] = mean;
    inv_stds[o] = inv_std;
    for (int64_t i = 0; i < s.inner; ++i) {
      const int64_t flat = o * s.inner + i;
      double v = (static_cast<double>(row[i]) - mean) * inv_std *
                 static_cast<double>(sd[BroadcastOffset(flat, x.sizes(), s.scale_strides)]);
      if (bias != nullptr) {
        v += static_cast<double>(bias->data<T>()[BroadcastOffset(flat, x.sizes(), s.bias_strides)]);
      }
      yd[flat] = static_cast<T>(v);
    }
  }
}

StatusOr<Tensor> StatsTensor(const std::vector<int64_t>& sizes, DataType dtype,
                             const std::vector<double>& values) {
  ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, sizes));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DataType::kFloat64) {
      t.data<double>()[i] = values[i];
    } else {
      t.data<float>()[i] = static_cast<float>(values[i]);
    }
  }
  return t;
}

}  // namespace

KernelResult LayerNormalization(const KernelArgs& args) {
  const ir::Node& node = args.node;
  ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(args, 0, "X"));
  ASSIGN_OR_RETURN(const Tensor* scale, RequiredInput(args, 1, "Scale"));
  const Tensor* bias = OptionalInput(args, 2);
  RETURN_IF_ERROR(CheckFloatType(node, *x, "X"));
  RETURN_IF_ERROR(CheckSameType(node, *x, "X", *scale, "Scale"));
  if (bias != nullptr) RETURN_IF_ERROR(CheckSameType(node, *x, "X", *bias, "B"));
  const int64_t rank = static_cast<int64_t>(x->rank());
  ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(node, node.GetInt("axis", -1), rank));
  LayerNormShape s;
  s.outer = Product(x->sizes(), 0, axis);
  s.inner = Product(x->sizes(), axis, rank);
  if (!BroadcastStrides(scale->sizes(), x->sizes(), &s.scale_strides) ||
      (bias != nullptr && !BroadcastStrides(bias->sizes(), x->sizes(), &s.bias_strides))) {
    return NodeInvalid(node, "Scale " + scale->DebugString() +
                                 (bias != nullptr ? " or B " + bias->DebugString() : "") +
                                 " does not broadcast to X " + x->DebugString());
  }
  const int64_t stash_type = node.GetInt("stash_type", 1);
  if (stash_type != static_cast<int64_t>(DataType::kFloat32) &&
      stash_type != static_cast<int64_t>(DataType::kFloat64)) {
    return NodeUnimplemented(node, "stash_type " + std::to_string(stash_type) +
                                       " is not supported; use 1 (float32) or 11 (float64)");
  }
  const double epsilon = node.GetFloat("epsilon", 1e-5f);
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(x->dtype(), x->sizes()));
  std::vector<double> means(s.outer), inv_stds(s.outer);
  if (s.inner > 0) {
    if (x->dtype() == DataType::kFloat64) {
      RunLayerNorm<double>(s, *x, *scale, bias, epsilon, y, means, inv_stds);
    } else {
      RunLayerNorm<float>(s, *x, *scale, bias, epsilon, y, means, inv_stds);
    }
  }
  std::vector<Tensor> outputs(std::max<size_t>(1, node.num_outputs()));
  outputs[0] = y;
  std::vector<int64_t> stats_sizes = x->sizes();
  for (int64_t i = axis; i < rank; ++i) stats_sizes[i] = 1;
  const DataType stats_type = static_cast<DataType>(stash_type);
  if (OutputRequested(node, 1)) {
    ASSIGN_OR_RETURN(outputs[1], StatsTensor(stats_sizes, stats_type, means));
  }
  if (OutputRequested(node, 2)) {
    ASSIGN_OR_RETURN(outputs[2], StatsTensor(stats_sizes, stats_type, inv_stds));
  }
  return outputs;
}

}  // namespace qtune::runtime::nn
