#include "ir/constant.h"

namespace qtune::ir {

bool IsConstantNode(const Node& node) {
  return node.op_type() == "Constant" && (node.domain().empty() || node.domain() == "ai.onnx");
}

StatusOr<Tensor> ConstantValue(const Node& node) {
  if (!IsConstantNode(node)) {
    return InvalidArgumentError(node.DebugName() + " is not a Constant node");
  }
  if (node.attributes().size() != 1) {
    return InvalidArgumentError(node.DebugName() + " must carry exactly one value attribute, has " +
                                std::to_string(node.attributes().size()));
  }
  const Attribute& a = node.attributes()[0];
  if (a.name == "value" && a.type == AttributeType::kTensor && a.t.is_valid()) return a.t;
  if (a.name == "value_float" && a.type == AttributeType::kFloat) return Tensor::Scalar<float>(a.f);
  if (a.name == "value_int" && a.type == AttributeType::kInt) return Tensor::Scalar<int64_t>(a.i);
  if (a.name == "value_floats" && a.type == AttributeType::kFloats) {
    return Tensor::FromVector<float>({static_cast<int64_t>(a.floats.size())}, a.floats);
  }
  if (a.name == "value_ints" && a.type == AttributeType::kInts) {
    return Tensor::FromVector<int64_t>({static_cast<int64_t>(a.ints.size())}, a.ints);
  }
  if (a.name == "value_string" || a.name == "value_strings" || a.name == "sparse_value") {
    return UnimplementedError(node.DebugName() + ": Constant attribute '" + a.name +
                              "' is not supported");
  }
  return InvalidArgumentError(node.DebugName() + " has attribute '" + a.name + "' of type " +
                              std::string(AttributeTypeName(a.type)) + ", not a Constant value");
}

}  // namespace qtune::ir
