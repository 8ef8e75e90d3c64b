// Floating-point tensors as double buffers, for the reference kernels that compute in
// double whatever the element type (signal, sampling and loss kernels): float16, bfloat16,
// float32 and float64 in, the same type out. Internal to src/runtime/reference.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"

namespace qtune::runtime::reference {

// float16, bfloat16, float32 or float64.
bool IsComputeFloatType(DataType type);
// Unimplemented naming the node and `what` unless `t` has one of those types.
Status CheckComputeFloatType(const ir::Node& node, const Tensor& t, std::string_view what);
// ResourceExhausted naming the node when an output of `elements` values (counted in
// double, so products of sizes cannot overflow) would exceed kMaxTensorBytes as doubles;
// checked before the kernel allocates its working buffers.
Status CheckOutputElements(const ir::Node& node, double elements);
// Every element of a numeric tensor as double (C order).
std::vector<double> ToDoubles(const Tensor& t);
// A new tensor of `type` and `sizes` holding `values` (rounded to nearest even for narrow
// floats; integers saturate). REQUIRES: values.size() == NumElements(sizes).
StatusOr<Tensor> FromDoubles(DataType type, std::vector<int64_t> sizes,
                             std::span<const double> values);

}  // namespace qtune::runtime::reference
