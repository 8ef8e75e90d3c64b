#include "util/qdq_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/quant_math.h"

namespace qtune::testing {
namespace {

struct Quant {
  float scale = 1.0f;
  int32_t zero_point = 0;
  DataType type = DataType::kUint8;
};

bool Is(const ir::Node* node, const char* op) {
  return node != nullptr && node->op_type() == op && node->domain().empty();
}

bool IsOneOf(const ir::Node* node, std::initializer_list<const char*> ops) {
  return std::any_of(ops.begin(), ops.end(), [&](const char* op) { return Is(node, op); });
}

bool IsLinear(const ir::Node* node) { return IsOneOf(node, {"Conv", "Gemm", "MatMul"}); }
bool IsPassThrough(const ir::Node* node) {
  return IsOneOf(node, {"MaxPool", "AveragePool", "GlobalAveragePool", "Reshape", "Flatten",
                        "Transpose", "Squeeze", "Unsqueeze", "Resize"});
}
bool IsActivation(const ir::Node* node) { return IsOneOf(node, {"Relu", "Clip"}); }

ir::Node* SoleConsumer(const ir::Value* v) {
  if (v->is_graph_output() || v->uses().size() != 1) return nullptr;
  return v->uses()[0].node;
}

Tensor Scalar(DataType type, double v) {
  Tensor t = *Tensor::Allocate(type, {});
  if (type == DataType::kFloat32) t.data<float>()[0] = static_cast<float>(v);
  if (type == DataType::kUint8) t.data<uint8_t>()[0] = static_cast<uint8_t>(v);
  if (type == DataType::kInt8) t.data<int8_t>()[0] = static_cast<int8_t>(v);
  return t;
}

class QdqBuilder {
 public:
  QdqBuilder(ir::Graph& graph, const QdqStyle& style,
             std::map<std::string, std::pair<float, float>> ranges)
      : g_(graph), style_(style), ranges_(std::move(ranges)) {}

  Status Build() {
    if (g_.onnx_opset() < 10) return InvalidArgumentError("QuantizeLinear needs opset >= 10");
    if (style_.per_channel && g_.onnx_opset() < 13) {
      return InvalidArgumentError("per-channel weights need opset >= 13; use per_channel=false");
    }
    ASSIGN_OR_RETURN(std::vector<ir::Node*> order, g_.TopologicalOrder());
    for (ir::Node* node : order) {
      if (style_.quantize_all_ops) {
        RETURN_IF_ERROR(QuantizeAllOpsStyle(node));
      } else {
        RETURN_IF_ERROR(InputsOnlyStyle(node));
      }
    }
    for (ir::Node* node : order) {
      if (IsLinear(node) && quant_.count(node->input(0))) RETURN_IF_ERROR(QuantizeWeights(node));
    }
    return Status::Ok();
  }

 private:
  // ONNX Runtime: inputs and outputs of quantizable ops, one Q/DQ pair per tensor shared
  // by every reader; an activation right after a Conv/Gemm/Add is quantized after it.
  Status QuantizeAllOpsStyle(ir::Node* node) {
    bool quantizable =
        IsLinear(node) || Is(node, "Add") || Is(node, "Concat") || IsPassThrough(node);
    if (!quantizable &&
        !(IsActivation(node) && quant_.count(node->input(0)) == 0 &&
          node->input(0)->producer() != nullptr &&
          (IsLinear(node->input(0)->producer()) || Is(node->input(0)->producer(), "Add")))) {
      return Status::Ok();
    }
    if (quantizable) {
      size_t data_inputs = IsPassThrough(node) || IsLinear(node) ? 1 : node->num_inputs();
      if (Is(node, "MatMul") && !node->input(1)->is_initializer()) data_inputs = 2;
      for (size_t i = 0; i < data_inputs; ++i) {
        ir::Value* in = node->input(i);
        if (in != nullptr && !in->is_initializer())
          RETURN_IF_ERROR(QuantizeShared(in, std::nullopt));
      }
    }
    ir::Value* out = node->output(0);
    ir::Node* next = SoleConsumer(out);
    if (!IsActivation(node) && next != nullptr && IsActivation(next)) return Status::Ok();
    std::optional<Quant> inherit;
    if (IsPassThrough(node) && quant_.count(node->input(0))) inherit = quant_.at(node->input(0));
    return QuantizeShared(out, inherit);
  }

  // ModelOpt / TensorRT: only the inputs of linear ops, and the shortcut input of a
  // residual Add (the input not produced by a linear op).
  Status InputsOnlyStyle(ir::Node* node) {
    if (IsLinear(node)) return QuantizeFor(node, 0);
    if (!Is(node, "Add") || node->input(0)->is_initializer() || node->input(1)->is_initializer()) {
      return Status::Ok();
    }
    for (int i = 0; i < 2; ++i) {
      ir::Node* branch = node->input(i)->producer();
      ir::Node* other = node->input(1 - i)->producer();
      if (branch != nullptr && IsLinear(branch) && !(other != nullptr && IsLinear(other))) {
        return QuantizeFor(node, 1 - i);
      }
    }
    return Status::Ok();
  }

