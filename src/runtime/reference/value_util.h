// Helpers shared by the value kernels (sequence_ops.cc, optional_ops.cc, value_kernels.cc):
// reading RunValue inputs with errors that name the node, and making tensors safe to keep
// in a sequence. Internal to src/runtime/reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/run_value.h"
#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"
#include "runtime/reference/value_kernels.h"

namespace qtune::runtime::reference {

// "a tensor", "a sequence", "an empty optional" or "an omitted input" (for error messages).
std::string_view ValueKindName(const RunValue& value);

// The input if it exists and is present (a tensor or a sequence); null when it is omitted,
// absent or an empty optional.
const RunValue* PresentInput(const ValueKernelArgs& args, size_t i);

// Input `i` as a present tensor; InvalidArgument naming the node and `what` otherwise.
StatusOr<const Tensor*> TensorInput(const ValueKernelArgs& args, size_t i, std::string_view what);
// Like TensorInput, but an omitted input (or empty optional) is null rather than an error.
StatusOr<const Tensor*> OptionalTensorInput(const ValueKernelArgs& args, size_t i,
                                            std::string_view what);
// Input `i` as a sequence; InvalidArgument naming the node and `what` otherwise.
StatusOr<const RunValue*> SequenceInput(const ValueKernelArgs& args, size_t i,
                                        std::string_view what);

// A tensor safe to keep in a sequence: `t` itself when it owns its storage (copies share
// it), a copy when it is borrowed (the engine may reuse borrowed storage).
Tensor Keepable(const Tensor& t);

// InvalidArgument naming the node unless `t` has the sequence's element type (an undefined
// element type, as in a sequence read from untyped data, accepts any).
Status CheckElementType(const ir::Node& node, DataType elem_dtype, const Tensor& t,
                        std::string_view what);

// Reads a one-element int32/int64 position; InvalidArgument naming the node otherwise.
StatusOr<int64_t> ReadPosition(const ir::Node& node, const Tensor& t, std::string_view what);

// Maps `position` in [-size, size - 1] (or [-size, size] when `allow_end`) to
// [0, size - 1] (or [0, size]); InvalidArgument naming the node otherwise.
StatusOr<int64_t> NormalizePosition(const ir::Node& node, int64_t position, int64_t size,
                                    bool allow_end);

// SplitToSequence and ConcatFromSequence (sequence_split_concat.cc); RegisterSequenceKernels
// calls it.
void RegisterSequenceSplitConcatKernels(ValueKernelRegistry& registry);

}  // namespace qtune::runtime::reference
