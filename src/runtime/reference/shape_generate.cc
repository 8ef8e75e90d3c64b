// Reference kernels that create tensors: Constant (value, value_float(s), value_int(s)),
// ConstantOfShape, Range, NonZero, Trilu and OneHot.
#include <cmath>
#include <cstring>

#include "ir/constant.h"
#include "runtime/reference/registry.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

using Outputs = StatusOr<std::vector<Tensor>>;

// The tensor may share storage with the attribute (kernels never write their sources).
Outputs Constant(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 0, 0));
  ASSIGN_OR_RETURN(Tensor value, ir::ConstantValue(a.node));
  return std::vector<Tensor>{std::move(value)};
}

Outputs ConstantOfShape(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 1, 1));
  ASSIGN_OR_RETURN(std::vector<int64_t> shape, ReadIndices(a.node, a.inputs[0], "shape"));
  for (int64_t s : shape) {
    if (s < 0) return NodeError(a.node, "shape has a negative dimension " + std::to_string(s));
  }
  Tensor value = Tensor::Scalar<float>(0.0f);
  if (const ir::Attribute* attr = a.node.FindAttribute("value")) {
    if (attr->type != ir::AttributeType::kTensor || !attr->t.is_valid() ||
        attr->t.num_elements() != 1) {
      return NodeError(a.node, "value must be a one-element tensor");
    }
    value = attr->t;
  }
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(value.dtype(), shape));
  const size_t element_size = DataTypeSize(value.dtype());
  for (int64_t i = 0; i < y.num_elements(); ++i) {
    CopyElement(y.raw_data(), i, value.raw_data(), 0, element_size);
  }
  return std::vector<Tensor>{std::move(y)};
}

// start + i * delta for i in [0, max(ceil((limit - start) / delta), 0)).
Outputs Range(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 3, 3));
  const DataType type = a.inputs[0].dtype();
  for (size_t i = 0; i < 3; ++i) {
    if (a.inputs[i].dtype() != type || a.inputs[i].num_elements() != 1) {
      return NodeError(a.node, "start, limit and delta must be scalars of one type");
    }
  }
  return Dispatch<kFloatTypes | kSignedTypes>(a.node, type, [&](auto tag) -> Outputs {
    using T = typename decltype(tag)::type;
    const T start = a.inputs[0].data<T>()[0];
    const T limit = a.inputs[1].data<T>()[0];
    const T delta = a.inputs[2].data<T>()[0];
    if (delta == 0) return NodeError(a.node, "delta is 0");
    const double count_f = std::ceil((double(limit) - double(start)) / double(delta));
    if (std::isnan(count_f) || count_f > double(int64_t{1} << 40)) {
      return NodeError(a.node, "cannot produce " + std::to_string(count_f) + " elements");
    }
    int64_t count = count_f > 0 ? static_cast<int64_t>(count_f) : 0;
    if constexpr (std::is_integral_v<T>) {
      // Exact integer count (double may round for large int64 values).
      const int64_t span = int64_t(limit) - int64_t(start);
      const int64_t step = int64_t(delta);
      count = (span > 0) == (step > 0) && span != 0
                  ? (std::abs(span) + std::abs(step) - 1) / std::abs(step)
                  : 0;
    }
    ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(type, {count}));
    T* out = y.data<T>();
    for (int64_t i = 0; i < count; ++i) out[i] = static_cast<T>(start + T(i) * delta);
    return std::vector<Tensor>{std::move(y)};
  });
}

