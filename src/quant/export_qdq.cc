#include "quant/export_qdq.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

#include "core/logging.h"
#include "ir/verify.h"
#include "passes/fold_qdq_casts.h"
#include "passes/upgrade_opset.h"
#include "quant/block_float_export.h"
#include "quant/conv_weight_blocks.h"
#include "quant/qdq_params.h"
#include "quant/weight_only_export.h"

namespace qtune::quant {
namespace {

constexpr char kDequantizedSuffix[] = "_dequantized";

// The graph edits one site needs; all names are made graph-unique.
class SiteWriter {
 public:
  SiteWriter(ir::Graph& graph, std::string base) : graph_(graph), base_(std::move(base)) {}

  StatusOr<ir::Value*> Initializer(const std::string& suffix, Tensor tensor) {
    return graph_.AddInitializer(graph_.UniqueValueName(base_ + suffix), std::move(tensor));
  }

  // One-output node named "<base><suffix>" whose output is "<base><out_suffix>".
  StatusOr<ir::Node*> Node(const std::string& op, const std::string& suffix,
                           const std::string& out_suffix, std::vector<ir::Value*> inputs,
                           std::vector<ir::Attribute> attributes, ir::TensorType out_type) {
    ir::NodeSpec spec;
    spec.op_type = op;
    spec.name = graph_.UniqueNodeName(base_ + suffix);
    spec.inputs = std::move(inputs);
    spec.output_names = {graph_.UniqueValueName(base_ + out_suffix)};
    spec.attributes = std::move(attributes);
    ASSIGN_OR_RETURN(ir::Node * node, graph_.AddNode(std::move(spec)));
    node->output(0)->set_type(std::move(out_type));
    return node;
  }

  StatusOr<ir::Value*> Cast(ir::Value* in, DataType to, const std::string& suffix) {
    ASSIGN_OR_RETURN(ir::Node * node, Node("Cast", suffix, suffix + "_out", {in},
                                           {ir::Attribute::Int("to", static_cast<int64_t>(to))},
                                           ir::TensorType{to, in->type().shape}));
    return node->output(0);
  }

 private:
  ir::Graph& graph_;
  std::string base_;
};

// Resolves the consumers of a site to node inputs that currently read `value`. An empty
// consumer list means every node input reading it.
StatusOr<std::vector<std::pair<ir::Node*, int>>> ResolveConsumers(const ir::Graph& graph,
                                                                  const QuantSite& site,
                                                                  ir::Value* value) {
  std::vector<std::pair<ir::Node*, int>> out;
  if (site.consumers.empty()) {
    for (const ir::Use& use : value->uses()) {
      if (use.input_index >= 0) out.emplace_back(use.node, use.input_index);
    }
    return out;
  }
  for (const auto& [node_name, index] : site.consumers) {
    ir::Node* node = graph.FindNode(node_name);
    if (node == nullptr) {
      return NotFoundError(fmt::format(
          "quantizer on '{}' lists consumer node '{}', which is not in the graph (was the plan "
          "made for another model?)",
          site.value, node_name));
    }
    if (index < 0 || node->input(static_cast<size_t>(index)) != value) {
      return InvalidArgumentError(
          fmt::format("quantizer on '{}' lists input {} of {}, which "
                      "does not read '{}'",
                      site.value, index, node->DebugName(), site.value));
    }
    out.emplace_back(node, index);
  }
  return out;
}

DataType QuantType(QuantFormat format, bool is_unsigned) {
  if (format == QuantFormat::kFp8E4M3) return DataType::kFloat8E4M3FN;
  return is_unsigned ? DataType::kUint8 : DataType::kInt8;
}

// Why the scale of a Q on `source` cannot become float16 ("" when it can).
std::string Fp16SkipReason(const ir::Value* source, bool has_q, const Tensor& scale) {
  if (has_q && source->is_graph_input()) return "its Q reads graph input '" + source->name() + "'";
  DataType t = source->dtype();
  if (t != DataType::kUndefined && t != DataType::kFloat32 && t != DataType::kFloat16) {
    return fmt::format("its source '{}' is {}, not float", source->name(), DataTypeName(t));
  }
  if (!ScaleToFloat16(scale).has_value()) return "the scale is outside float16's normal range";
  return "";
}

class Exporter {
 public:
  Exporter(ir::Graph& graph, const QuantPlan& plan, const ExportOptions& options,
           ExportReport& report)
      : graph_(graph), plan_(plan), options_(options), report_(report) {}

