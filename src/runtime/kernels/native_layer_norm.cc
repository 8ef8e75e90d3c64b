// Native float32 LayerNormalization (stash_type 1, Y only): each row of the normalized
// trailing axes [axis, rank) gets y = (x - mean) / sqrt(var + epsilon) * Scale + B, with
// mean and var over the row in two passes (var from the centred values, as the reference
// tier, and the mean summed relative to the row's first value: accurate for rows far from
// 0, where oneDNN 2.6's layer_normalization is not). Scale and B cover exactly the
// normalized elements (no broadcasting inside them); they are read at every run, constant
// or not. A transformer's rows (a few hundred values) stay in L1 through the three passes.
// Measured on a ViT block's 197 rows of 192 (1 thread, Intel Xeon): 0.008 ms alone, 0.012
// ms per step in the block, where oneDNN 2.6's layer_normalization took 0.012-0.015. Only
// on CPUs with AVX-512F; elsewhere oneDNN's kernel runs.
//
// Left to oneDNN / the reference tier: the Mean and InvStdDev outputs, other stash types,
// broadcast Scale / B, other types.
#include <cmath>
#include <string>
#include <vector>

#include "runtime/kernels/avx512_util.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/parallel_rows.h"
#include "runtime/reference/nn_util.h"

namespace qtune::runtime {
namespace {

#ifdef QTUNE_AVX512F_PATHS
// One row of n values; bias may be null. Two accumulators per sum hide the add latency.
// The mean is x[0] plus the mean of x - x[0]: values far from 0 (a mean of 1000 and a
// spread of 0.02) then lose no digits to the running sum.
QTUNE_AVX512F void NormalizeRow(const float* x, float* y, const float* scale, const float* bias,
                                int64_t n, float epsilon) {
  const __m512 shift = _mm512_set1_ps(x[0]);
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    s0 = _mm512_add_ps(s0, _mm512_sub_ps(_mm512_loadu_ps(x + i), shift));
    s1 = _mm512_add_ps(s1, _mm512_sub_ps(_mm512_loadu_ps(x + i + 16), shift));
  }
  for (; i < n; i += 16) {
    const __mmask16 m = TailMask16(n - i);
    s0 = _mm512_add_ps(s0, _mm512_maskz_sub_ps(m, _mm512_maskz_loadu_ps(m, x + i), shift));
  }
  const __m512 mean =
      _mm512_set1_ps(x[0] + _mm512_reduce_add_ps(_mm512_add_ps(s0, s1)) / static_cast<float>(n));
  s0 = _mm512_setzero_ps();
  s1 = _mm512_setzero_ps();
  for (i = 0; i + 32 <= n; i += 32) {
    const __m512 d0 = _mm512_sub_ps(_mm512_loadu_ps(x + i), mean);
    const __m512 d1 = _mm512_sub_ps(_mm512_loadu_ps(x + i + 16), mean);
    s0 = _mm512_fmadd_ps(d0, d0, s0);
    s1 = _mm512_fmadd_ps(d1, d1, s1);
  }
  for (; i < n; i += 16) {
    const __mmask16 m = TailMask16(n - i);
    const __m512 d = _mm512_maskz_sub_ps(m, _mm512_maskz_loadu_ps(m, x + i), mean);
    s0 = _mm512_fmadd_ps(d, d, s0);
  }
  const float variance = _mm512_reduce_add_ps(_mm512_add_ps(s0, s1)) / static_cast<float>(n);
  const __m512 inv_std = _mm512_set1_ps(1.0f / std::sqrt(variance + epsilon));
  for (i = 0; i < n; i += 16) {
    const __mmask16 m = TailMask16(n - i);
    const __m512 v = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), mean), inv_std);
    const __m512 g = _mm512_maskz_loadu_ps(m, scale + i);
    _mm512_mask_storeu_ps(y + i, m,
                          bias != nullptr
                              ? _mm512_fmadd_ps(v, g, _mm512_maskz_loadu_ps(m, bias + i))
                              : _mm512_mul_ps(v, g));
  }
}

