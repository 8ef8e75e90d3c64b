// PlanQuantization: proposes quantizers (placement_rules.h, residual.h), lets the recipe
// configure or remove each, adds pass-through quantizers, then groups them into sites.
#include "quant/placement.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "quant/graph_patterns.h"
#include "quant/placement_rules.h"
#include "quant/residual.h"
#include "runtime/shape/infer_shapes.h"

namespace qtune::quant {
namespace {

// One proposed quantizer: one node input.
struct Candidate {
  std::string name;  // "<node>/input_quantizer", ...
  const ir::Node* node = nullptr;
  int input_index = 0;
  const ir::Value* value = nullptr;
  QuantSite::Kind kind = QuantSite::Kind::kActivation;
  std::string role;
  QuantizerConfig config;
  std::string origin;  // recipe rule that last touched it
  bool enabled = true;
  std::string disabled_reason;
  bool weight_only = false;   // weights of a layer without activation quantizers
  bool block_forced = false;  // the block size came from a rule naming this quantizer
};

std::string QuantizerName(const ir::Node& node, int input_index, QuantSite::Kind kind) {
  if (kind == QuantSite::Kind::kWeight) return node.name() + "/weight_quantizer";
  if (input_index == 0) return node.name() + "/input_quantizer";
  return node.name() + "/input" + std::to_string(input_index) + "_quantizer";
}

bool IsPassThrough(const std::string& op, Target target) {
  static const std::set<std::string> kCpu = {"MaxPool", "AveragePool", "GlobalAveragePool",
                                             "Reshape", "Flatten",     "Transpose",
                                             "Concat",  "Resize"};
  static const std::set<std::string> kTrt = {"MaxPool", "AveragePool", "GlobalAveragePool",
                                             "Concat", "Resize"};
  return (target == Target::kCpu ? kCpu : kTrt).count(op) > 0;
}

// Union-find over values for scale groups.
class ValueGroups {
 public:
  const ir::Value* Find(const ir::Value* v) {
    auto it = parent_.find(v);
    if (it == parent_.end() || it->second == v) return v;
    const ir::Value* root = Find(it->second);
    parent_[v] = root;
    return root;
  }
  void Union(const ir::Value* a, const ir::Value* b) {
    const ir::Value* ra = Find(a);
    const ir::Value* rb = Find(b);
    if (ra != rb) parent_[rb] = ra;
  }

 private:
  std::unordered_map<const ir::Value*, const ir::Value*> parent_;
};

class Planner {
 public:
  Planner(const ir::Graph& graph, const Recipe& recipe, Target target,
          const runtime::ValueInfoMap& infos)
      : graph_(graph), recipe_(recipe), target_(target), infos_(infos) {}

  StatusOr<QuantPlan> Run();

 private:
  // Applies the recipe; returns false (and adds nothing) when a rule removed it.
  bool Propose(Candidate candidate, std::optional<int> default_axis,
               std::vector<Candidate>& out) const;
  void PlanLayer(const ir::Node& node);
  bool IsFloatTensor(const ir::Value* value) const {
    auto it = infos_.find(value);
    DataType dtype = it != infos_.end() ? it->second.dtype : value->dtype();
    return dtype == DataType::kUndefined || IsFloatingPoint(dtype);
  }
  void PlanResidual(const ResidualAdd& residual);
  void PropagatePassThrough();
  Status CheckConfigs();
  QuantPlan BuildPlan(const std::vector<ir::Node*>& order);

