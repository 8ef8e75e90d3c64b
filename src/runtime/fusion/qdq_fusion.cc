// QDQ fusion of the linear ops (see quant_ops.h):
//   DQ(x), DQ(w const) -> Conv | FusedConv [Sum = DQ(s) or float] [-> Q]     => qtune::QConv
//   DQ(x), DQ(w const, axis 1) -> ConvTranspose (group 1) [-> Q]      => qtune::QConvTranspose
//   DQ(a), DQ(w const) -> MatMul | Gemm [-> Add(bias)] [-> activation] [-> Q] => qtune::QMatMul
// Without a following Q the fused op writes float32. Bias given as DequantizeLinear of an
// int32 constant (ONNX Runtime's layout) becomes a float constant. Only per-tensor
// activation quantization and per-tensor or per-output-channel weight quantization fuse.
#include <algorithm>
#include <optional>

#include "runtime/fusion/fused_ops.h"
#include "runtime/fusion/fusion_pipeline.h"
#include "runtime/fusion/pattern_util.h"
#include "runtime/fusion/qdq_match.h"
#include "runtime/fusion/quant_ops.h"
#include "runtime/kernels/kernel_registry.h"

namespace qtune::runtime {
namespace {

using pattern::IsDefaultOp;
using pattern::SoleConsumer;
using qdq::QParams;

struct WeightParams {
  ir::Value* q = nullptr;           // int8/uint8 constant as the op reads it
  ir::Value* scale = nullptr;       // float32 scalar or [channels]
  ir::Value* zero_point = nullptr;  // nullptr: zeros to create
  Tensor transposed;                // valid when q must be replaced by this [K, N] copy
};

struct LinearMatch {
  const char* op_type = nullptr;  // kQConv, kQConvTranspose or kQMatMul
  ir::Node* op = nullptr;
  std::vector<ir::Node*> chain;  // nodes the fused op replaces, op first
  ir::Value* result = nullptr;   // the chain's last value
  QParams x;
  WeightParams w;
  ir::Value* bias = nullptr;  // float32 constant, or nullptr
  Tensor new_bias;            // valid when the bias must be created (from int32 or an Add)
  std::optional<QParams> sum;
  ir::Value* float_sum = nullptr;
  std::optional<QParams> y;
  std::vector<ir::Attribute> attributes;
};

// True when every w - w_zp lies in [-64, 63]: then u8 x s8 pair sums fit int16 and CPUs
// without an 8-bit dot product (no VNNI/AMX) compute the int8 kernels exactly. Other
// weights stay in the float path there (DQ -> float op -> Q), which is exact.
bool FitsSevenBits(const Tensor& w, const ir::Value* zero_point, int64_t channel_axis) {
  const Tensor* zp = zero_point != nullptr ? &zero_point->initializer() : nullptr;
  const int64_t channels = zp != nullptr ? zp->num_elements() : 1;
  int64_t inner = 1;  // elements between consecutive channels on channel_axis
  for (size_t d = static_cast<size_t>(channel_axis) + 1; d < w.rank(); ++d) inner *= w.size(d);
  auto value = [](const Tensor& t, int64_t i) {
    return t.dtype() == DataType::kInt8 ? int32_t{t.data<int8_t>()[i]}
                                        : int32_t{t.data<uint8_t>()[i]};
  };
  for (int64_t i = 0; i < w.num_elements(); ++i) {
    const int64_t channel = (i / inner) % channels;
    int32_t centered = value(w, i) - (zp != nullptr ? value(*zp, channels > 1 ? channel : 0) : 0);
    if (centered < -64 || centered > 63) return false;
  }
  return true;
}

// DequantizeLinear of a rank-`rank` integer constant whose scale is a scalar or a vector
// along `channel_axis` (the op's output-channel axis of the weight as stored).
std::optional<WeightParams> ReadWeight(const ir::Value* w, size_t rank, int64_t channel_axis) {
  ir::Node* dq = qdq::DequantizeProducer(w);
  if (dq == nullptr || dq->num_inputs() < 2 || dq->GetInt("block_size", 0) != 0) {
    return std::nullopt;
  }
  ir::Value* q = dq->input(0);
  ir::Value* scale = dq->input(1);
  ir::Value* zp = dq->input(2);
  if (!q->is_initializer() || !IsInt8OrUint8(q->initializer().dtype()) ||
      q->initializer().rank() != rank || !scale->is_initializer() ||
      scale->initializer().dtype() != DataType::kFloat32) {
    return std::nullopt;
  }
  const Tensor& s = scale->initializer();
  if (s.num_elements() != 1) {
    int64_t axis = dq->GetInt("axis", 1);
    if (axis < 0) axis += static_cast<int64_t>(rank);
    if (s.rank() != 1 || axis != channel_axis ||
        s.size(0) != q->initializer().size(static_cast<size_t>(channel_axis))) {
      return std::nullopt;
    }
  }
  for (float v : s.span<float>()) {
    if (!(v > 0.0f) || !std::isfinite(v)) return std::nullopt;
  }
  if (zp != nullptr &&
      (!zp->is_initializer() || zp->initializer().dtype() != q->initializer().dtype() ||
       zp->initializer().num_elements() != s.num_elements())) {
    return std::nullopt;
  }
  if (!KernelRegistry::Int8DotProductSupported() &&
      !FitsSevenBits(q->initializer(), zp, channel_axis)) {
    return std::nullopt;
  }
  return WeightParams{q, scale, zp, {}};
}

// The bias as a float32 [n] tensor value: a float32 initializer of n elements, or the
// dequantized values (q - zero_point) * scale of DequantizeLinear(int32 constant, scale,
// [int32 zero point]) with a per-tensor or per-element scale (ONNX Runtime writes zero
// points of zeros). nullopt when it is neither.
std::optional<Tensor> ReadBias(const ir::Value* b, int64_t n) {
  if (b->is_initializer()) {
    const Tensor& t = b->initializer();
    if (t.dtype() != DataType::kFloat32 || t.num_elements() != n) return std::nullopt;
    StatusOr<Tensor> flat = t.Reshaped({n});
    return flat.ok() ? std::optional<Tensor>(*flat) : std::nullopt;
  }
  ir::Node* dq = qdq::DequantizeProducer(b);
  if (dq == nullptr || dq->num_inputs() < 2 || dq->GetInt("block_size", 0) != 0) {
    return std::nullopt;
  }
  const ir::Value* q = dq->input(0);
  const ir::Value* scale = dq->input(1);
  const ir::Value* zp = dq->input(2);
  if (!q->is_initializer() || q->initializer().dtype() != DataType::kInt32 ||
      q->initializer().num_elements() != n || !scale->is_initializer() ||
      scale->initializer().dtype() != DataType::kFloat32) {
    return std::nullopt;
  }
  const Tensor& s = scale->initializer();
  if (s.num_elements() != 1 && s.num_elements() != n) return std::nullopt;
  if (zp != nullptr && (!zp->is_initializer() || zp->initializer().dtype() != DataType::kInt32 ||
                        zp->initializer().num_elements() != s.num_elements())) {
    return std::nullopt;
  }
  StatusOr<Tensor> out = Tensor::Allocate(DataType::kFloat32, {n});
  if (!out.ok()) return std::nullopt;
  const int32_t* qv = q->initializer().data<int32_t>();
  const int32_t* zv = zp != nullptr ? zp->initializer().data<int32_t>() : nullptr;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = s.num_elements() == 1 ? 0 : i;
    const int64_t centered = int64_t{qv[i]} - (zv != nullptr ? zv[c] : 0);
    out->data<float>()[i] = static_cast<float>(centered) * s.data<float>()[c];
  }
  return *out;
}

// Extends the match with the QuantizeLinear reading its result, if it is the only reader.
void AbsorbOutputQuantize(LinearMatch& m, const SizesByName& sizes) {
  ir::Node* q = SoleConsumer(m.result);
  if (q == nullptr) return;
  if (auto y = qdq::PerTensorParams(q, sizes)) {
    m.y = y;
    m.chain.push_back(q);
    m.result = q->output(0);
  }
}

// The common start of a QConv / QConvTranspose match: input 0 from a per-tensor DQ, a
// constant DQ'd weight (input 1) with output channels along `channel_axis`, and an
// optional constant bias (input 2); the op's attributes carry over.
std::optional<LinearMatch> MatchConvLike(ir::Node* op, const char* op_type, int64_t channel_axis,
                                         const SizesByName& sizes) {
  ir::Node* dq_x = qdq::DequantizeProducer(op->input(0));
  std::optional<QParams> x = dq_x ? qdq::PerTensorParams(dq_x, sizes) : std::nullopt;
  if (!x) return std::nullopt;
  std::optional<WeightParams> w = ReadWeight(op->input(1), 4, channel_axis);
  if (!w) return std::nullopt;
  LinearMatch m;
  m.op_type = op_type;
  m.op = op;
  m.chain = {op};
  m.result = op->output(0);
  m.x = *x;
  m.w = *w;
  if (op->input(2) != nullptr) {
    const int64_t channels = w->q->initializer().size(static_cast<size_t>(channel_axis));
    std::optional<Tensor> bias = ReadBias(op->input(2), channels);
    if (!bias) return std::nullopt;
    if (op->input(2)->is_initializer()) {
      m.bias = op->input(2);
    } else {
      m.new_bias = *bias;
    }
  }
  m.attributes = op->attributes();
  return m;
}

std::optional<LinearMatch> SelectQConv(ir::Node* conv, const SizesByName& sizes) {
  bool fused = IsFusedConv(*conv);
  if (!fused && !IsDefaultOp(conv, "Conv")) return std::nullopt;
  std::optional<LinearMatch> m = MatchConvLike(conv, kQConv, 0, sizes);
  if (!m) return std::nullopt;
  if (fused && conv->input(kFusedConvSumInput) != nullptr) {
    ir::Value* sum = conv->input(kFusedConvSumInput);
    ir::Node* dq_sum = qdq::DequantizeProducer(sum);
    m->sum = dq_sum ? qdq::PerTensorParams(dq_sum, sizes) : std::nullopt;
    if (!m->sum) m->float_sum = sum;
  }
  AbsorbOutputQuantize(*m, sizes);
  return m;
}

// Extends `m` with the activation that solely consumes its result, if a fused producer
// can absorb it (the node's activation / activation_params attributes).
void AbsorbActivation(const ir::Graph& graph, LinearMatch& m) {
  ir::Node* act = SoleConsumer(m.result);
  if (act == nullptr) return;
  if (auto activation = ActivationOf(*act, graph.onnx_opset())) {
    m.attributes.push_back(ir::Attribute::String("activation", activation->op));
    m.attributes.push_back(ir::Attribute::Floats("activation_params", activation->params));
    m.chain.push_back(act);
    m.result = act->output(0);
  }
}

// ConvTranspose's W is [C_in, C_out, kH, kW]: its output channels are axis 1. Bias and a
// following activation fuse; only group 1.
std::optional<LinearMatch> SelectQConvTranspose(const ir::Graph& graph, ir::Node* op,
                                                const SizesByName& sizes) {
  if (!IsDefaultOp(op, "ConvTranspose") || op->GetInt("group", 1) != 1) return std::nullopt;
  std::optional<LinearMatch> m = MatchConvLike(op, kQConvTranspose, 1, sizes);
  if (!m) return std::nullopt;
  AbsorbActivation(graph, *m);
  AbsorbOutputQuantize(*m, sizes);
  return m;
}

std::optional<LinearMatch> SelectQMatMul(const ir::Graph& graph, ir::Node* op,
                                         const SizesByName& sizes) {
  bool gemm = IsDefaultOp(op, "Gemm");
  if (!gemm && !IsDefaultOp(op, "MatMul")) return std::nullopt;
  if (gemm && (op->GetInt("transA", 0) != 0 || op->GetFloat("alpha", 1.0f) != 1.0f ||
               op->GetFloat("beta", 1.0f) != 1.0f)) {
    return std::nullopt;
  }
  ir::Node* dq_a = qdq::DequantizeProducer(op->input(0));
  std::optional<QParams> a = dq_a ? qdq::PerTensorParams(dq_a, sizes) : std::nullopt;
  auto a_sizes = sizes.find(op->input(0)->name());
  if (!a || a_sizes == sizes.end() || a_sizes->second.sizes.size() < 2) return std::nullopt;
  bool trans_b = gemm && op->GetInt("transB", 0) != 0;
  std::optional<WeightParams> w = ReadWeight(op->input(1), 2, trans_b ? 0 : 1);
  if (!w) return std::nullopt;
  const Tensor& wq = w->q->initializer();
  const int64_t n = trans_b ? wq.size(0) : wq.size(1);
  if (trans_b) {
    const int64_t k = wq.size(1);
    StatusOr<Tensor> t = Tensor::Allocate(wq.dtype(), {k, n});
    if (!t.ok()) return std::nullopt;
    const auto* src = static_cast<const uint8_t*>(wq.raw_data());
    auto* dst = static_cast<uint8_t*>(t->raw_data());
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t c = 0; c < k; ++c) dst[c * n + r] = src[r * k + c];
    }
    w->transposed = *t;
  }
  LinearMatch m;
  m.op_type = kQMatMul;
  m.op = op;
  m.chain = {op};
  m.result = op->output(0);
  m.x = *a;
  m.w = *w;
  if (gemm && op->input(2) != nullptr) {
    std::optional<Tensor> bias = ReadBias(op->input(2), n);
    if (!bias) return std::nullopt;
    m.new_bias = *bias;
  } else if (ir::Node* add = SoleConsumer(m.result); IsDefaultOp(add, "Add")) {
    ir::Value* other = add->input(0) == m.result ? add->input(1) : add->input(0);
    if (std::optional<Tensor> bias = other ? ReadBias(other, n) : std::nullopt) {
      m.new_bias = *bias;
      m.chain.push_back(add);
      m.result = add->output(0);
    }
  }
  AbsorbActivation(graph, m);
  AbsorbOutputQuantize(m, sizes);
  return m;
}