class NativeLayerNormKernel final : public Kernel {
 public:
  NativeLayerNormKernel(int64_t rows, int64_t columns, bool has_bias, float epsilon, int threads)
      : rows_(rows), columns_(columns), has_bias_(has_bias), epsilon_(epsilon), threads_(threads) {}

  std::string Describe() const override { return "native:layer_norm"; }

  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    const float* x = inputs[0].data<float>();
    const float* scale = inputs[1].data<float>();
    const float* bias = has_bias_ ? inputs[2].data<float>() : nullptr;
    float* y = outputs[0].data<float>();
    ParallelRows(rows_, columns_, threads_, [&](int64_t r) {
      NormalizeRow(x + r * columns_, y + r * columns_, scale, bias, columns_, epsilon_);
    });
    return Status::Ok();
  }

 private:
  int64_t rows_, columns_;
  bool has_bias_;
  float epsilon_;
  int threads_;
};
#endif  // QTUNE_AVX512F_PATHS

bool IsFloat32(const ValueInfo* info) {
  return info != nullptr && info->dtype == DataType::kFloat32;
}

}  // namespace

StatusOr<std::optional<KernelChoice>> CreateNativeLayerNormKernel(const KernelRequest& request) {
  const ir::Node& node = request.node;
  if ((!node.domain().empty() && node.domain() != "ai.onnx") ||
      node.op_type() != "LayerNormalization") {
    return NotApplicable(request, "not an ONNX LayerNormalization");
  }
  if (request.inputs.size() < 2 || request.outputs.empty() || request.outputs[0] == nullptr) {
    return NotApplicable(request, "needs X, Scale and output Y");
  }
  for (size_t i = 1; i < request.outputs.size(); ++i) {
    if (request.outputs[i] != nullptr) return NotApplicable(request, "Mean / InvStdDev requested");
  }
  if (!CpuHasAvx512F()) {
    return NotApplicable(request, "no AVX-512F on this CPU (oneDNN's layer_normalization runs)");
  }
  if (node.GetInt("stash_type", 1) != 1) return NotApplicable(request, "stash_type is not float");
  const ValueInfo& x = *request.inputs[0];
  if (!IsFloat32(&x) || !IsFloat32(request.outputs[0]) || request.outputs[0]->sizes != x.sizes) {
    return NotApplicable(request, "X and Y must be float32 of the same sizes");
  }
  const int64_t rank = static_cast<int64_t>(x.sizes.size());
  int64_t axis = node.GetInt("axis", -1);
  if (axis < -rank || axis >= rank) return NotApplicable();  // the reference reports it
  if (axis < 0) axis += rank;
  const int64_t rows = nn::Product(x.sizes, 0, axis);
  const int64_t columns = nn::Product(x.sizes, axis, rank);
  if (rows * columns == 0) return NotApplicable(request, "empty input");
  // Scale is required (a model without one is left to the reference tier to report).
  const ValueInfo* scale = request.inputs[1];
  const ValueInfo* bias = request.input(2);
  auto covers_a_row = [&](const ValueInfo* v) {
    return IsFloat32(v) && nn::Product(v->sizes) == columns;
  };
  if (!covers_a_row(scale) || (bias != nullptr && !covers_a_row(bias))) {
    return NotApplicable(request,
                         "Scale and B must be float32 with one value per element of a row");
  }
#ifdef QTUNE_AVX512F_PATHS
  KernelChoice choice;
  choice.kernel = std::make_unique<NativeLayerNormKernel>(
      rows, columns, bias != nullptr, node.GetFloat("epsilon", 1e-5f), request.threads);
  choice.input_layouts.assign(request.inputs.size(), Layout::kPlain);
  choice.output_layouts.assign(request.outputs.size(), Layout::kPlain);
  choice.inplace_input = 0;
  return std::optional<KernelChoice>(std::move(choice));
#else
  return NotApplicable();
#endif
}

void RegisterNativeLayerNormKernels(KernelRegistry& registry) {
  registry.Register({.name = "native_layer_norm",
                     .tier = KernelTier::kNative,
                     .priority = 150,  // above onednn_layer_norm
                     .ops = {{"", "LayerNormalization"}},
                     .input_dtypes = {DataType::kFloat32},
                     .factory = &CreateNativeLayerNormKernel});
}

}  // namespace qtune::runtime
