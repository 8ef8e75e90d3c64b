#include <vector>

#include "runtime/reference/nn_kernels.h"
#include "runtime/reference/registry.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime {
namespace {

bool IsHalfType(DataType type) { return type == DataType::kFloat16 || type == DataType::kBfloat16; }

// float16/bfloat16 through the float32 kernel: half inputs are widened, output 0 (type T in
// every NN op) is rounded back to X's type. Other outputs keep their own types (MaxPool's
// int64 Indices, LayerNormalization's float32 Mean/InvStdDev).
template <ReferenceKernel kKernel>
StatusOr<std::vector<Tensor>> HalfViaFloat32(const KernelArgs& args) {
  if (args.inputs.empty() || !args.inputs[0].is_valid() || !IsHalfType(args.inputs[0].dtype())) {
    return kKernel(args);
  }
  std::vector<Tensor> widened;
  for (const Tensor& input : args.inputs) {
    if (input.is_valid() && IsHalfType(input.dtype())) {
      ASSIGN_OR_RETURN(Tensor f, reference::ToFloat32(input));
      widened.push_back(f);
    } else {
      widened.push_back(input);
    }
  }
  ASSIGN_OR_RETURN(std::vector<Tensor> outputs,
                   kKernel(KernelArgs{.node = args.node, .inputs = widened, .opset = args.opset}));
  if (!outputs.empty() && outputs[0].is_valid() && outputs[0].dtype() == DataType::kFloat32) {
    ASSIGN_OR_RETURN(outputs[0], reference::FromFloat32(outputs[0], args.inputs[0].dtype()));
  }
  return outputs;
}

}  // namespace

void RegisterNnKernels(ReferenceRegistry& registry) {
  registry.Register("Conv", &HalfViaFloat32<&nn::Conv>);
  registry.Register("ConvTranspose", &HalfViaFloat32<&nn::ConvTranspose>);
  registry.Register("MaxPool", &HalfViaFloat32<&nn::MaxPool>);
  registry.Register("AveragePool", &HalfViaFloat32<&nn::AveragePool>);
  registry.Register("LpPool", &HalfViaFloat32<&nn::LpPool>);
  registry.Register("GlobalAveragePool", &HalfViaFloat32<&nn::GlobalAveragePool>);
  registry.Register("GlobalMaxPool", &HalfViaFloat32<&nn::GlobalMaxPool>);
  registry.Register("GlobalLpPool", &HalfViaFloat32<&nn::GlobalLpPool>);
  registry.Register("Gemm", &HalfViaFloat32<&nn::Gemm>);
  registry.Register("MatMul", &HalfViaFloat32<&nn::MatMul>);
  registry.Register("BatchNormalization", &HalfViaFloat32<&nn::BatchNormalization>);
  registry.Register("InstanceNormalization", &HalfViaFloat32<&nn::InstanceNormalization>);
  registry.Register("LayerNormalization", &HalfViaFloat32<&nn::LayerNormalization>);
  registry.Register("GroupNormalization", &HalfViaFloat32<&nn::GroupNormalization>);
  registry.Register("LRN", &HalfViaFloat32<&nn::Lrn>);
  registry.Register("Softmax", &HalfViaFloat32<&nn::Softmax>);
  registry.Register("LogSoftmax", &HalfViaFloat32<&nn::LogSoftmax>);
  registry.Register("Hardmax", &HalfViaFloat32<&nn::Hardmax>);
  registry.Register("Resize", &HalfViaFloat32<&nn::Resize>);
  registry.Register("Upsample", &HalfViaFloat32<&nn::Upsample>);
  // Computed in double; every output stored in X's type, float16/bfloat16 included.
  registry.Register("LSTM", &nn::Lstm);
  registry.Register("GRU", &nn::Gru);
  registry.Register("RNN", &nn::Rnn);
  // Pure data movement: every element type as is.
  registry.Register("DepthToSpace", &nn::DepthToSpace);
  registry.Register("SpaceToDepth", &nn::SpaceToDepth);
}

}  // namespace qtune::runtime
