#include "passes/conv_channels.h"

namespace qtune::passes {

int64_t ConvOutputChannels(const ir::Node& conv, const Tensor& weights) {
  const int64_t group = conv.GetInt("group", 1);
  if (weights.rank() < 3 || group <= 0 || weights.size(0) % group != 0) return 0;
  return conv.op_type() == "ConvTranspose" ? weights.size(1) * group : weights.size(0);
}

// Conv: channel = row. ConvTranspose: output channel = group_of(row) * M/group + column.
Tensor ScaleConvWeights(const ir::Node& conv, const Tensor& weights,
                        const std::vector<double>& multiplier) {
  const bool transpose = conv.op_type() == "ConvTranspose";
  const int64_t group = conv.GetInt("group", 1);
  Tensor out = weights.Clone();
  float* data = out.data<float>();
  const int64_t rows = weights.size(0), cols = weights.size(1);
  const int64_t inner = weights.num_elements() / (rows * cols);
  const int64_t rows_per_group = rows / group;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      int64_t channel = transpose ? (r / rows_per_group) * cols + c : r;
      float* block = data + (r * cols + c) * inner;
      for (int64_t k = 0; k < inner; ++k) {
        block[k] = static_cast<float>(block[k] * multiplier[channel]);
      }
    }
  }
  return out;
}

Status SetConvConstant(ir::Graph& graph, ir::Node* conv, size_t index, Tensor tensor,
                       const std::string& base) {
  ir::Value* old = conv->input(index);
  if (old != nullptr && old->uses().size() == 1 && !old->is_graph_output()) {
    return graph.SetInitializer(old, std::move(tensor));
  }
  ASSIGN_OR_RETURN(ir::Value * fresh,
                   graph.AddInitializer(graph.UniqueValueName(base), std::move(tensor)));
  graph.SetNodeInput(conv, index, fresh);
  return Status::Ok();
}

}  // namespace qtune::passes
