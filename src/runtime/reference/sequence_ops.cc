// Sequence ops on RunValues: SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceAt,
// SequenceErase, SequenceLength (opset 11). SplitToSequence and ConcatFromSequence, which
// move data between one tensor and a sequence, are in sequence_split_concat.cc.
#include <string>
#include <vector>

#include "runtime/reference/tensor_util.h"
#include "runtime/reference/value_kernels.h"
#include "runtime/reference/value_util.h"

namespace qtune::runtime {
namespace {

using reference::NodeError;
using Result = StatusOr<std::vector<RunValue>>;

Status CheckInputCount(const ValueKernelArgs& args, size_t min_count, size_t max_count) {
  const size_t n = args.inputs.size();
  if (n >= min_count && n <= max_count) return Status::Ok();
  const std::string expected = min_count == max_count
                                   ? std::to_string(min_count)
                                   : std::to_string(min_count) + " to " + std::to_string(max_count);
  return NodeError(args.node, "expects " + expected + " inputs but has " + std::to_string(n));
}

// SequenceEmpty: an empty sequence of the `dtype` attribute's type (default float32).
Result SequenceEmpty(const ValueKernelArgs& args) {
  RETURN_IF_ERROR(CheckInputCount(args, 0, 0));
  const int64_t code = args.node.GetInt("dtype", static_cast<int64_t>(DataType::kFloat32));
  if (code < 0 || code > INT32_MAX || !IsKnownDataType(static_cast<int32_t>(code))) {
    return NodeError(args.node, "attribute 'dtype' is " + std::to_string(code) +
                                    ", which is not an ONNX data type");
  }
  const auto dtype = static_cast<DataType>(code);
  if (!IsStorableDataType(dtype)) {
    return reference::UnsupportedType(args.node, dtype, "attribute 'dtype'");
  }
  return std::vector<RunValue>{RunValue::Sequence(dtype, {})};
}

// SequenceConstruct: a sequence of its inputs (at least one, all of one type).
Result SequenceConstruct(const ValueKernelArgs& args) {
  if (args.inputs.empty()) {
    return NodeError(args.node, "needs at least one input (use SequenceEmpty for none)");
  }
  std::vector<Tensor> elements;
  elements.reserve(args.inputs.size());
  DataType elem_dtype = DataType::kUndefined;
  for (size_t i = 0; i < args.inputs.size(); ++i) {
    const std::string what = "input " + std::to_string(i);
    ASSIGN_OR_RETURN(const Tensor* t, reference::TensorInput(args, i, "inputs"));
    if (i == 0) elem_dtype = t->dtype();
    RETURN_IF_ERROR(reference::CheckElementType(args.node, elem_dtype, *t, what));
    elements.push_back(t->Clone());
  }
  return std::vector<RunValue>{RunValue::Sequence(elem_dtype, std::move(elements))};
}

// The elements of a sequence input, shared (or copied if borrowed) for an output sequence.
std::vector<Tensor> KeptElements(const RunValue& sequence) {
  std::vector<Tensor> elements;
  elements.reserve(sequence.sequence().size() + 1);
  for (const Tensor& t : sequence.sequence()) elements.push_back(reference::Keepable(t));
  return elements;
}

// The sequence's element type, or `fallback`'s when the sequence does not record one.
DataType ElementTypeOr(const RunValue& sequence, const Tensor& fallback) {
  return sequence.elem_dtype() != DataType::kUndefined ? sequence.elem_dtype() : fallback.dtype();
}

// SequenceInsert: `tensor` inserted at `position` (default: at the end; negative counts
// from the end; position == length appends).
Result SequenceInsert(const ValueKernelArgs& args) {
  RETURN_IF_ERROR(CheckInputCount(args, 2, 3));
  ASSIGN_OR_RETURN(const RunValue* sequence, reference::SequenceInput(args, 0, "input_sequence"));
  ASSIGN_OR_RETURN(const Tensor* tensor, reference::TensorInput(args, 1, "tensor"));
  RETURN_IF_ERROR(
      reference::CheckElementType(args.node, sequence->elem_dtype(), *tensor, "input 'tensor'"));
  const int64_t length = static_cast<int64_t>(sequence->sequence().size());
  int64_t position = length;
  ASSIGN_OR_RETURN(const Tensor* position_tensor,
                   reference::OptionalTensorInput(args, 2, "position"));
  if (position_tensor != nullptr) {
    ASSIGN_OR_RETURN(int64_t raw,
                     reference::ReadPosition(args.node, *position_tensor, "input 'position'"));
    ASSIGN_OR_RETURN(position,
                     reference::NormalizePosition(args.node, raw, length, /*allow_end=*/true));
  }
  std::vector<Tensor> elements = KeptElements(*sequence);
  elements.insert(elements.begin() + position, tensor->Clone());
  return std::vector<RunValue>{
      RunValue::Sequence(ElementTypeOr(*sequence, *tensor), std::move(elements))};
}

// SequenceAt: a copy of the tensor at `position` (negative counts from the end).
Result SequenceAt(const ValueKernelArgs& args) {
  RETURN_IF_ERROR(CheckInputCount(args, 2, 2));
  ASSIGN_OR_RETURN(const RunValue* sequence, reference::SequenceInput(args, 0, "input_sequence"));
  ASSIGN_OR_RETURN(const Tensor* position_tensor, reference::TensorInput(args, 1, "position"));
  ASSIGN_OR_RETURN(int64_t raw,
                   reference::ReadPosition(args.node, *position_tensor, "input 'position'"));
  const int64_t length = static_cast<int64_t>(sequence->sequence().size());
  ASSIGN_OR_RETURN(int64_t position,
                   reference::NormalizePosition(args.node, raw, length, /*allow_end=*/false));
  return std::vector<RunValue>{RunValue::Of(sequence->sequence()[position].Clone())};
}

// SequenceErase: the sequence without the tensor at `position` (default: the last).
Result SequenceErase(const ValueKernelArgs& args) {
  RETURN_IF_ERROR(CheckInputCount(args, 1, 2));
  ASSIGN_OR_RETURN(const RunValue* sequence, reference::SequenceInput(args, 0, "input_sequence"));
  const int64_t length = static_cast<int64_t>(sequence->sequence().size());
  int64_t raw = -1;
  ASSIGN_OR_RETURN(const Tensor* position_tensor,
                   reference::OptionalTensorInput(args, 1, "position"));
  if (position_tensor != nullptr) {
    ASSIGN_OR_RETURN(raw, reference::ReadPosition(args.node, *position_tensor, "input 'position'"));
  }
  ASSIGN_OR_RETURN(int64_t position,
                   reference::NormalizePosition(args.node, raw, length, /*allow_end=*/false));
  std::vector<Tensor> elements = KeptElements(*sequence);
  elements.erase(elements.begin() + position);
  return std::vector<RunValue>{RunValue::Sequence(sequence->elem_dtype(), std::move(elements))};
}

// SequenceLength: the number of tensors, as an int64 scalar.
Result SequenceLength(const ValueKernelArgs& args) {
  RETURN_IF_ERROR(CheckInputCount(args, 1, 1));
  ASSIGN_OR_RETURN(const RunValue* sequence, reference::SequenceInput(args, 0, "input_sequence"));
  return std::vector<RunValue>{
      RunValue::Of(Tensor::Scalar<int64_t>(static_cast<int64_t>(sequence->sequence().size())))};
}

}  // namespace

void RegisterSequenceKernels(ValueKernelRegistry& registry) {
  registry.Register("SequenceEmpty", SequenceEmpty);
  registry.Register("SequenceConstruct", SequenceConstruct);
  registry.Register("SequenceInsert", SequenceInsert);
  registry.Register("SequenceAt", SequenceAt);
  registry.Register("SequenceErase", SequenceErase);
  registry.Register("SequenceLength", SequenceLength);
  reference::RegisterSequenceSplitConcatKernels(registry);
}

}  // namespace qtune::runtime
