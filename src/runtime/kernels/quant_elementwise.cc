// Fast elementwise integer kernels: qtune::QAdd, QuantizeLinear (f32 -> u8|s8) and
// DequantizeLinear (u8|s8|s32 -> f32), per tensor or, for rank-4 values, per channel
// (axis 1) in either layout. Plain loops the compiler vectorizes, split into chunks over
// OpenMP threads when large.
//
// Every kernel evaluates the float expression of core/quant_math.h that the reference tier
// evaluates (division by the scale, round half to even, saturation), so both tiers agree
// bit for bit. The rounding is done by adding and subtracting 1.5 * 2^23, which is exact
// round-half-to-even (in the default rounding mode) for |x| <= 2^22; larger values are
// clamped first, which changes nothing because they saturate either way.
//
// Variants left to the reference tier (NotApplicable): other dtypes (float8, int4, int16,
// float16 scales), blocked quantization (block_size), per-axis scales on anything but
// axis 1 of a rank-4 value, and scale/zero-point shapes that are neither.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// GCC 12's avx512fintrin.h trips -Wmaybe-uninitialized on its own _mm512_undefined_*()
// pass-through operands; the header must come after this to be covered.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#endif
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <type_traits>

#include "core/quant_math.h"
#include "runtime/fusion/quant_ops.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/vector_clones.h"

namespace qtune::runtime {
namespace {

// Elements per chunk of parallel work (and the size below which one thread runs).
constexpr int64_t kChunkElements = int64_t{1} << 16;
constexpr float kRoundMagic = 12582912.0f;  // 1.5 * 2^23
constexpr float kClampBeforeRound = 65536.0f;

// saturate(round_half_to_even(x) + zero_point), x = v / scale already divided; equal to
// QuantizeToInt<Q> (a NaN gives the zero point).
template <typename Q>
inline Q RoundAndSaturate(float x, float zero_point) {
  x = x == x ? x : 0.0f;
  x = std::min(std::max(x, -kClampBeforeRound), kClampBeforeRound);
  x = (x + kRoundMagic) - kRoundMagic;
  x += zero_point;
  x = std::min(std::max(x, static_cast<float>(std::numeric_limits<Q>::min())),
               static_cast<float>(std::numeric_limits<Q>::max()));
  return static_cast<Q>(static_cast<int32_t>(x));
}

// Runs fn(begin, end) over [0, total) in pieces of `grain` on up to `threads` threads.
template <typename Fn>
void ParallelFor(int64_t total, int64_t grain, int threads, const Fn& fn) {
  grain = std::max<int64_t>(grain, 1);
  const int64_t pieces = (total + grain - 1) / grain;
  if (threads <= 0) threads = omp_get_max_threads();
  if (threads <= 1 || pieces <= 1) {
    if (total > 0) fn(0, total);
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t p = 0; p < pieces; ++p) fn(p * grain, std::min(total, (p + 1) * grain));
}

// Zero point `i` of an optional zero-point tensor as int32 (0 when absent).
int32_t ZeroPointAt(const Tensor& zp, int64_t i) {
  if (!zp.is_valid()) return 0;
  switch (zp.dtype()) {
    case DataType::kUint8:
      return zp.data<uint8_t>()[i];
    case DataType::kInt8:
      return zp.data<int8_t>()[i];
    default:
      return zp.data<int32_t>()[i];
  }
}

// ---------------------------------------------------------------------------------------
// qtune::QAdd

struct AddParams {
  float a_scale, b_scale, y_scale;
  int32_t a_zp, b_zp;
  float y_zp;
  // The activation as a lower bound: 0 for Relu, -infinity for none (max(v, -inf) is v,
  // NaN included, as the reference's unclamped v).
  float floor;
};

template <typename TA, typename TB, typename TY>
QTUNE_VECTOR_CLONES void QAddLoop(const TA* a, const TB* b, TY* y, int64_t n, const AddParams& p) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    float v =
        DequantizeFromInt(a[i], p.a_scale, p.a_zp) + DequantizeFromInt(b[i], p.b_scale, p.b_zp);
    v = std::max(v, p.floor);
    y[i] = RoundAndSaturate<TY>(v / p.y_scale, p.y_zp);
  }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define QTUNE_AVX512_PATHS 1
#define QTUNE_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))

// Per-tensor Quantize and QAdd with AVX-512 intrinsics, 16 lanes at a time with masked
// tails: GCC vectorizes the portable loops only at 256 bits, with spills. Same
// expressions: cvt with round-to-nearest-even is RoundAndSaturate's rounding, and integer
// zero points and bounds add and clamp exactly.
QTUNE_AVX512 inline __mmask16 TailMask(int64_t remaining) {
  return remaining >= 16 ? static_cast<__mmask16>(0xFFFF)
                         : static_cast<__mmask16>((1u << remaining) - 1u);
}

// RoundAndSaturate<Q> of 16 already divided values into y (lanes in `m`); NaN gives the
// zero point.
template <typename Q>
QTUNE_AVX512 inline void StoreRounded(Q* y, __mmask16 m, __m512 v, __m512i zero_point) {
  const __mmask16 ordered = _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q);
  v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(-kClampBeforeRound)),
                    _mm512_set1_ps(kClampBeforeRound));
  __m512i r =
      _mm512_maskz_cvt_roundps_epi32(ordered, v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  r = _mm512_add_epi32(r, zero_point);
  r = _mm512_max_epi32(r, _mm512_set1_epi32(std::numeric_limits<Q>::min()));
  r = _mm512_min_epi32(r, _mm512_set1_epi32(std::numeric_limits<Q>::max()));
  _mm_mask_storeu_epi8(y, m, _mm512_cvtepi32_epi8(r));
}

