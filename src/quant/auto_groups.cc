#include "quant/auto_groups.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <numeric>
#include <set>

#include "quant/accuracy_fallback.h"
#include "quant/auto_block_formats.h"
#include "quant/placement_rules.h"
#include "quant/residual.h"
#include "runtime/shape/infer_shapes.h"

namespace qtune::quant {
namespace {

bool IsLinear(const ir::Node& node) {
  const std::string& op = node.op_type();
  return op == "Conv" || op == "ConvTranspose" || op == "Gemm" || op == "MatMul";
}

// Union-find over node indices.
class Unions {
 public:
  explicit Unions(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  size_t Find(size_t i) {
    while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
    return i;
  }
  void Union(size_t a, size_t b) { parent_[Find(a)] = Find(b); }

 private:
  std::vector<size_t> parent_;
};

// Input channels of a conv (groups x per-group channels), or -1.
int64_t ConvInputChannels(const ir::Node& node) {
  if (node.num_inputs() < 2 || node.input(1) == nullptr || !node.input(1)->is_initializer()) {
    return -1;
  }
  const auto& w = node.input(1)->initializer().sizes();
  if (w.size() < 3) return -1;
  if (node.op_type() == "Conv") return node.GetInt("group", 1) * w[1];
  if (node.op_type() == "ConvTranspose") return w[0];
  return -1;
}

int64_t WeightElements(const ir::Node& node) {
  if (!IsLinear(node) || node.num_inputs() < 2 || node.input(1) == nullptr) return 0;
  if (!node.input(1)->is_initializer()) return 0;
  return node.input(1)->initializer().num_elements();
}

struct AutoFormatRow {
  AutoFormat format;
  const char* name;
  double bits;  // non-block formats; block formats: per layer (FitGroupBlocks)
};

constexpr AutoFormatRow kAutoFormats[] = {
    {AutoFormat::kInt4, "int4", 4},      {AutoFormat::kNvfp4, "nvfp4", 4.5},
    {AutoFormat::kInt8, "int8", 8},      {AutoFormat::kFp8, "fp8", 8},
    {AutoFormat::kMxfp8, "mxfp8", 8.25}, {AutoFormat::kBf16, "bf16", 16},
    {AutoFormat::kFp32, "fp32", 32},
};
// Rows are indexed by the enum.
static_assert([] {
  for (int i = 0; i < static_cast<int>(std::size(kAutoFormats)); ++i) {
    if (static_cast<int>(kAutoFormats[i].format) != i) return false;
  }
  return true;
}());

}  // namespace

const std::vector<AutoFormat>& AllAutoFormats() {
  static const std::vector<AutoFormat> all = [] {
    std::vector<AutoFormat> out;
    for (const AutoFormatRow& row : kAutoFormats) out.push_back(row.format);
    return out;
  }();
  return all;
}

const char* AutoFormatName(AutoFormat format) {
  return kAutoFormats[static_cast<int>(format)].name;
}

std::optional<AutoFormat> ParseAutoFormat(const std::string& text) {
  for (const AutoFormatRow& row : kAutoFormats) {
    if (text == row.name) return row.format;
  }
  if (text == "fp8_e4m3") return AutoFormat::kFp8;
  return std::nullopt;
}

std::string AutoFormatNameList() {
  std::string out;
  for (const AutoFormatRow& row : kAutoFormats)
    out += (out.empty() ? "" : ", ") + std::string(row.name);
  return out;
}

double AutoFormatBits(AutoFormat format) { return kAutoFormats[static_cast<int>(format)].bits; }

bool CpuHasBf16() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    line += ' ';
    return line.find(" avx512_bf16 ") != std::string::npos ||
           line.find(" amx_bf16 ") != std::string::npos;
  }
  return false;
}

