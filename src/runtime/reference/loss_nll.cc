// NegativeLogLikelihoodLoss (opsets 12, 13) and SoftmaxCrossEntropyLoss (opsets 12, 13),
// after onnx/reference/ops/op_negative_log_likelihood_loss.py and
// op_softmax_cross_entropy_loss.py.
//
// With x the input (NLL) or the log-softmax of the scores over C (SCE), each target
// position i = (n, d1..dk) with class t = target[i] has weight w_i = weight[t] (1 without
// the weight input), or 0 when t == ignore_index, and loss_i = -w_i * x[n, t, d1..dk].
// reduction none returns loss; sum returns sum(loss_i); mean (the default) returns
// sum(loss_i) / sum(w_i) (NaN when every position is ignored, as in PyTorch). A class
// outside [0, C) that is not ignore_index is an error naming the node and the position.
#include <cmath>
#include <limits>
#include <string>

#include "runtime/reference/float_buffer.h"
#include "runtime/reference/loss_kernels.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

enum class Reduction { kNone, kSum, kMean };

StatusOr<Reduction> ReadReduction(const ir::Node& node) {
  const std::string reduction = node.GetString("reduction", "mean");
  if (reduction == "none") return Reduction::kNone;
  if (reduction == "sum") return Reduction::kSum;
  if (reduction == "mean") return Reduction::kMean;
  return NodeError(node, "reduction '" + reduction + "' is not one of none, sum, mean");
}

// [N, C, d1..dk] as N x C x inner.
struct LossShape {
  int64_t batch = 0, classes = 0, inner = 1;
};

StatusOr<LossShape> CheckShapes(const ir::Node& node, const Tensor& input, const Tensor& target) {
  bool ok =
      input.rank() >= 2 && target.rank() + 1 == input.rank() && target.size(0) == input.size(0);
  for (size_t d = 2; ok && d < input.rank(); ++d) ok = target.size(d - 1) == input.size(d);
  if (!ok) {
    return NodeError(node, "input " + input.DebugString() + " and target " + target.DebugString() +
                               " must be [N, C, d1..dk] and [N, d1..dk]");
  }
  LossShape s{input.size(0), input.size(1), 1};
  for (size_t d = 2; d < input.rank(); ++d) s.inner *= input.size(d);
  return s;
}

// Log-softmax over C at every (n, d) of scores laid out N x C x inner.
std::vector<double> LogSoftmaxOverClasses(const std::vector<double>& scores, const LossShape& s) {
  std::vector<double> out(scores.size());
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t i = 0; i < s.inner; ++i) {
      auto at = [&](int64_t c) { return (n * s.classes + c) * s.inner + i; };
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < s.classes; ++c) max = std::max(max, scores[at(c)]);
      double sum = 0;
      for (int64_t c = 0; c < s.classes; ++c) sum += std::exp(scores[at(c)] - max);
      const double log_sum = std::log(sum) + max;
      for (int64_t c = 0; c < s.classes; ++c) out[at(c)] = scores[at(c)] - log_sum;
    }
  }
  return out;
}

