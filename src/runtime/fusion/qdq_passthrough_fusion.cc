// QDQ fusions that keep tensors in int8 around ops that do not need the float values:
//   DQ(x) -> MaxPool | AveragePool | GlobalAveragePool | Reshape | Flatten | Squeeze |
//            Unsqueeze | Transpose | Resize(nearest) | Concat -> Q
//     with the same type, scale and zero point on both sides => the op on the int8 data
//     (exact for the data-movement ops and max pooling; average pooling gets the scale and
//     zero point as attributes, kPoolScaleAttribute, and computes as the graph does);
//   DQ(a), DQ(b) -> Add [-> Relu] -> Q  (equal sizes)  => qtune::QAdd.
#include <algorithm>
#include <optional>

#include "runtime/fusion/fused_ops.h"
#include "runtime/fusion/fusion_pipeline.h"
#include "runtime/fusion/pattern_util.h"
#include "runtime/fusion/qdq_match.h"
#include "runtime/fusion/quant_ops.h"

namespace qtune::runtime {
namespace {

using pattern::IsDefaultOp;
using pattern::SoleConsumer;
using qdq::QParams;

// Ops that run on int8 data in both kernel tiers; `data_inputs` of them are tensors to
// keep quantized (the rest are shapes, axes, scales).
bool IsPassThroughOp(const ir::Node* node, size_t* data_inputs) {
  static constexpr const char* kSingle[] = {"MaxPool",   "AveragePool", "GlobalAveragePool",
                                            "Reshape",   "Flatten",     "Squeeze",
                                            "Unsqueeze", "Transpose",   "Resize"};
  for (const char* op : kSingle) {
    if (IsDefaultOp(node, op)) {
      if (std::string_view(op) == "Resize" && node->GetString("mode", "nearest") != "nearest") {
        return false;
      }
      *data_inputs = 1;
      return true;
    }
  }
  if (IsDefaultOp(node, "Concat")) {
    *data_inputs = node->num_inputs();
    return true;
  }
  return false;
}

struct PassThroughMatch {
  ir::Node* op = nullptr;
  ir::Node* q = nullptr;
  QParams params;                       // of the pair (the same on both sides)
  std::vector<ir::Value*> int8_inputs;  // replacement for the first data inputs
};

std::optional<PassThroughMatch> SelectPassThrough(ir::Node* op, const SizesByName& sizes) {
  size_t data_inputs = 0;
  if (!IsPassThroughOp(op, &data_inputs) || data_inputs == 0) return std::nullopt;
  for (size_t i = 1; i < op->num_outputs(); ++i) {
    const ir::Value* extra = op->output(i);
    if (extra != nullptr && (!extra->uses().empty() || extra->is_graph_output())) {
      return std::nullopt;  // MaxPool's indices are read
    }
  }
  ir::Node* q = SoleConsumer(op->output(0));
  std::optional<QParams> out = q ? qdq::PerTensorParams(q, sizes) : std::nullopt;
  if (!out) return std::nullopt;
  // Padding counted into an average is q = 0 in int8 but the zero point in real values.
  if (IsDefaultOp(op, "AveragePool") && op->GetInt("count_include_pad", 0) != 0 &&
      out->zero_point_value != 0) {
    return std::nullopt;
  }
  PassThroughMatch m{op, q, *out, {}};
  for (size_t i = 0; i < data_inputs; ++i) {
    ir::Node* dq = qdq::DequantizeProducer(op->input(i));
    std::optional<QParams> in = dq ? qdq::PerTensorParams(dq, sizes) : std::nullopt;
    if (!in || !qdq::SameQuantization(*in, *out)) return std::nullopt;
    m.int8_inputs.push_back(dq->input(0));
  }
  return m;
}

Status ApplyPassThrough(ir::Graph& graph, const PassThroughMatch& m) {
  ir::NodeSpec spec;
  spec.op_type = m.op->op_type();
  spec.domain = m.op->domain();
  spec.name = graph.UniqueNodeName(m.op->name() + "_int8");
  spec.inputs = m.op->inputs();
  std::copy(m.int8_inputs.begin(), m.int8_inputs.end(), spec.inputs.begin());
  spec.attributes = m.op->attributes();
  if (IsDefaultOp(m.op, "AveragePool") || IsDefaultOp(m.op, "GlobalAveragePool")) {
    spec.attributes.push_back(ir::Attribute::Float(kPoolScaleAttribute, m.params.scale_value));
    spec.attributes.push_back(
        ir::Attribute::Int(kPoolZeroPointAttribute, m.params.zero_point_value));
  }
  return pattern::ReplaceChain(graph, std::move(spec), m.q->output(0), {m.q, m.op}).status();
}

struct QAddMatch {
  ir::Node* add = nullptr;
  ir::Node* relu = nullptr;  // optional
  QParams a, b, y;
};

std::optional<QAddMatch> SelectQAdd(ir::Node* add, const SizesByName& sizes) {
  if (!IsDefaultOp(add, "Add") || add->num_inputs() != 2) return std::nullopt;
  QAddMatch m;
  m.add = add;
  for (int i = 0; i < 2; ++i) {
    ir::Node* dq = qdq::DequantizeProducer(add->input(i));
    std::optional<QParams> p = dq ? qdq::PerTensorParams(dq, sizes) : std::nullopt;
    if (!p) return std::nullopt;
    (i == 0 ? m.a : m.b) = *p;
  }
  auto sa = sizes.find(add->input(0)->name());
  auto sb = sizes.find(add->input(1)->name());
  if (sa == sizes.end() || sb == sizes.end() || sa->second.sizes != sb->second.sizes) {
    return std::nullopt;
  }
  ir::Node* next = SoleConsumer(add->output(0));
  if (IsDefaultOp(next, "Relu")) {
    m.relu = next;
    next = SoleConsumer(next->output(0));
  }
  std::optional<QParams> y = next ? qdq::PerTensorParams(next, sizes) : std::nullopt;
  if (!y) return std::nullopt;
  m.y = *y;
  return m;
}

Status ApplyQAdd(ir::Graph& graph, const QAddMatch& m) {
  ir::NodeSpec spec;
  spec.op_type = kQAdd;
  spec.domain = kQtuneDomain;
  spec.name = graph.UniqueNodeName(m.add->name() + "_int8");
  for (const QParams* p : {&m.a, &m.b, &m.y}) {
    ASSIGN_OR_RETURN(ir::Value * zp, qdq::ZeroPointValue(graph, *p));
    ir::Value* data = p == &m.y ? nullptr : p->node->input(0);
    if (data != nullptr) spec.inputs.push_back(data);
    spec.inputs.push_back(p->scale);
    spec.inputs.push_back(zp);
  }
  spec.attributes.push_back(ir::Attribute::String("activation", m.relu ? "Relu" : ""));
  std::vector<ir::Node*> chain = {m.add};
  if (m.relu != nullptr) chain.push_back(m.relu);
  chain.push_back(m.y.node);
  return pattern::ReplaceChain(graph, std::move(spec), m.y.node->output(0), chain).status();
}

}  // namespace

StatusOr<int> FuseQdqPassThrough(ir::Graph& graph, const SizesByName& sizes) {
  ASSIGN_OR_RETURN(int moves, pattern::FuseAll(
                                  graph, [&](ir::Node* n) { return SelectPassThrough(n, sizes); },
                                  ApplyPassThrough));
  ASSIGN_OR_RETURN(int adds,
                   pattern::FuseAll(
                       graph, [&](ir::Node* n) { return SelectQAdd(n, sizes); }, ApplyQAdd));
  RETURN_IF_ERROR(qdq::RemoveDeadQdqNodes(graph));
  return moves + adds;
}

}  // namespace qtune::runtime