// DequantizeFromInt of 16 one-byte values.
template <typename T>
QTUNE_AVX512 inline __m512 LoadDequantized(const T* x, __mmask16 m, __m512 scale,
                                           __m512i zero_point) {
  const __m128i bytes = _mm_maskz_loadu_epi8(m, x);
  const __m512i wide =
      std::is_same_v<T, uint8_t> ? _mm512_cvtepu8_epi32(bytes) : _mm512_cvtepi8_epi32(bytes);
  return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(wide, zero_point)), scale);
}

// What StoreRounded needs of x / s (which the reference computes): a value that rounds to
// the same integer. x * (1/s) is within 2 ulp of the correctly rounded quotient, so it
// does, unless it lies within a few ulp of a half-integer (a possible tie, or a value
// beyond 2^20 that saturates anyway); such vectors, rare, are divided. A multiply costs a
// fraction of a divide, which dominated QuantizeLinear. `r` is 1/s (ReciprocalOf).
QTUNE_AVX512 inline __m512 QuotientToRound(__m512 x, __m512 s, __m512 r) {
  const __m512 q = _mm512_mul_ps(x, r);
  const __m512 half = _mm512_add_ps(
      _mm512_roundscale_ps(q, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC), _mm512_set1_ps(0.5f));
  const __m512 distance = _mm512_abs_ps(_mm512_sub_ps(q, half));
  const __m512 margin =
      _mm512_fmadd_ps(_mm512_abs_ps(q), _mm512_set1_ps(0x1p-20f), _mm512_set1_ps(0x1p-100f));
  // NaN and infinities compare false here: x * r and x / s agree on them.
  if (_mm512_cmp_ps_mask(distance, margin, _CMP_LE_OQ) != 0) return _mm512_div_ps(x, s);
  return q;
}

// 1/s, when it is finite and not denormal (else QuotientToRound would differ from x / s:
// 0 * inf); nullopt to divide every vector. (A struct: std::optional<__m512> would drop the
// vector type's alignment attribute.)
struct Reciprocal {
  __m512 r;
};

QTUNE_AVX512 inline std::optional<Reciprocal> ReciprocalOf(float s) {
  const float r = 1.0f / s;
  if (!std::isnormal(r) || !std::isnormal(s)) return std::nullopt;
  return Reciprocal{_mm512_set1_ps(r)};
}

QTUNE_AVX512 inline __m512 Quotient(__m512 x, __m512 s, const std::optional<Reciprocal>& r) {
  return r ? QuotientToRound(x, s, r->r) : _mm512_div_ps(x, s);
}

template <typename Q>
QTUNE_AVX512 void QuantizeRunAvx512(const float* x, Q* y, int64_t n, float scale, float zp) {
  const __m512 s = _mm512_set1_ps(scale);
  const std::optional<Reciprocal> r = ReciprocalOf(scale);
  const __m512i z = _mm512_set1_epi32(static_cast<int32_t>(zp));
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = TailMask(n - i);
    StoreRounded(y + i, m, Quotient(_mm512_maskz_loadu_ps(m, x + i), s, r), z);
  }
}

