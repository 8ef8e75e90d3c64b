// DQ(x) -> f1 -> ... -> fk -> Q  =>  qtune::QLookup(x, table)   (see quant_ops.h)
// where each fi is an elementwise op of the chain value alone (its other inputs are
// one-element constants: x + 3, Clip(x, 0, 6), x / 6, Sigmoid(x), ...). An 8-bit input has
// only 256 codes, so the whole float chain and its requantization collapse into a table,
// computed here by running the chain's own nodes through the reference kernels on all
// 256 dequantized codes: the fused result equals the unfused one exactly.
#include <optional>

#include "core/quant_math.h"
#include "runtime/fusion/fused_ops.h"
#include "runtime/fusion/fusion_pipeline.h"
#include "runtime/fusion/pattern_util.h"
#include "runtime/fusion/qdq_match.h"
#include "runtime/fusion/quant_ops.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime {
namespace {

using pattern::IsDefaultOp;
using pattern::SoleConsumer;
using qdq::QParams;

bool IsElementwiseOp(const ir::Node* node) {
  static constexpr const char* kOps[] = {
      "Add",  "Sub",         "Mul",       "Div",  "Pow",  "Max",      "Min",     "Relu",
      "Clip", "LeakyRelu",   "Sigmoid",   "Tanh", "Exp",  "Abs",      "Neg",     "Sqrt",
      "Erf",  "HardSigmoid", "HardSwish", "Elu",  "Selu", "Softplus", "Identity"};
  for (const char* op : kOps) {
    if (IsDefaultOp(node, op)) return true;
  }
  return false;
}

// True when `node` computes an elementwise function of `value` alone: every other input is
// a one-element float32 constant, and the output has `value`'s sizes.
bool IsUnaryStep(const ir::Node* node, const ir::Value* value, const SizesByName& sizes) {
  if (!IsElementwiseOp(node) || node->num_outputs() != 1) return false;
  for (const ir::Value* in : node->inputs()) {
    if (in == nullptr || in == value) continue;
    if (!in->is_initializer() || in->initializer().num_elements() != 1 ||
        in->initializer().dtype() != DataType::kFloat32) {
      return false;
    }
  }
  auto a = sizes.find(value->name());
  auto b = sizes.find(node->output(0)->name());
  return a != sizes.end() && b != sizes.end() && a->second.sizes == b->second.sizes &&
         b->second.dtype == DataType::kFloat32;
}

struct LookupMatch {
  QParams x;
  ir::Node* first = nullptr;     // the chain's first op (reads the DQ output)
  std::vector<ir::Node*> chain;  // the float ops, then the Q
  QParams y;
};

std::optional<LookupMatch> SelectLookup(ir::Node* first, const SizesByName& sizes) {
  ir::Node* dq = nullptr;
  for (ir::Value* in : first->inputs()) {
    if ((dq = qdq::DequantizeProducer(in)) != nullptr) break;
  }
  std::optional<QParams> x = dq ? qdq::PerTensorParams(dq, sizes) : std::nullopt;
  if (!x || !IsUnaryStep(first, dq->output(0), sizes)) return std::nullopt;
  LookupMatch m{*x, first, {first}, {}};
  ir::Node* next = SoleConsumer(first->output(0));
  while (next != nullptr && IsUnaryStep(next, m.chain.back()->output(0), sizes)) {
    m.chain.push_back(next);
    next = SoleConsumer(next->output(0));
  }
  std::optional<QParams> y = next ? qdq::PerTensorParams(next, sizes) : std::nullopt;
  if (!y) return std::nullopt;
  m.y = *y;
  m.chain.push_back(next);
  return m;
}

template <typename In, typename Out>
StatusOr<Tensor> BuildTable(const LookupMatch& m, int64_t opset) {
  ASSIGN_OR_RETURN(Tensor value, Tensor::Allocate(DataType::kFloat32, {256}));
  for (int code = 0; code < 256; ++code) {
    In q = static_cast<In>(code + std::numeric_limits<In>::min());
    value.data<float>()[code] = DequantizeFromInt(q, m.x.scale_value, m.x.zero_point_value);
  }
  const ir::Value* current = m.x.node->output(0);
  for (size_t i = 0; i + 1 < m.chain.size(); ++i) {
    const ir::Node& node = *m.chain[i];
    std::vector<Tensor> inputs;
    for (const ir::Value* in : node.inputs()) {
      inputs.push_back(in == nullptr ? Tensor() : in == current ? value : in->initializer());
    }
    ASSIGN_OR_RETURN(std::vector<Tensor> out, EvaluateNode(node, inputs, opset));
    if (out.empty() || out[0].num_elements() != 256 || out[0].dtype() != DataType::kFloat32) {
      return InternalError(node.DebugName() + ": the lookup table step changed its size");
    }
    value = out[0];
    current = node.output(0);
  }
  ASSIGN_OR_RETURN(Tensor table, Tensor::Allocate(m.y.type, {256}));
  for (int code = 0; code < 256; ++code) {
    table.data<Out>()[code] =
        QuantizeToInt<Out>(value.data<float>()[code], m.y.scale_value, m.y.zero_point_value);
  }
  return table;
}

StatusOr<Tensor> Table(const LookupMatch& m, int64_t opset) {
  const bool in_u8 = m.x.type == DataType::kUint8, out_u8 = m.y.type == DataType::kUint8;
  if (in_u8)
    return out_u8 ? BuildTable<uint8_t, uint8_t>(m, opset) : BuildTable<uint8_t, int8_t>(m, opset);
  return out_u8 ? BuildTable<int8_t, uint8_t>(m, opset) : BuildTable<int8_t, int8_t>(m, opset);
}

Status ApplyLookup(ir::Graph& graph, const LookupMatch& m) {
  ASSIGN_OR_RETURN(Tensor table, Table(m, graph.onnx_opset()));
  ir::Node* q = m.chain.back();
  ASSIGN_OR_RETURN(ir::Value * table_value,
                   graph.AddInitializer(graph.UniqueValueName(q->output(0)->name() + "_table"),
                                        std::move(table)));
  ir::NodeSpec spec;
  spec.op_type = kQLookup;
  spec.domain = kQtuneDomain;
  spec.name = graph.UniqueNodeName(m.first->name() + "_lookup");
  spec.inputs = {m.x.node->input(0), table_value};
  return pattern::ReplaceChain(graph, std::move(spec), q->output(0), m.chain).status();
}

}  // namespace

StatusOr<int> FuseQdqLookup(ir::Graph& graph, const SizesByName& sizes) {
  ASSIGN_OR_RETURN(int count, pattern::FuseAll(
                                  graph, [&](ir::Node* node) { return SelectLookup(node, sizes); },
                                  ApplyLookup));
  RETURN_IF_ERROR(qdq::RemoveDeadQdqNodes(graph));
  return count;
}

}  // namespace qtune::runtime