// int64 [rank, nonzero count]: the coordinates of every non-zero element in C order. A
// scalar counts as a one-element vector (as numpy.nonzero does).
Outputs NonZero(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 1, 1));
  const Tensor& x = a.inputs[0];
  std::vector<int64_t> sizes = x.sizes();
  if (sizes.empty()) sizes.push_back(1);
  const int64_t rank = static_cast<int64_t>(sizes.size());
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    if (LoadAsDouble(x, i) != 0) hits.push_back(i);
  }
  const int64_t n = static_cast<int64_t>(hits.size());
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(DataType::kInt64, {rank, n}));
  int64_t* out = y.data<int64_t>();
  for (int64_t k = 0; k < n; ++k) {
    int64_t rest = hits[k];
    for (int64_t d = rank; d-- > 0;) {
      out[d * n + k] = rest % sizes[d];
      rest /= sizes[d];
    }
  }
  return std::vector<Tensor>{std::move(y)};
}

// Keeps the upper (j - i >= k) or lower (j - i <= k) triangle of the last two dims.
Outputs Trilu(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 1, 2));
  const Tensor& x = a.inputs[0];
  if (x.rank() < 2) return NodeError(a.node, "input must have rank >= 2");
  int64_t k = 0;
  if (HasInput(a, 1)) {
    ASSIGN_OR_RETURN(k, ReadIndexScalar(a.node, a.inputs[1], "k"));
  }
  const bool upper = a.node.GetInt("upper", 1) != 0;
  const int64_t rows = x.size(x.rank() - 2), cols = x.size(x.rank() - 1);
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(x.dtype(), x.sizes()));  // zero-filled
  const size_t element_size = DataTypeSize(x.dtype());
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const int64_t col = i % cols, row = (i / cols) % rows;
    if (upper ? col - row >= k : col - row <= k) {
      CopyElement(y.raw_data(), i, x.raw_data(), i, element_size);
    }
  }
  return std::vector<Tensor>{std::move(y)};
}

// indices -> values[1] where the index (negative counts from depth) matches, values[0]
// elsewhere; the depth dim is inserted at `axis`.
Outputs OneHot(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 3, 3));
  const Tensor& indices = a.inputs[0];
  const Tensor& values = a.inputs[2];
  if (!IsInteger(indices.dtype()) && !IsFloatingPoint(indices.dtype())) {
    return UnsupportedType(a.node, indices.dtype(), "indices");
  }
  ASSIGN_OR_RETURN(double depth_value, ReadScalarAsDouble(a.node, a.inputs[1], "depth"));
  if (!(depth_value >= 1 && depth_value < double(int64_t{1} << 40))) {
    return NodeError(a.node, "depth " + std::to_string(depth_value) + " is out of range");
  }
  const int64_t depth = static_cast<int64_t>(depth_value);
  if (values.num_elements() != 2) return NodeError(a.node, "values must hold [off, on]");
  const int64_t out_rank = static_cast<int64_t>(indices.rank()) + 1;
  ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(a.node, a.node.GetInt("axis", -1), out_rank));
  std::vector<int64_t> out_sizes = indices.sizes();
  out_sizes.insert(out_sizes.begin() + axis, depth);
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(values.dtype(), out_sizes));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out_sizes[d];
  for (int64_t d = axis + 1; d < out_rank; ++d) inner *= out_sizes[d];
  const size_t element_size = DataTypeSize(values.dtype());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < depth; ++j) {
      for (int64_t i = 0; i < inner; ++i) {
        double v = LoadAsDouble(indices, o * inner + i);
        // Anything outside [-depth, depth) matches no position.
        int64_t index = std::abs(v) <= double(depth) ? static_cast<int64_t>(v) : depth;
        if (index < 0) index += depth;
        CopyElement(y.raw_data(), (o * depth + j) * inner + i, values.raw_data(),
                    index == j ? 1 : 0, element_size);
      }
    }
  }
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

void RegisterGenerateKernels(ReferenceRegistry& r) {
  r.Register("Constant", Constant);
  r.Register("ConstantOfShape", ConstantOfShape);
  r.Register("Range", Range);
  r.Register("NonZero", NonZero);
  r.Register("Trilu", Trilu);
  r.Register("OneHot", OneHot);
}

}  // namespace qtune::runtime::reference
