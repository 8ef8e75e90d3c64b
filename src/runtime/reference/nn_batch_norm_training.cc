// BatchNormalization with training_mode=1 (opsets 14+): Y normalized with the batch's own
// per-channel mean and population variance (over N and the spatial dims), and the running
// statistics updated as input * momentum + batch * (1 - momentum) in outputs 1 and 2
// (running_mean, running_var), as ONNX's reference defines them. Statistics in double.
// Earlier opsets' training outputs (mean, var, saved_mean, saved_var) are not supported.
#include <cmath>
#include <vector>

#include "runtime/reference/nn_kernels.h"
#include "runtime/reference/nn_util.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::nn {

KernelResult BatchNormalizationTraining(const KernelArgs& args) {
  const ir::Node& node = args.node;
  if (args.opset < 14) {
    return NodeUnimplemented(node,
                             "training_mode before opset 14 (outputs mean, var, "
                             "saved_mean, saved_var) is not supported");
  }
  ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(args, 0, "X"));
  RETURN_IF_ERROR(CheckFloatType(node, *x, "X"));
  if (x->rank() < 2) {
    return NodeInvalid(node, "input X is " + x->DebugString() + "; expected rank >= 2 (N, C, ...)");
  }
  const int64_t channels = x->size(1);
  const int64_t inner = Product(x->sizes(), 2, x->rank());
  std::vector<std::vector<double>> params;
  const char* names[] = {"scale", "B", "input_mean", "input_var"};
  for (size_t i = 0; i < 4; ++i) {
    ASSIGN_OR_RETURN(const Tensor* t, RequiredInput(args, i + 1, names[i]));
    RETURN_IF_ERROR(CheckNumElements(node, *t, names[i], channels));
    ASSIGN_OR_RETURN(std::vector<double> values, ReadFloats(node, *t, names[i]));
    params.push_back(std::move(values));
  }
  const double epsilon = node.GetFloat("epsilon", 1e-5f);
  const double momentum = node.GetFloat("momentum", 0.9f);
  const int64_t count = x->size(0) * inner;
  std::vector<double> mean(channels, 0.0), var(channels, 0.0);
  for (int64_t i = 0; i < x->num_elements(); ++i) {
    mean[(i / inner) % channels] += reference::LoadAsDouble(*x, i);
  }
  for (double& m : mean) m = count > 0 ? m / static_cast<double>(count) : 0.0;
  for (int64_t i = 0; i < x->num_elements(); ++i) {
    const double d = reference::LoadAsDouble(*x, i) - mean[(i / inner) % channels];
    var[(i / inner) % channels] += d * d;
  }
  for (double& v : var) v = count > 0 ? v / static_cast<double>(count) : 0.0;

  std::vector<Tensor> outputs(std::max<size_t>(1, node.num_outputs()));
  ASSIGN_OR_RETURN(outputs[0], Tensor::Allocate(x->dtype(), x->sizes()));
  for (int64_t i = 0; i < x->num_elements(); ++i) {
    const int64_t c = (i / inner) % channels;
    const double normalized =
        (reference::LoadAsDouble(*x, i) - mean[c]) / std::sqrt(var[c] + epsilon);
    reference::StoreFromDouble(outputs[0], i, normalized * params[0][c] + params[1][c]);
  }
  const std::vector<double>* batch_stats[] = {&mean, &var};
  for (size_t k = 0; k < 2; ++k) {
    if (!OutputRequested(node, k + 1)) continue;
    const Tensor& running = args.inputs[k + 3];
    ASSIGN_OR_RETURN(outputs[k + 1], Tensor::Allocate(running.dtype(), {channels}));
    for (int64_t c = 0; c < channels; ++c) {
      reference::StoreFromDouble(
          outputs[k + 1], c, params[k + 2][c] * momentum + (*batch_stats[k])[c] * (1 - momentum));
    }
  }
  return outputs;
}

}  // namespace qtune::runtime::nn
