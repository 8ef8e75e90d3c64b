// Weight-only low-bit MatMuls become one qtune::MatMulNBits (matmul_nbits.h), which the
// native low-bit GEMV runs on its packed codes (kernels/native_lowbit_matmul.cc):
//
//   DequantizeLinear(W q [K, N] constant, scale, [zero point]) -> MatMul(A, .)
//       [-> Add(bias)] [-> activation]
//     q INT4/UINT4 or INT8/UINT8; blocked along K (axis 0, block_size, scale
//     [ceil(K / block), N]), per output channel (axis 1, scale [N]) or per tensor.
//     Signed codes are shifted into the unsigned range with their zero points
//     (q - z = (q + 2^(b-1)) - (z + 2^(b-1))), so the product is the same.
//     Float16 scales (DequantizeLinear -> Cast(float) -> MatMul) are widened to float32:
//     the weights are then (q - z) * scale exactly, where the graph rounds each one to
//     float16 before the Cast (at most 2^-11 relative per weight).
//   com.microsoft::MatMulNBits(constant weights, no g_idx) -> Add(bias) [-> activation],
//     or -> activation: the bias and the activation move into the node.
//
// The bias is a float32 constant that varies along the last axis only (as MatMulBias);
// the activation is MatMulActivationOf's.
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/float_convert.h"
#include "runtime/fusion/fused_ops.h"
#include "runtime/fusion/fusion_pipeline.h"
#include "runtime/fusion/matmul_nbits.h"
#include "runtime/fusion/pattern_util.h"