  Status Run() {
    for (const QuantSite& site : plan_.sites) {
      if (!site.enabled || !site.config.enable) continue;
      if (site.kind == QuantSite::Kind::kActivation && !site.scale_group.empty()) {
        if (!site.range.has_value()) return MissingRange(site);
        auto [it, inserted] = group_ranges_.emplace(site.scale_group, *site.range);
        if (!inserted) it->second = MergeRanges(it->second, *site.range);
      }
    }
    for (const QuantSite& site : plan_.sites) {
      if (!site.enabled || !site.config.enable) {
        ++report_.disabled_sites;
        continue;
      }
      Status s =
          site.kind == QuantSite::Kind::kWeight ? ExportWeight(site) : ExportActivation(site);
      if (!s.ok()) return s.WithContext("exporting the quantizer on '" + site.value + "'");
    }
    return Status::Ok();
  }

 private:
  static Status MissingRange(const QuantSite& site) {
    return FailedPreconditionError(
        fmt::format("activation quantizer on '{}' has no calibrated range; run calibration "
                    "(or --random-calibration) before export",
                    site.value));
  }

  StatusOr<ir::Value*> FindSiteValue(const QuantSite& site) {
    ir::Value* value = graph_.FindValue(site.value);
    if (value == nullptr) {
      return NotFoundError(fmt::format(
          "tensor '{}' is not in the graph (was the plan made for another model?)", site.value));
    }
    return value;
  }

  // Whether this pair gets a float16 scale; adds the warning when it cannot.
  bool UseFp16(const QuantSite& site, const ir::Value* source, bool has_q, const Tensor& scale) {
    if (!options_.fp16_scales) return false;
    std::string reason = Fp16SkipReason(source, has_q, scale);
    if (reason.empty()) return true;
    std::string warning = fmt::format("--fp16-scales: quantizer on '{}' keeps a float32 scale: {}",
                                      site.value, reason);
    Log(LogLevel::kWarning, "{}", warning);
    report_.warnings.push_back(std::move(warning));
    return false;
  }

  // The scale and zero point initializers, shared within a scale group.
  StatusOr<std::pair<ir::Value*, ir::Value*>> ScaleAndZeroPoint(SiteWriter& writer,
                                                                const QuantSite& site, Tensor scale,
                                                                Tensor zero_point) {
    std::string key;
    if (!site.scale_group.empty()) {
      key = fmt::format("{}|{}|{}", site.scale_group, DataTypeName(scale.dtype()),
                        DataTypeName(zero_point.dtype()));
      auto it = shared_.find(key);
      if (it != shared_.end()) return it->second;
    }
    ASSIGN_OR_RETURN(ir::Value * s, writer.Initializer("_scale", std::move(scale)));
    ASSIGN_OR_RETURN(ir::Value * z, writer.Initializer("_zero_point", std::move(zero_point)));
    if (!key.empty()) shared_[key] = {s, z};
    return std::pair{s, z};
  }

  // Q (optional) -> DQ on `q_source` (or DQ alone on an already quantized `q_source`), then
  // reroutes `consumers`. Returns the ExportedSite fields it fills.
  struct PairSpec {
    ir::Value* source = nullptr;  // the float tensor (Q input), or the quantized weight
    bool has_q = true;
    DataType qtype = DataType::kInt8;
    std::optional<int64_t> axis;
    std::optional<int64_t> block_size;  // blockwise weights (opset 21)
    bool scale_final = false;           // the scale already has its exported type (low-bit weights)
    Tensor scale;                       // float32
    Tensor zero_point;                  // of qtype
  };

