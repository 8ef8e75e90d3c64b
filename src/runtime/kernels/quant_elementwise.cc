// Fast QuantizeLinear (f32 -> u8|s8) and DequantizeLinear (u8|s8|s32 -> f32), per tensor
// or, for rank-4 values, per channel (axis 1) in either layout: plain loops the compiler
// vectorizes (an AVX-512 one for per-tensor quantization), split into chunks over OpenMP
// threads when large, bit for bit the reference tier (quant_vector_math.h's rounding).
// qtune::QAdd is quant_add.cc.
//
// Variants left to the reference tier (NotApplicable): other dtypes (float8, int4, int16,
// float16 scales), blocked quantization (block_size), per-axis scales on anything but
// axis 1 of a rank-4 value, and scale/zero-point shapes that are neither.
#include <memory>
#include <string>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/quant_vector_math.h"
#include "runtime/kernels/vector_clones.h"

namespace qtune::runtime {
namespace {

using namespace quant_vector;

#ifdef QTUNE_AVX512F_PATHS
template <typename Q>
QTUNE_AVX512BW void QuantizeRunAvx512(const float* x, Q* y, int64_t n, float scale, float zp) {
  const __m512 s = _mm512_set1_ps(scale);
  const std::optional<Reciprocal> r = ReciprocalOf(scale);
  const __m512i z = _mm512_set1_epi32(static_cast<int32_t>(zp));
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = TailMask16(n - i);
    StoreRounded(y + i, m, Quotient(_mm512_maskz_loadu_ps(m, x + i), s, r), z);
  }
}
#endif

// How scale i applies: one scale for everything, one per channel of a plain [N,C,H,W]
// value (rows of H*W elements, row r is channel r % C), or one per channel of an nhwc
// value (rows of C elements, element j of a row is channel j).
enum class Granularity { kPerTensor, kPerChannelPlain, kPerChannelNhwc };

struct LinearPlan {
  Granularity granularity = Granularity::kPerTensor;
  int64_t channels = 1;
  int64_t row = 1;  // elements per row (per-channel granularities)
};

// Quantize one contiguous run with a fixed scale / zero point, or per-element ones.
template <typename Q>
QTUNE_VECTOR_CLONES void QuantizeRun(const float* x, Q* y, int64_t n, float scale, float zp) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = RoundAndSaturate<Q>(x[i] / scale, zp);
}
template <typename Q>
QTUNE_VECTOR_CLONES void QuantizeRow(const float* x, Q* y, int64_t n, const float* scale,
                                     const float* zp) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = RoundAndSaturate<Q>(x[i] / scale[i], zp[i]);
}
template <typename T>
QTUNE_VECTOR_CLONES void DequantizeRun(const T* x, float* y, int64_t n, float scale, int32_t zp) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = DequantizeFromInt(x[i], scale, zp);
}
template <typename T>
QTUNE_VECTOR_CLONES void DequantizeRow(const T* x, float* y, int64_t n, const float* scale,
                                       const int32_t* zp) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = DequantizeFromInt(x[i], scale[i], zp[i]);
}

// A per-tensor run on the AVX-512 path where the CPU has it, else the portable loop.
template <typename Q>
void QuantizeRunBest(const float* x, Q* y, int64_t n, float scale, float zp) {
#ifdef QTUNE_AVX512F_PATHS
  if (HasAvx512BwPaths()) return QuantizeRunAvx512(x, y, n, scale, zp);
#endif
  QuantizeRun(x, y, n, scale, zp);
}

class LinearKernel : public Kernel {
 public:
  // `quantize`: QuantizeLinear (float x -> `q_type` y), else DequantizeLinear (`q_type` x
  // -> float y).
  LinearKernel(const ir::Node& node, bool quantize, DataType q_type, LinearPlan plan, int threads)
      : node_(node), quantize_(quantize), q_type_(q_type), plan_(plan), threads_(threads) {}