  const ir::Graph& graph_;
  const Recipe& recipe_;
  Target target_;
  const runtime::ValueInfoMap& infos_;
  std::unordered_set<const ir::Node*> no_quantize_;
  std::unordered_set<const ir::Node*> quantized_linear_;
  std::vector<Candidate> candidates_;
  QuantPlan plan_;
  ValueGroups groups_;
  Status error_;  // the first error found while planning layers
};

bool Planner::Propose(Candidate candidate, std::optional<int> default_axis,
                      std::vector<Candidate>& out) const {
  std::optional<ResolvedQuantizer> resolved =
      ResolveQuantizer(recipe_, candidate.name, candidate.node->op_type(), default_axis);
  if (!resolved) return false;
  candidate.config = resolved->config;
  candidate.origin = resolved->origin;
  candidate.block_forced = resolved->block_size_forced;
  out.push_back(std::move(candidate));
  return true;
}

void Planner::PlanLayer(const ir::Node& node) {
  LayerContext context{infos_, target_, QuantFormat::kInt8};
  auto input = ResolveQuantizer(recipe_, QuantizerName(node, 0, QuantSite::Kind::kActivation),
                                node.op_type(), std::nullopt);
  if (input) context.format = input->config.format;
  context.weight_only = !input && IsConstantValue(node.input(1)) &&
                        ResolveQuantizer(recipe_, QuantizerName(node, 1, QuantSite::Kind::kWeight),
                                         node.op_type(), std::nullopt)
                            .has_value();
  LayerDecision decision = DecideLayer(node, context);
  if (!decision.skip_reason.empty()) {
    plan_.skipped.push_back({node.name(), node.op_type(), decision.skip_reason});
    return;
  }
  std::vector<Candidate> layer;
  std::string last_origin;
  for (int index : decision.activation_inputs) {
    Candidate c{QuantizerName(node, index, QuantSite::Kind::kActivation),
                &node,
                index,
                node.input(index),
                QuantSite::Kind::kActivation,
                node.op_type() + " input"};
    if (index == 0 && decision.softmax_input) c.role = "attention MatMul input (Softmax output)";
    if (!Propose(c, std::nullopt, layer)) last_origin = "removed by the recipe";
  }
  if (decision.weight_axis) {
    Candidate c{QuantizerName(node, 1, QuantSite::Kind::kWeight),
                &node,
                1,
                node.input(1),
                QuantSite::Kind::kWeight,
                node.op_type() + " weight"};
    if (Propose(c, decision.weight_axis, layer)) {
      Candidate& w = layer.back();
      w.weight_only = layer.size() == 1;
      if (!w.weight_only && FormatInfoOf(w.config.format).weight_only) {
        if (error_.ok()) {
          error_ = InvalidArgumentError(
              "quantizer '" + w.name + "'" +
              (w.origin.empty() ? "" : " (recipe rule " + w.origin + ")") + " is " +
              QuantFormatName(w.config.format) +
              ", a weight-only format, but the layer's activation input is quantized too; "
              "add a rule {name: \"*input_quantizer\", enable: false} (as the int4 preset "
              "does) or use int8");
        }
        return;
      }
      if (w.config.block_size > 0 || FormatInfoOf(w.config.format).blockwise) {
        const std::string reason = w.value->is_initializer() ? FitWeightBlocks(node, w.config)
                                                             : "weight is not a constant";
        if (!reason.empty()) {
          if (w.block_forced && error_.ok()) {
            error_ = InvalidArgumentError("quantizer '" + w.name + "' (recipe rule " + w.origin +
                                          "): " + reason + " of weight '" + w.value->name() +
                                          "'; use a block size that divides it");
          }
          plan_.skipped.push_back({node.name(), node.op_type(), reason});
          return;
        }
      }
    }
  }
  if (layer.empty()) {
    plan_.skipped.push_back({node.name(), node.op_type(), "every quantizer removed by the recipe"});
    return;
  }
  for (Candidate& c : layer) {
    bool low_channel =
        decision.conv_input_channels >= 0 && decision.conv_input_channels <= kFp8LowChannelInput;
    if (c.kind == QuantSite::Kind::kActivation && low_channel &&
        c.config.format == QuantFormat::kFp8E4M3) {
      c.enabled = false;
      c.disabled_reason = "fp8 input of a conv with " +
                          std::to_string(decision.conv_input_channels) +
                          " input channels (no TensorRT fp8 tactic); weight stays quantized";
      plan_.guard_hits.push_back(
          {"fp8_low_channel_input", c.value->name(), node.name() + ": " + c.disabled_reason});
    }
    if (c.enabled) quantized_linear_.insert(&node);
    candidates_.push_back(std::move(c));
  }
}

void Planner::PlanResidual(const ResidualAdd& residual) {
  const ir::Node& add = *residual.add;
  const int shortcut = residual.shortcut_input;
  const int branch = residual.branch_input;
  std::vector<Candidate> proposed;
  if (recipe_.residual_add_quantizers) {
    // Both inputs, so the Add runs as an int8 add; all or nothing.
    Propose({add.name() + "/shortcut_residual_quantizer", &add, shortcut, add.input(shortcut),
             QuantSite::Kind::kActivation, "residual add"},
            std::nullopt, proposed);
    Propose({add.name() + "/branch_residual_quantizer", &add, branch, add.input(branch),
             QuantSite::Kind::kActivation, "residual add"},
            std::nullopt, proposed);
    if (proposed.size() != 2) {
      plan_.skipped.push_back(
          {add.name(), add.op_type(), "residual add: a quantizer removed by the recipe"});
      return;
    }
  } else {
    // The shortcut only, so the branch's linear op absorbs the Add; pointless when that
    // linear op stays in float.
    if (!quantized_linear_.count(residual.branch_linear)) return;
    Propose({add.name() + "/shortcut_quantizer", &add, shortcut, add.input(shortcut),
             QuantSite::Kind::kActivation, "residual shortcut"},
            std::nullopt, proposed);
  }
  for (Candidate& c : proposed) candidates_.push_back(std::move(c));
}

void Planner::PropagatePassThrough() {
  std::vector<const ir::Value*> work;
  for (const Candidate& c : candidates_) {
    if (c.kind == QuantSite::Kind::kActivation && c.enabled) work.push_back(c.value);
  }
  std::unordered_set<const ir::Node*> visited;
  while (!work.empty()) {
    const ir::Value* value = work.back();
    work.pop_back();
    const ir::Node* node = value->producer();
    if (node == nullptr || !visited.insert(node).second || no_quantize_.count(node)) continue;
    if (!(node->domain().empty() || node->domain() == "ai.onnx")) continue;
    if (!IsPassThrough(node->op_type(), target_) || node->num_outputs() != 1) continue;
    std::vector<int> inputs = {0};
    if (node->op_type() == "Concat") {
      inputs.clear();
      for (size_t i = 0; i < node->num_inputs(); ++i) inputs.push_back(static_cast<int>(i));
    }
    std::vector<Candidate> proposed;
    bool complete = true;
    for (int i : inputs) {
      const ir::Value* input = node->input(i);
      if (input == nullptr || IsConstantValue(input) || !IsFloatTensor(input)) {
        complete = false;  // constants are never observed by calibration
        break;
      }
      std::string role =
          node->op_type() == "Concat" ? "Concat input" : node->op_type() + " input (pass-through)";
      Candidate c{QuantizerName(*node, i, QuantSite::Kind::kActivation),
                  node,
                  i,
                  input,
                  QuantSite::Kind::kActivation,
                  role};
      complete = complete && Propose(c, std::nullopt, proposed);
    }
    if (!complete) continue;  // all inputs or none: otherwise it cannot run in 8 bits
    for (Candidate& c : proposed) {
      groups_.Union(value, c.value);
      work.push_back(c.value);
      candidates_.push_back(std::move(c));
    }
  }
}

Status Planner::CheckConfigs() {
  for (Candidate& c : candidates_) {
    const std::string where =
        "quantizer '" + c.name + "'" + (c.origin.empty() ? "" : " (recipe rule " + c.origin + ")");
    if (!c.config.symmetric && c.config.format == QuantFormat::kFp8E4M3) {
      return InvalidArgumentError(where + ": fp8_e4m3 has no zero point; drop symmetric: false");
    }
    if (!c.config.symmetric && target_ == Target::kTrt) {
      return InvalidArgumentError(where +
                                  " is asymmetric (symmetric: false), but --target trt "
                                  "supports only symmetric quantization; use --target cpu "
                                  "or drop symmetric: false");
    }
    if (c.kind == QuantSite::Kind::kActivation && FormatInfoOf(c.config.format).weight_only) {
      return InvalidArgumentError(where + " is an activation quantizer, but " +
                                  QuantFormatName(c.config.format) +
                                  " is a weight-only format; remove activation quantizers "
                                  "(enable: false) or give them int8");
    }
    if (c.kind == QuantSite::Kind::kActivation && c.config.block_size > 0) {
      return InvalidArgumentError(where + ": block_size applies to weights only");
    }
    if (c.kind == QuantSite::Kind::kActivation && c.config.axis) {
      return InvalidArgumentError(where +
                                  ": activations are quantized per tensor; use axis: "
                                  "null or axis: channel");
    }
    if (c.kind == QuantSite::Kind::kWeight) {
      // Weights are symmetric (the engine's s8 weights) except block formats with zero
      // points (int4 with UINT4 zero points).
      const bool zero_points =
          FormatInfoOf(c.config.format).zero_point_allowed && c.config.block_size > 0;
      if (!zero_points) c.config.symmetric = true;
      if (c.config.axis) {
        const int rank = static_cast<int>(c.value->initializer().rank());
        int axis = *c.config.axis < 0 ? *c.config.axis + rank : *c.config.axis;
        if (axis < 0 || axis >= rank) {
          return InvalidArgumentError(where + ": axis " + std::to_string(*c.config.axis) +
                                      " is out of range for weight '" + c.value->name() +
                                      "' of rank " + std::to_string(rank));
        }
        c.config.axis = axis;
      }
    }
  }
  return Status::Ok();
}

bool SameConfig(const QuantizerConfig& a, const QuantizerConfig& b) {
  return a.enable == b.enable && a.format == b.format && a.bits == b.bits && a.axis == b.axis &&
         a.symmetric == b.symmetric && a.calibrator.kind == b.calibrator.kind &&
         a.calibrator.percentile == b.calibrator.percentile &&
         a.calibrator.bins == b.calibrator.bins && a.block_size == b.block_size &&
         a.algorithm == b.algorithm && a.scale_type == b.scale_type;
}

QuantPlan Planner::BuildPlan(const std::vector<ir::Node*>& order) {
  // Scale groups with at least two distinct values.
  std::unordered_map<const ir::Value*, std::set<const ir::Value*>> members;
  for (const Candidate& c : candidates_) {
    if (c.kind == QuantSite::Kind::kActivation) members[groups_.Find(c.value)].insert(c.value);
  }
  std::unordered_set<const ir::Node*> quantized;
  for (const Candidate& c : candidates_) {
    QuantSite* site = nullptr;
    for (QuantSite& s : plan_.sites) {
      if (s.value == c.value->name() && s.kind == c.kind && s.enabled == c.enabled &&
          SameConfig(s.config, c.config)) {
        site = &s;
      }
    }
    if (site == nullptr) {
      plan_.sites.emplace_back();
      site = &plan_.sites.back();
      site->kind = c.kind;
      site->value = c.value->name();
      site->config = c.config;
      site->role = c.role;
      site->enabled = c.enabled;
      site->disabled_reason = c.disabled_reason;
      site->weight_only = c.weight_only;
      const ir::Value* root = groups_.Find(c.value);
      if (c.kind == QuantSite::Kind::kActivation && members[root].size() > 1) {
        site->scale_group = "group:" + root->name();
      }
    } else if (site->role.find(c.role) == std::string::npos) {
      site->role += ", " + c.role;
    }
    site->consumers.emplace_back(c.node->name(), c.input_index);
    if (c.enabled) quantized.insert(c.node);
  }
  for (const ir::Node* node : order) {
    if (quantized.count(node)) plan_.quantized_nodes.push_back(node->name());
  }
  return std::move(plan_);
}

StatusOr<QuantPlan> Planner::Run() {
  plan_.target = target_;
  ASSIGN_OR_RETURN(std::vector<ir::Node*> order, graph_.TopologicalOrder());
  no_quantize_ = FindNoQuantizeNodes(graph_);
  for (const ir::Node* node : order) {
    if (!(node->domain().empty() || node->domain() == "ai.onnx")) continue;
    const std::string& op = node->op_type();
    if (op != "Conv" && op != "ConvTranspose" && op != "Gemm" && op != "MatMul") continue;
    if (no_quantize_.count(node) || node->input(0) == nullptr || node->input(1) == nullptr)
      continue;
    PlanLayer(*node);
  }
  for (const ResidualAdd& residual : FindResidualAdds(graph_)) {
    if (!no_quantize_.count(residual.add)) PlanResidual(residual);
  }
  RETURN_IF_ERROR(error_);
  PropagatePassThrough();
  RETURN_IF_ERROR(CheckConfigs());
  return BuildPlan(order);
}

}  // namespace

StatusOr<QuantPlan> PlanQuantization(const ir::Graph& graph, const Recipe& recipe, Target target,
                                     const InputSizes& input_sizes) {
  // Values whose sizes are known only while the model runs (after a NonMaxSuppression,
  // ...) have no info: placement leaves their consumers in float.
  auto infos = runtime::InferShapesPartially(graph, input_sizes, runtime::ShapeInferenceOptions{});
  if (!infos.ok()) {
    return infos.status().WithContext(
        "quantization placement needs the sizes of every tensor for the calibration input "
        "sizes; check the calibration data's shapes against the model inputs");
  }
  Planner planner(graph, recipe, target, infos->infos);
  return planner.Run();
}

}  // namespace qtune::quant
