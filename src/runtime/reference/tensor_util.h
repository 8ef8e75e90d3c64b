// Helpers shared by the reference kernels: node-named errors, reading index tensors,
// axis normalization, element-type dispatch and element loads/stores through double.
// Internal to src/runtime/reference; nothing outside the reference tier includes this.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/dtype.h"
#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime::reference {

// ------------------------------------------------------------------ errors

// InvalidArgument "<op> '<name>': <message>".
Status NodeError(const ir::Node& node, std::string_view message);
// Unimplemented "<op> '<name>': <message>".
Status NodeUnimplemented(const ir::Node& node, std::string_view message);
// Unimplemented "<op> '<name>': <what> of type <dtype> is not supported".
Status UnsupportedType(const ir::Node& node, DataType type, std::string_view what = "input");

// ------------------------------------------------------------------ inputs

// True when input `i` exists and is not an omitted optional input.
bool HasInput(const KernelArgs& args, size_t i);
// InvalidArgument unless `min_count` <= number of inputs <= `max_count` and the first
// `min_count` inputs are all present.
Status CheckInputCount(const KernelArgs& args, size_t min_count, size_t max_count);
// Reads an int32 or int64 tensor (any rank, C order) as int64 values.
StatusOr<std::vector<int64_t>> ReadIndices(const ir::Node& node, const Tensor& t,
                                           std::string_view what);
// Reads a one-element int32/int64 tensor.
StatusOr<int64_t> ReadIndexScalar(const ir::Node& node, const Tensor& t, std::string_view what);
// Reads a one-element tensor of any numeric type as double.
StatusOr<double> ReadScalarAsDouble(const ir::Node& node, const Tensor& t, std::string_view what);

// Maps axis in [-rank, rank-1] to [0, rank-1]; InvalidArgument naming the node otherwise.
StatusOr<int64_t> NormalizeAxis(const ir::Node& node, int64_t axis, int64_t rank);
// Normalizes every axis and rejects duplicates. The order is kept.
StatusOr<std::vector<int64_t>> NormalizeAxes(const ir::Node& node, std::vector<int64_t> axes,
                                             int64_t rank);

// ------------------------------------------------------------------ layout

// "[1,3,224,224]" (for error messages).
std::string Bracketed(const std::vector<int64_t>& sizes);
// Row-major strides in elements.
std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& sizes);
// Copies one element of `element_size` bytes.
void CopyElement(void* dst, int64_t dst_index, const void* src, int64_t src_index,
                 size_t element_size);

// ------------------------------------------------------------------ types

// float16, bfloat16 and the float8 types: computed in float32 by the reference tier.
bool IsNarrowFloat(DataType type);
// Reads element `i` of any storable type as double (bool as 0/1). Unsupported narrow
// types (the FNUZ float8s) read as NaN.
double LoadAsDouble(const Tensor& t, int64_t i);
// Writes `v` into element `i`: integers saturate (NaN becomes 0) then truncate toward
// zero (int4 into [-8, 7], uint4 into [0, 15]), bool is v != 0, narrow floats round to
// nearest even (float8 and float4 saturating), float8e8m0 rounds up to a power of two.
void StoreFromDouble(Tensor& t, int64_t i, double v);
// Element-wise conversion of a narrow-float (or any numeric) tensor to float32.
StatusOr<Tensor> ToFloat32(const Tensor& t);
// Element-wise conversion of a float32 tensor to `type` (round to nearest even).
StatusOr<Tensor> FromFloat32(const Tensor& t, DataType type);
// Tensor of `type` and `sizes` whose every element is `v` (StoreFromDouble rules).
StatusOr<Tensor> FilledTensor(DataType type, std::vector<int64_t> sizes, double v);

