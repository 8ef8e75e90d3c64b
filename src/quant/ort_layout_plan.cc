// PlanOrtLayout: which tensors ONNX Runtime's quantize_static layout quantizes (see
// ort_layout.h). Export is in ort_layout_export.cc.
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "quant/ort_layout.h"
#include "quant/ort_layout_internal.h"
#include "runtime/shape/infer_shapes.h"

namespace qtune::quant {
namespace {

bool IsDefault(const ir::Node* node) {
  return node != nullptr && (node->domain().empty() || node->domain() == "ai.onnx");
}
bool IsOp(const ir::Node* node, std::initializer_list<const char*> ops) {
  if (!IsDefault(node)) return false;
  for (const char* op : ops) {
    if (node->op_type() == op) return true;
  }
  return false;
}
bool IsLinear(const ir::Node* n) { return IsOp(n, {"Conv", "ConvTranspose", "Gemm", "MatMul"}); }
// One scale for input and output (ONNX Runtime's QDQDirect8BitOp).
bool IsSameScaleOp(const ir::Node* n) {
  return IsOp(n, {"MaxPool", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Resize"});
}
// Their own output scale.
bool IsOwnScaleOp(const ir::Node* n) {
  return IsOp(n, {"AveragePool", "GlobalAveragePool", "Add", "Concat"});
}

class OrtPlanner {
 public:
  OrtPlanner(const ir::Graph& graph, const runtime::ValueInfoMap& infos,
             const OrtLayoutOptions& options, const Recipe* recipe)
      : graph_(graph), infos_(infos), options_(options), recipe_(recipe) {}

  StatusOr<QuantPlan> Run() {
    plan_.target = Target::kOrt;
    ASSIGN_OR_RETURN(std::vector<ir::Node*> order, graph_.TopologicalOrder());
    for (const ir::Node* node : order) {
      if (IsLinear(node)) {
        PlanLinear(*node);
      } else if (IsSameScaleOp(node) || IsOwnScaleOp(node)) {
        PlanOther(*node);
      }
    }
    return std::move(plan_);
  }

 private:
  bool IsFloatActivation(const ir::Value* v) const {
    if (v == nullptr || v->is_initializer()) return false;
    auto it = infos_.find(v);
    DataType t = it != infos_.end() ? it->second.dtype : v->dtype();
    return t == DataType::kFloat32;
  }

  QuantizerConfig ActivationConfig() const {
    QuantizerConfig c;
    c.symmetric = options_.activations == OrtActivationType::kInt8Symmetric;
    c.calibrator = options_.calibrator;
    return c;
  }

  // The site on `value` (created once); false when the value cannot be quantized.
  QuantSite* ActivationSite(const ir::Value* value, const std::string& role) {
    if (!IsFloatActivation(value) || value->is_graph_output()) return nullptr;
    auto it = site_of_.find(value);
    if (it != site_of_.end()) return &plan_.sites[it->second];
    QuantSite site;
    site.kind = QuantSite::Kind::kActivation;
    site.value = value->name();
    site.config = ActivationConfig();
    site.role = role;
    site_of_[value] = plan_.sites.size();
    plan_.sites.push_back(std::move(site));
    return &plan_.sites.back();
  }

  // The output site of a quantized op; a sole Relu reader folds into it (ort_layout.h).
  void OutputSite(const ir::Node& node) {
    const ir::Value* out = node.output(0);
    if (out == nullptr) return;
    const bool asymmetric = options_.activations != OrtActivationType::kInt8Symmetric;
    const ir::Node* relu =
        out->uses().size() == 1 && !out->is_graph_output() ? out->uses()[0].node : nullptr;
    if (options_.remove_activations && asymmetric && IsOp(relu, {"Relu"}) &&
        relu->output(0) != nullptr && !relu->output(0)->is_graph_output()) {
      ActivationSite(relu->output(0), node.op_type() + " output " + kReluFoldedRole);
      return;
    }
    ActivationSite(out, node.op_type() + " output");
  }

  void PlanLinear(const ir::Node& node) {
    const ir::Value* w = node.input(1);
    const bool weight = w != nullptr && w->is_initializer() && !w->is_graph_input() &&
                        w->initializer().dtype() == DataType::kFloat32;
    if (!IsFloatActivation(node.input(0))) return;
    if (!weight && !(IsOp(&node, {"MatMul"}) && IsFloatActivation(w))) return;
    if (IsOp(&node, {"ConvTranspose"}) && node.GetInt("group", 1) != 1) return;
    if (recipe_ != nullptr) {
      auto input = ResolveQuantizer(*recipe_, node.name() + "/input_quantizer", node.op_type(),
                                    std::nullopt);
      if (!input) {
        plan_.skipped.push_back(
            {node.name(), node.op_type(), "input quantizer removed by the recipe"});
        return;
      }
    }
    ActivationSite(node.input(0), node.op_type() + " input");
    if (weight) {
      QuantSite site;
      site.kind = QuantSite::Kind::kWeight;
      site.value = w->name();
      site.consumers = {{node.name(), 1}};
      site.role = node.op_type() + " weight";
      if (options_.per_channel) site.config.axis = static_cast<int>(WeightChannelAxis(node));
      plan_.sites.push_back(std::move(site));
    } else {
      ActivationSite(w, node.op_type() + " input");
    }
    plan_.quantized_nodes.push_back(node.name());
    OutputSite(node);
  }

  void PlanOther(const ir::Node& node) {
    std::vector<const ir::Value*> inputs;
    if (IsOp(&node, {"Add", "Concat"})) {
      for (const ir::Value* in : node.inputs()) inputs.push_back(in);
    } else {
      inputs.push_back(node.input(0));
    }
    for (const ir::Value* in : inputs) {
      if (!IsFloatActivation(in)) return;  // all inputs or none
    }
    if (node.num_outputs() != 1 || !IsFloatActivation(node.output(0))) return;
    for (const ir::Value* in : inputs) ActivationSite(in, node.op_type() + " input");
    plan_.quantized_nodes.push_back(node.name());
    if (!IsSameScaleOp(&node)) {
      OutputSite(node);
      return;
    }
    // Pointers into plan_.sites do not survive the next site; work with indices.
    if (ActivationSite(inputs[0], node.op_type() + " input") == nullptr ||
        ActivationSite(node.output(0), node.op_type() + " output") == nullptr) {
      return;
    }
    QuantSite& in_site = plan_.sites[site_of_.at(inputs[0])];
    if (in_site.scale_group.empty()) in_site.scale_group = "group:" + in_site.value;
    plan_.sites[site_of_.at(node.output(0))].scale_group = in_site.scale_group;
  }

  const ir::Graph& graph_;
  const runtime::ValueInfoMap& infos_;
  const OrtLayoutOptions& options_;
  const Recipe* recipe_;
  QuantPlan plan_;
  std::unordered_map<const ir::Value*, size_t> site_of_;
};

}  // namespace

int64_t WeightChannelAxis(const ir::Node& node) {
  if (node.op_type() == "Conv") return 0;
  if (node.op_type() == "ConvTranspose") return 1;
  if (node.op_type() == "Gemm") return node.GetInt("transB", 0) != 0 ? 0 : 1;
  const ir::Value* w = node.input(1);
  const int64_t rank =
      w != nullptr && w->is_initializer() ? static_cast<int64_t>(w->initializer().rank()) : 2;
  return rank - 1;  // MatMul: N
}

StatusOr<QuantPlan> PlanOrtLayout(const ir::Graph& graph, const InputSizes& input_sizes,
                                  const OrtLayoutOptions& options, const Recipe* recipe) {
  auto infos = runtime::InferShapesPartially(graph, input_sizes, runtime::ShapeInferenceOptions{});
  if (!infos.ok()) {
    return infos.status().WithContext(
        "the ONNX Runtime layout needs the type of every tensor for the calibration input "
        "sizes; check the calibration data's shapes against the model inputs");
  }
  OrtPlanner planner(graph, infos->infos, options, recipe);
  return planner.Run();
}

}  // namespace qtune::quant