StatusOr<ir::Value*> AddConstant(ir::Graph& graph, const std::string& base, Tensor t) {
  return graph.AddInitializer(graph.UniqueValueName(base), std::move(t));
}

Status ApplyLinear(ir::Graph& graph, LinearMatch m) {
  using namespace qlinear;
  const std::string base = m.op->name().empty() ? m.result->name() : m.op->name();
  std::vector<ir::Value*> in(kSumZeroPoint + 1, nullptr);
  in[kX] = m.x.node->input(0);
  in[kXScale] = m.x.scale;
  ASSIGN_OR_RETURN(in[kXZeroPoint], qdq::ZeroPointValue(graph, m.x));
  in[kW] = m.w.q;
  if (m.w.transposed.is_valid()) {
    ASSIGN_OR_RETURN(in[kW], AddConstant(graph, base + "_weight_kn", m.w.transposed));
  }
  in[kWScale] = m.w.scale;
  in[kWZeroPoint] = m.w.zero_point;
  if (in[kWZeroPoint] == nullptr) {
    ASSIGN_OR_RETURN(Tensor zeros, Tensor::Allocate(m.w.q->initializer().dtype(),
                                                    m.w.scale->initializer().sizes()));
    ASSIGN_OR_RETURN(in[kWZeroPoint], AddConstant(graph, base + "_weight_zero_point", zeros));
  }
  in[kBias] = m.bias;
  if (m.new_bias.is_valid()) {
    ASSIGN_OR_RETURN(in[kBias], AddConstant(graph, base + "_bias", m.new_bias));
  }
  size_t count = kYScale;
  if (m.y) {
    in[kYScale] = m.y->scale;
    ASSIGN_OR_RETURN(in[kYZeroPoint], qdq::ZeroPointValue(graph, *m.y));
    count = kSum;
  }
  if (m.sum || m.float_sum) {
    in[kSum] = m.float_sum;
    count = kSum + 1;
    if (m.sum) {
      in[kSum] = m.sum->node->input(0);
      in[kSumScale] = m.sum->scale;
      ASSIGN_OR_RETURN(in[kSumZeroPoint], qdq::ZeroPointValue(graph, *m.sum));
      count = kSumZeroPoint + 1;
    }
  }
  in.resize(count);
  ir::NodeSpec spec;
  spec.op_type = m.op_type;
  spec.domain = kQtuneDomain;
  spec.name = graph.UniqueNodeName(base + "_int8");
  spec.inputs = std::move(in);
  spec.attributes = std::move(m.attributes);
  return pattern::ReplaceChain(graph, std::move(spec), m.result, m.chain).status();
}

