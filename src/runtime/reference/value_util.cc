#include "runtime/reference/value_util.h"

#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {

std::string_view ValueKindName(const RunValue& value) {
  switch (value.kind()) {
    case RunValue::Kind::kSequence:
      return "a sequence";
    case RunValue::Kind::kNone:
      return "an empty optional";
    case RunValue::Kind::kTensor:
      break;
  }
  return value.tensor().is_valid() ? "a tensor" : "an omitted input";
}

const RunValue* PresentInput(const ValueKernelArgs& args, size_t i) {
  if (i >= args.inputs.size() || !args.inputs[i].is_present()) return nullptr;
  return &args.inputs[i];
}

StatusOr<const Tensor*> OptionalTensorInput(const ValueKernelArgs& args, size_t i,
                                            std::string_view what) {
  const RunValue* value = PresentInput(args, i);
  if (value == nullptr) return static_cast<const Tensor*>(nullptr);
  if (!value->is_tensor()) {
    return NodeError(args.node, "input " + std::to_string(i) + " ('" + std::string(what) +
                                    "') must be a tensor but is " +
                                    std::string(ValueKindName(*value)));
  }
  return &value->tensor();
}

StatusOr<const Tensor*> TensorInput(const ValueKernelArgs& args, size_t i, std::string_view what) {
  ASSIGN_OR_RETURN(const Tensor* t, OptionalTensorInput(args, i, what));
  if (t == nullptr) {
    const std::string_view kind =
        i < args.inputs.size() ? ValueKindName(args.inputs[i]) : "an omitted input";
    return NodeError(args.node, "input " + std::to_string(i) + " ('" + std::string(what) +
                                    "') is required but is " + std::string(kind));
  }
  return t;
}

StatusOr<const RunValue*> SequenceInput(const ValueKernelArgs& args, size_t i,
                                        std::string_view what) {
  if (i >= args.inputs.size() || !args.inputs[i].is_sequence()) {
    const std::string_view kind =
        i < args.inputs.size() ? ValueKindName(args.inputs[i]) : "an omitted input";
    return NodeError(args.node, "input " + std::to_string(i) + " ('" + std::string(what) +
                                    "') must be a sequence but is " + std::string(kind));
  }
  return &args.inputs[i];
}

Tensor Keepable(const Tensor& t) { return t.is_borrowed() ? t.Clone() : t; }

Status CheckElementType(const ir::Node& node, DataType elem_dtype, const Tensor& t,
                        std::string_view what) {
  if (elem_dtype == DataType::kUndefined || t.dtype() == elem_dtype) return Status::Ok();
  return NodeError(node, std::string(what) + " has element type " +
                             std::string(DataTypeName(t.dtype())) + " but the sequence holds " +
                             std::string(DataTypeName(elem_dtype)) +
                             " tensors; a sequence's elements all have one type");
}

StatusOr<int64_t> ReadPosition(const ir::Node& node, const Tensor& t, std::string_view what) {
  if (t.dtype() != DataType::kInt32 && t.dtype() != DataType::kInt64) {
    return NodeError(node, std::string(what) + " must be int32 or int64 but is " +
                               std::string(DataTypeName(t.dtype())));
  }
  return ReadIndexScalar(node, t, what);
}

StatusOr<int64_t> NormalizePosition(const ir::Node& node, int64_t position, int64_t size,
                                    bool allow_end) {
  const int64_t last = allow_end ? size : size - 1;
  if (position < -size || position > last) {
    if (size == 0 && !allow_end) {
      return NodeError(
          node, "position " + std::to_string(position) + " is out of range: the sequence is empty");
    }
    return NodeError(node, "position " + std::to_string(position) + " is out of range [" +
                               std::to_string(-size) + ", " + std::to_string(last) +
                               "] for a sequence of " + std::to_string(size) + " tensors");
  }
  return position < 0 ? position + size : position;
}

}  // namespace qtune::runtime::reference