namespace qtune::runtime {
namespace {

using pattern::IsDefaultOp;
using pattern::SoleConsumer;

bool IsConstant(const ir::Value* v) { return v != nullptr && v->is_initializer(); }

// The weights of a MatMulNBits node in its input layout, before they become initializers.
struct NBitsWeights {
  int64_t k = 0, n = 0, bits = 4, block = 0;
  Tensor b, scales, zero_points;  // zero_points invalid: the default 2^(bits-1)
};

// Code i of a DequantizeLinear input as an unsigned code of `bits` bits (4-bit types are
// held one element per byte, int4 as int8_t).
int64_t UnsignedCode(const Tensor& t, int64_t i, int64_t bits) {
  const uint8_t byte = static_cast<const uint8_t*>(t.raw_data())[i];
  const bool is_signed = t.dtype() == DataType::kInt4 || t.dtype() == DataType::kInt8;
  if (!is_signed) return byte;
  return static_cast<int64_t>(static_cast<int8_t>(byte)) + (int64_t{1} << (bits - 1));
}

// Element i of a float32 or float16 scale.
float ScaleAt(const Tensor& scale, int64_t i) {
  if (scale.dtype() == DataType::kFloat16) {
    return HalfToFloat(static_cast<const uint16_t*>(scale.raw_data())[i]);
  }
  return scale.data<float>()[i];
}

// A constant DequantizeLinear whose output is MatMul's weight, converted to MatMulNBits's
// layout; nullopt when its form is not one the op can hold.
std::optional<NBitsWeights> FromDequantize(const ir::Node* dq, int64_t opset) {
  if (!IsDefaultOp(dq, "DequantizeLinear") || dq->num_inputs() < 2) return std::nullopt;
  const ir::Value* zp_value = dq->num_inputs() > 2 ? dq->input(2) : nullptr;
  if (!IsConstant(dq->input(0)) || !IsConstant(dq->input(1)) ||
      (zp_value != nullptr && !IsConstant(zp_value))) {
    return std::nullopt;
  }
  const Tensor& q = dq->input(0)->initializer();
  const Tensor& scale = dq->input(1)->initializer();
  const Tensor* zp = zp_value != nullptr ? &zp_value->initializer() : nullptr;
  NBitsWeights w;
  switch (q.dtype()) {
    case DataType::kInt4:
    case DataType::kUint4:
      w.bits = 4;
      break;
    case DataType::kInt8:
    case DataType::kUint8:
      w.bits = 8;
      break;
    default:
      return std::nullopt;
  }
  const bool half_scale = scale.dtype() == DataType::kFloat16;
  if (q.rank() != 2 || (scale.dtype() != DataType::kFloat32 && !half_scale) ||
      (zp != nullptr && (zp->dtype() != q.dtype() || zp->num_elements() != scale.num_elements()))) {
    return std::nullopt;
  }
  w.k = q.size(0);
  w.n = q.size(1);
  if (w.k < 1 || w.n < 1) return std::nullopt;
  int64_t axis = dq->GetInt("axis", 1);
  if (axis < 0) axis += 2;
  const int64_t block_size = opset >= 21 ? dq->GetInt("block_size", 0) : 0;
  // scale_of(n, j): index of column n's block j in `scale` (and `zp`).
  std::function<int64_t(int64_t, int64_t)> scale_of;
  if (block_size > 0) {
    const int64_t kb = (w.k + block_size - 1) / block_size;
    if (axis != 0 || scale.rank() != 2 || scale.size(0) != kb || scale.size(1) != w.n) {
      return std::nullopt;
    }
    w.block = block_size;
    scale_of = [n = w.n](int64_t col, int64_t j) { return j * n + col; };
  } else if (scale.num_elements() == 1 && scale.rank() <= 1) {
    w.block = w.k;
    scale_of = [](int64_t, int64_t) { return int64_t{0}; };
  } else if (axis == 1 && scale.rank() == 1 && scale.size(0) == w.n) {
    w.block = w.k;
    scale_of = [](int64_t col, int64_t) { return col; };
  } else {
    return std::nullopt;
  }
  if (w.block * w.bits % 8 != 0) return std::nullopt;
  for (int64_t i = 0; i < scale.num_elements(); ++i) {
    if (!std::isfinite(ScaleAt(scale, i))) return std::nullopt;  // the reference says why
  }
  const int64_t kb = (w.k + w.block - 1) / w.block, blob = w.block * w.bits / 8;
  StatusOr<Tensor> b = Tensor::Allocate(DataType::kUint8, {w.n, kb, blob});
  StatusOr<Tensor> scales = Tensor::Allocate(DataType::kFloat32, {w.n, kb});
  StatusOr<Tensor> zps = Tensor::Allocate(DataType::kFloat32, {w.n, kb});
  if (!b.ok() || !scales.ok() || !zps.ok()) return std::nullopt;
  // Without a zero point: 0, which is 2^(bits-1) once signed codes are shifted.
  const bool is_signed = q.dtype() == DataType::kInt4 || q.dtype() == DataType::kInt8;
  const int64_t default_zp = is_signed ? int64_t{1} << (w.bits - 1) : 0;
  uint8_t* packed = b->data<uint8_t>();  // zero-filled: padding codes of a last partial block
  for (int64_t col = 0; col < w.n; ++col) {
    uint8_t* column = packed + col * kb * blob;
    for (int64_t k = 0; k < w.k; ++k) {
      const int64_t code = UnsignedCode(q, k * w.n + col, w.bits);
      if (w.bits == 8) {
        column[k] = static_cast<uint8_t>(code);
      } else {
        // Block j = k / block starts at byte j * blob; within it code i at nibble i.
        const int64_t j = k / w.block, i = k % w.block;
        column[j * blob + i / 2] |= static_cast<uint8_t>(code << (4 * (i % 2)));
      }
    }
    for (int64_t j = 0; j < kb; ++j) {
      const int64_t at = scale_of(col, j);
      scales->data<float>()[col * kb + j] = ScaleAt(scale, at);
      zps->data<float>()[col * kb + j] =
          static_cast<float>(zp != nullptr ? UnsignedCode(*zp, at, w.bits) : default_zp);
    }
  }
  w.b = *std::move(b);
  w.scales = *std::move(scales);
  w.zero_points = *std::move(zps);
  return w;
}

struct LowBitMatch {
  ir::Node* matmul = nullptr;  // MatMul or com.microsoft::MatMulNBits
  ir::Node* dq = nullptr;      // the weight's DequantizeLinear (MatMul form)
  ir::Node* cast = nullptr;    // Cast(to float) after a float16-scale DequantizeLinear
  ir::Node* add = nullptr;
  ir::Node* act = nullptr;
  Activation activation;
  NBitsWeights weights;  // MatMul form
  Tensor bias;           // [N] float32, or invalid
};

// A float32 constant that varies along the last axis only, as [n] floats.
std::optional<Tensor> BiasOf(const ir::Node* add, const ir::Value* product, int64_t n) {
  if (!IsDefaultOp(add, "Add") || add->num_inputs() != 2) return std::nullopt;
  const ir::Value* other = add->input(0) == product ? add->input(1) : add->input(0);
  if (other == product || !IsConstant(other)) return std::nullopt;
  const Tensor& c = other->initializer();
  if (c.dtype() != DataType::kFloat32) return std::nullopt;
  for (size_t i = 0; i + 1 < c.rank(); ++i) {
    if (c.size(i) != 1) return std::nullopt;
  }
  StatusOr<Tensor> bias = Tensor::Allocate(DataType::kFloat32, {n});
  if (!bias.ok()) return std::nullopt;
  if (c.num_elements() == n) {
    std::copy_n(c.data<float>(), n, bias->data<float>());
  } else if (c.num_elements() == 1) {
    std::fill_n(bias->data<float>(), n, c.data<float>()[0]);
  } else {
    return std::nullopt;
  }
  return *std::move(bias);
}

std::optional<LowBitMatch> SelectLowBit(const ir::Graph& graph, ir::Node* node,
                                        const SizesByName& sizes) {
  LowBitMatch m;
  m.matmul = node;
  int64_t n = 0;
  if (IsDefaultOp(node, "MatMul") && node->num_inputs() == 2) {
    ir::Node* dq = pattern::ExclusiveProducer(node->input(1), node);
    if (dq == nullptr || node->input(0) == node->input(1)) return std::nullopt;
    if (IsDefaultOp(dq, "Cast") &&
        dq->GetInt("to", 0) == static_cast<int64_t>(DataType::kFloat32)) {
      m.cast = dq;  // DequantizeLinear with float16 scales gives float16; the Cast widens it
      dq = pattern::ExclusiveProducer(dq->input(0), dq);
    }
    std::optional<NBitsWeights> w = FromDequantize(dq, graph.onnx_opset());
    if (!w) return std::nullopt;
    // A float16 DequantizeLinear output is only a float32 weight through the Cast.
    const bool half = dq->input(1)->initializer().dtype() == DataType::kFloat16;
    if (half != (m.cast != nullptr)) return std::nullopt;
    auto a = sizes.find(node->input(0)->name());
    if (a == sizes.end() || a->second.dtype != DataType::kFloat32 || a->second.sizes.empty() ||
        a->second.sizes.back() != w->k) {
      return std::nullopt;
    }
    m.dq = dq;
    m.weights = *std::move(w);
    n = m.weights.n;
  } else if (node->domain() == kMicrosoftDomain && node->op_type() == kMatMulNBits) {
    if (node->num_inputs() > kNBitsGIdx && node->input(kNBitsGIdx) != nullptr) return std::nullopt;
    for (size_t i = 1; i < node->num_inputs(); ++i) {
      if (node->input(i) != nullptr && !IsConstant(node->input(i))) return std::nullopt;
    }
    n = node->GetInt("N", 0);
    if (n < 1) return std::nullopt;
  } else {
    return std::nullopt;
  }
  ir::Value* out = node->output(0);
  ir::Node* next = SoleConsumer(out);
  if (std::optional<Tensor> bias = BiasOf(next, out, n)) {
    m.add = next;
    m.bias = *std::move(bias);
    out = next->output(0);
    next = SoleConsumer(out);
  }
  if (next != nullptr) {
    if (auto activation = MatMulActivationOf(*next, graph.onnx_opset())) {
      m.act = next;
      m.activation = *activation;
    }
  }
  // A MatMulNBits alone is already what the kernel runs.
  if (m.dq == nullptr && m.add == nullptr && m.act == nullptr) return std::nullopt;
  return m;
}

Status ApplyLowBit(ir::Graph& graph, LowBitMatch m) {
  ir::Node* last = m.act != nullptr ? m.act : (m.add != nullptr ? m.add : m.matmul);
  ir::Value* result = last->output(0);
  const std::string base = m.matmul->name();
  ir::NodeSpec spec;
  spec.op_type = kMatMulNBits;
  spec.domain = kQtuneDomain;
  spec.name = graph.UniqueNodeName(base + "_nbits");
  std::vector<ir::Node*> chain = {m.matmul};
  if (m.dq != nullptr) {
    const NBitsWeights& w = m.weights;
    spec.attributes = {ir::Attribute::Int("K", w.k), ir::Attribute::Int("N", w.n),
                       ir::Attribute::Int("bits", w.bits),
                       ir::Attribute::Int("block_size", w.block)};
    ASSIGN_OR_RETURN(ir::Value * b, graph.AddInitializer(graph.UniqueValueName(base + "_B"), w.b));
    ASSIGN_OR_RETURN(ir::Value * s,
                     graph.AddInitializer(graph.UniqueValueName(base + "_scales"), w.scales));
    ASSIGN_OR_RETURN(ir::Value * z,
                     graph.AddInitializer(graph.UniqueValueName(base + "_zp"), w.zero_points));
    spec.inputs = {m.matmul->input(0), b, s, z, nullptr, nullptr};
    chain.push_back(m.dq);
    if (m.cast != nullptr) chain.push_back(m.cast);
  } else {
    for (const char* name : {"K", "N", "bits", "block_size", "accuracy_level"}) {
      if (const ir::Attribute* a = m.matmul->FindAttribute(name)) spec.attributes.push_back(*a);
    }
    spec.inputs.assign(m.matmul->inputs().begin(), m.matmul->inputs().end());
    spec.inputs.resize(kNBitsBias + 1, nullptr);
  }
  if (m.bias.is_valid()) {
    Tensor bias = m.bias;
    if (ir::Value* old = spec.inputs[kNBitsBias]) {  // MatMulNBits's own bias, then the Add's
      const Tensor& first = old->initializer();
      if (first.dtype() != DataType::kFloat32 || first.num_elements() != bias.num_elements()) {
        return InvalidArgumentError(m.matmul->DebugName() + ": bias " + first.DebugString() +
                                    " does not have N float32 elements");
      }
      for (int64_t i = 0; i < bias.num_elements(); ++i) {
        bias.data<float>()[i] += first.data<float>()[i];
      }
    }
    ASSIGN_OR_RETURN(spec.inputs[kNBitsBias],
                     graph.AddInitializer(graph.UniqueValueName(base + "_bias"), std::move(bias)));
  }
  while (!spec.inputs.empty() && spec.inputs.back() == nullptr) spec.inputs.pop_back();
  if (m.add != nullptr) chain.push_back(m.add);
  if (m.act != nullptr) {
    chain.push_back(m.act);
    spec.attributes.push_back(ir::Attribute::String("activation", m.activation.op));
    if (!m.activation.params.empty()) {
      spec.attributes.push_back(ir::Attribute::Floats("activation_params", m.activation.params));
    }
  }
  pattern::CarryPrecision(*m.matmul, spec);
  return pattern::ReplaceChain(graph, std::move(spec), result, std::move(chain)).status();
}

}  // namespace

StatusOr<int> FuseLowBitMatMul(ir::Graph& graph, const SizesByName& sizes) {
  return pattern::FuseAll(
      graph, [&](ir::Node* node) { return SelectLowBit(graph, node, sizes); }, ApplyLowBit);
}

}  // namespace qtune::runtime
