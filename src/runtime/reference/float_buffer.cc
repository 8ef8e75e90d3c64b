#include "runtime/reference/float_buffer.h"

#include <string>

#include "core/check.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {

bool IsComputeFloatType(DataType type) {
  return type == DataType::kFloat16 || type == DataType::kBfloat16 || type == DataType::kFloat32 ||
         type == DataType::kFloat64;
}

Status CheckComputeFloatType(const ir::Node& node, const Tensor& t, std::string_view what) {
  if (IsComputeFloatType(t.dtype())) return Status::Ok();
  return NodeUnimplemented(node, std::string(what) + " is " + t.DebugString() +
                                     "; the reference kernel takes float16, bfloat16, "
                                     "float32 or float64");
}

Status CheckOutputElements(const ir::Node& node, double elements) {
  if (elements * sizeof(double) <= static_cast<double>(kMaxTensorBytes)) return Status::Ok();
  return ResourceExhaustedError(node.DebugName() + ": the output would have " +
                                std::to_string(elements) + " elements, more than qtune allocates");
}

std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.num_elements()));
  if (t.dtype() == DataType::kFloat32) {
    const float* d = t.data<float>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = d[i];
  } else if (t.dtype() == DataType::kFloat64) {
    const double* d = t.data<double>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = d[i];
  } else {
    for (size_t i = 0; i < out.size(); ++i) out[i] = LoadAsDouble(t, static_cast<int64_t>(i));
  }
  return out;
}

StatusOr<Tensor> FromDoubles(DataType type, std::vector<int64_t> sizes,
                             std::span<const double> values) {
  ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(type, std::move(sizes)));
  QTUNE_CHECK(static_cast<int64_t>(values.size()) == out.num_elements());
  if (type == DataType::kFloat32) {
    float* d = out.data<float>();
    for (size_t i = 0; i < values.size(); ++i) d[i] = static_cast<float>(values[i]);
  } else if (type == DataType::kFloat64) {
    double* d = out.data<double>();
    for (size_t i = 0; i < values.size(); ++i) d[i] = values[i];
  } else {
    for (size_t i = 0; i < values.size(); ++i) {
      StoreFromDouble(out, static_cast<int64_t>(i), values[i]);
    }
  }
  return out;
}

}  // namespace qtune::runtime::reference
