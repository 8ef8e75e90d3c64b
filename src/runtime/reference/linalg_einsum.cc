// Einsum, general (einsum_equation.h): one plain loop over the whole index space (output
// dims, then summed letters), multiplying one element of each input per point. Numeric
// types; float sums accumulate in double, integer sums wrap like the element type.
// float16/bfloat16 go through float32.
#include <type_traits>

#include "runtime/reference/einsum_equation.h"
#include "runtime/reference/misc_kernels.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

template <typename T>
void RunEinsum(const EinsumPlan& plan, std::span<const Tensor> inputs, Tensor& y) {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double,
                                 std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;
  const size_t dims = plan.loop_sizes.size();
  int64_t outputs = 1, summed = 1;
  for (size_t d = 0; d < dims; ++d)
    (d < plan.num_output_dims ? outputs : summed) *= plan.loop_sizes[d];
  if (outputs == 0) return;
  T* out = y.data<T>();
  std::vector<int64_t> counter(dims, 0);
  std::vector<int64_t> offset(inputs.size(), 0);
  for (int64_t o = 0; o < outputs; ++o) {
    Acc sum = 0;
    for (int64_t s = 0; s < summed; ++s) {
      Acc product = 1;
      for (size_t i = 0; i < inputs.size(); ++i) {
        if constexpr (std::is_same_v<Acc, int64_t>) {  // wrap instead of signed overflow
          product = static_cast<int64_t>(static_cast<uint64_t>(product) *
                                         static_cast<uint64_t>(inputs[i].data<T>()[offset[i]]));
        } else {
          product *= static_cast<Acc>(inputs[i].data<T>()[offset[i]]);
        }
      }
      if constexpr (std::is_same_v<Acc, int64_t>) {
        sum = static_cast<int64_t>(static_cast<uint64_t>(sum) + static_cast<uint64_t>(product));
      } else {
        sum += product;
      }
      // Next point (row-major over all loop dims; the summed dims vary fastest).
      for (size_t d = dims; d-- > 0;) {
        for (size_t i = 0; i < inputs.size(); ++i) offset[i] += plan.input_strides[i][d];
        if (++counter[d] < plan.loop_sizes[d]) break;
        for (size_t i = 0; i < inputs.size(); ++i) {
          offset[i] -= plan.input_strides[i][d] * plan.loop_sizes[d];
        }
        counter[d] = 0;
      }
    }
    out[o] = static_cast<T>(sum);  // (an empty summed dim reads nothing: the sum is 0)
  }
}

StatusOr<std::vector<Tensor>> Einsum(const KernelArgs& a) {
  if (a.inputs.empty()) return NodeError(a.node, "needs at least one input");
  RETURN_IF_ERROR(CheckInputCount(a, a.inputs.size(), a.inputs.size()));
  const DataType type = a.inputs[0].dtype();
  std::vector<std::vector<int64_t>> sizes;
  for (const Tensor& t : a.inputs) {
    if (t.dtype() != type) {
      return NodeError(a.node, "inputs " + a.inputs[0].DebugString() + " and " + t.DebugString() +
                                   " must have the same type");
    }
    sizes.push_back(t.sizes());
  }
  if (!a.node.HasAttribute("equation")) {
    return NodeError(a.node, "the required attribute 'equation' is missing");
  }
  ASSIGN_OR_RETURN(EinsumPlan plan, PlanEinsum(a.node, a.node.GetString("equation", ""), sizes));
  if (IsNarrowFloat(type)) {
    std::vector<Tensor> widened;
    for (const Tensor& t : a.inputs) {
      ASSIGN_OR_RETURN(Tensor f, ToFloat32(t));
      widened.push_back(std::move(f));
    }
    ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(DataType::kFloat32, plan.output_sizes()));
    RunEinsum<float>(plan, widened, y);
    ASSIGN_OR_RETURN(Tensor narrow, FromFloat32(y, type));
    return std::vector<Tensor>{std::move(narrow)};
  }
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(type, plan.output_sizes()));
  RETURN_IF_ERROR(Dispatch<kNumericTypes>(a.node, type, [&](auto tag) -> Status {
    RunEinsum<typename decltype(tag)::type>(plan, a.inputs, y);
    return Status::Ok();
  }));
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

void RegisterEinsumKernels(ReferenceRegistry& registry) { registry.Register("Einsum", Einsum); }

}  // namespace qtune::runtime::reference
