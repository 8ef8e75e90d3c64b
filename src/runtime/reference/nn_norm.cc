// Normalizations over [N, C, spatial...] tensors: BatchNormalization (inference),
// InstanceNormalization, GroupNormalization, LRN. Statistics are computed in double
// (population variance), whatever the element type.
#include <cmath>
#include <vector>

#include "runtime/reference/nn_kernels.h"
#include "runtime/reference/nn_util.h"

namespace qtune::runtime::nn {
namespace {

// Mean and 1/sqrt(variance + epsilon) of `count` values starting at `data`, `stride` apart.
template <typename T>
void Moments(const T* data, int64_t count, int64_t stride, double epsilon, double* mean,
             double* inv_std) {
  double sum = 0;
  for (int64_t i = 0; i < count; ++i) sum += static_cast<double>(data[i * stride]);
  *mean = count > 0 ? sum / static_cast<double>(count) : 0.0;
  double squares = 0;
  for (int64_t i = 0; i < count; ++i) {
    double d = static_cast<double>(data[i * stride]) - *mean;
    squares += d * d;
  }
  double variance = count > 0 ? squares / static_cast<double>(count) : 0.0;
  *inv_std = 1.0 / std::sqrt(variance + epsilon);
}

Status CheckChannelsInput(const ir::Node& node, const Tensor& x) {
  if (x.rank() < 2) {
    return NodeInvalid(node, "input X is " + x.DebugString() + "; expected rank >= 2 (N, C, ...)");
  }
  return Status::Ok();
}

// ---------------------------------------------------------------- BatchNormalization

template <typename T>
Tensor RunBatchNorm(const Tensor& x, const std::vector<std::vector<double>>& params,
                    bool per_element, double epsilon, Tensor y) {
  const int64_t channels = x.size(1);
  const int64_t inner = Product(x.sizes(), 2, x.rank());
  const T* xd = x.data<T>();
  T* yd = y.data<T>();
  const auto& [scale, bias, mean, var] = std::tie(params[0], params[1], params[2], params[3]);
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const int64_t c = (i / inner) % channels;
    const int64_t p = per_element ? c * inner + i % inner : c;
    const double normalized = (static_cast<double>(xd[i]) - mean[p]) / std::sqrt(var[p] + epsilon);
    yd[i] = static_cast<T>(normalized * scale[p] + bias[p]);
  }
  return y;
}

// ---------------------------------------------------------------- Instance/GroupNormalization

// Normalizes each (n, group) block of channels_per_group * inner contiguous values, then
// applies per-channel (or per-group) scale and bias.
template <typename T>
Tensor RunGroupNorm(const Tensor& x, int64_t groups, const std::vector<double>& scale,
                    const std::vector<double>& bias, double epsilon, Tensor y) {
  const int64_t channels = x.size(1);
  const int64_t inner = Product(x.sizes(), 2, x.rank());
  const int64_t per_group = channels / groups;
  const bool per_channel = static_cast<int64_t>(scale.size()) == channels;
  const T* xd = x.data<T>();
  T* yd = y.data<T>();
  for (int64_t block = 0; block < x.size(0) * groups; ++block) {
    const int64_t begin = block * per_group * inner;
    double mean = 0, inv_std = 0;
    Moments(xd + begin, per_group * inner, 1, epsilon, &mean, &inv_std);
    for (int64_t i = 0; i < per_group * inner; ++i) {
      const int64_t c = (block % groups) * per_group + i / inner;
      const int64_t p = per_channel ? c : block % groups;
      yd[begin + i] = static_cast<T>(
          (static_cast<double>(xd[begin + i]) - mean) * inv_std * scale[p] + bias[p]);
    }
  }
  return y;
}

StatusOr<std::vector<double>> ReadParam(const KernelArgs& args, size_t index, std::string_view name,
                                        std::vector<int64_t> counts) {
  ASSIGN_OR_RETURN(const Tensor* t, RequiredInput(args, index, name));
  for (int64_t count : counts) {
    if (t->num_elements() == count) return ReadFloats(args.node, *t, name);
  }
  return CheckNumElements(args.node, *t, name, counts.front());
}

// ---------------------------------------------------------------- LRN

template <typename T>
Tensor RunLrn(const Tensor& x, int64_t size, double alpha, double beta, double bias, Tensor y) {
  const int64_t channels = x.size(1);
  const int64_t inner = Product(x.sizes(), 2, x.rank());
  const int64_t before = (size - 1) / 2;
  const int64_t after = size - 1 - before;  // ceil((size - 1) / 2)
  const T* xd = x.data<T>();
  T* yd = y.data<T>();
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const int64_t c = (i / inner) % channels;
    double square_sum = 0;
    for (int64_t j = std::max<int64_t>(0, c - before); j <= std::min(channels - 1, c + after);
         ++j) {
      double v = static_cast<double>(xd[i + (j - c) * inner]);
      square_sum += v * v;
    }
    double scale = std::pow(bias + alpha / static_cast<double>(size) * square_sum, beta);
    yd[i] = static_cast<T>(static_cast<double>(xd[i]) / scale);
  }
  return y;
}

}  // namespace

