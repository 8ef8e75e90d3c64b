// Reference kernels of the qtune fused ops, composed from the ONNX reference kernels, so a
// fused graph run on the reference tier computes exactly what the unfused graph did.
#include "core/shape.h"
#include "runtime/fusion/fused_ops.h"
#include "runtime/fusion/matmul_nbits.h"
#include "runtime/fusion/quant_ops.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime {
namespace {

StatusOr<std::vector<Tensor>> FusedConvReference(const KernelArgs& args) {
  ReferenceKernel conv = ReferenceRegistry::Get().Find("Conv");
  if (conv == nullptr) return InternalError("no reference Conv kernel");
  size_t conv_inputs = std::min<size_t>(args.inputs.size(), kFusedConvSumInput);
  ASSIGN_OR_RETURN(std::vector<Tensor> out,
                   conv(KernelArgs{args.node, args.inputs.first(conv_inputs), args.opset}));
  Tensor& y = out[0];
  if (y.dtype() != DataType::kFloat32) {
    return UnimplementedError(args.node.DebugName() + ": only float32 is supported");
  }
  if (args.inputs.size() > kFusedConvSumInput && args.inputs[kFusedConvSumInput].is_valid()) {
    const Tensor& sum = args.inputs[kFusedConvSumInput];
    if (sum.sizes() != y.sizes() || sum.dtype() != y.dtype()) {
      return InvalidArgumentError(args.node.DebugName() + ": the summed input is " +
                                  sum.DebugString() + " but the convolution gives " +
                                  y.DebugString());
    }
    float* dst = y.data<float>();
    const float* add = sum.data<float>();
    for (int64_t i = 0; i < y.num_elements(); ++i) dst[i] += add[i];
  }
  ApplyActivation(ReadActivation(args.node), y.data<float>(), y.num_elements());
  return out;
}

}  // namespace

void RegisterFusedKernels(ReferenceRegistry& registry) {
  registry.Register("qtune::FusedConv", FusedConvReference);
  RegisterMatMulBiasReference(registry);
  RegisterMatMulNBitsReference(registry);
  RegisterAttentionReference(registry);
  RegisterQuantFusedReference(registry);
  RegisterQuantAddReference(registry);
  RegisterQuantLookupReference(registry);
}

}  // namespace qtune::runtime
