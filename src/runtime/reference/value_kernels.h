// Kernels for the ONNX ops whose inputs or outputs may be sequences or optionals
// (core/run_value.h): SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceAt,
// SequenceErase, SequenceLength, SplitToSequence, ConcatFromSequence (sequence_ops.cc) and
// Optional, OptionalHasElement, OptionalGetElement (optional_ops.cc). The engine runs these
// nodes as dynamic steps and calls the kernel with one RunValue per input.
//
// Contract of every value kernel:
// - It allocates its outputs. A tensor output never shares storage with an input, and a
//   tensor that enters a sequence (SequenceConstruct, SequenceInsert) is copied, so the
//   engine may write into or reuse any tensor it passes in or gets back. Only sequences
//   share elements with each other (SequenceInsert's output holds the input sequence's
//   tensors): a sequence's elements are never written; a borrowed element is copied before
//   it is shared.
// - Errors are Statuses naming the node ("SequenceAt 'at1': position 5 is out of range
//   [-3, 2] ..."): InvalidArgument for bad values, Unimplemented for unsupported types.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/run_value.h"
#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"

namespace qtune::runtime {

struct ValueKernelArgs {
  const ir::Node& node;
  std::span<const RunValue>
      inputs;  // one per node input; an omitted input is RunValue() (an invalid tensor)
  int64_t opset;
};

using ValueKernel = StatusOr<std::vector<RunValue>> (*)(const ValueKernelArgs& args);

// Ops whose inputs or outputs may be sequences or optionals. Built once, immutable.
class ValueKernelRegistry {
 public:
  static const ValueKernelRegistry& Get();
  // Registering an op twice is a bug (QTUNE_CHECK).
  void Register(std::string op_type, ValueKernel kernel);
  ValueKernel FindFor(
      const ir::Node& node) const;  // null: not a value-kernel op (default ONNX domain only)
  std::vector<std::string> OpTypes() const;  // sorted

 private:
  std::unordered_map<std::string, ValueKernel> kernels_;
};

// Kernel groups, one per source file; ValueKernelRegistry::Get() calls them.
void RegisterSequenceKernels(ValueKernelRegistry& registry);  // sequence_ops.cc
void RegisterOptionalKernels(ValueKernelRegistry& registry);  // optional_ops.cc

// Identity on any kind of value (a tensor is copied, a sequence shares its elements, an
// empty optional stays empty). Not registered: Identity on tensors is an ordinary reference
// kernel; an engine that meets Identity on a sequence or optional value calls this.
StatusOr<std::vector<RunValue>> ValueIdentity(const ValueKernelArgs& args);

// ---------------------------------------------------------------------- SequenceMap

// Runs the body graph of a SequenceMap node once: `body_inputs` are one tensor per body
// input (element i of each sequence input, or the tensor input itself), which it must not
// write into; it returns one tensor per node output (copied into the output sequences).
using SequenceMapBody =
    std::function<StatusOr<std::vector<Tensor>>(std::span<const Tensor> body_inputs)>;

// SequenceMap's semantics around its body: checks that every sequence input has the length
// of the first input, calls `run_body` once per position in order, and gathers output j
// of every call into output sequence j. An output sequence's element type is that of the
// body's outputs, or, when the sequences are empty, the node's declared output type
// (node.output(j)->dtype()). Errors from `run_body` come back with the iteration number.
StatusOr<std::vector<RunValue>> RunSequenceMap(const ValueKernelArgs& args,
                                               const SequenceMapBody& run_body);

}  // namespace qtune::runtime