  Status WritePair(const QuantSite& site, PairSpec spec, ir::Value* float_value,
                   const std::vector<std::pair<ir::Node*, int>>& consumers, ExportedSite& out) {
    SiteWriter writer(graph_, site.value);
    const bool fp16 = spec.scale_final ? spec.scale.dtype() == DataType::kFloat16
                                       : UseFp16(site, float_value, spec.has_q, spec.scale);
    if (fp16 && !spec.scale_final) spec.scale = *ScaleToFloat16(spec.scale);
    out.fp16_scale = fp16;
    const DataType scale_type = spec.scale.dtype();
    ASSIGN_OR_RETURN(auto params, ScaleAndZeroPoint(writer, site, spec.scale, spec.zero_point));
    std::vector<ir::Attribute> attrs;
    if (spec.axis.has_value()) attrs.push_back(ir::Attribute::Int("axis", *spec.axis));
    if (spec.block_size.has_value()) {
      attrs.push_back(ir::Attribute::Int("block_size", *spec.block_size));
    }
    const DataType float_type =
        float_value->dtype() == DataType::kUndefined ? DataType::kFloat32 : float_value->dtype();

    ir::Value* dq_input = spec.source;
    if (spec.has_q) {
      ir::Value* q_input = spec.source;
      if (fp16 && float_type != DataType::kFloat16) {
        // The exporter treats an untyped source as float32; record that, so that cast
        // folding (where missing types count as foldable) keeps this Cast.
        if (q_input->dtype() == DataType::kUndefined) {
          q_input->set_type({DataType::kFloat32, q_input->type().shape});
        }
        ASSIGN_OR_RETURN(q_input, writer.Cast(q_input, DataType::kFloat16, "_to_fp16"));
      }
      ASSIGN_OR_RETURN(ir::Node * q,
                       writer.Node("QuantizeLinear", "_QuantizeLinear", "_quantized",
                                   {q_input, params.first, params.second}, attrs,
                                   ir::TensorType{spec.qtype, float_value->type().shape}));
      out.q_node = q->name();
      dq_input = q->output(0);
    }
    ASSIGN_OR_RETURN(ir::Node * dq,
                     writer.Node("DequantizeLinear", "_DequantizeLinear", kDequantizedSuffix,
                                 {dq_input, params.first, params.second}, attrs,
                                 ir::TensorType{scale_type, float_value->type().shape}));
    out.dq_node = dq->name();
    out.dq_output = dq->output(0)->name();
    ir::Value* result = dq->output(0);
    if (scale_type != float_type) {
      ASSIGN_OR_RETURN(result, writer.Cast(result, float_type, "_dq_to_float"));
    }
    for (const auto& [node, index] : consumers) graph_.SetNodeInput(node, index, result);
    return Status::Ok();
  }

  Status ExportActivation(const QuantSite& site) {
    ASSIGN_OR_RETURN(ir::Value * value, FindSiteValue(site));
    if (!site.range.has_value()) return MissingRange(site);
    TensorRange range = *site.range;
    if (!site.scale_group.empty()) range = group_ranges_.at(site.scale_group);
    ActivationParams params = ComputeActivationParams(range, site.config);
    ASSIGN_OR_RETURN(auto consumers, ResolveConsumers(graph_, site, value));
    ExportedSite out{.value = site.value,
                     .kind = site.kind,
                     .format = site.config.format,
                     .is_unsigned = params.is_unsigned,
                     .amax = params.amax,
                     .min_scale = params.scale,
                     .max_scale = params.scale};
    if (consumers.empty()) {
      report_.warnings.push_back("quantizer on '" + site.value + "' has no consumers; skipped");
      return Status::Ok();
    }
    PairSpec spec;
    spec.source = value;
    spec.qtype = QuantType(site.config.format, params.is_unsigned);
    spec.scale = Tensor::Scalar<float>(params.scale);
    ASSIGN_OR_RETURN(spec.zero_point, Tensor::Allocate(spec.qtype, {}));
    if (params.is_unsigned)
      spec.zero_point.data<uint8_t>()[0] = static_cast<uint8_t>(params.zero_point);
    RETURN_IF_ERROR(WritePair(site, std::move(spec), value, consumers, out));
    report_.sites.push_back(std::move(out));
    return Status::Ok();
  }