StatusOr<std::vector<AutoGroup>> BuildAutoGroups(const ir::Graph& graph, const QuantPlan& plan,
                                                 const Recipe& recipe, const InputSizes& sizes,
                                                 const AutoGroupOptions& options) {
  const std::vector<std::string>& nodes = plan.quantized_nodes;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i]] = i;
  Unions unions(nodes.size());
  auto join = [&](const std::string& a, const std::string& b) {
    auto ia = index.find(a), ib = index.find(b);
    if (ia != index.end() && ib != index.end()) unions.Union(ia->second, ib->second);
  };
  std::map<std::string, std::string> scale_group_member;  // group -> a consumer
  for (const QuantSite& site : plan.sites) {
    if (!site.enabled || site.consumers.empty()) continue;
    for (const auto& [node, input] : site.consumers) join(site.consumers.front().first, node);
    if (!site.scale_group.empty()) {
      auto [it, fresh] = scale_group_member.emplace(site.scale_group, site.consumers.front().first);
      if (!fresh) join(it->second, site.consumers.front().first);
    }
  }
  for (const ResidualAdd& residual : FindResidualAdds(graph)) {
    for (const ir::Node* conv : {residual.branch_linear, residual.downsample_linear}) {
      if (conv != nullptr) join(residual.add->name(), conv->name());
    }
  }

  // The recipe's default format: what a plain conv input gets.
  QuantFormat default_format = QuantFormat::kInt8;
  if (auto probe = ResolveQuantizer(recipe, "auto_probe/input_quantizer", "Conv", std::nullopt)) {
    default_format = probe->config.format;
  }
  std::optional<runtime::ValueInfoMap> infos;
  if (plan.target == Target::kTrt) {
    auto inferred = runtime::InferShapesPartially(graph, sizes, runtime::ShapeInferenceOptions{});
    if (!inferred.ok()) return inferred.status().WithContext("auto: fp8 layer rules");
    infos = std::move(inferred->infos);
  }

  std::map<size_t, size_t> group_of_root;
  std::vector<AutoGroup> groups;
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto [it, fresh] = group_of_root.emplace(unions.Find(i), groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].nodes.push_back(nodes[i]);
  }
  std::set<std::string> glob_hits;
  for (AutoGroup& group : groups) {
    const std::set<std::string> members(group.nodes.begin(), group.nodes.end());
    bool symmetric = true;
    std::optional<QuantFormat> pinned;
    for (const QuantSite& site : plan.sites) {
      if (!site.enabled) continue;
      bool mine = std::any_of(site.consumers.begin(), site.consumers.end(),
                              [&](const auto& c) { return members.count(c.first) > 0; });
      if (!mine) continue;
      symmetric = symmetric && site.config.symmetric;
      // A weight-only layer's weight format (int4 preset) is a candidate, not a pin.
      if (site.config.format != default_format && !site.weight_only) pinned = site.config.format;
    }
    std::string fp8_rule;
    for (const std::string& name : group.nodes) {
      const ir::Node* node = graph.FindNode(name);
      if (node == nullptr) return InternalError("auto: lost the quantized node '" + name + "'");
      group.weight_elements += WeightElements(*node);
      for (const std::string& glob : options.cost_excluded_globs) {
        if (fnmatch(glob.c_str(), name.c_str(), 0) == 0) {
          group.cost_excluded = true;
          glob_hits.insert(glob);
        }
      }
      if (infos && IsLinear(*node) && fp8_rule.empty()) {
        LayerDecision fp8 = DecideLayer(*node, {*infos, Target::kTrt, QuantFormat::kFp8E4M3});
        if (!fp8.skip_reason.empty()) fp8_rule = name + ": " + fp8.skip_reason;
      }
    }
    if (pinned) {
      group.pinned = true;
      group.formats = {*pinned == QuantFormat::kFp8E4M3 ? AutoFormat::kFp8 : AutoFormat::kInt8};
      group.bits = {AutoFormatBits(group.formats.front())};
      group.notes.push_back(
          fmt::format("pinned to {} by the recipe", AutoFormatName(group.formats.front())));
      continue;
    }
    const bool weight_only = IsWeightOnlyGroup(plan, members);
    std::map<AutoFormat, double> candidates;  // format -> bits per weight element
    for (AutoFormat f : options.candidate_formats) {
      double bits = AutoFormatBits(f);
      std::optional<QuantFormat> block = BlockFormatOf(f);
      const std::string misfit =
          block ? FitGroupBlocks(graph, plan, group.nodes, *block, bits) : std::string();
      if (!misfit.empty()) {
        group.notes.push_back(fmt::format("{} not a candidate: {}", AutoFormatName(f), misfit));
      } else if (f == AutoFormat::kFp8 && weight_only) {
        group.notes.push_back(
            "fp8 not a candidate: the group is weight-only (fp8 quantizes activations too)");
      } else if (f == AutoFormat::kFp8 && !symmetric) {
        group.notes.push_back(
            "fp8 not a candidate: an asymmetric quantizer (fp8 has no zero point)");
      } else if (f == AutoFormat::kFp8 && !fp8_rule.empty()) {
        group.notes.push_back("fp8 not a candidate: TensorRT fp8 rule (" + fp8_rule + ")");
      } else if (f == AutoFormat::kBf16 && !options.bf16_available) {
        continue;  // one note for the whole model (AutoReport::notes)
      } else {
        candidates[f] = bits;
      }
    }
    for (const auto& [f, bits] : candidates) {  // in AutoFormat order
      group.formats.push_back(f);
      group.bits.push_back(bits);
    }
    if (group.formats.empty()) {
      group.formats = {AutoFormat::kFp32};
      group.bits = {AutoFormatBits(AutoFormat::kFp32)};
      group.notes.push_back("no requested format fits: stays fp32");
    }
  }
  for (const std::string& glob : options.cost_excluded_globs) {
    if (!glob_hits.count(glob)) {
      return InvalidArgumentError(
          "auto: cost-excluded layer glob '" + glob +
          "' matches no quantized layer; check the node names (qtune quantize --report "
          "lists them)");
    }
  }
  return groups;
}

