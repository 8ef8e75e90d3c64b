#include "runtime/shape/infer_shapes.h"

#include <algorithm>
#include <map>

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
      {"STFT", {1, 3}},         {"MelWeightMatrix", {0, 1}},
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

}  // namespace

StatusOr<ValueInfoMap> InferShapes(const ir::Graph& graph,
                                   const std::map<std::string, std::vector<int64_t>>& input_sizes,
                                   const ShapeInferenceOptions& options) {
  ValueInfoMap infos;
  int64_t opset = graph.onnx_opset();
  for (const ir::Value* input : graph.inputs()) {
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
  ASSIGN_OR_RETURN(std::vector<ir::Node*> order, graph.TopologicalOrder());
  for (const ir::Node* node : order) {
    bool default_domain_op = node->domain().empty() || node->domain() == "ai.onnx";
    if (default_domain_op) RETURN_IF_ERROR(CheckRequiredInputs(*node, opset));
    std::vector<const ValueInfo*> in;
    bool all_constant = true;
    int64_t constant_elements = 0;
    for (const ir::Value* v : node->inputs()) {
      if (v == nullptr) {
        in.push_back(nullptr);
        continue;
      }
      auto it = infos.find(v);
      if (it == infos.end()) {
        return InternalError(node->DebugName() + ": input '" + v->name() + "' has no shape");
      }
      in.push_back(&it->second);
      all_constant = all_constant && it->second.has_constant();
      constant_elements += NumElements(it->second.sizes);
    }
    std::vector<const ValueInfo*> implicit;
    for (const ir::Value* v : node->implicit_inputs()) {
      auto it = infos.find(v);
      if (it == infos.end()) {
        return InternalError(node->DebugName() + ": outer value '" + v->name() + "' has no shape");
      }
      implicit.push_back(&it->second);
    }
    bool default_domain = node->domain().empty() || node->domain() == "ai.onnx";
    const std::string& op = node->op_type();
    StatusOr<std::vector<ValueInfo>> result = std::vector<ValueInfo>{};
    if (default_domain && (op == "Shape" || op == "Size") && !in.empty() && in[0] != nullptr) {
      result = ShapeOrSize(*node, *in[0], opset);
    } else if (default_domain && all_constant && !IsDataDependent(op) &&
               constant_elements <= options.max_constant_eval_elements &&
               node->implicit_inputs().empty() && !HasSubgraphAttribute(*node)) {
      // (If/Loop/Scan go to their shape functions: EvaluateNode has no kernels for them.)
      std::vector<Tensor> values;
      for (const ValueInfo* info : in) values.push_back(info ? info->constant : Tensor());
      result = EvaluateToInfos(*node, values, opset, /*keep_values=*/true);
    } else if (ShapeFn fn = (default_domain || node->domain() == "qtune")
                                ? ShapeRegistry::Get().Find(op)
                                : nullptr) {
      result = fn(ShapeArgs{*node, in, opset, implicit});
    } else if (default_domain && !IsDataDependent(op)) {
      for (size_t i : SizeDeterminingInputs(op)) {
        if (i < in.size() && in[i] != nullptr && !in[i]->has_constant()) {
          return UnimplementedError(node->DebugName() + ": input " + std::to_string(i) + " ('" +
                                    node->input(i)->name() +
                                    "') sets the output sizes but is computed at run time; "
                                    "qtune needs it to be constant");
        }
      }
      // Refuse an op with no reference kernel before allocating its zero inputs (sizes from
      // a model's Tile/Expand constants may be gigabytes).
      if (ReferenceRegistry::Get().FindFor(*node) == nullptr) {
        return UnimplementedError(node->DebugName() + ": op " + op + " (opset " +
                                  std::to_string(opset) +
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
      result = EvaluateToInfos(*node, zeros, opset, /*keep_values=*/false);
    } else {
      result = UnimplementedError(node->DebugName() + " (domain '" + node->domain() +
                                  "'): output sizes cannot be determined before running");
    }
    if (!result.ok()) return result.status();
    std::vector<ValueInfo>& outs = *result;
    for (size_t i = 0; i < node->num_outputs(); ++i) {
      const ir::Value* out = node->output(i);
      if (out == nullptr) continue;
      if (i >= outs.size() || (outs[i].dtype == DataType::kUndefined && !out->uses().empty())) {
        return InternalError(node->DebugName() + ": shape inference gave no info for output '" +
                             out->name() + "'");
      }
      // Every op, whatever its shape function: sizes from a model's constants (Tile repeats,
      // Expand/Reshape shapes, Pad amounts, ...) may be negative or overflow; buffers of such
      // sizes cannot exist, so the model is refused here, naming the node.
      if (NumElements(outs[i].sizes) < 0) {
        return InvalidArgumentError(node->DebugName() + ": output '" + out->name() +
                                    "' would have sizes [" + SizesToString(outs[i].sizes) +
                                    "]: a negative size or too many elements");
      }
      infos[out] = std::move(outs[i]);
    }
  }
  return infos;
}

}  // namespace qtune::runtime
