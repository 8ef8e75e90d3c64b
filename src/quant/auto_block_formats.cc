#include "quant/auto_block_formats.h"

#include <algorithm>

#include "quant/placement_rules.h"

namespace qtune::quant {
namespace {

bool IsLinear(const ir::Node& node) {
  const std::string& op = node.op_type();
  return op == "Conv" || op == "ConvTranspose" || op == "Gemm" || op == "MatMul";
}

bool FeedsMembers(const QuantSite& site, const std::set<std::string>& members) {
  return std::any_of(site.consumers.begin(), site.consumers.end(),
                     [&](const auto& c) { return members.count(c.first) > 0; });
}

// The enabled weight quantizer read by input 1 of `node`, or null (const as `plan` is).
template <typename Plan>
auto WeightSiteOf(Plan& plan, const std::string& node) -> decltype(&plan.sites.front()) {
  for (auto& site : plan.sites) {
    if (!site.enabled || site.kind != QuantSite::Kind::kWeight) continue;
    for (const auto& [consumer, input] : site.consumers) {
      if (consumer == node && input == 1) return &site;
    }
  }
  return nullptr;
}

// The weight config of `format` on `node` (int4: the largest block of 128, 64, 32 that
// fits), or why none fits. A site already in `format` keeps its configuration.
std::string FitConfig(const ir::Node& node, const QuantSite& site, QuantFormat format,
                      QuantizerConfig& config) {
  config = site.config;
  if (site.config.format == format) return FitWeightBlocks(node, config);
  config.format = format;
  config.bits = FormatInfoOf(format).bits;
  config.symmetric = true;
  config.algorithm = WeightAlgorithm::kRtn;
  config.scale_type = ScaleType::kFloat32;
  const std::vector<int> blocks =
      format == QuantFormat::kInt4 ? std::vector<int>{128, 64, 32} : std::vector<int>{0};
  std::string reason;
  for (int block : blocks) {
    QuantizerConfig trial = config;
    trial.block_size = block;
    reason = FitWeightBlocks(node, trial);
    if (reason.empty()) {
      config = trial;
      return "";
    }
  }
  return reason;
}

// The output-channel axis of a linear node's constant weight of rank `rank`.
int OutputAxis(const ir::Node& node, int rank) {
  if (node.op_type() == "Gemm") return node.GetInt("transB", 0) != 0 ? 0 : 1;
  if (node.op_type() == "MatMul") return std::max(0, rank - 1);
  return node.op_type() == "ConvTranspose" ? 1 : 0;
}

}  // namespace

std::optional<QuantFormat> BlockFormatOf(AutoFormat format) {
  switch (format) {
    case AutoFormat::kInt4:
      return QuantFormat::kInt4;
    case AutoFormat::kNvfp4:
      return QuantFormat::kNvfp4;
    case AutoFormat::kMxfp8:
      return QuantFormat::kMxfp8;
    default:
      return std::nullopt;
  }
}

std::string FitGroupBlocks(const ir::Graph& graph, const QuantPlan& plan,
                           const std::vector<std::string>& members, QuantFormat format,
                           double& bits) {
  double total_bits = 0, total_weights = 0;
  for (const std::string& name : members) {
    const ir::Node* node = graph.FindNode(name);
    if (node == nullptr || !IsLinear(*node)) continue;
    const std::string where = name + " (" + node->op_type() + ")";
    const QuantSite* site = WeightSiteOf(plan, name);
    if (site == nullptr || node->num_inputs() < 2 || !node->input(1)->is_initializer()) {
      return where + ": no quantized constant weight";
    }
    QuantizerConfig config;
    const std::string reason = FitConfig(*node, *site, format, config);
    if (!reason.empty()) return where + ": " + reason;
    const auto& sizes = node->input(1)->initializer().sizes();
    const double weights = static_cast<double>(node->input(1)->initializer().num_elements());
    total_bits += weights * EffectiveBits(config, sizes[*config.axis]);
    total_weights += weights;
  }
  if (total_weights == 0) return "no quantized constant weight";
  bits = total_bits / total_weights;
  return "";
}

bool IsWeightOnlyGroup(const QuantPlan& plan, const std::set<std::string>& members) {
  return std::none_of(plan.sites.begin(), plan.sites.end(), [&](const QuantSite& site) {
    return site.enabled && site.kind == QuantSite::Kind::kActivation && FeedsMembers(site, members);
  });
}

void ApplyBlockFormat(const ir::Graph& graph, QuantPlan& plan, const std::set<std::string>& members,
                      QuantFormat format) {
  for (QuantSite& site : plan.sites) {
    if (!site.enabled || site.kind != QuantSite::Kind::kActivation) continue;
    if (!FeedsMembers(site, members)) continue;
    site.enabled = false;
    site.disabled_reason =
        std::string("auto: ") + QuantFormatName(format) + " weight-only layer (float input)";
  }
  for (const std::string& name : members) {
    const ir::Node* node = graph.FindNode(name);
    QuantSite* site = WeightSiteOf(plan, name);
    if (node == nullptr || site == nullptr) continue;
    QuantizerConfig config;
    if (!FitConfig(*node, *site, format, config).empty()) continue;  // FitGroupBlocks said
    site->config = config;
    site->weight_only = true;
  }
}

void ApplyWeightOnlyInt8(const ir::Graph& graph, QuantPlan& plan,
                         const std::set<std::string>& members) {
  for (const std::string& name : members) {
    const ir::Node* node = graph.FindNode(name);
    QuantSite* site = WeightSiteOf(plan, name);
    if (node == nullptr || site == nullptr || !node->input(1)->is_initializer()) continue;
    QuantizerConfig& config = site->config;
    config.format = QuantFormat::kInt8;
    config.bits = 8;
    config.symmetric = true;
    config.block_size = 0;
    config.algorithm = WeightAlgorithm::kRtn;
    config.scale_type = ScaleType::kFloat32;
    config.axis = OutputAxis(*node, static_cast<int>(node->input(1)->initializer().rank()));
    site->weight_only = true;
  }
}

}  // namespace qtune::quant