  Status ExportWeight(const QuantSite& site) {
    ASSIGN_OR_RETURN(ir::Value * value, FindSiteValue(site));
    if (!value->is_initializer() || value->is_graph_input()) {
      return InvalidArgumentError(fmt::format(
          "weight quantizer on '{}': the tensor is not a constant initializer (run the pass "
          "pipeline first so constants become initializers, or quantize it as an activation)",
          site.value));
    }
    ASSIGN_OR_RETURN(auto consumers, ResolveConsumers(graph_, site, value));
    if (consumers.empty()) return Status::Ok();
    if (IsBlockFloatFormat(site.config.format)) return ExportBlockFloat(site, value, consumers);
    if (UsesLowBitPath(site)) return ExportLowBitWeight(site, value, consumers);
    const bool store_quantized = !options_.float_weights;
    ASSIGN_OR_RETURN(QuantizedWeight qw, QuantizeWeight(value->initializer(), site.config,
                                                        store_quantized, site.value));
    ExportedSite out{.value = site.value,
                     .kind = site.kind,
                     .format = site.config.format,
                     .amax = qw.amax,
                     .channels = qw.channels};
    auto scales = qw.scale.span<float>();
    out.min_scale = *std::min_element(scales.begin(), scales.end());
    out.max_scale = *std::max_element(scales.begin(), scales.end());

    PairSpec spec;
    spec.qtype = qw.zero_point.dtype();
    spec.has_q = !store_quantized;
    spec.scale = std::move(qw.scale);
    spec.zero_point = std::move(qw.zero_point);
    if (site.config.axis.has_value()) {
      const int64_t rank = static_cast<int64_t>(value->initializer().rank());
      spec.axis = *site.config.axis < 0 ? *site.config.axis + rank : *site.config.axis;
    }
    if (store_quantized) {
      SiteWriter writer(graph_, site.value);
      ASSIGN_OR_RETURN(spec.source, writer.Initializer("_quantized", std::move(qw.data)));
    } else {
      spec.source = value;
    }
    RETURN_IF_ERROR(WritePair(site, std::move(spec), value, consumers, out));
    if (value->uses().empty() && !value->is_graph_output()) {
      RETURN_IF_ERROR(graph_.RemoveValue(value));
    }
    report_.sites.push_back(std::move(out));
    return Status::Ok();
  }

  // NVFP4 / MXFP8 weights (block_float_export.h); --target ort: float32 block scales.
  Status ExportBlockFloat(const QuantSite& site, ir::Value* value,
                          const std::vector<std::pair<ir::Node*, int>>& consumers) {
    ASSIGN_OR_RETURN(BlockFloatExport e,
                     ExportBlockFloatWeight(graph_, site.config.format, value, consumers,
                                            BlockFloatLayoutFor(plan_.target)));
    ExportedSite out{.value = site.value, .kind = site.kind, .format = site.config.format};
    out.min_scale = e.min_scale;
    out.max_scale = e.max_scale;
    out.channels = e.channels;
    out.block_size = FormatInfoOf(site.config.format).fixed_block_size;
    out.effective_bits = EffectiveBits(site.config, e.k);
    out.dq_node = e.dq_node;
    report_.sites.push_back(std::move(out));
    return Status::Ok();
  }

  // int4 / blockwise / clip / AWQ weights (weight_only_export.h). All consumers must read
  // the weight alike (one MatMul/Gemm layout); the first decides.
  Status ExportLowBitWeight(const QuantSite& site, ir::Value* value,
                            const std::vector<std::pair<ir::Node*, int>>& consumers) {
    ir::Node* layer = consumers.front().first;
    for (const auto& [node, index] : consumers) {
      if (index != 1 || node->op_type() != layer->op_type() ||
          node->GetInt("transB", 0) != layer->GetInt("transB", 0)) {
        return InvalidArgumentError(fmt::format(
            "low-bit weight '{}' is read by {} as input {}; every reader must be a {} reading "
            "it as input 1",
            site.value, node->DebugName(), index, layer->op_type()));
      }
    }
    ASSIGN_OR_RETURN(LowBitWeight lw, QuantizeLowBitWeight(*layer, site, value->initializer()));
    const QuantizedMatrix& m = lw.matrix;
    ExportedSite out{.value = site.value,
                     .kind = site.kind,
                     .format = site.config.format,
                     .is_unsigned = !m.symmetric,
                     .channels = m.n};
    out.min_scale = *std::min_element(m.scales.begin(), m.scales.end());
    out.max_scale = *std::max_element(m.scales.begin(), m.scales.end());
    out.fp16_scale = lw.fp16_scales;
    out.block_size = m.group < m.k || lw.conv ? m.group : 0;
    out.effective_bits = EffectiveBits(site.config, m.k);
    const int conv_rank = lw.conv ? static_cast<int>(value->initializer().rank()) : 0;
    for (const auto& [node, index] : consumers) {
      if (!site.input_scale.empty()) {
        RETURN_IF_ERROR(InsertInputScale(graph_, node, site.input_scale, site.value, conv_rank));
      }
    }
    // No MatMulNBits for Conv: a Conv's int4 weight is DQ(block_size) -> Conv everywhere.
    const bool nbits = plan_.target == Target::kOrt && m.bits == 4 && m.group < m.k && !lw.conv;
    if (nbits) {
      for (const auto& [node, index] : consumers) {
        RETURN_IF_ERROR(ReplaceWithMatMulNBits(graph_, node, lw, site.value));
      }
      out.dq_node = "MatMulNBits";
      report_.sites.push_back(std::move(out));
      return Status::Ok();
    }
    ASSIGN_OR_RETURN(
        DequantizeInputs dq,
        lw.conv ? ConvDequantizeInputs(m, ConvShapeOf(value->initializer().sizes()), lw.fp16_scales)
                : ToDequantizeInputs(m, lw.transposed, lw.fp16_scales));
    PairSpec spec;
    spec.has_q = false;
    spec.qtype = dq.data.dtype();
    spec.scale_final = true;
    spec.scale = std::move(dq.scale);
    if (m.symmetric) {
      ASSIGN_OR_RETURN(spec.zero_point, Tensor::Allocate(spec.qtype, spec.scale.sizes()));
    } else {
      spec.zero_point = std::move(dq.zero_point);
    }
    if (m.group < m.k || lw.conv) {
      spec.axis = lw.reduction_axis;
      spec.block_size = m.group;
    } else {
      spec.axis = 1 - lw.reduction_axis;  // per output channel
    }
    SiteWriter writer(graph_, site.value);
    ASSIGN_OR_RETURN(spec.source, writer.Initializer("_quantized", std::move(dq.data)));
    RETURN_IF_ERROR(WritePair(site, std::move(spec), value, consumers, out));
    if (value->uses().empty() && !value->is_graph_output()) {
      RETURN_IF_ERROR(graph_.RemoveValue(value));
    }
    report_.sites.push_back(std::move(out));
    return Status::Ok();
  }

