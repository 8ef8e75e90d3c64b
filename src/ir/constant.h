// Reading the value of a Constant node in any of its ONNX forms.
#pragma once

#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"

namespace qtune::ir {

// True for a node of op_type "Constant" in the default domain.
bool IsConstantNode(const Node& node);

// The tensor a Constant node produces, from whichever attribute it carries: `value`
// (a tensor), `value_float`/`value_int` (scalars), `value_floats`/`value_ints` (1-D).
// Unimplemented for `value_string(s)` and `sparse_value`; InvalidArgument if the node has
// none or several of them. The returned tensor may share storage with the attribute.
StatusOr<Tensor> ConstantValue(const Node& node);

}  // namespace qtune::ir
