#include "passes/fold_qdq_casts.h"

#include <cmath>
#include <optional>

#include "core/float_convert.h"
#include "passes/pass_util.h"

namespace qtune::passes {
namespace {

bool IsScaleFloat(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat16 || t == DataType::kBfloat16;
}

size_t Width(DataType t) { return t == DataType::kFloat32 ? 4 : 2; }

bool IsNode(const ir::Node* node, const char* op) {
  return node != nullptr && IsDefaultDomain(*node) && node->op_type() == op;
}

// The Cast's target type, or kUndefined when it is not a float type we fold.
DataType CastTarget(const ir::Node& cast) {
  int64_t to = cast.GetInt("to", 0);
  if (to <= 0 || to > 22) return DataType::kUndefined;
  DataType t = static_cast<DataType>(to);
  return IsScaleFloat(t) ? t : DataType::kUndefined;
}

float ToFloat(const Tensor& t, size_t i) {
  switch (t.dtype()) {
    case DataType::kFloat32:
      return t.data<float>()[i];
    case DataType::kFloat16:
      return HalfToFloat(t.data<uint16_t>()[i]);
    default:
      return Bfloat16ToFloat(t.data<uint16_t>()[i]);
  }
}

// The scale converted to `to`, or nullopt when some element is not a normal number there.
std::optional<Tensor> ConvertScale(const Tensor& scale, DataType to) {
  if (!IsScaleFloat(scale.dtype())) return std::nullopt;
  auto allocated = Tensor::Allocate(to, scale.sizes());
  if (!allocated.ok()) return std::nullopt;
  Tensor out = std::move(allocated).value();
  for (int64_t i = 0; i < scale.num_elements(); ++i) {
    float v = ToFloat(scale, static_cast<size_t>(i));
    float back = v;
    if (to == DataType::kFloat32) {
      out.data<float>()[i] = v;
    } else if (to == DataType::kFloat16) {
      out.data<uint16_t>()[i] = FloatToHalf(v);
      back = HalfToFloat(out.data<uint16_t>()[i]);
    } else {
      out.data<uint16_t>()[i] = FloatToBfloat16(v);
      back = Bfloat16ToFloat(out.data<uint16_t>()[i]);
    }
    if (!std::isnormal(back)) return std::nullopt;
  }
  return out;
}

// Makes `node`'s scale input (index 1) hold `to`, copying a shared scale. False (and no
// change) when it cannot.
StatusOr<bool> RetypeScale(ir::Graph& graph, ir::Node* node, DataType to) {
  ir::Value* scale = node->input(1);
  if (scale == nullptr || !IsConstant(scale)) return false;
  if (scale->dtype() == to) return true;
  if (to != DataType::kFloat32 && graph.onnx_opset() < 19) return false;
  if (Width(to) > Width(scale->dtype())) return false;
  std::optional<Tensor> converted = ConvertScale(scale->initializer(), to);
  if (!converted.has_value()) return false;
  if (scale->uses().size() == 1 && !scale->is_graph_output()) {
    RETURN_IF_ERROR(graph.SetInitializer(scale, std::move(*converted)));
    return true;
  }
  std::string name = graph.UniqueValueName(scale->name() + "_" + std::string(DataTypeName(to)));
  ASSIGN_OR_RETURN(ir::Value * copy, graph.AddInitializer(name, std::move(*converted)));
  graph.SetNodeInput(node, 1, copy);
  return true;
}

// Cast -> Q: the Q reads the Cast's input.
StatusOr<bool> FoldCastIntoQ(ir::Graph& graph, ir::Node* q) {
  ir::Value* x = q->input(0);
  if (x == nullptr || x->producer() == nullptr || !IsNode(x->producer(), "Cast")) return false;
  ir::Node* cast = x->producer();
  ir::Value* source = cast->input(0);
  if (source == nullptr || CastTarget(*cast) == DataType::kUndefined) return false;
  const DataType s = source->dtype();
  if (s != DataType::kUndefined) {
    if (!IsScaleFloat(s)) return false;
    ASSIGN_OR_RETURN(bool retyped, RetypeScale(graph, q, s));
    if (!retyped) return false;
  }
  graph.SetNodeInput(q, 0, source);
  if (!IsLive(x)) RETURN_IF_ERROR(graph.RemoveNode(cast));
  return true;
}

// DQ -> Cast: the DQ produces the Cast's type and takes over the Cast's output name.
StatusOr<bool> FoldCastIntoDq(ir::Graph& graph, ir::Node* cast) {
  ir::Value* y = cast->input(0);
  ir::Value* out = cast->output(0);
  if (y == nullptr || out == nullptr || !IsNode(y->producer(), "DequantizeLinear")) return false;
  if (y->uses().size() != 1 || y->is_graph_output() || HasImplicitUse(y)) return false;
  const DataType to = CastTarget(*cast);
  if (to == DataType::kUndefined) return false;
  ir::Node* dq = y->producer();
  ASSIGN_OR_RETURN(bool retyped, RetypeScale(graph, dq, to));
  if (!retyped) return false;
  ir::TensorType type = y->type();
  type.dtype = to;
  y->set_type(type);
  RETURN_IF_ERROR(ReplaceNodeOutputKeepingName(graph, cast, out, y));
  return true;
}

}  // namespace

StatusOr<int> FoldQdqCastsCount(ir::Graph& graph) {
  int folded = 0;
  // Folding into a Q may remove a Cast, so collect the Qs before changing anything.
  std::vector<ir::Node*> quantizers;
  for (ir::Node* node : graph.nodes()) {
    if (IsNode(node, "QuantizeLinear")) quantizers.push_back(node);
  }
  for (ir::Node* q : quantizers) {
    ASSIGN_OR_RETURN(bool changed, FoldCastIntoQ(graph, q));
    folded += changed ? 1 : 0;
  }
  // Folding into a DQ removes only the Cast being visited.
  for (ir::Node* node : graph.nodes()) {
    if (IsNode(node, "Cast")) {
      ASSIGN_OR_RETURN(bool changed, FoldCastIntoDq(graph, node));
      folded += changed ? 1 : 0;
    }
  }
  return folded;
}

StatusOr<bool> FoldQdqCasts(ir::Graph& graph, const PassOptions& /*options*/) {
  ASSIGN_OR_RETURN(int folded, FoldQdqCastsCount(graph));
  return folded > 0;
}

}  // namespace qtune::passes
