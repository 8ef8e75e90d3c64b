#include "passes/fold_conv_affine.h"

#include <optional>

#include "passes/conv_channels.h"
#include "passes/pass_util.h"

namespace qtune::passes {
namespace {

// The per-output-channel values of `constant` broadcast against a conv output of rank
// `rank` with `channels` channels, or nullopt if it varies along another axis.
std::optional<std::vector<double>> PerChannel(const ir::Value* constant, size_t rank,
                                              int64_t channels) {
  if (!IsConstant(constant) || constant->initializer().dtype() != DataType::kFloat32) {
    return std::nullopt;
  }
  const Tensor& t = constant->initializer();
  std::vector<double> values(channels);
  if (t.num_elements() == 1) {
    values.assign(channels, t.data<float>()[0]);
    return values;
  }
  // Right-aligned broadcasting: output axis 1 (channels) is axis rank(t) + 1 - rank of t.
  if (t.rank() > rank || rank < 2 || t.rank() + 1 < rank) return std::nullopt;
  const size_t channel_axis = t.rank() + 1 - rank;
  for (size_t i = 0; i < t.rank(); ++i) {
    if (i != channel_axis && t.size(i) != 1) return std::nullopt;
  }
  if (t.size(channel_axis) != channels) return std::nullopt;
  for (int64_t c = 0; c < channels; ++c) values[c] = t.data<float>()[c];
  return values;
}

StatusOr<bool> TryFold(ir::Graph& graph, ir::Node* op) {
  if (!IsDefaultDomain(*op) || (op->op_type() != "Mul" && op->op_type() != "Add") ||
      op->num_inputs() != 2) {
    return false;
  }
  for (size_t side = 0; side < 2; ++side) {
    ir::Value* x = op->input(side);
    ir::Value* constant = op->input(1 - side);
    ir::Node* conv = x == nullptr ? nullptr : x->producer();
    if (conv == nullptr || !IsDefaultDomain(*conv) ||
        (conv->op_type() != "Conv" && conv->op_type() != "ConvTranspose")) {
      continue;
    }
    if (x->uses().size() != 1 || x->is_graph_output() || x == constant) continue;
    ir::Value* w = conv->input(1);
    ir::Value* b = conv->input(2);
    if (!IsConstant(w) || w->initializer().dtype() != DataType::kFloat32) continue;
    const int64_t channels = ConvOutputChannels(*conv, w->initializer());
    if (channels == 0) continue;
    if (b != nullptr && (!IsConstant(b) || b->initializer().dtype() != DataType::kFloat32 ||
                         b->initializer().num_elements() != channels)) {
      continue;
    }
    auto values = PerChannel(constant, w->initializer().rank(), channels);
    if (!values) continue;

    const bool mul = op->op_type() == "Mul";
    if (mul) {
      RETURN_IF_ERROR(SetConvConstant(graph, conv, 1,
                                      ScaleConvWeights(*conv, w->initializer(), *values),
                                      w->name() + "_scaled"));
    }
    if (b != nullptr || !mul) {
      std::vector<float> bias(channels, 0.0f);
      for (int64_t c = 0; c < channels; ++c) {
        double old = b == nullptr ? 0.0 : b->initializer().data<float>()[c];
        bias[c] = static_cast<float>(mul ? old * (*values)[c] : old + (*values)[c]);
      }
      std::string base = b != nullptr ? b->name() + "_folded" : w->name() + "_bias";
      RETURN_IF_ERROR(
          SetConvConstant(graph, conv, 2, Tensor::FromVector<float>({channels}, bias), base));
    }
    RETURN_IF_ERROR(ReplaceNodeOutputKeepingName(graph, op, op->output(0), x));
    if (!IsLive(constant) && !constant->is_graph_input()) {
      RETURN_IF_ERROR(graph.RemoveValue(constant));
    }
    return true;
  }
  return false;
}

// Mul(x, c) read only by group = 1 Convs as their input 0, c per input channel: each
// Conv's W'[o, i, ...] = W[o, i, ...] * c[i] (zero padding stays zero), and the Mul goes.
// AWQ's 1/s before a Conv (quant/weight_only_export.h) is such a Mul.
StatusOr<bool> TryFoldInputScale(ir::Graph& graph, ir::Node* op) {
  if (!IsDefaultDomain(*op) || op->op_type() != "Mul" || op->num_inputs() != 2) return false;
  ir::Value* out = op->output(0);
  if (out == nullptr || out->is_graph_output() || out->uses().empty()) return false;
  for (size_t side = 0; side < 2; ++side) {
    ir::Value* x = op->input(side);
    ir::Value* constant = op->input(1 - side);
    if (x == nullptr || x == constant || IsConstant(x)) continue;
    std::optional<std::vector<double>> values;
    bool ok = true;
    for (const ir::Use& use : out->uses()) {
      const ir::Node* conv = use.node;
      const ir::Value* w = conv->input(1);
      if (!IsDefaultDomain(*conv) || conv->op_type() != "Conv" || use.input_index != 0 ||
          conv->GetInt("group", 1) != 1 || !IsConstant(w) ||
          w->initializer().dtype() != DataType::kFloat32 || w->initializer().rank() < 3) {
        ok = false;
        break;
      }
      // The input channels are W's axis 1; PerChannel reads c like a conv output's channels.
      auto v = PerChannel(constant, w->initializer().rank(), w->initializer().size(1));
      if (!v || (values && *v != *values)) {
        ok = false;
        break;
      }
      values = std::move(v);
    }
    if (!ok || !values) continue;
    std::vector<ir::Node*> convs;
    for (const ir::Use& use : out->uses()) convs.push_back(use.node);
    for (ir::Node* conv : convs) {
      const Tensor& w = conv->input(1)->initializer();
      Tensor scaled = *Tensor::Allocate(DataType::kFloat32, w.sizes());
      const int64_t in = w.size(1), inner = w.num_elements() / (w.size(0) * in);
      for (int64_t i = 0; i < w.num_elements(); ++i) {
        const double c = (*values)[static_cast<size_t>((i / inner) % in)];
        scaled.data<float>()[i] = static_cast<float>(w.data<float>()[i] * c);
      }
      RETURN_IF_ERROR(SetConvConstant(graph, conv, 1, std::move(scaled),
                                      conv->input(1)->name() + "_in_scaled"));
      graph.SetNodeInput(conv, 0, x);
    }
    RETURN_IF_ERROR(graph.RemoveNode(op));
    if (!IsLive(constant) && !constant->is_graph_input() && constant->uses().empty()) {
      RETURN_IF_ERROR(graph.RemoveValue(constant));
    }
    return true;
  }
  return false;
}

}  // namespace

StatusOr<bool> FoldConvAffine(ir::Graph& graph, const PassOptions& options) {
  bool changed = false;
  // Each fold removes only the node it looks at, so later entries stay valid.
  for (ir::Node* node : graph.nodes()) {
    ASSIGN_OR_RETURN(bool folded, TryFold(graph, node));
    if (!folded) {
      ASSIGN_OR_RETURN(folded, TryFoldInputScale(graph, node));
    }
    changed |= folded;
  }
  return changed;
}

}  // namespace qtune::passes