  std::string Describe() const override {
    std::string g = plan_.granularity == Granularity::kPerTensor ? "per-tensor" : "per-channel";
    return std::string(quantize_ ? "quant:quantize " : "quant:dequantize ") +
           std::string(DataTypeName(q_type_)) + " " + g;
  }

  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    const Tensor& scale = inputs[1];
    const Tensor no_zp;
    const Tensor& zp = inputs.size() > 2 ? inputs[2] : no_zp;
    const int64_t count = plan_.granularity == Granularity::kPerTensor ? 1 : plan_.channels;
    scales_.assign(scale.data<float>(), scale.data<float>() + count);
    for (float s : scales_) {
      // The reference tier's checks: a quantize scale must be positive and finite, a
      // dequantize scale finite.
      if (!std::isfinite(s) || (quantize_ && !(s > 0))) {
        return InvalidArgumentError(node_.DebugName() + ": the scale holds " + std::to_string(s) +
                                    (quantize_ ? "; quantization scales must be positive and finite"
                                               : "; scales must be finite"));
      }
    }
    zps_.resize(count);
    zps_float_.resize(count);
    for (int64_t c = 0; c < count; ++c) {
      zps_[c] = ZeroPointAt(zp, c);
      zps_float_[c] = static_cast<float>(zps_[c]);
    }
    switch (q_type_) {
      case DataType::kUint8:
        return quantize_ ? Quantize<uint8_t>(inputs[0], outputs[0])
                         : Dequantize<uint8_t>(inputs[0], outputs[0]);
      case DataType::kInt8:
        return quantize_ ? Quantize<int8_t>(inputs[0], outputs[0])
                         : Dequantize<int8_t>(inputs[0], outputs[0]);
      default:
        return Dequantize<int32_t>(inputs[0], outputs[0]);
    }
  }

 private:
  // Calls run(begin, end, c) for runs with one scale (c = its channel, or -1 when the run
  // is a row of an nhwc value whose element j has channel j).
  template <typename Fn>
  void ForRuns(int64_t n, const Fn& run) const {
    if (plan_.granularity == Granularity::kPerTensor) {
      ParallelFor(n, kChunkElements, threads_, [&](int64_t b, int64_t e) { run(b, e, 0); });
      return;
    }
    const int64_t rows = n / plan_.row;
    const bool nhwc = plan_.granularity == Granularity::kPerChannelNhwc;
    ParallelFor(rows, kChunkElements / plan_.row, threads_, [&](int64_t rb, int64_t re) {
      for (int64_t r = rb; r < re; ++r) {
        run(r * plan_.row, (r + 1) * plan_.row, nhwc ? -1 : r % plan_.channels);
      }
    });
  }

  template <typename Q>
  Status Quantize(const Tensor& x_tensor, Tensor& y_tensor) {
    const float* x = x_tensor.data<float>();
    Q* y = y_tensor.data<Q>();
    ForRuns(x_tensor.num_elements(), [&](int64_t b, int64_t e, int64_t c) {
      if (c < 0) {
        QuantizeRow(x + b, y + b, e - b, scales_.data(), zps_float_.data());
      } else {
        QuantizeRunBest(x + b, y + b, e - b, scales_[c], zps_float_[c]);
      }
    });
    return Status::Ok();
  }

  template <typename T>
  Status Dequantize(const Tensor& x_tensor, Tensor& y_tensor) {
    const T* x = x_tensor.data<T>();
    float* y = y_tensor.data<float>();
    ForRuns(x_tensor.num_elements(), [&](int64_t b, int64_t e, int64_t c) {
      if (c < 0) {
        DequantizeRow(x + b, y + b, e - b, scales_.data(), zps_.data());
      } else {
        DequantizeRun(x + b, y + b, e - b, scales_[c], zps_[c]);
      }
    });
    return Status::Ok();
  }

  const ir::Node& node_;  // REQUIRES: outlives the kernel (the plan's graph owns it)
  bool quantize_;
  DataType q_type_;
  LinearPlan plan_;
  int threads_;
  // The run's scales and zero points (read from the inputs on every run).
  std::vector<float> scales_, zps_float_;
  std::vector<int32_t> zps_;
};

}  // namespace