KernelResult BatchNormalization(const KernelArgs& args) {
  const ir::Node& node = args.node;
  ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(args, 0, "X"));
  RETURN_IF_ERROR(CheckFloatType(node, *x, "X"));
  RETURN_IF_ERROR(CheckChannelsInput(node, *x));
  if (node.GetInt("training_mode", 0) != 0) return BatchNormalizationTraining(args);
  for (size_t i = 1; i < node.num_outputs(); ++i) {
    if (OutputRequested(node, i)) {
      return NodeUnimplemented(node, "output " + std::to_string(i) + " ('" +
                                         node.output(i)->name() +
                                         "') is a training output; only Y is supported");
    }
  }
  // spatial=0 (opsets 7 and 8): the parameters hold one value per element of [C, D1, ...].
  const bool per_element = args.opset < 9 && node.GetInt("spatial", 1) == 0;
  const int64_t count = per_element ? Product(x->sizes(), 1, x->rank()) : x->size(1);
  std::vector<std::vector<double>> params;
  const char* names[] = {"scale", "B", "input_mean", "input_var"};
  for (size_t i = 0; i < 4; ++i) {
    ASSIGN_OR_RETURN(std::vector<double> p, ReadParam(args, i + 1, names[i], {count}));
    params.push_back(std::move(p));
  }
  const double epsilon = node.GetFloat("epsilon", 1e-5f);
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(x->dtype(), x->sizes()));
  std::vector<Tensor> outputs(std::max<size_t>(1, node.num_outputs()));
  outputs[0] = x->dtype() == DataType::kFloat64
                   ? RunBatchNorm<double>(*x, params, per_element, epsilon, y)
                   : RunBatchNorm<float>(*x, params, per_element, epsilon, y);
  return outputs;
}

KernelResult InstanceNormalization(const KernelArgs& args) {
  const ir::Node& node = args.node;
  ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(args, 0, "input"));
  RETURN_IF_ERROR(CheckFloatType(node, *x, "input"));
  RETURN_IF_ERROR(CheckChannelsInput(node, *x));
  const int64_t channels = x->size(1);
  ASSIGN_OR_RETURN(std::vector<double> scale, ReadParam(args, 1, "scale", {channels}));
  ASSIGN_OR_RETURN(std::vector<double> bias, ReadParam(args, 2, "B", {channels}));
  const double epsilon = node.GetFloat("epsilon", 1e-5f);
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(x->dtype(), x->sizes()));
  if (x->dtype() == DataType::kFloat64) {
    return std::vector<Tensor>{RunGroupNorm<double>(*x, channels, scale, bias, epsilon, y)};
  }
  return std::vector<Tensor>{RunGroupNorm<float>(*x, channels, scale, bias, epsilon, y)};
}

KernelResult GroupNormalization(const KernelArgs& args) {
  const ir::Node& node = args.node;
  ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(args, 0, "X"));
  RETURN_IF_ERROR(CheckFloatType(node, *x, "X"));
  RETURN_IF_ERROR(CheckChannelsInput(node, *x));
  const int64_t channels = x->size(1);
  const int64_t groups = node.GetInt("num_groups", 0);
  if (groups <= 0 || channels % groups != 0) {
    return NodeInvalid(node, "num_groups " + std::to_string(groups) +
                                 " must be positive and divide the " + std::to_string(channels) +
                                 " channels");
  }
  // Opset 18 has one scale and bias per group, opset 21 one per channel.
  ASSIGN_OR_RETURN(std::vector<double> scale, ReadParam(args, 1, "scale", {channels, groups}));
  ASSIGN_OR_RETURN(std::vector<double> bias, ReadParam(args, 2, "bias", {channels, groups}));
  if (scale.size() != bias.size()) {
    return NodeInvalid(node, "scale has " + std::to_string(scale.size()) + " values but bias has " +
                                 std::to_string(bias.size()));
  }
  const double epsilon = node.GetFloat("epsilon", 1e-5f);
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(x->dtype(), x->sizes()));
  if (x->dtype() == DataType::kFloat64) {
    return std::vector<Tensor>{RunGroupNorm<double>(*x, groups, scale, bias, epsilon, y)};
  }
  return std::vector<Tensor>{RunGroupNorm<float>(*x, groups, scale, bias, epsilon, y)};
}

KernelResult Lrn(const KernelArgs& args) {
  const ir::Node& node = args.node;
  ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(args, 0, "X"));
  RETURN_IF_ERROR(CheckFloatType(node, *x, "X"));
  RETURN_IF_ERROR(CheckChannelsInput(node, *x));
  const int64_t size = node.GetInt("size", 0);
  if (size <= 0) return NodeInvalid(node, "attribute size must be given and positive");
  const double alpha = node.GetFloat("alpha", 1e-4f);
  const double beta = node.GetFloat("beta", 0.75f);
  const double bias = node.GetFloat("bias", 1.0f);
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(x->dtype(), x->sizes()));
  if (x->dtype() == DataType::kFloat64) {
    return std::vector<Tensor>{RunLrn<double>(*x, size, alpha, beta, bias, y)};
  }
  return std::vector<Tensor>{RunLrn<float>(*x, size, alpha, beta, bias, y)};
}

}  // namespace qtune::runtime::nn