// The loss output of both ops from log-probabilities laid out N x C x inner.
StatusOr<Tensor> Loss(const KernelArgs& args, const std::vector<double>& log_prob,
                      const LossShape& s) {
  const ir::Node& node = args.node;
  const Tensor& input = args.inputs[0];
  const Tensor& target_tensor = args.inputs[1];
  ASSIGN_OR_RETURN(const Reduction reduction, ReadReduction(node));
  ASSIGN_OR_RETURN(const std::vector<int64_t> target, ReadIndices(node, target_tensor, "target"));
  std::vector<double> weight;
  if (HasInput(args, 2)) {
    const Tensor& w = args.inputs[2];
    RETURN_IF_ERROR(CheckComputeFloatType(node, w, "weight"));
    if (w.rank() != 1 || w.size(0) != s.classes) {
      return NodeError(
          node, "weight " + w.DebugString() + " must be [C] = [" + std::to_string(s.classes) + "]");
    }
    weight = ToDoubles(w);
  }
  const bool has_ignore = node.HasAttribute("ignore_index");
  const int64_t ignore_index = node.GetInt("ignore_index", 0);
  std::vector<double> loss(target.size(), 0.0);
  double loss_sum = 0, weight_sum = 0;
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t i = 0; i < s.inner; ++i) {
      const int64_t pos = n * s.inner + i;
      const int64_t t = target[pos];
      if (has_ignore && t == ignore_index) continue;
      if (t < 0 || t >= s.classes) {
        return NodeError(node, "target[" + std::to_string(pos) + "] = " + std::to_string(t) +
                                   " is not a class in [0, " + std::to_string(s.classes) +
                                   ") nor ignore_index");
      }
      const double w = weight.empty() ? 1.0 : weight[t];
      loss[pos] = -w * log_prob[(n * s.classes + t) * s.inner + i];
      loss_sum += loss[pos];
      weight_sum += w;
    }
  }
  switch (reduction) {
    case Reduction::kNone:
      return FromDoubles(input.dtype(), target_tensor.sizes(), loss);
    case Reduction::kSum:
      return FromDoubles(input.dtype(), {}, std::vector<double>{loss_sum});
    case Reduction::kMean:
      break;
  }
  return FromDoubles(input.dtype(), {}, std::vector<double>{loss_sum / weight_sum});
}

StatusOr<std::vector<Tensor>> NllKernel(const KernelArgs& args) {
  RETURN_IF_ERROR(CheckInputCount(args, 2, 3));
  RETURN_IF_ERROR(CheckComputeFloatType(args.node, args.inputs[0], "input"));
  ASSIGN_OR_RETURN(const LossShape s, CheckShapes(args.node, args.inputs[0], args.inputs[1]));
  ASSIGN_OR_RETURN(Tensor loss, Loss(args, ToDoubles(args.inputs[0]), s));
  return std::vector<Tensor>{std::move(loss)};
}

StatusOr<std::vector<Tensor>> SceKernel(const KernelArgs& args) {
  RETURN_IF_ERROR(CheckInputCount(args, 2, 3));
  const Tensor& scores = args.inputs[0];
  RETURN_IF_ERROR(CheckComputeFloatType(args.node, scores, "scores"));
  ASSIGN_OR_RETURN(const LossShape s, CheckShapes(args.node, scores, args.inputs[1]));
  const std::vector<double> log_prob = LogSoftmaxOverClasses(ToDoubles(scores), s);
  std::vector<Tensor> outputs;
  ASSIGN_OR_RETURN(Tensor loss, Loss(args, log_prob, s));
  outputs.push_back(std::move(loss));
  if (args.node.output(1) != nullptr) {
    ASSIGN_OR_RETURN(Tensor lp, FromDoubles(scores.dtype(), scores.sizes(), log_prob));
    outputs.push_back(std::move(lp));
  } else if (args.node.num_outputs() > 1) {
    outputs.emplace_back();  // log_prob not requested
  }
  return outputs;
}

}  // namespace

StatusOr<std::vector<Tensor>> NegativeLogLikelihoodLoss(const KernelArgs& args) {
  return NllKernel(args);
}
StatusOr<std::vector<Tensor>> SoftmaxCrossEntropyLoss(const KernelArgs& args) {
  return SceKernel(args);
}

}  // namespace qtune::runtime::reference

namespace qtune::runtime {

void RegisterLossKernels(ReferenceRegistry& registry) {
  registry.Register("NegativeLogLikelihoodLoss", &reference::NegativeLogLikelihoodLoss);
  registry.Register("SoftmaxCrossEntropyLoss", &reference::SoftmaxCrossEntropyLoss);
}

}  // namespace qtune::runtime