  Quant ActivationQuant(const ir::Value* v) const {
    auto [lo, hi] = ranges_.at(v->name());
    lo = std::min(lo, 0.0f);
    hi = std::max(hi, 0.0f);
    Quant q;
    if (style_.unsigned_activations) {
      q.type = DataType::kUint8;
      q.scale = std::max((hi - lo) / 255.0f, 1e-8f);
      q.zero_point = static_cast<int32_t>(std::clamp(std::nearbyint(-lo / q.scale), 0.0f, 255.0f));
    } else {
      q.type = DataType::kInt8;
      q.scale = std::max(std::max(-lo, hi) / 127.0f, 1e-8f);
    }
    return q;
  }

  // Q -> DQ on `value`; returns the DQ output. Readers are not changed.
  StatusOr<ir::Value*> AddPair(ir::Value* value, const Quant& q) {
    ASSIGN_OR_RETURN(ir::Value * scale,
                     g_.AddInitializer(g_.UniqueValueName(value->name() + "_scale"),
                                       Scalar(DataType::kFloat32, q.scale)));
    ASSIGN_OR_RETURN(ir::Value * zp,
                     g_.AddInitializer(g_.UniqueValueName(value->name() + "_zero_point"),
                                       Scalar(q.type, q.zero_point)));
    ir::NodeSpec qs{"QuantizeLinear",
                    "",
                    g_.UniqueNodeName(value->name() + "_QuantizeLinear"),
                    {value, scale, zp},
                    {g_.UniqueValueName(value->name() + "_quantized")},
                    {},
                    {},
                    ""};
    ASSIGN_OR_RETURN(ir::Node * qn, g_.AddNode(std::move(qs)));
    ir::NodeSpec ds{"DequantizeLinear",
                    "",
                    g_.UniqueNodeName(value->name() + "_DequantizeLinear"),
                    {qn->output(0), scale, zp},
                    {g_.UniqueValueName(value->name() + "_dequantized")},
                    {},
                    {},
                    ""};
    ASSIGN_OR_RETURN(ir::Node * dn, g_.AddNode(std::move(ds)));
    quant_[value] = q;
    quant_[dn->output(0)] = q;
    dq_[value] = dn->output(0);
    return dn->output(0);
  }

  Status QuantizeShared(ir::Value* value, std::optional<Quant> inherit) {
    if (quant_.count(value) ||
        value->dtype() != DataType::kFloat32 && value->dtype() != DataType::kUndefined) {
      return Status::Ok();
    }
    if (!ranges_.count(value->name())) return Status::Ok();
    std::vector<ir::Use> uses = value->uses();
    ASSIGN_OR_RETURN(ir::Value * dq, AddPair(value, inherit ? *inherit : ActivationQuant(value)));
    for (const ir::Use& use : uses) g_.SetNodeInput(use.node, use.input_index, dq);
    return Status::Ok();
  }

  Status QuantizeFor(ir::Node* consumer, size_t input) {
    ir::Value* value = consumer->input(input);
    if (value == nullptr || value->is_initializer() || !ranges_.count(value->name()))
      return Status::Ok();
    if (!dq_.count(value)) RETURN_IF_ERROR(AddPair(value, ActivationQuant(value)).status());
    g_.SetNodeInput(consumer, input, dq_.at(value));
    quant_[consumer->input(input)] = quant_.at(value);
    return Status::Ok();
  }

