// Reference kernel of qtune::MatMulBias (see fused_ops.h): the ONNX reference MatMul, then
// the bias added along the last axis, then the optional Sum (same sizes as the product),
// so the fused graph on the reference tier computes what MatMul -> Add [-> Add] did.
#include "runtime/fusion/fused_ops.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime {
namespace {

StatusOr<std::vector<Tensor>> MatMulBiasReference(const KernelArgs& args) {
  if (args.inputs.size() < 3 || args.inputs.size() > 4 || !args.inputs[2].is_valid()) {
    return InvalidArgumentError(args.node.DebugName() + ": needs A, B, bias and optionally Sum");
  }
  ReferenceKernel matmul = ReferenceRegistry::Get().Find("MatMul");
  if (matmul == nullptr) return InternalError("no reference MatMul kernel");
  ASSIGN_OR_RETURN(std::vector<Tensor> out,
                   matmul(KernelArgs{args.node, args.inputs.first(2), args.opset}));
  Tensor& y = out[0];
  const Tensor& bias = args.inputs[2];
  if (y.dtype() != DataType::kFloat32 || bias.dtype() != DataType::kFloat32 || y.rank() == 0 ||
      bias.num_elements() != y.sizes().back()) {
    return InvalidArgumentError(args.node.DebugName() + ": bias " + bias.DebugString() +
                                " does not match the product " + y.DebugString());
  }
  const int64_t n = bias.num_elements();
  float* dst = y.data<float>();
  const float* b = bias.data<float>();
  for (int64_t i = 0; i < y.num_elements(); ++i) dst[i] += b[i % n];
  if (args.inputs.size() > kMatMulBiasSumInput && args.inputs[kMatMulBiasSumInput].is_valid()) {
    const Tensor& sum = args.inputs[kMatMulBiasSumInput];
    if (sum.dtype() != DataType::kFloat32 || sum.sizes() != y.sizes()) {
      return InvalidArgumentError(args.node.DebugName() + ": Sum " + sum.DebugString() +
                                  " does not match the product " + y.DebugString());
    }
    const float* add = sum.data<float>();
    for (int64_t i = 0; i < y.num_elements(); ++i) dst[i] += add[i];
  }
  ApplyActivation(ReadActivation(args.node), dst, y.num_elements());
  return out;
}

}  // namespace

void RegisterMatMulBiasReference(ReferenceRegistry& registry) {
  registry.Register("qtune::MatMulBias", MatMulBiasReference);
}

}  // namespace qtune::runtime
