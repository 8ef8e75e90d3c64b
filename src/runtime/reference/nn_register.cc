#include "runtime/reference/nn_kernels.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime {

void RegisterNnKernels(ReferenceRegistry& registry) {
  registry.Register("Conv", &nn::Conv);
  registry.Register("ConvTranspose", &nn::ConvTranspose);
  registry.Register("MaxPool", &nn::MaxPool);
  registry.Register("AveragePool", &nn::AveragePool);
  registry.Register("LpPool", &nn::LpPool);
  registry.Register("GlobalAveragePool", &nn::GlobalAveragePool);
  registry.Register("GlobalMaxPool", &nn::GlobalMaxPool);
  registry.Register("GlobalLpPool", &nn::GlobalLpPool);
  registry.Register("Gemm", &nn::Gemm);
  registry.Register("MatMul", &nn::MatMul);
  registry.Register("BatchNormalization", &nn::BatchNormalization);
  registry.Register("InstanceNormalization", &nn::InstanceNormalization);
  registry.Register("LayerNormalization", &nn::LayerNormalization);
  registry.Register("GroupNormalization", &nn::GroupNormalization);
  registry.Register("LRN", &nn::Lrn);
  registry.Register("Softmax", &nn::Softmax);
  registry.Register("LogSoftmax", &nn::LogSoftmax);
  registry.Register("Hardmax", &nn::Hardmax);
  registry.Register("Resize", &nn::Resize);
  registry.Register("Upsample", &nn::Upsample);
  registry.Register("DepthToSpace", &nn::DepthToSpace);
  registry.Register("SpaceToDepth", &nn::SpaceToDepth);
}

}  // namespace qtune::runtime