// Converts to an integer type: NaN becomes 0, out-of-range values clamp to the type's
// range, the rest truncate toward zero. (A plain static_cast would be undefined.)
template <typename T>
T SaturateCast(double v) {
  if (std::isnan(v)) return T{0};
  constexpr double kLowest = static_cast<double>(std::numeric_limits<T>::lowest());
  constexpr double kMax = static_cast<double>(std::numeric_limits<T>::max());
  if (v <= kLowest) return std::numeric_limits<T>::lowest();
  if (v >= kMax) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

// Type sets for Dispatch.
inline constexpr unsigned kFloatTypes = 1;     // float, double
inline constexpr unsigned kSignedTypes = 2;    // int8, int16, int32, int64
inline constexpr unsigned kUnsignedTypes = 4;  // uint8, uint16, uint32, uint64
inline constexpr unsigned kBoolType = 8;
inline constexpr unsigned kIntegerTypes = kSignedTypes | kUnsignedTypes;
inline constexpr unsigned kNumericTypes = kFloatTypes | kIntegerTypes;
inline constexpr unsigned kAllTypes = kNumericTypes | kBoolType;

// Calls fn(std::type_identity<T>{}) for the C++ type of `type` when it is in kSet, and
// otherwise returns UnsupportedType(node, type). fn returns Status or StatusOr<...>.
template <unsigned kSet, typename Fn>
auto Dispatch(const ir::Node& node, DataType type, Fn&& fn)
    -> decltype(fn(std::type_identity<float>{})) {
#define QTUNE_DISPATCH_CASE(set, dtype, ctype)                                 \
  case dtype:                                                                  \
    if constexpr ((kSet & (set)) != 0) return fn(std::type_identity<ctype>{}); \
    break;
  switch (type) {
    QTUNE_DISPATCH_CASE(kFloatTypes, DataType::kFloat32, float)
    QTUNE_DISPATCH_CASE(kFloatTypes, DataType::kFloat64, double)
    QTUNE_DISPATCH_CASE(kSignedTypes, DataType::kInt8, int8_t)
    QTUNE_DISPATCH_CASE(kSignedTypes, DataType::kInt16, int16_t)
    QTUNE_DISPATCH_CASE(kSignedTypes, DataType::kInt32, int32_t)
    QTUNE_DISPATCH_CASE(kSignedTypes, DataType::kInt64, int64_t)
    QTUNE_DISPATCH_CASE(kUnsignedTypes, DataType::kUint8, uint8_t)
    QTUNE_DISPATCH_CASE(kUnsignedTypes, DataType::kUint16, uint16_t)
    QTUNE_DISPATCH_CASE(kUnsignedTypes, DataType::kUint32, uint32_t)
    QTUNE_DISPATCH_CASE(kUnsignedTypes, DataType::kUint64, uint64_t)
    QTUNE_DISPATCH_CASE(kBoolType, DataType::kBool, bool)
    default:
      break;
  }
#undef QTUNE_DISPATCH_CASE
  return UnsupportedType(node, type);
}

// ------------------------------------------------------------------ kernel groups

// Each source file registers its own ops; the Register*Kernels functions of registry.h
// call these.
void RegisterUnaryKernels(ReferenceRegistry& registry);           // elementwise_unary.cc
void RegisterBinaryKernels(ReferenceRegistry& registry);          // elementwise_binary.cc
void RegisterSelectKernels(ReferenceRegistry& registry);          // elementwise_select.cc
void RegisterCastKernels(ReferenceRegistry& registry);            // elementwise_cast.cc
void RegisterReshapeKernels(ReferenceRegistry& registry);         // shape_reshape.cc
void RegisterCombineKernels(ReferenceRegistry& registry);         // shape_combine.cc
void RegisterSliceKernels(ReferenceRegistry& registry);           // shape_slice.cc
void RegisterGatherKernels(ReferenceRegistry& registry);          // shape_gather.cc
void RegisterGenerateKernels(ReferenceRegistry& registry);        // shape_generate.cc
void RegisterScatterKernels(ReferenceRegistry& registry);         // shape_scatter.cc
void RegisterReduceKernels(ReferenceRegistry& registry);          // reduction_reduce.cc
void RegisterArgKernels(ReferenceRegistry& registry);             // reduction_arg.cc
void RegisterCumSumKernels(ReferenceRegistry& registry);          // reduction_cumsum.cc
void RegisterDetectionKernels(ReferenceRegistry& registry);       // detection_nms.cc
void RegisterCompressUniqueKernels(ReferenceRegistry& registry);  // shape_compress_unique.cc
void RegisterCropCol2ImKernels(ReferenceRegistry& registry);      // image_crop_col2im.cc

}  // namespace qtune::runtime::reference
