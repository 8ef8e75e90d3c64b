// Native MatMulNBits (com.microsoft and qtune, fusion/matmul_nbits.h) with constant
// weights: the codes, scales and zero points packed once at creation
// (lowbit_gemv_packed.h), each run one stream over them for every 4 rows of A, with the
// bias and ReLU applied in registers and other activations over the output afterwards.
// Any row count runs; past a few rows each group of 4 re-reads the weights (the product
// is then compute-bound, and a dequantized fp32 oneDNN matmul would be faster).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "runtime/fusion/fused_ops.h"
#include "runtime/fusion/matmul_nbits.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/lowbit_gemv_packed.h"
#include "runtime/kernels/packed_gemv_kernel.h"

namespace qtune::runtime {

StatusOr<std::optional<KernelChoice>> CreateNativeLowBitMatMulKernel(const KernelRequest& request) {
  const ir::Node& node = request.node;
  if (!IsMatMulNBits(node)) return NotApplicable();
  if (request.inputs.size() < 3 || request.inputs[kNBitsA] == nullptr || request.outputs.empty() ||
      request.outputs[0] == nullptr) {
    return NotApplicable();
  }
  const ValueInfo& a = *request.inputs[kNBitsA];
  if (a.dtype != DataType::kFloat32 || a.sizes.empty()) {
    return NotApplicable(request, "A is not float32");
  }
  std::vector<Tensor> inputs(request.inputs.size());
  for (size_t i = 1; i < request.inputs.size(); ++i) {
    const ValueInfo* info = request.inputs[i];
    if (info == nullptr) continue;
    if (!info->has_constant()) {
      return NotApplicable(request, "input " + std::to_string(i) + " ('" + node.input(i)->name() +
                                        "') is computed at run time, not a constant");
    }
    inputs[i] = info->constant;
  }
  const std::optional<GemvIsa> isa = BestGemvIsa();
  if (!isa) return NotApplicable(request, "needs AVX-512F, or AVX2 with FMA");
  // Bad weights are the node's error, whichever tier would run it.
  ASSIGN_OR_RETURN(LowBitWeights w, ReadLowBitWeights(node, inputs));
  const NBitsShape& s = w.shape;
  if (a.sizes.back() != s.k) return NotApplicable(request, "A does not end in K");
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < a.sizes.size(); ++i) rows *= a.sizes[i];
  if (rows < 1) return NotApplicable(request, "an empty dimension");
  ASSIGN_OR_RETURN(std::unique_ptr<PackedLowBitWeights> packed,
                   PackedLowBitWeights::Pack(w.codes.data(), w.scales.data(), w.zero_points.data(),
                                             s.k, s.n, static_cast<int>(s.bits), s.block));
  GemvOptions options;
  options.threads = std::max(1, request.threads);
  options.isa = *isa;
  KernelChoice choice;
  choice.kernel = std::make_unique<PackedGemvKernel<PackedLowBitWeights>>(
      "native:lowbit_gemv:int" + std::to_string(s.bits) + ":", &RunLowBitGemv, std::move(packed),
      std::move(w.bias), ReadActivation(node), rows, options);
  choice.input_layouts.assign(request.inputs.size(), Layout::kPlain);
  choice.output_layouts = {Layout::kPlain};
  return std::optional<KernelChoice>(std::move(choice));
}

void RegisterNativeLowBitMatMulKernels(KernelRegistry& registry) {
  registry.Register({.name = "native_lowbit_gemv",
                     .tier = KernelTier::kNative,
                     .priority = 210,
                     .ops = {{kMicrosoftDomain, kMatMulNBits}, {"qtune", kMatMulNBits}},
                     .input_dtypes = {DataType::kFloat32},
                     .factory = &CreateNativeLowBitMatMulKernel});
}

}  // namespace qtune::runtime