  // Per-channel (or per-tensor) symmetric int8 weights; int32 bias when asked.
  Status QuantizeWeights(ir::Node* node) {
    ir::Value* w = node->input(1);
    if (w == nullptr || !w->is_initializer() || w->initializer().dtype() != DataType::kFloat32) {
      return Status::Ok();
    }
    const Tensor& wt = w->initializer();
    int64_t axis = Is(node, "Conv") ? 0 : Is(node, "Gemm") && node->GetInt("transB", 0) ? 0 : 1;
    int64_t channels = wt.size(axis);
    int64_t inner = 1;
    for (size_t d = axis + 1; d < wt.rank(); ++d) inner *= wt.size(d);
    std::vector<float> amax(style_.per_channel ? channels : 1, 0.0f);
    const float* src = wt.data<float>();
    for (int64_t i = 0; i < wt.num_elements(); ++i) {
      size_t c = style_.per_channel ? (i / inner) % channels : 0;
      amax[c] = std::max(amax[c], std::fabs(src[i]));
    }
    Tensor scale =
        *Tensor::Allocate(DataType::kFloat32, style_.per_channel ? std::vector<int64_t>{channels}
                                                                 : std::vector<int64_t>{});
    for (size_t c = 0; c < amax.size(); ++c)
      scale.data<float>()[c] = std::max(amax[c], 1e-8f) / 127.0f;
    Tensor zp = *Tensor::Allocate(DataType::kInt8, scale.sizes());
    Tensor q = *Tensor::Allocate(DataType::kInt8, wt.sizes());
    for (int64_t i = 0; i < wt.num_elements(); ++i) {
      size_t c = style_.per_channel ? (i / inner) % channels : 0;
      q.data<int8_t>()[i] = QuantizeToInt<int8_t>(src[i], scale.data<float>()[c], 0);
    }
    std::string base = w->name();
    ASSIGN_OR_RETURN(ir::Value * sv, g_.AddInitializer(g_.UniqueValueName(base + "_scale"), scale));
    ASSIGN_OR_RETURN(ir::Value * zv,
                     g_.AddInitializer(g_.UniqueValueName(base + "_zero_point"), zp));
    std::vector<ir::Attribute> attrs;
    if (style_.per_channel) attrs.push_back(ir::Attribute::Int("axis", axis));
    ir::Value* dq_input = nullptr;
    if (style_.quantized_weights) {
      ASSIGN_OR_RETURN(dq_input, g_.AddInitializer(g_.UniqueValueName(base + "_quantized"), q));
    } else {
      ir::NodeSpec qs{"QuantizeLinear",
                      "",
                      g_.UniqueNodeName(base + "_QuantizeLinear"),
                      {w, sv, zv},
                      {g_.UniqueValueName(base + "_q")},
                      attrs,
                      {},
                      ""};
      ASSIGN_OR_RETURN(ir::Node * qn, g_.AddNode(std::move(qs)));
      dq_input = qn->output(0);
    }
    ir::NodeSpec ds{"DequantizeLinear",
                    "",
                    g_.UniqueNodeName(base + "_DequantizeLinear"),
                    {dq_input, sv, zv},
                    {g_.UniqueValueName(base + "_dequantized")},
                    attrs,
                    {},
                    ""};
    ASSIGN_OR_RETURN(ir::Node * dn, g_.AddNode(std::move(ds)));
    g_.SetNodeInput(node, 1, dn->output(0));

    ir::Value* b = node->input(2);
    if (!style_.int32_bias || b == nullptr || !b->is_initializer() ||
        b->initializer().num_elements() != channels) {
      return Status::Ok();
    }
    float x_scale = quant_.at(node->input(0)).scale;
    Tensor bias_scale = *Tensor::Allocate(DataType::kFloat32, scale.sizes());
    Tensor bias_q = *Tensor::Allocate(DataType::kInt32, {channels});
    for (int64_t c = 0; c < channels; ++c) {
      float s = x_scale * scale.data<float>()[style_.per_channel ? c : 0];
      bias_scale.data<float>()[style_.per_channel ? c : 0] = s;
      bias_q.data<int32_t>()[c] =
          static_cast<int32_t>(std::nearbyint(b->initializer().data<float>()[c] / s));
    }
    ASSIGN_OR_RETURN(ir::Value * bq,
                     g_.AddInitializer(g_.UniqueValueName(b->name() + "_quantized"), bias_q));
    ASSIGN_OR_RETURN(ir::Value * bs,
                     g_.AddInitializer(g_.UniqueValueName(b->name() + "_scale"), bias_scale));
    std::vector<ir::Attribute> bias_attrs;
    if (style_.per_channel) bias_attrs.push_back(ir::Attribute::Int("axis", 0));
    ir::NodeSpec bds{"DequantizeLinear",
                     "",
                     g_.UniqueNodeName(b->name() + "_DequantizeLinear"),
                     {bq, bs},
                     {g_.UniqueValueName(b->name() + "_dequantized")},
                     bias_attrs,
                     {},
                     ""};
    ASSIGN_OR_RETURN(ir::Node * bdn, g_.AddNode(std::move(bds)));
    g_.SetNodeInput(node, 2, bdn->output(0));
    return Status::Ok();
  }

  ir::Graph& g_;
  const QdqStyle& style_;
  std::map<std::string, std::pair<float, float>> ranges_;
  std::map<const ir::Value*, Quant> quant_;
  std::map<const ir::Value*, ir::Value*> dq_;
};

}  // namespace

StatusOr<std::unique_ptr<ir::Graph>> BuildNaiveQdq(const ir::Graph& model,
                                                   const runtime::NamedTensors& calibration,
                                                   const QdqStyle& style) {
  runtime::RunReferenceOptions options;
  options.keep_all_values = true;
  ASSIGN_OR_RETURN(runtime::NamedTensors values,
                   runtime::RunReference(model, calibration, options));
  for (const auto& input : calibration) values.push_back(input);
  std::map<std::string, std::pair<float, float>> ranges;
  for (const auto& [name, t] : values) {
    if (t.dtype() != DataType::kFloat32 || t.num_elements() == 0) continue;
    auto [lo, hi] = std::minmax_element(t.data<float>(), t.data<float>() + t.num_elements());
    ranges[name] = {*lo, *hi};
  }
  std::unique_ptr<ir::Graph> graph = model.Clone();
  QdqBuilder builder(*graph, style, std::move(ranges));
  RETURN_IF_ERROR(builder.Build());
  RETURN_IF_ERROR(graph->SortTopologically());
  return graph;
}

}  // namespace qtune::testing