AppliedFormats ApplyFormats(const ir::Graph& graph, const QuantPlan& plan,
                            const std::vector<AutoGroup>& groups,
                            const std::vector<AutoFormat>& formats) {
  AppliedFormats out;
  out.plan = plan;
  std::vector<std::string> floating, reasons;
  for (size_t g = 0; g < groups.size(); ++g) {
    const AutoGroup& group = groups[g];
    const std::set<std::string> members(group.nodes.begin(), group.nodes.end());
    const AutoFormat format = formats[g];
    if (format == AutoFormat::kFp32 || format == AutoFormat::kBf16) {
      for (const std::string& n : group.nodes) {
        floating.push_back(n);
        reasons.push_back(fmt::format("auto: {}", AutoFormatName(format)));
        const ir::Node* node = graph.FindNode(n);
        if (format == AutoFormat::kBf16 && node != nullptr && IsLinear(*node)) {
          out.bf16_nodes.push_back(n);
        }
      }
      continue;
    }
    if (std::optional<QuantFormat> block = BlockFormatOf(format)) {
      ApplyBlockFormat(graph, out.plan, members, *block);
      continue;
    }
    if (format == AutoFormat::kInt8 && IsWeightOnlyGroup(plan, members)) {
      ApplyWeightOnlyInt8(graph, out.plan, members);
      continue;
    }
    const QuantFormat q = format == AutoFormat::kFp8 ? QuantFormat::kFp8E4M3 : QuantFormat::kInt8;
    for (QuantSite& site : out.plan.sites) {
      if (!site.enabled) continue;
      bool mine = std::any_of(site.consumers.begin(), site.consumers.end(),
                              [&](const auto& c) { return members.count(c.first) > 0; });
      if (mine) site.config.format = q;
    }
    if (format != AutoFormat::kFp8) continue;
    // The fp8 low-channel guard (placement.h) for layers switched to fp8.
    for (const std::string& n : group.nodes) {
      const ir::Node* node = graph.FindNode(n);
      if (node == nullptr) continue;
      const int64_t channels = ConvInputChannels(*node);
      if (channels < 0 || channels > kFp8LowChannelInput) continue;
      for (QuantSite& site : out.plan.sites) {
        if (!site.enabled || site.kind != QuantSite::Kind::kActivation) continue;
        auto reads = [&](const auto& c) { return c.first == n && c.second == 0; };
        if (std::none_of(site.consumers.begin(), site.consumers.end(), reads)) continue;
        const std::string detail = fmt::format(
            "fp8 input of a conv with {} input channels (no TensorRT fp8 tactic); weight stays "
            "quantized",
            channels);
        if (site.consumers.size() == 1) {
          site.enabled = false;
          site.disabled_reason = detail;
        } else {
          std::erase_if(site.consumers, reads);
        }
        out.plan.guard_hits.push_back({"fp8_low_channel_input", site.value, n + ": " + detail});
      }
    }
  }
  KeepLayersInFloat(out.plan, floating, reasons);
  return out;
}

}  // namespace qtune::quant
