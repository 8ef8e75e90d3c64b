// The executable tier of the runtime: a Kernel is one compiled step of a plan, created
// once for concrete input sizes (primitives built, weights reordered) and run many times.
//
// Tensors handed to Run() carry *physical* sizes: a value in kNhwc layout with logical
// (ONNX) sizes [N,C,H,W] is passed as [N,H,W,C]. Kernels learn layouts when they are
// created, never at run time.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"
#include "runtime/shape/shape_registry.h"

namespace qtune::runtime {

struct Plan;

enum class Layout : uint8_t {
  kPlain,  // ONNX's row-major order of the logical sizes
  kNhwc,   // rank-4 activations stored channels-last, as oneDNN's convolutions prefer
};

const char* LayoutName(Layout layout);

// The float precision a kernel computes in. kBfloat16: inputs and weights rounded to
// bf16, fp32 accumulation and outputs (the `bf16` deployment candidate; Conv, Gemm and
// constant-weight MatMul). Decided per node by Compile (CompileOptions::bf16 / bf16_nodes).
enum class Precision : uint8_t { kFloat32, kBfloat16 };
const char* PrecisionName(Precision precision);
// Physical sizes of a value with logical `sizes` stored in `layout`.
std::vector<int64_t> PhysicalSizes(const std::vector<int64_t>& sizes, Layout layout);

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Implementation name for plan printing, e.g. "onednn:brgconv:avx512_core".
  virtual std::string Describe() const = 0;
  // inputs[i] is invalid for an omitted optional input. Output tensors are preallocated
  // with the sizes shape inference computed (physical order).
  virtual Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) = 0;
  // The plans this kernel runs inside itself (a control-flow op's bodies), for plan
  // printing and profiles; they are timed whenever the plan that runs this kernel is.
  virtual std::vector<const Plan*> NestedPlans() const { return {}; }
};

struct KernelRequest {
  const ir::Node& node;
  int64_t opset;
  int threads;
  std::vector<const ValueInfo*> inputs;   // nullptr for omitted inputs
  std::vector<const ValueInfo*> outputs;  // nullptr for omitted outputs
  std::vector<Layout> input_layouts;      // where each input currently lives
  // The precision asked of this node; kernels that cannot compute in it compute in fp32
  // (and say so in KernelChoice::precision).
  Precision precision = Precision::kFloat32;
  // Where a factory that does not apply may say why (NotApplicable(request, reason)), for
  // plan explanations; nullptr when nobody asks.
  std::string* why_not = nullptr;

  // Input `index`, or nullptr when the node omits it or has fewer inputs.
  const ValueInfo* input(size_t index) const {
    return index < inputs.size() ? inputs[index] : nullptr;
  }
};

struct KernelChoice {
  std::unique_ptr<Kernel> kernel;
  std::vector<Layout> input_layouts;   // layouts the kernel reads; the compiler reorders
  std::vector<Layout> output_layouts;  // layouts the kernel writes
  // An input whose buffer output 0 may share when nothing reads that input later (the
  // kernel then finds both at the same address and must handle it), or -1.
  int inplace_input = -1;
  Precision precision = Precision::kFloat32;  // what the kernel computes in
};

// A factory returns nullopt when it does not apply to the request (another tier is tried),
// an error when it applies but the request is invalid.
using KernelFactory = StatusOr<std::optional<KernelChoice>> (*)(const KernelRequest& request);
inline StatusOr<std::optional<KernelChoice>> NotApplicable() {
  return std::optional<KernelChoice>();
}
// The same, saying why (shown by `qtune run --print-plan --explain-kernels`).
inline StatusOr<std::optional<KernelChoice>> NotApplicable(const KernelRequest& request,
                                                           std::string_view reason) {
  if (request.why_not != nullptr) request.why_not->assign(reason);
  return std::optional<KernelChoice>();
}

// Fast tier (oneDNN), one factory per op family.
StatusOr<std::optional<KernelChoice>> CreateOnednnConvKernel(const KernelRequest& request);
StatusOr<std::optional<KernelChoice>> CreateOnednnPoolKernel(const KernelRequest& request);
StatusOr<std::optional<KernelChoice>> CreateOnednnMatMulKernel(const KernelRequest& request);
StatusOr<std::optional<KernelChoice>> CreateOnednnElementwiseKernel(const KernelRequest& request);
StatusOr<std::optional<KernelChoice>> CreateOnednnDeconvKernel(const KernelRequest& request);
// 1-D Conv/FusedConv as im2col and one matrix product on prepacked weights
// (onednn_conv1d_matmul.cc).
StatusOr<std::optional<KernelChoice>> CreateOnednnConv1dMatMulKernel(const KernelRequest& request);
// 3x3 stride-1 Conv/FusedConv by Winograd F(2x2, 3x3) (onednn_winograd_conv.cc).
StatusOr<std::optional<KernelChoice>> CreateOnednnWinogradConvKernel(const KernelRequest& request);
// ConvTranspose whose kernel equals its stride, as a matrix product (onednn_upsample_deconv.cc).
StatusOr<std::optional<KernelChoice>> CreateOnednnUpsampleDeconvKernel(
    const KernelRequest& request);