template <typename TA, typename TB, typename TY>
QTUNE_AVX512 void QAddAvx512(const TA* a, const TB* b, TY* y, int64_t n, const AddParams& p) {
  const __m512 sa = _mm512_set1_ps(p.a_scale), sb = _mm512_set1_ps(p.b_scale);
  const __m512 sy = _mm512_set1_ps(p.y_scale), floor = _mm512_set1_ps(p.floor);
  const std::optional<Reciprocal> ry = ReciprocalOf(p.y_scale);
  const __m512i za = _mm512_set1_epi32(p.a_zp), zb = _mm512_set1_epi32(p.b_zp);
  const __m512i zy = _mm512_set1_epi32(static_cast<int32_t>(p.y_zp));
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = TailMask(n - i);
    __m512 v = _mm512_add_ps(LoadDequantized(a + i, m, sa, za), LoadDequantized(b + i, m, sb, zb));
    v = _mm512_max_ps(v, floor);  // v is finite: the sum of two dequantized integers
    StoreRounded(y + i, m, Quotient(v, sy, ry), zy);
  }
}
#endif

// True when the AVX-512 paths above can run on this CPU.
bool HasAvx512Paths() {
#ifdef QTUNE_AVX512_PATHS
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl");
  return has;
#else
  return false;
#endif
}

using QAddFn = void (*)(const void*, const void*, void*, int64_t, const AddParams&);

template <typename TA, typename TB, typename TY>
void QAddErased(const void* a, const void* b, void* y, int64_t n, const AddParams& p) {
#ifdef QTUNE_AVX512_PATHS
  if (HasAvx512Paths()) {
    return QAddAvx512(static_cast<const TA*>(a), static_cast<const TB*>(b), static_cast<TY*>(y), n,
                      p);
  }
#endif
  QAddLoop(static_cast<const TA*>(a), static_cast<const TB*>(b), static_cast<TY*>(y), n, p);
}

template <typename TA, typename TB>
QAddFn PickQAdd(DataType y) {
  return y == DataType::kUint8 ? &QAddErased<TA, TB, uint8_t> : &QAddErased<TA, TB, int8_t>;
}

template <typename TA>
QAddFn PickQAdd(DataType b, DataType y) {
  return b == DataType::kUint8 ? PickQAdd<TA, uint8_t>(y) : PickQAdd<TA, int8_t>(y);
}

class QAddKernel : public Kernel {
 public:
  QAddKernel(const ir::Node& node, QAddFn fn, bool relu, int threads)
      : node_(node), fn_(fn), relu_(relu), threads_(threads) {}

  std::string Describe() const override { return relu_ ? "quant:qadd+relu" : "quant:qadd"; }

  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    AddParams p{inputs[1].data<float>()[0],
                inputs[4].data<float>()[0],
                inputs[6].data<float>()[0],
                ZeroPointAt(inputs[2], 0),
                ZeroPointAt(inputs[5], 0),
                0.0f,
                relu_ ? 0.0f : -std::numeric_limits<float>::infinity()};
    p.y_zp = static_cast<float>(ZeroPointAt(inputs[7], 0));
    for (float s : {p.a_scale, p.b_scale, p.y_scale}) {
      if (!(s > 0) || !std::isfinite(s)) {
        return InvalidArgumentError(node_.DebugName() + ": a QAdd scale is " + std::to_string(s) +
                                    "; scales must be positive and finite");
      }
    }
    const auto* a = static_cast<const std::byte*>(inputs[0].raw_data());
    const auto* b = static_cast<const std::byte*>(inputs[3].raw_data());
    auto* y = static_cast<std::byte*>(outputs[0].raw_data());
    // Every element type here is one byte wide, so offsets are element counts.
    ParallelFor(
        outputs[0].num_elements(), kChunkElements, threads_,
        [&](int64_t begin, int64_t end) { fn_(a + begin, b + begin, y + begin, end - begin, p); });
    return Status::Ok();
  }

 private:
  const ir::Node& node_;  // REQUIRES: outlives the kernel (the plan's graph owns it)
  QAddFn fn_;
  bool relu_;
  int threads_;
};

