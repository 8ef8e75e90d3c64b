// Reference kernels that gather or scatter by index tuples: GatherND (batch_dims),
// ScatterND and ScatterElements (reduction none/add/mul/max/min, opsets 16/18). Indices
// are int32/int64, may be negative and are range-checked. The output of a scatter is a
// copy of data; with duplicate indices and reduction "none" the last update wins.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "runtime/reference/nn_util.h"
#include "runtime/reference/registry.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

using Outputs = StatusOr<std::vector<Tensor>>;

// Normalizes index `v` for a dim of size `dim`.
StatusOr<int64_t> CheckIndex(const ir::Node& node, int64_t v, int64_t dim, int64_t axis) {
  if (v < -dim || v >= dim) {
    return NodeError(node, "index " + std::to_string(v) + " is out of range for axis " +
                               std::to_string(axis) + " of size " + std::to_string(dim));
  }
  return v < 0 ? v + dim : v;
}

Outputs GatherND(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 2, 2));
  const Tensor& data = a.inputs[0];
  const Tensor& indices = a.inputs[1];
  const int64_t b = a.node.GetInt("batch_dims", 0);
  const int64_t r = static_cast<int64_t>(data.rank()), q = static_cast<int64_t>(indices.rank());
  if (q < 1 || b < 0 || b >= std::min(r, q)) {
    return NodeError(a.node, "batch_dims " + std::to_string(b) + " does not fit data " +
                                 data.DebugString() + " and indices " + indices.DebugString());
  }
  const int64_t k = indices.size(q - 1);
  if (k < 1 || b + k > r) {
    return NodeError(a.node, "index tuples of length " + std::to_string(k) + " do not fit data " +
                                 data.DebugString());
  }
  for (int64_t d = 0; d < b; ++d) {
    if (data.size(d) != indices.size(d)) {
      return NodeError(a.node, "batch dims of data " + data.DebugString() + " and indices " +
                                   indices.DebugString() + " differ");
    }
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> idx, ReadIndices(a.node, indices, "indices"));
  std::vector<int64_t> out_sizes(indices.sizes().begin(), indices.sizes().end() - 1);
  out_sizes.insert(out_sizes.end(), data.sizes().begin() + b + k, data.sizes().end());
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(data.dtype(), out_sizes));
  const std::vector<int64_t> strides = ContiguousStrides(data.sizes());
  const int64_t batches = nn::Product(data.sizes(), 0, b);
  const int64_t tuples = nn::Product(indices.sizes(), b, q - 1);
  const int64_t block = nn::Product(data.sizes(), b + k, r);
  const size_t element_size = DataTypeSize(data.dtype());
  const int64_t batch_stride = b > 0 ? strides[b - 1] : 0;
  for (int64_t n = 0; n < batches; ++n) {
    for (int64_t t = 0; t < tuples; ++t) {
      const int64_t* tuple = idx.data() + (n * tuples + t) * k;
      int64_t src = n * batch_stride;
      for (int64_t j = 0; j < k; ++j) {
        ASSIGN_OR_RETURN(int64_t i, CheckIndex(a.node, tuple[j], data.size(b + j), b + j));
        src += i * strides[b + j];
      }
      std::memcpy(static_cast<std::byte*>(y.raw_data()) + (n * tuples + t) * block * element_size,
                  static_cast<const std::byte*>(data.raw_data()) + src * element_size,
                  block * element_size);
    }
  }
  return std::vector<Tensor>{std::move(y)};
}

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

StatusOr<Reduction> ReadReduction(const ir::Node& node) {
  const std::string name = node.GetString("reduction", "none");
  if (name == "none") return Reduction::kNone;
  if (name == "add") return Reduction::kAdd;
  if (name == "mul") return Reduction::kMul;
  if (name == "max") return Reduction::kMax;
  if (name == "min") return Reduction::kMin;
  return NodeError(node, "unknown reduction '" + name + "'");
}

// out[dst + j] (op)= updates[src + j] for j < count, element by element.
Status Apply(const ir::Node& node, Reduction reduction, Tensor& out, int64_t dst,
             const Tensor& updates, int64_t src, int64_t count) {
  const size_t element_size = DataTypeSize(out.dtype());
  if (reduction == Reduction::kNone) {
    std::memcpy(static_cast<std::byte*>(out.raw_data()) + dst * element_size,
                static_cast<const std::byte*>(updates.raw_data()) + src * element_size,
                count * element_size);
    return Status::Ok();
  }
  return Dispatch<kNumericTypes>(node, out.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>() + dst;
    const T* u = updates.data<T>() + src;
    for (int64_t j = 0; j < count; ++j) {
      switch (reduction) {
        case Reduction::kAdd:
          if constexpr (std::is_integral_v<T>)
            o[j] = static_cast<T>(uint64_t(o[j]) + uint64_t(u[j]));
          else
            o[j] = o[j] + u[j];
          break;
        case Reduction::kMul:
          if constexpr (std::is_integral_v<T>)
            o[j] = static_cast<T>(uint64_t(o[j]) * uint64_t(u[j]));
          else
            o[j] = o[j] * u[j];
          break;
        case Reduction::kMax:
          o[j] = std::max(o[j], u[j]);
          break;
        case Reduction::kMin:
          o[j] = std::min(o[j], u[j]);
          break;
        case Reduction::kNone:
          break;
      }
    }
    return Status::Ok();
  });
}

