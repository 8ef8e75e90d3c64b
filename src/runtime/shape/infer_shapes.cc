#include "runtime/shape/infer_shapes.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/shape.h"
#include "runtime/control/control_flow.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime {
namespace {

// Ops whose output depends on data values, not only on shapes: never evaluated on zeros.
bool IsDataDependent(const std::string& op) {
  return op == "NonZero" || op == "Unique" || op == "NonMaxSuppression" || op == "Compress" ||
         op == "RandomNormal" || op == "RandomUniform" || op == "RandomNormalLike" ||
         op == "RandomUniformLike" || op == "Multinomial" || op == "Bernoulli";
}

// Ops without a shape function whose output sizes come from the values of these inputs:
// running them on zeros would give wrong sizes, so the inputs must be constants.
std::vector<size_t> SizeDeterminingInputs(const std::string& op) {
  static const auto* table = new std::map<std::string, std::vector<size_t>>{
      {"ConstantOfShape", {0}}, {"Range", {0, 1, 2}},
      {"OneHot", {1}},          {"TopK", {1}},
      {"MaxUnpool", {2}},       {"CenterCropPad", {1}},
      {"HannWindow", {0}},      {"HammingWindow", {0}},
      {"BlackmanWindow", {0}},  {"DFT", {1, 2}},
      {"STFT", {1, 3}},         {"MelWeightMatrix", {0, 1, 2, 3, 4}},
      {"Col2Im", {1, 2}},
  };
  auto it = table->find(op);
  return it == table->end() ? std::vector<size_t>{} : it->second;
}

// How many leading inputs ONNX requires of `op` at `opset` (0: not listed). Shape
// functions and kernels read these without checking, so a node missing one (a malformed
// or fuzzed model) is refused here, before anything reads it.
size_t RequiredInputs(const std::string& op, int64_t opset) {
  static const auto* table = new std::map<std::string, size_t>{
      {"Add", 2},
      {"Sub", 2},
      {"Mul", 2},
      {"Div", 2},
      {"Pow", 2},
      {"Mod", 2},
      {"And", 2},
      {"Or", 2},
      {"Xor", 2},
      {"Equal", 2},
      {"Greater", 2},
      {"Less", 2},
      {"GreaterOrEqual", 2},
      {"LessOrEqual", 2},
      {"BitShift", 2},
      {"PRelu", 2},
      {"Where", 3},
      {"Gather", 2},
      {"GatherElements", 2},
      {"GatherND", 2},
      {"Expand", 2},
      {"Tile", 2},
      {"MatMul", 2},
      {"MatMulInteger", 2},
      {"Gemm", 2},
      {"Conv", 2},
      {"ConvInteger", 2},
      {"ConvTranspose", 2},
      {"QuantizeLinear", 2},
      {"DequantizeLinear", 2},
      {"QLinearConv", 8},
      {"QLinearMatMul", 8},
      {"BatchNormalization", 5},
      {"LayerNormalization", 2},
      {"CastLike", 2},
      {"If", 1},
  };
  if (op == "Reshape") return opset >= 5 ? 2 : 1;
  if (op == "Slice") return opset >= 10 ? 3 : 1;
  if (op == "Pad") return opset >= 11 ? 2 : 1;
  if (op == "Upsample") return opset >= 9 ? 2 : 1;
  if (op == "Resize") return opset == 10 ? 2 : 1;
  if (op == "Unsqueeze") return opset >= 13 ? 2 : 1;
  auto it = table->find(op);
  return it == table->end() ? 0 : it->second;
}

Status CheckRequiredInputs(const ir::Node& node, int64_t opset) {
  size_t required = RequiredInputs(node.op_type(), opset);
  for (size_t i = 0; i < required; ++i) {
    if (i >= node.num_inputs() || node.input(i) == nullptr) {
      return InvalidArgumentError(node.DebugName() + ": input " + std::to_string(i) +
                                  " is missing; " + node.op_type() + " (opset " +
                                  std::to_string(opset) + ") requires its first " +
                                  std::to_string(required) + " inputs");
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<ValueInfo>> ShapeOrSize(const ir::Node& node, const ValueInfo& in,
                                             int64_t opset) {
  int64_t rank = static_cast<int64_t>(in.sizes.size());
  Tensor result;
  if (node.op_type() == "Size") {
    result = Tensor::Scalar<int64_t>(NumElements(in.sizes));
  } else {
    int64_t start = opset >= 15 ? node.GetInt("start", 0) : 0;
    int64_t end = opset >= 15 ? node.GetInt("end", rank) : rank;
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    std::vector<int64_t> dims(in.sizes.begin() + start, in.sizes.begin() + end);
    result = Tensor::FromVector<int64_t>({static_cast<int64_t>(dims.size())}, dims);
  }
  ValueInfo info = MakeInfo(DataType::kInt64, result.sizes());
  info.constant = std::move(result);
  return std::vector<ValueInfo>{std::move(info)};
}

StatusOr<std::vector<ValueInfo>> EvaluateToInfos(const ir::Node& node,
                                                 const std::vector<Tensor>& inputs, int64_t opset,
                                                 bool keep_values) {
  ASSIGN_OR_RETURN(std::vector<Tensor> outputs, EvaluateNode(node, inputs, opset));
  std::vector<ValueInfo> infos;
  for (Tensor& t : outputs) {
    ValueInfo info = MakeInfo(t.dtype(), t.sizes());
    if (keep_values) info.constant = std::move(t);
    infos.push_back(std::move(info));
  }
  return infos;
}

// Ops on sequences and optionals: they run as dynamic steps on RunValues
// (runtime/reference/value_kernels.h), never in a compiled plan.
bool IsValueOp(const std::string& op) {
  static const auto* ops = new std::set<std::string>{
      "SequenceEmpty", "SequenceConstruct", "SequenceInsert",     "SequenceAt",
      "SequenceErase", "SequenceLength",    "SplitToSequence",    "ConcatFromSequence",
      "SequenceMap",   "Optional",          "OptionalHasElement", "OptionalGetElement"};
  return ops->count(op) > 0;
}

bool IsDefaultDomain(const ir::Node& node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

// A node's output infos from its inputs' infos (`in` parallel to its inputs, `implicit` to
// its implicit inputs; all known).
StatusOr<std::vector<ValueInfo>> InferNode(const ir::Node& node,
                                           const std::vector<const ValueInfo*>& in,
                                           const std::vector<const ValueInfo*>& implicit,
                                           int64_t opset, const ShapeInferenceOptions& options) {
  bool all_constant = true;
  int64_t constant_elements = 0;
  for (const ValueInfo* info : in) {
    if (info == nullptr) continue;
    all_constant = all_constant && info->has_constant();
    constant_elements += NumElements(info->sizes);
  }
  const bool default_domain = IsDefaultDomain(node);
  const std::string& op = node.op_type();
  if (default_domain && (op == "Shape" || op == "Size") && !in.empty() && in[0] != nullptr) {
    return ShapeOrSize(node, *in[0], opset);
  }
  if (default_domain && all_constant && !IsDataDependent(op) &&
      constant_elements <= options.max_constant_eval_elements && node.implicit_inputs().empty() &&
      !HasSubgraphAttribute(node)) {
    // (If/Loop/Scan go to their shape functions: EvaluateNode has no kernels for them.)
    std::vector<Tensor> values;
    for (const ValueInfo* info : in) values.push_back(info ? info->constant : Tensor());
    return EvaluateToInfos(node, values, opset, /*keep_values=*/true);
  }
  const bool shaped_domain = default_domain || node.domain() == "qtune" ||
                             (node.domain() == "com.microsoft" && op == "MatMulNBits");
  if (ShapeFn fn = shaped_domain ? ShapeRegistry::Get().Find(op) : nullptr) {
    return fn(ShapeArgs{node, in, opset, implicit});
  }
  if (!default_domain) {
    return UnimplementedError(node.DebugName() + " (domain '" + node.domain() +
                              "'): output sizes cannot be determined before running");
  }
  if (IsDataDependent(op)) {
    return ValueComputedAtRunTime(node, "its outputs' sizes depend on the values of its inputs");
  }
  for (size_t i : SizeDeterminingInputs(op)) {
    if (i < in.size() && in[i] != nullptr && !in[i]->has_constant()) {
      return ValueComputedAtRunTime(node, "input " + std::to_string(i) + " ('" +
                                              node.input(i)->name() + "') sets the output sizes");
    }
  }
  // Refuse an op with no reference kernel before allocating its zero inputs (sizes from a
  // model's Tile/Expand constants may be gigabytes).
  if (ReferenceRegistry::Get().FindFor(node) == nullptr) {
    return UnimplementedError(node.DebugName() + ": op " + op + " (opset " + std::to_string(opset) +
                              ") has no shape function and no reference kernel");
  }
  std::vector<Tensor> zeros;
  for (const ValueInfo* info : in) {
    if (info == nullptr) {
      zeros.emplace_back();
    } else if (info->has_constant()) {
      zeros.push_back(info->constant);
    } else {
      ASSIGN_OR_RETURN(Tensor z, Tensor::Allocate(info->dtype, info->sizes));
      zeros.push_back(std::move(z));
    }
  }
  return EvaluateToInfos(node, zeros, opset, /*keep_values=*/false);
}

// Stores the node's output infos, refusing sizes no buffer can have.
Status StoreOutputs(const ir::Node& node, std::vector<ValueInfo> outs, ValueInfoMap& infos) {
  for (size_t i = 0; i < node.num_outputs(); ++i) {
    const ir::Value* out = node.output(i);
    if (out == nullptr) continue;
    if (i >= outs.size() || (outs[i].dtype == DataType::kUndefined && !out->uses().empty())) {
      return InternalError(node.DebugName() + ": shape inference gave no info for output '" +
                           out->name() + "'");
    }
    // Every op, whatever its shape function: sizes from a model's constants (Tile repeats,
    // Expand/Reshape shapes, Pad amounts, ...) may be negative or overflow; buffers of such
    // sizes cannot exist, so the model is refused here, naming the node.
    if (NumElements(outs[i].sizes) < 0) {
      return InvalidArgumentError(node.DebugName() + ": output '" + out->name() +
                                  "' would have sizes [" + SizesToString(outs[i].sizes) +
                                  "]: a negative size or too many elements");
    }
    infos[out] = std::move(outs[i]);
  }
  return Status::Ok();
}

}  // namespace

std::vector<size_t> SizeValueInputs(const ir::Node& node) {
  if (!IsDefaultDomain(node)) return {};
  static const auto* table = new std::map<std::string, std::vector<size_t>>{
      {"Reshape", {1}},         {"Expand", {1}},          {"Tile", {1}},
      {"Slice", {1, 2, 3, 4}},  {"Pad", {1, 3}},          {"Resize", {1, 2, 3}},
      {"Upsample", {1}},        {"Squeeze", {1}},         {"Unsqueeze", {1}},
      {"Split", {1}},           {"ReduceSum", {1}},       {"ReduceMean", {1}},
      {"ReduceMax", {1}},       {"ReduceMin", {1}},       {"ReduceProd", {1}},
      {"ReduceL1", {1}},        {"ReduceL2", {1}},        {"ReduceLogSum", {1}},
      {"ReduceLogSumExp", {1}}, {"ReduceSumSquare", {1}}, {"TopK", {1}},
  };
  auto it = table->find(node.op_type());
  if (it != table->end()) return it->second;
  return SizeDeterminingInputs(node.op_type());
}

bool IsComputedAtRunTime(const Status& status) {
  return status.code() == StatusCode::kUnimplemented &&
         status.message().find("computed at run time") != std::string::npos;
}

StatusOr<PartialShapes> InferShapesPartially(
    const ir::Graph& graph, const std::map<std::string, std::vector<int64_t>>& input_sizes,
    const ShapeInferenceOptions& options) {
  PartialShapes result;
  ValueInfoMap& infos = result.infos;
  int64_t opset = graph.onnx_opset();
  for (const ir::Value* input : graph.inputs()) {
    if (!input->type().is_tensor()) continue;  // a sequence or optional: known by running
    auto it = input_sizes.find(input->name());
    if (it == input_sizes.end()) {
      return InvalidArgumentError("no sizes given for graph input '" + input->name() + "'");
    }
    infos[input] = MakeInfo(input->dtype(), it->second);
  }
  for (const ir::Value* init : graph.initializers()) {
    ValueInfo info = MakeInfo(init->dtype(), init->initializer().sizes());
    info.constant = init->initializer();
    infos[init] = std::move(info);
  }
  auto defer = [&](const ir::Node* node, Status why) {
    if (result.deferred.empty()) result.first_deferral = std::move(why);
    result.deferred.push_back(node);
  };
  ASSIGN_OR_RETURN(std::vector<ir::Node*> order, graph.TopologicalOrder());
  for (const ir::Node* node : order) {
    if (IsDefaultDomain(*node)) RETURN_IF_ERROR(CheckRequiredInputs(*node, opset));
    std::vector<const ValueInfo*> in, implicit;
    const ir::Value* unknown = nullptr;
    for (const ir::Value* v : node->inputs()) {
      auto it = v == nullptr ? infos.end() : infos.find(v);
      if (v != nullptr && it == infos.end()) unknown = v;
      in.push_back(it == infos.end() ? nullptr : &it->second);
    }
    for (const ir::Value* v : node->implicit_inputs()) {
      auto it = infos.find(v);
      if (it == infos.end()) unknown = v;
      implicit.push_back(it == infos.end() ? nullptr : &it->second);
    }
    if (IsDefaultDomain(*node) && IsValueOp(node->op_type())) {
      defer(node, ValueComputedAtRunTime(*node, "it works on sequences or optionals"));
      continue;
    }
    if (unknown != nullptr) {
      defer(node, ValueComputedAtRunTime(
                      *node, "input '" + unknown->name() + "' is known only by running"));
      continue;
    }
    StatusOr<std::vector<ValueInfo>> outs = InferNode(*node, in, implicit, opset, options);
    if (!outs.ok()) {
      // If/Loop/Scan whose sizes depend on the condition or trip count (or whose bodies
      // do) run their bodies step by step instead.
      const bool control_flow =
          HasSubgraphAttribute(*node) && outs.status().code() == StatusCode::kUnimplemented;
      if (IsComputedAtRunTime(outs.status()) || control_flow) {
        defer(node, outs.status());
        continue;
      }
      // Kernels evaluated on constants may fail without naming the node (an allocation
      // of sizes a model's values ask for): name it.
      const bool named =
          !node->name().empty() && outs.status().message().find(node->name()) != std::string::npos;
      return named ? outs.status() : outs.status().WithContext(node->DebugName());
    }
    RETURN_IF_ERROR(StoreOutputs(*node, std::move(*outs), infos));
  }
  return result;
}

StatusOr<ValueInfoMap> InferShapes(const ir::Graph& graph,
                                   const std::map<std::string, std::vector<int64_t>>& input_sizes,
                                   const ShapeInferenceOptions& options) {
  ASSIGN_OR_RETURN(PartialShapes partial, InferShapesPartially(graph, input_sizes, options));
  if (!partial.deferred.empty()) return partial.first_deferral;
  return std::move(partial.infos);
}

}  // namespace qtune::runtime