StatusOr<std::optional<KernelChoice>> CreateOnednnResizeKernel(const KernelRequest& request);
StatusOr<std::optional<KernelChoice>> CreateOnednnConcatKernel(const KernelRequest& request);
// Transformer ops: Softmax, LayerNormalization, Gelu (onednn_softmax_norm.cc), MatMul
// whose operands are both computed at run time (onednn_batch_matmul.cc), Transpose.
StatusOr<std::optional<KernelChoice>> CreateOnednnSoftmaxKernel(const KernelRequest& request);
StatusOr<std::optional<KernelChoice>> CreateOnednnLayerNormKernel(const KernelRequest& request);
StatusOr<std::optional<KernelChoice>> CreateOnednnGeluKernel(const KernelRequest& request);
StatusOr<std::optional<KernelChoice>> CreateOnednnBatchMatMulKernel(const KernelRequest& request);
StatusOr<std::optional<KernelChoice>> CreateOnednnTransposeKernel(const KernelRequest& request);
// float32 qtune::Attention: three oneDNN steps (onednn_attention.cc), or on AVX-512F CPUs
// one native pass per block of query rows (native_attention.cc).
StatusOr<std::optional<KernelChoice>> CreateOnednnAttentionKernel(const KernelRequest& request);
StatusOr<std::optional<KernelChoice>> CreateNativeAttentionKernel(const KernelRequest& request);
// LSTM, GRU and RNN with constant weights and default activations (onednn_rnn.cc).
StatusOr<std::optional<KernelChoice>> CreateOnednnRnnKernel(const KernelRequest& request);
// Integer kernels: qtune::QConv (onednn_qconv.cc), qtune::QMatMul (onednn_qmatmul.cc),
// qtune::QAdd (quant_add.cc), QuantizeLinear / DequantizeLinear (quant_elementwise.cc).
StatusOr<std::optional<KernelChoice>> CreateOnednnQConvKernel(const KernelRequest& request);
// qtune::QConvTranspose (onednn_qdeconv.cc).
StatusOr<std::optional<KernelChoice>> CreateOnednnQDeconvKernel(const KernelRequest& request);
StatusOr<std::optional<KernelChoice>> CreateOnednnQMatMulKernel(const KernelRequest& request);
StatusOr<std::optional<KernelChoice>> CreateQAddKernel(const KernelRequest& request);
StatusOr<std::optional<KernelChoice>> CreateQuantElementwiseKernel(const KernelRequest& request);
// qtune::QLookup (quant_lookup.cc): a 256-entry table per element, any layout.
StatusOr<std::optional<KernelChoice>> CreateQuantLookupKernel(const KernelRequest& request);
// Native kernels (plain C++, no oneDNN primitive): Split as strided copies
// (native_split.cc), float32 Reduce{Mean,Sum,Max,Min,SumSquare,L2} over contiguous axes
// (native_reduce.cc), float32 Log, Erf, Reciprocal, Floor, Ceil (native_unary.cc).
StatusOr<std::optional<KernelChoice>> CreateNativeSplitKernel(const KernelRequest& request);
StatusOr<std::optional<KernelChoice>> CreateNativeReduceKernel(const KernelRequest& request);
StatusOr<std::optional<KernelChoice>> CreateNativeUnaryKernel(const KernelRequest& request);
// float32 MatMul/Gemm/qtune::MatMulBias with constant weights and at most kGemvMaxRows
// rows, on weights packed once (native_gemv.cc).
StatusOr<std::optional<KernelChoice>> CreateNativeGemvKernel(const KernelRequest& request);
// com.microsoft / qtune MatMulNBits (int4 and int8 weights, fp32 activations) on codes
// packed once (native_lowbit_matmul.cc, lowbit_gemv_packed.h).
StatusOr<std::optional<KernelChoice>> CreateNativeLowBitMatMulKernel(const KernelRequest& request);
// float32 BatchNormalization, inference mode, kPlain or kNhwc (native_batchnorm.cc).
StatusOr<std::optional<KernelChoice>> CreateNativeBatchNormKernel(const KernelRequest& request);
// Slice and Pad with constant parameters, any element type of 1, 2, 4 or 8 bytes, as runs
// of copies computed once (native_copy_runs.cc).
StatusOr<std::optional<KernelChoice>> CreateNativeCopyRunsKernel(const KernelRequest& request);
// float32 depthwise 1-D Conv/qtune::FusedConv (group == channels, one filter each, no
// residual sum) with constant weights (native_depthwise_conv1d.cc).
StatusOr<std::optional<KernelChoice>> CreateNativeDepthwiseConv1dKernel(
    const KernelRequest& request);
// float32 LayerNormalization over trailing axes, Y only, on AVX-512F CPUs
// (native_layer_norm.cc); elsewhere CreateOnednnLayerNormKernel serves it.
StatusOr<std::optional<KernelChoice>> CreateNativeLayerNormKernel(const KernelRequest& request);
// Layout conversion between kPlain and kNhwc for one value.
StatusOr<std::unique_ptr<Kernel>> CreateReorderKernel(DataType dtype,
                                                      const std::vector<int64_t>& sizes,
                                                      Layout from, Layout to);
// Reference tier: always applies to ops with a reference kernel; keeps kNhwc for
// elementwise ops whose operands allow it.
StatusOr<std::optional<KernelChoice>> CreateReferenceKernel(const KernelRequest& request);

}  // namespace qtune::runtime