Status CheckUpdates(const ir::Node& node, const Tensor& data, const Tensor& updates,
                    const std::vector<int64_t>& expected) {
  if (updates.dtype() != data.dtype() || updates.sizes() != expected) {
    return NodeError(node, "updates " + updates.DebugString() + " must be " +
                               std::string(DataTypeName(data.dtype())) + "[" +
                               SizesToString(expected) + "]");
  }
  return Status::Ok();
}

Outputs ScatterND(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 3, 3));
  const Tensor& data = a.inputs[0];
  const Tensor& indices = a.inputs[1];
  const Tensor& updates = a.inputs[2];
  ASSIGN_OR_RETURN(Reduction reduction, ReadReduction(a.node));
  const int64_t r = static_cast<int64_t>(data.rank()), q = static_cast<int64_t>(indices.rank());
  const int64_t k = q > 0 ? indices.size(q - 1) : 0;
  if (q < 1 || k < 1 || k > r) {
    return NodeError(a.node,
                     "indices " + indices.DebugString() + " do not fit data " + data.DebugString());
  }
  std::vector<int64_t> expected(indices.sizes().begin(), indices.sizes().end() - 1);
  expected.insert(expected.end(), data.sizes().begin() + k, data.sizes().end());
  RETURN_IF_ERROR(CheckUpdates(a.node, data, updates, expected));
  ASSIGN_OR_RETURN(std::vector<int64_t> idx, ReadIndices(a.node, indices, "indices"));
  Tensor y = data.Clone();
  const std::vector<int64_t> strides = ContiguousStrides(data.sizes());
  const int64_t tuples = nn::Product(indices.sizes(), 0, q - 1);
  const int64_t block = nn::Product(data.sizes(), k, r);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t dst = 0;
    for (int64_t j = 0; j < k; ++j) {
      ASSIGN_OR_RETURN(int64_t i, CheckIndex(a.node, idx[t * k + j], data.size(j), j));
      dst += i * strides[j];
    }
    RETURN_IF_ERROR(Apply(a.node, reduction, y, dst, updates, t * block, block));
  }
  return std::vector<Tensor>{std::move(y)};
}

Outputs ScatterElements(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 3, 3));
  const Tensor& data = a.inputs[0];
  const Tensor& indices = a.inputs[1];
  const Tensor& updates = a.inputs[2];
  ASSIGN_OR_RETURN(Reduction reduction, ReadReduction(a.node));
  const int64_t rank = static_cast<int64_t>(data.rank());
  if (rank == 0 || indices.rank() != data.rank()) {
    return NodeError(a.node, "indices " + indices.DebugString() + " and data " +
                                 data.DebugString() + " must have the same rank >= 1");
  }
  RETURN_IF_ERROR(CheckUpdates(a.node, data, updates, indices.sizes()));
  ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(a.node, a.node.GetInt("axis", 0), rank));
  for (int64_t d = 0; d < rank; ++d) {
    if (d != axis && indices.size(d) > data.size(d)) {
      return NodeError(a.node, "indices " + indices.DebugString() + " exceed data " +
                                   data.DebugString() + " in dim " + std::to_string(d));
    }
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> idx, ReadIndices(a.node, indices, "indices"));
  Tensor y = data.Clone();
  const std::vector<int64_t> strides = ContiguousStrides(data.sizes());
  std::vector<int64_t> counter(rank, 0);
  for (int64_t i = 0; i < indices.num_elements(); ++i) {
    ASSIGN_OR_RETURN(int64_t at, CheckIndex(a.node, idx[i], data.size(axis), axis));
    int64_t dst = 0;
    for (int64_t d = 0; d < rank; ++d) dst += (d == axis ? at : counter[d]) * strides[d];
    RETURN_IF_ERROR(Apply(a.node, reduction, y, dst, updates, i, 1));
    nn::NextIndex(counter, indices.sizes());
  }
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

void RegisterScatterKernels(ReferenceRegistry& r) {
  r.Register("GatherND", GatherND);
  r.Register("ScatterND", ScatterND);
  r.Register("ScatterElements", ScatterElements);
  r.Register("Scatter", ScatterElements);  // opsets 9-10: ScatterElements without reduction
}

}  // namespace qtune::runtime::reference