  ir::Graph& graph_;
  const QuantPlan& plan_;
  const ExportOptions& options_;
  ExportReport& report_;
  std::map<std::string, TensorRange> group_ranges_;
  std::map<std::string, std::pair<ir::Value*, ir::Value*>> shared_;
};

int64_t RequiredOpset(const QuantPlan& plan, const ExportOptions& options) {
  int64_t opset = std::max<int64_t>(options.min_opset, 13);
  bool fp8 = std::any_of(plan.sites.begin(), plan.sites.end(), [](const QuantSite& s) {
    return s.enabled && s.config.enable && s.config.format == QuantFormat::kFp8E4M3;
  });
  if (fp8 || options.fp16_scales) opset = std::max<int64_t>(opset, 19);
  const bool low_bit = std::any_of(plan.sites.begin(), plan.sites.end(), [](const QuantSite& s) {
    return s.enabled && s.config.enable && UsesLowBitPath(s);
  });
  if (low_bit) opset = std::max<int64_t>(opset, 21);  // block_size, INT4 / UINT4
  for (const QuantSite& s : plan.sites) {             // NVFP4 23, MXFP8 24 (--target ort: 21)
    if (s.enabled && s.config.enable && IsBlockFloatFormat(s.config.format)) {
      opset = std::max(opset, BlockFloatOpset(s.config.format, BlockFloatLayoutFor(plan.target)));
    }
  }
  return opset;
}

}  // namespace

StatusOr<ExportReport> ExportQdq(ir::Graph& graph, const QuantPlan& plan,
                                 const ExportOptions& options) {
  ExportReport report;
  report.opset_before = graph.onnx_opset();
  const int64_t target = RequiredOpset(plan, options);
  if (report.opset_before < target) {
    passes::UpgradeOpsetOptions upgrade;
    upgrade.target_opset = target;
    ASSIGN_OR_RETURN(bool upgraded, passes::UpgradeOpset(graph, upgrade));
    (void)upgraded;
  }
  report.opset_after = graph.onnx_opset();
  Exporter exporter(graph, plan, options, report);
  RETURN_IF_ERROR(exporter.Run());
  if (options.fold_casts) {
    ASSIGN_OR_RETURN(report.casts_folded, passes::FoldQdqCastsCount(graph));
  }
  RETURN_IF_ERROR(graph.SortTopologically());
  RETURN_IF_ERROR(ir::Verify(graph).WithContext("the exported QDQ graph is invalid (a qtune bug)"));
  return report;
}

std::optional<std::string> FloatNameOfDequantized(std::string_view name) {
  std::string_view suffix = kDequantizedSuffix;
  size_t pos = name.rfind(suffix);
  if (pos == std::string_view::npos || pos == 0) return std::nullopt;
  std::string_view rest = name.substr(pos + suffix.size());
  if (!rest.empty()) {
    if (rest[0] != '_' || rest.size() < 2) return std::nullopt;
    for (char c : rest.substr(1)) {
      if (c < '0' || c > '9') return std::nullopt;
    }
  }
  return std::string(name.substr(0, pos));
}

}  // namespace qtune::quant