// Why a Conv / ConvTranspose / MatMul / Gemm that reads a DequantizeLinear did not fuse
// ("" when it reads none): the first check of its selector that failed.
std::string WhyNotFused(const ir::Node& op, const SizesByName& sizes) {
  const bool conv = IsDefaultOp(&op, "Conv") || IsFusedConv(op);
  const bool deconv = IsDefaultOp(&op, "ConvTranspose");
  if (!conv && !deconv && !IsDefaultOp(&op, "MatMul") && !IsDefaultOp(&op, "Gemm")) return "";
  bool reads_dq = false;
  for (const ir::Value* in : op.inputs()) reads_dq = reads_dq || qdq::DequantizeProducer(in);
  if (!reads_dq) return "";
  ir::Node* dq_x = qdq::DequantizeProducer(op.input(0));
  if (dq_x == nullptr) return "input 0 is float (no DequantizeLinear before it)";
  if (!qdq::PerTensorParams(dq_x, sizes)) {
    return "input 0's DequantizeLinear is not per-tensor int8/uint8 with constant scale and "
           "zero point";
  }
  if (deconv && op.GetInt("group", 1) != 1) return "grouped ConvTranspose";
  const bool trans_b = IsDefaultOp(&op, "Gemm") && op.GetInt("transB", 0) != 0;
  const int64_t axis = conv ? 0 : deconv ? 1 : trans_b ? 0 : 1;
  std::optional<WeightParams> w = ReadWeight(op.input(1), conv || deconv ? 4 : 2, axis);
  if (!w) {
    if (!KernelRegistry::Int8DotProductSupported()) {
      return "weight is not a 7-bit DequantizeLinear constant (this CPU has no int8 dot "
             "product), or not per-tensor / per-output-channel";
    }
    return "weight is not a DequantizeLinear of an int8/uint8 constant with a per-tensor or "
           "per-output-channel (axis " +
           std::to_string(axis) + ") scale and matching zero point";
  }
  const int64_t channels = w->q->initializer().size(static_cast<size_t>(axis));
  if (op.input(2) != nullptr && !ReadBias(op.input(2), channels)) {
    return "bias is neither a float constant nor DequantizeLinear(int32 constant) of one scale "
           "or one per channel";
  }
  return "an input or attribute the int8 kernels do not take";
}

}  // namespace

StatusOr<int> FuseQdqLinear(ir::Graph& graph, const SizesByName& sizes) {
  ASSIGN_OR_RETURN(
      int convs, pattern::FuseAll(
                     graph, [&](ir::Node* node) { return SelectQConv(node, sizes); }, ApplyLinear));
  ASSIGN_OR_RETURN(
      int deconvs,
      pattern::FuseAll(
          graph, [&](ir::Node* node) { return SelectQConvTranspose(graph, node, sizes); },
          ApplyLinear));
  ASSIGN_OR_RETURN(
      int matmuls,
      pattern::FuseAll(
          graph, [&](ir::Node* node) { return SelectQMatMul(graph, node, sizes); }, ApplyLinear));
  RETURN_IF_ERROR(qdq::RemoveDeadQdqNodes(graph));
  for (ir::Node* node : graph.nodes()) {
    std::string why = WhyNotFused(*node, sizes);
    if (!why.empty()) node->SetAttribute(ir::Attribute::String(kNotInt8Attribute, why));
  }
  return convs + deconvs + matmuls;
}

}  // namespace qtune::runtime
