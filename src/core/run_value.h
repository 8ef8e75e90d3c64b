// RunValue: one value as the engine passes it between steps whose kinds are not all
// tensors. ONNX has three run-time kinds qtune handles: a tensor, a sequence of tensors,
// and an optional holding one of those or nothing. An optional that holds a value is
// represented by that value (kTensor or kSequence); only the empty optional has a kind of
// its own (kNone). Which kind a graph value *may* hold is its ir::TensorType::kind.
//
// Tensors are shared, not copied (Tensor copies share storage), so a RunValue is cheap to
// copy. A sequence records its element type, so an empty sequence still has one.
#pragma once

#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"

namespace qtune {

class RunValue {
 public:
  enum class Kind : uint8_t {
    kTensor,    // a tensor (is_valid() may be false: an omitted optional input)
    kSequence,  // a sequence of tensors, all of `elem_dtype`
    kNone,      // an optional without a value
  };

  RunValue() = default;  // an invalid tensor: an omitted input
  static RunValue Of(Tensor tensor) {
    RunValue v;
    v.tensor_ = std::move(tensor);
    return v;
  }
  static RunValue Sequence(DataType elem_dtype, std::vector<Tensor> elements) {
    RunValue v;
    v.kind_ = Kind::kSequence;
    v.elem_dtype_ = elem_dtype;
    v.sequence_ = std::move(elements);
    return v;
  }
  static RunValue None() {
    RunValue v;
    v.kind_ = Kind::kNone;
    return v;
  }

  Kind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_sequence() const { return kind_ == Kind::kSequence; }
  bool is_none() const { return kind_ == Kind::kNone; }
  // True for a tensor that is present or any sequence (what OptionalHasElement answers,
  // and what an omitted optional input is not).
  bool is_present() const { return kind_ == Kind::kSequence || tensor_.is_valid(); }

  // REQUIRES: is_tensor().
  const Tensor& tensor() const { return tensor_; }
  Tensor& tensor() { return tensor_; }
  // REQUIRES: is_sequence().
  const std::vector<Tensor>& sequence() const { return sequence_; }
  std::vector<Tensor>& sequence() { return sequence_; }
  DataType elem_dtype() const { return elem_dtype_; }

 private:
  Kind kind_ = Kind::kTensor;
  Tensor tensor_;
  std::vector<Tensor> sequence_;
  DataType elem_dtype_ = DataType::kUndefined;
};

}  // namespace qtune
