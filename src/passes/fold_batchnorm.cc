#include "passes/fold_batchnorm.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "passes/conv_channels.h"
#include "passes/pass_util.h"

namespace qtune::passes {
namespace {

bool IsFloatConstant(const ir::Value* value) {
  return IsConstant(value) && value->initializer().dtype() == DataType::kFloat32;
}

bool IsChannelVector(const ir::Value* value, int64_t channels) {
  return IsFloatConstant(value) && value->initializer().rank() == 1 &&
         value->initializer().size(0) == channels;
}

// The conv feeding `bn` when the pattern applies, else nullptr.
ir::Node* FoldableConv(const ir::Node& bn, int64_t opset) {
  if (bn.op_type() != "BatchNormalization" || !IsDefaultDomain(bn)) return nullptr;
  if (bn.num_inputs() != 5 || bn.output(0) == nullptr) return nullptr;
  for (size_t i = 1; i < bn.num_outputs(); ++i) {
    if (IsLive(bn.output(i))) return nullptr;
  }
  if (bn.GetInt("training_mode", 0) != 0 || bn.GetInt("spatial", 1) == 0) return nullptr;
  if (opset != 0 && opset < 7 && bn.GetInt("is_test", 0) == 0) return nullptr;
  const ir::Value* x = bn.input(0);
  ir::Node* conv = x == nullptr ? nullptr : x->producer();
  if (conv == nullptr || !IsDefaultDomain(*conv)) return nullptr;
  if (conv->op_type() != "Conv" && conv->op_type() != "ConvTranspose") return nullptr;
  if (conv->output(0) != x || x->uses().size() != 1 || x->is_graph_output()) return nullptr;
  return conv;
}

// Per-output-channel multiplier and new bias, computed in double.
struct Folded {
  std::vector<double> multiplier;
  std::vector<float> bias;
};

Folded ComputeFolded(const ir::Node& bn, const ir::Value* conv_bias, int64_t channels) {
  auto vec = [&](size_t i) { return bn.input(i)->initializer().span<float>(); };
  auto scale = vec(1), bias = vec(2), mean = vec(3), var = vec(4);
  const double epsilon = bn.GetFloat("epsilon", 1e-5f);
  Folded f{std::vector<double>(channels), std::vector<float>(channels)};
  for (int64_t o = 0; o < channels; ++o) {
    double b = conv_bias == nullptr ? 0.0 : conv_bias->initializer().data<float>()[o];
    f.multiplier[o] = scale[o] / std::sqrt(static_cast<double>(var[o]) + epsilon);
    f.bias[o] = static_cast<float>((b - mean[o]) * f.multiplier[o] + bias[o]);
  }
  return f;
}

StatusOr<bool> TryFold(ir::Graph& graph, ir::Node* bn, ir::Node* conv) {
  ir::Value* w = conv->input(1);
  ir::Value* conv_bias = conv->input(2);
  if (!IsFloatConstant(w) || w->initializer().rank() < 3) return false;
  const Tensor& weights = w->initializer();
  const int64_t channels = ConvOutputChannels(*conv, weights);
  if (channels == 0) return false;
  if (conv_bias != nullptr && !IsChannelVector(conv_bias, channels)) return false;
  for (size_t i = 1; i <= 4; ++i) {
    if (!IsChannelVector(bn->input(i), channels)) return false;
  }
  if (weights.num_elements() == 0) return false;

  Folded folded = ComputeFolded(*bn, conv_bias, channels);
  Tensor new_weights = ScaleConvWeights(*conv, weights, folded.multiplier);
  Tensor new_bias = Tensor::FromVector<float>({channels}, folded.bias);
  RETURN_IF_ERROR(SetConvConstant(graph, conv, 1, std::move(new_weights), w->name() + "_bn"));
  std::string bias_base = conv_bias != nullptr ? conv_bias->name() + "_bn" : w->name() + "_bias";
  RETURN_IF_ERROR(SetConvConstant(graph, conv, 2, std::move(new_bias), bias_base));

  std::vector<ir::Value*> bn_params(bn->inputs().begin() + 1, bn->inputs().end());
  std::sort(bn_params.begin(), bn_params.end());
  bn_params.erase(std::unique(bn_params.begin(), bn_params.end()), bn_params.end());
  ir::Value* x = conv->output(0);
  ir::Value* y = bn->output(0);
  if (y->type().dtype != DataType::kUndefined) x->set_type(y->type());
  RETURN_IF_ERROR(ReplaceNodeOutputKeepingName(graph, bn, y, x));
  for (ir::Value* param : bn_params) {
    if (!IsLive(param) && !param->is_graph_input()) RETURN_IF_ERROR(graph.RemoveValue(param));
  }
  return true;
}

}  // namespace

StatusOr<bool> FoldBatchNorm(ir::Graph& graph, const PassOptions& options) {
  bool changed = false;
  const int64_t opset = graph.onnx_opset();
  for (ir::Node* node : graph.nodes()) {
    ir::Node* conv = FoldableConv(*node, opset);
    if (conv == nullptr) continue;
    ASSIGN_OR_RETURN(bool folded, TryFold(graph, node, conv));
    changed |= folded;
  }
  return changed;
}

}  // namespace qtune::passes