bool IsScalarOf(const ValueInfo* v, DataType dtype) {
  if (v == nullptr || v->dtype != dtype) return false;
  int64_t n = 1;
  for (int64_t d : v->sizes) n *= d;
  return n == 1;
}

StatusOr<std::optional<KernelChoice>> CreateQAdd(const KernelRequest& request) {
  const std::vector<const ValueInfo*>& in = request.inputs;
  if (in.size() != 8 || request.outputs.empty() || request.outputs[0] == nullptr) {
    return NotApplicable();  // the reference reports the malformed node
  }
  const ValueInfo* a = in[0];
  const ValueInfo* b = in[3];
  const DataType y = request.outputs[0]->dtype;
  if (a == nullptr || b == nullptr || !IsInt8OrUint8(a->dtype) || !IsInt8OrUint8(b->dtype) ||
      !IsInt8OrUint8(y) || a->sizes != b->sizes || request.outputs[0]->sizes != a->sizes ||
      !IsScalarOf(in[1], DataType::kFloat32) || !IsScalarOf(in[2], a->dtype) ||
      !IsScalarOf(in[4], DataType::kFloat32) || !IsScalarOf(in[5], b->dtype) ||
      !IsScalarOf(in[6], DataType::kFloat32) || !IsScalarOf(in[7], y)) {
    return NotApplicable();
  }
  const std::string activation = request.node.GetString("activation", "");
  if (activation != "" && activation != "Relu") return NotApplicable();
  QAddFn fn =
      a->dtype == DataType::kUint8 ? PickQAdd<uint8_t>(b->dtype, y) : PickQAdd<int8_t>(b->dtype, y);
  // Both operands in A's layout (B is reordered if it lives elsewhere); Y in the same.
  Layout layout =
      request.input_layouts.size() == in.size() ? request.input_layouts[0] : Layout::kPlain;
  if (a->sizes.size() != 4) layout = Layout::kPlain;
  KernelChoice choice;
  choice.kernel =
      std::make_unique<QAddKernel>(request.node, fn, activation == "Relu", request.threads);
  choice.input_layouts.assign(in.size(), Layout::kPlain);
  choice.input_layouts[0] = choice.input_layouts[3] = layout;
  choice.output_layouts = {layout};
  if (a->dtype == y) choice.inplace_input = 0;
  return std::optional<KernelChoice>(std::move(choice));
}

// ---------------------------------------------------------------------------------------
// QuantizeLinear / DequantizeLinear

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
#ifdef QTUNE_AVX512_PATHS
  if (HasAvx512Paths()) return QuantizeRunAvx512(x, y, n, scale, zp);
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

StatusOr<std::optional<KernelChoice>> CreateLinear(const KernelRequest& request) {
  const ir::Node& node = request.node;
  const bool quantize = node.op_type() == "QuantizeLinear";
  const std::vector<const ValueInfo*>& in = request.inputs;
  if (in.size() < 2 || in.size() > 3 || in[0] == nullptr || in[1] == nullptr ||
      request.outputs.size() != 1 || request.outputs[0] == nullptr ||
      node.GetInt("block_size", 0) != 0) {
    return NotApplicable();
  }
  const ValueInfo& x = *in[0];
  const ValueInfo& scale = *in[1];
  const ValueInfo* zp = in.size() > 2 ? in[2] : nullptr;
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

}  // namespace

StatusOr<std::optional<KernelChoice>> CreateQuantElementwiseKernel(const KernelRequest& request) {
  const ir::Node& node = request.node;
  if (node.domain() == "qtune" && node.op_type() == kQAdd) return CreateQAdd(request);
  if ((node.domain().empty() || node.domain() == "ai.onnx") &&
      (node.op_type() == "QuantizeLinear" || node.op_type() == "DequantizeLinear")) {
    return CreateLinear(request);
  }
  return NotApplicable();
}

void RegisterQuantElementwiseKernels(KernelRegistry& registry) {
  registry.Register({.name = "native_qadd",
                     .tier = KernelTier::kNative,
                     .ops = {{"qtune", "QAdd"}},
                     .input_dtypes = {DataType::kInt8, DataType::kUint8},
                     .reads = {Layout::kPlain, Layout::kNhwc},
                     .factory = &CreateQuantElementwiseKernel});
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