StatusOr<std::optional<KernelChoice>> CreateQuantElementwiseKernel(const KernelRequest& request) {
  const ir::Node& node = request.node;
  const bool quantize = node.op_type() == "QuantizeLinear";
  if (!(node.domain().empty() || node.domain() == "ai.onnx") ||
      !(quantize || node.op_type() == "DequantizeLinear")) {
    return NotApplicable();
  }
  const std::vector<const ValueInfo*>& in = request.inputs;
  if (in.size() < 2 || in.size() > 3 || in[0] == nullptr || in[1] == nullptr ||
      request.outputs.size() != 1 || request.outputs[0] == nullptr ||
      node.GetInt("block_size", 0) != 0) {
    return NotApplicable();
  }
  const ValueInfo& x = *in[0];
  const ValueInfo& scale = *in[1];
  const ValueInfo* zp = request.input(2);
  const DataType y_type = request.outputs[0]->dtype;
  const DataType q_type = quantize ? y_type : x.dtype;
  if (quantize) {
    if (x.dtype != DataType::kFloat32 || !IsInt8OrUint8(y_type)) return NotApplicable();
  } else if (y_type != DataType::kFloat32 ||
             !(IsInt8OrUint8(x.dtype) || x.dtype == DataType::kInt32)) {
    return NotApplicable();
  }
  if (scale.dtype != DataType::kFloat32 || !scale.has_constant() ||
      (zp != nullptr && (zp->dtype != q_type || !zp->has_constant() || zp->sizes != scale.sizes))) {
    return NotApplicable();
  }
  if (q_type == DataType::kInt32 && zp != nullptr) {
    // ONNX gives int32 no zero point; the reference tier rejects a nonzero one.
    for (int64_t i = 0; i < zp->constant.num_elements(); ++i) {
      if (zp->constant.data<int32_t>()[i] != 0) return NotApplicable();
    }
  }
  LinearPlan plan;
  Layout layout = request.input_layouts.empty() ? Layout::kPlain : request.input_layouts[0];
  if (!scale.sizes.empty()) {  // per-axis: only axis 1 of a rank-4 value
    const int64_t rank = static_cast<int64_t>(x.sizes.size());
    int64_t axis = node.GetInt("axis", 1);
    if (axis < 0) axis += rank;
    if (rank != 4 || axis != 1 || scale.sizes.size() != 1 || scale.sizes[0] != x.sizes[1]) {
      return NotApplicable();
    }
    plan.channels = x.sizes[1];
    if (layout == Layout::kNhwc) {
      plan.granularity = Granularity::kPerChannelNhwc;
      plan.row = plan.channels;
    } else {
      plan.granularity = Granularity::kPerChannelPlain;
      plan.row = x.sizes[2] * x.sizes[3];
    }
    if (plan.row == 0) return NotApplicable();
  }
  if (x.sizes.size() != 4) layout = Layout::kPlain;
  KernelChoice choice;
  choice.kernel = std::make_unique<LinearKernel>(node, quantize, q_type, plan, request.threads);
  choice.input_layouts.assign(in.size(), Layout::kPlain);
  choice.input_layouts[0] = layout;
  choice.output_layouts = {layout};
  return std::optional<KernelChoice>(std::move(choice));
}

void RegisterQuantElementwiseKernels(KernelRegistry& registry) {
  registry.Register({.name = "native_quantize",
                     .tier = KernelTier::kNative,
                     .ops = {{"", "QuantizeLinear"}},
                     .input_dtypes = {DataType::kFloat32},
                     .reads = {Layout::kPlain, Layout::kNhwc},
                     .factory = &CreateQuantElementwiseKernel});
  registry.Register({.name = "native_dequantize",
                     .tier = KernelTier::kNative,
                     .ops = {{"", "DequantizeLinear"}},
                     .input_dtypes = {DataType::kInt8, DataType::kUint8, DataType::kInt32},
                     .reads = {Layout::kPlain, Layout::kNhwc},
                     .factory = &CreateQuantElementwiseKernel});
}

}  // namespace qtune::runtime
