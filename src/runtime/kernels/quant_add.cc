// qtune::QAdd (fusion/quant_ops.h) on int8/uint8 operands with per-tensor scales and
// zero points, optionally followed by Relu, in any one layout: dequantize both, add,
// requantize (quant_vector_math.h's rounding, bit for bit the reference tier's
// fusion/quant_add_reference.cc). Chunks of the flat element range over OpenMP threads.
#include <memory>
#include <string>
#include <vector>

#include "runtime/fusion/quant_ops.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/quant_vector_math.h"
#include "runtime/kernels/vector_clones.h"

namespace qtune::runtime {
namespace {

using namespace quant_vector;

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

#ifdef QTUNE_AVX512F_PATHS
template <typename TA, typename TB, typename TY>
QTUNE_AVX512BW void QAddAvx512(const TA* a, const TB* b, TY* y, int64_t n, const AddParams& p) {
  const __m512 sa = _mm512_set1_ps(p.a_scale), sb = _mm512_set1_ps(p.b_scale);
  const __m512 sy = _mm512_set1_ps(p.y_scale), floor = _mm512_set1_ps(p.floor);
  const std::optional<Reciprocal> ry = ReciprocalOf(p.y_scale);
  const __m512i za = _mm512_set1_epi32(p.a_zp), zb = _mm512_set1_epi32(p.b_zp);
  const __m512i zy = _mm512_set1_epi32(static_cast<int32_t>(p.y_zp));
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = TailMask16(n - i);
    __m512 v = _mm512_add_ps(LoadDequantized(a + i, m, sa, za), LoadDequantized(b + i, m, sb, zb));
    v = _mm512_max_ps(v, floor);  // v is finite: the sum of two dequantized integers
    StoreRounded(y + i, m, Quotient(v, sy, ry), zy);
  }
}
#endif

using QAddFn = void (*)(const void*, const void*, void*, int64_t, const AddParams&);

template <typename TA, typename TB, typename TY>
void QAddErased(const void* a, const void* b, void* y, int64_t n, const AddParams& p) {
#ifdef QTUNE_AVX512F_PATHS
  if (HasAvx512BwPaths()) {
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

}  // namespace

StatusOr<std::optional<KernelChoice>> CreateQAddKernel(const KernelRequest& request) {
  if (request.node.domain() != "qtune" || request.node.op_type() != kQAdd) return NotApplicable();
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

void RegisterQAddKernels(KernelRegistry& registry) {
  registry.Register({.name = "native_qadd",
                     .tier = KernelTier::kNative,
                     .ops = {{"qtune", "QAdd"}},
                     .input_dtypes = {DataType::kInt8, DataType::kUint8},
                     .reads = {Layout::kPlain, Layout::kNhwc},
                     .factory = &CreateQAddKernel});
}

}  // namespace qtune::runtime
