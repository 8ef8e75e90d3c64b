#include "quant/lowbit_checks.h"

#include "quant/placement_rules.h"

namespace qtune::quant {

namespace {

std::string Where(const std::string& quantizer, const ResolvedQuantizer& resolved) {
  return "quantizer '" + quantizer + "'" +
         (resolved.origin.empty() ? "" : " (recipe rule " + resolved.origin + ")");
}

// The activation input of a compute op: no weight-only format, no block scales (placement
// refuses them too, but only after the calibration data is opened).
Status CheckActivationQuantizer(const ir::Node& node, const Recipe& recipe) {
  const std::string& op = node.op_type();
  if (op != "Conv" && op != "ConvTranspose" && op != "MatMul" && op != "Gemm") {
    return Status::Ok();
  }
  const std::string name = node.name() + "/input_quantizer";
  auto input = ResolveQuantizer(recipe, name, op, std::nullopt);
  if (!input) return Status::Ok();
  const FormatInfo& info = FormatInfoOf(input->config.format);
  if (info.weight_only) {
    return InvalidArgumentError(Where(name, *input) + " is an activation quantizer, but " +
                                info.name +
                                " is a weight-only format; remove activation quantizers "
                                "(enable: false) or give them int8");
  }
  if (input->config.block_size > 0) {
    return InvalidArgumentError(Where(name, *input) + ": block_size applies to weights only");
  }
  return Status::Ok();
}

}  // namespace

Status CheckLowBitRecipe(const ir::Graph& graph, const Recipe& recipe, Target target) {
  for (const ir::Node* node : graph.nodes()) {
    RETURN_IF_ERROR(CheckActivationQuantizer(*node, recipe));
    const std::string& op = node->op_type();
    const bool conv = op == "Conv";  // W [O, I / group, k...]: blocks along axis 1
    if ((op != "MatMul" && op != "Gemm" && !conv) || node->num_inputs() < 2) continue;
    const ir::Value* w = node->input(1);
    if (w == nullptr || !w->is_initializer() ||
        (conv ? w->initializer().rank() < 3 : w->initializer().rank() != 2)) {
      continue;
    }
    const std::string name = node->name() + "/weight_quantizer";
    auto weight = ResolveQuantizer(recipe, name, op, std::nullopt);
    if (!weight) continue;
    const FormatInfo& info = FormatInfoOf(weight->config.format);
    const std::string where = Where(name, *weight);
    // One rule's format and another's block size (a rule checks its own pair on loading).
    if (info.fixed_block_size > 0 && weight->config.block_size > 0 &&
        weight->config.block_size != info.fixed_block_size) {
      return InvalidArgumentError(
          where + " is " + info.name + ", whose blocks have exactly " +
          std::to_string(info.fixed_block_size) + " elements, but a rule " +
          "gives it block_size " + std::to_string(weight->config.block_size) + "; drop that " +
          "block_size or use block_size " + std::to_string(info.fixed_block_size));
    }
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
    if (conv && weight->config.algorithm != WeightAlgorithm::kRtn &&
        weight->config.block_size <= 0 && !info.blockwise) {
      return InvalidArgumentError(
          where + " asks for algorithm " + WeightAlgorithmName(weight->config.algorithm) +
          " on a Conv weight per output channel; clip and awq take Conv weights in blocks "
          "only: add a block_size (16, 32, 64...) or use algorithm: rtn");
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
