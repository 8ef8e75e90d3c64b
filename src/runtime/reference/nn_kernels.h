// The reference NN kernels, one function per ONNX op. RegisterNnKernels (nn_register.cc)
// adds them to the ReferenceRegistry; tests may also call them directly.
//
// Every kernel follows registry.h: it allocates its outputs (one Tensor per node output;
// an output the node does not request is returned as an invalid Tensor), reads attributes
// with ONNX defaults for `args.opset`, and returns InvalidArgument/Unimplemented naming the
// node for input it does not support. Floating-point kernels take float32 and float64.
#pragma once

#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime::nn {

using KernelResult = StatusOr<std::vector<Tensor>>;

// nn_conv.cc, nn_conv_transpose.cc
KernelResult Conv(const KernelArgs& args);
KernelResult ConvTranspose(const KernelArgs& args);

// nn_pool.cc, nn_global_pool.cc
KernelResult MaxPool(const KernelArgs& args);
KernelResult AveragePool(const KernelArgs& args);
KernelResult LpPool(const KernelArgs& args);
KernelResult GlobalAveragePool(const KernelArgs& args);
KernelResult GlobalMaxPool(const KernelArgs& args);
KernelResult GlobalLpPool(const KernelArgs& args);

// nn_gemm.cc, nn_matmul.cc
KernelResult Gemm(const KernelArgs& args);
KernelResult MatMul(const KernelArgs& args);

// nn_norm.cc, nn_layer_norm.cc
KernelResult BatchNormalization(const KernelArgs& args);
// training_mode=1, opsets 14+ (nn_batch_norm_training.cc); BatchNormalization calls it.
KernelResult BatchNormalizationTraining(const KernelArgs& args);
KernelResult InstanceNormalization(const KernelArgs& args);
KernelResult LayerNormalization(const KernelArgs& args);
KernelResult GroupNormalization(const KernelArgs& args);
KernelResult Lrn(const KernelArgs& args);

// nn_softmax.cc
KernelResult Softmax(const KernelArgs& args);
KernelResult LogSoftmax(const KernelArgs& args);
KernelResult Hardmax(const KernelArgs& args);

// nn_resize.cc
KernelResult Resize(const KernelArgs& args);
KernelResult Upsample(const KernelArgs& args);

// nn_rnn_lstm.cc, nn_rnn_gru.cc, nn_rnn_rnn.cc (shared loop in nn_rnn.h); every float type
KernelResult Lstm(const KernelArgs& args);
KernelResult Gru(const KernelArgs& args);
KernelResult Rnn(const KernelArgs& args);

// nn_depth_space.cc
KernelResult DepthToSpace(const KernelArgs& args);
KernelResult SpaceToDepth(const KernelArgs& args);

}  // namespace qtune::runtime::nn
