// Multi-head attention as exporters spell it, with the head split and merge around it,
// rewritten into one qtune::Attention (fused_ops.h) that reads Q, K and V in their
// [B, S, H*D] projection layout and writes the merged [B, S, H*D] context:
//
//   Qh = Transpose[0,2,1,3](Reshape(q, [0,0,H,D]))       [B,H,S,D]
//   Kt = Transpose[0,2,3,1](Reshape(k, [0,0,H,D]))       [B,H,D,T]
//   Vh = Transpose[0,2,1,3](Reshape(v, [0,0,H,D]))       [B,H,T,D]
//   P  = Softmax(MatMul(Qh, Kt) [* s or / s] [+ mask], axis=-1)
//   y  = Reshape(Transpose[0,2,1,3](MatMul(P, Vh)), [0,0,H*D])
//                                      -> qtune::Attention(q, k, v, [mask]){num_heads, scale}
//
// The four Transposes become strides of the kernel's matmuls (no copy). Every intermediate
// must have no other reader; the scale is a scalar constant; the mask is any float tensor
// of rank <= 4 that broadcasts to [B,H,S,T].
#include "runtime/fusion/fused_ops.h"
#include "runtime/fusion/fusion_pipeline.h"
#include "runtime/fusion/pattern_util.h"

namespace qtune::runtime {
namespace {

using pattern::IsDefaultOp;
using pattern::SoleConsumer;

const std::vector<int64_t>* SizesOf(const SizesByName& sizes, const ir::Value* v) {
  if (v == nullptr) return nullptr;
  auto it = sizes.find(v->name());
  if (it == sizes.end() || it->second.dtype != DataType::kFloat32) return nullptr;
  return &it->second.sizes;
}

struct AttentionMatch {
  ir::Value* q = nullptr;
  ir::Value* k = nullptr;
  ir::Value* v = nullptr;
  ir::Value* mask = nullptr;
  int64_t heads = 0;
  float scale = 1.0f;
  ir::Value* result = nullptr;
  std::vector<ir::Node*> chain;
};

// `value` = Transpose[perm](Reshape(x)) with x [B, S, H*D] and the Reshape giving
// [B, S, H, D]; both read only by the next step. Returns x and records H.
ir::Value* HeadSplit(const ir::Value* value, const ir::Node* reader, std::vector<int64_t> perm,
                     const SizesByName& sizes, AttentionMatch& m) {
  ir::Node* transpose = pattern::ExclusiveProducer(value, reader);
  if (!IsDefaultOp(transpose, "Transpose") || transpose->GetInts("perm", {}) != perm) {
    return nullptr;
  }
  ir::Node* reshape = pattern::ExclusiveProducer(transpose->input(0), transpose);
  if (!IsDefaultOp(reshape, "Reshape")) return nullptr;
  const std::vector<int64_t>* in = SizesOf(sizes, reshape->input(0));
  const std::vector<int64_t>* out = SizesOf(sizes, reshape->output(0));
  if (in == nullptr || out == nullptr || in->size() != 3 || out->size() != 4 ||
      (*out)[0] != (*in)[0] || (*out)[1] != (*in)[1] || (*out)[2] * (*out)[3] != (*in)[2] ||
      (m.heads != 0 && m.heads != (*out)[2])) {
    return nullptr;
  }
  m.heads = (*out)[2];
  m.chain.push_back(transpose);
  m.chain.push_back(reshape);
  return reshape->input(0);
}

// True when `mask` broadcasts (numpy rules) to `scores` without changing it.
bool BroadcastsTo(const std::vector<int64_t>& mask, const std::vector<int64_t>& scores) {
  if (mask.size() > scores.size()) return false;
  const size_t offset = scores.size() - mask.size();
  for (size_t i = 0; i < mask.size(); ++i) {
    if (mask[i] != 1 && mask[i] != scores[offset + i]) return false;
  }
  return true;
}

std::optional<AttentionMatch> SelectAttention(ir::Node* mm1, const SizesByName& sizes,
                                              int64_t opset) {
  if (!IsDefaultOp(mm1, "MatMul")) return std::nullopt;
  const std::vector<int64_t>* scores_sizes = SizesOf(sizes, mm1->output(0));
  if (scores_sizes == nullptr || scores_sizes->size() != 4) return std::nullopt;
  AttentionMatch m;
  m.chain.push_back(mm1);
  m.q = HeadSplit(mm1->input(0), mm1, {0, 2, 1, 3}, sizes, m);
  if (m.q == nullptr) return std::nullopt;
  m.k = HeadSplit(mm1->input(1), mm1, {0, 2, 3, 1}, sizes, m);
  if (m.k == nullptr || mm1->input(0) == mm1->input(1)) return std::nullopt;
  // Optional scale, optional mask, then Softmax over the last axis.
  const ir::Value* scores = mm1->output(0);  // the scores so far
  ir::Node* next = SoleConsumer(scores);
  if (next != nullptr && (IsDefaultOp(next, "Mul") || IsDefaultOp(next, "Div"))) {
    auto split = pattern::SplitScalar(next);
    if (!split || split->first != mm1->output(0)) return std::nullopt;
    if (IsDefaultOp(next, "Div")) {
      if (next->input(0) != mm1->output(0) || split->second == 0.0f) return std::nullopt;
      m.scale = 1.0f / split->second;
    } else {
      m.scale = split->second;
    }
    m.chain.push_back(next);
    scores = next->output(0);
    next = SoleConsumer(scores);
  }
  if (next != nullptr && IsDefaultOp(next, "Add")) {
    ir::Value* mask = next->input(0) == scores ? next->input(1) : next->input(0);
    const std::vector<int64_t>* mask_sizes = SizesOf(sizes, mask);
    if (mask == scores || mask_sizes == nullptr || !BroadcastsTo(*mask_sizes, *scores_sizes)) {
      return std::nullopt;
    }
    m.mask = mask;
    m.chain.push_back(next);
    next = SoleConsumer(next->output(0));
  }
  if (!IsDefaultOp(next, "Softmax")) return std::nullopt;
  // Before opset 13 the default axis is 1 and the input is coerced to 2-D at the axis;
  // either way axis 3 (or -1) of the rank-4 scores is a softmax over the last axis.
  const int64_t axis = next->GetInt("axis", opset >= 13 ? -1 : 1);
  if (axis != -1 && axis != 3) return std::nullopt;
  m.chain.push_back(next);
  ir::Node* mm2 = SoleConsumer(next->output(0));
  if (!IsDefaultOp(mm2, "MatMul") || mm2->input(0) != next->output(0)) return std::nullopt;
  m.chain.push_back(mm2);
  m.v = HeadSplit(mm2->input(1), mm2, {0, 2, 1, 3}, sizes, m);
  if (m.v == nullptr) return std::nullopt;
  // Head merge.
  ir::Node* merge = SoleConsumer(mm2->output(0));
  if (!IsDefaultOp(merge, "Transpose") ||
      merge->GetInts("perm", {}) != std::vector<int64_t>{0, 2, 1, 3}) {
    return std::nullopt;
  }
  ir::Node* flat = SoleConsumer(merge->output(0));
  if (!IsDefaultOp(flat, "Reshape")) return std::nullopt;
  m.chain.push_back(merge);
  m.chain.push_back(flat);
  m.result = flat->output(0);
  // Q, K, V and the result are [B, S|T, H*D] with one B and one H*D.
  const std::vector<int64_t>* q = SizesOf(sizes, m.q);
  const std::vector<int64_t>* k = SizesOf(sizes, m.k);
  const std::vector<int64_t>* v = SizesOf(sizes, m.v);
  const std::vector<int64_t>* y = SizesOf(sizes, m.result);
  if (q == nullptr || k == nullptr || v == nullptr || y == nullptr || *y != *q ||
      (*k)[0] != (*q)[0] || (*v)[0] != (*q)[0] || (*k)[1] != (*v)[1] || (*k)[2] != (*q)[2] ||
      (*v)[2] != (*q)[2]) {
    return std::nullopt;
  }
  return m;
}

Status ApplyAttention(ir::Graph& graph, AttentionMatch m) {
  ir::NodeSpec spec;
  spec.op_type = "Attention";
  spec.domain = kQtuneDomain;
  spec.name = graph.UniqueNodeName(m.chain.front()->name() + "_attention");
  spec.inputs = {m.q, m.k, m.v};
  if (m.mask != nullptr) spec.inputs.push_back(m.mask);
  spec.attributes = {ir::Attribute::Int("num_heads", m.heads),
                     ir::Attribute::Float("scale", m.scale)};
  return pattern::ReplaceChain(graph, std::move(spec), m.result, std::move(m.chain)).status();
}

}  // namespace

StatusOr<int> FuseAttention(ir::Graph& graph, const SizesByName& sizes) {
  return pattern::FuseAll(
      graph, [&](ir::Node* node) { return SelectAttention(node, sizes, graph.onnx_opset()); },
      ApplyAttention);
}

}  // namespace qtune::runtime
