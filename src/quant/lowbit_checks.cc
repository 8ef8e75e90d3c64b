#include "quant/lowbit_checks.h"

#include "quant/placement_rules.h"

namespace qtune::quant {

Status CheckLowBitRecipe(const ir::Graph& graph, const Recipe& recipe, Target target) {
  for (const ir::Node* node : graph.nodes()) {
    const std::string& op = node->op_type();
    if ((op != "MatMul" && op != "Gemm") || node->num_inputs() < 2) continue;
    const ir::Value* w = node->input(1);
    if (w == nullptr || !w->is_initializer() || w->initializer().rank() != 2) continue;
    const std::string name = node->name() + "/weight_quantizer";
    auto weight = ResolveQuantizer(recipe, name, op, std::nullopt);
    if (!weight) continue;
    const FormatInfo& info = FormatInfoOf(weight->config.format);
    const std::string where =
        "quantizer '" + name + "'" +
        (weight->origin.empty() ? "" : " (recipe rule " + weight->origin + ")");
    if (info.weight_only &&
        ResolveQuantizer(recipe, node->name() + "/input_quantizer", op, std::nullopt)) {
      return InvalidArgumentError(
          where + " is " + info.name +
          ", a weight-only format, but the layer's activation input is quantized too; add a "
          "rule {name: \"*input_quantizer\", enable: false} (as the int4 preset does) or use "
          "int8");
    }
    if (target == Target::kTrt && info.zero_point_allowed && !weight->config.symmetric &&
        (weight->config.block_size > 0 || info.blockwise)) {
      return InvalidArgumentError(where + " asks for " + info.name +
                                  " with zero points (symmetric: false); --target trt takes "
                                  "symmetric block weights only: drop symmetric: false or use "
                                  "--target cpu or ort");
    }
    if (weight->block_size_forced) {
      QuantizerConfig config = weight->config;
      const std::string reason = FitWeightBlocks(*node, config);
      if (!reason.empty()) {
        return InvalidArgumentError(where + ": " + reason + " of weight '" + w->name() +
                                    "'; use a block size that divides it");
      }
    }
  }
  return Status::Ok();
}

}  // namespace qtune::quant
