#include "quant/placement_rules.h"

#include <algorithm>
#include <functional>
#include <numeric>

#include "quant/graph_patterns.h"

namespace qtune::quant {
namespace {

std::string Below(const std::string& what, int64_t value, int64_t minimum) {
  return what + " = " + std::to_string(value) + " < " + std::to_string(minimum);
}

LayerDecision DecideConv(const ir::Node& node, const LayerContext& context) {
  LayerDecision decision;
  const ir::Value* weight = node.input(1);
  if (!IsConstantValue(weight) || !weight->is_initializer()) {
    decision.skip_reason = "weight is not a constant";
    return decision;
  }
  const std::vector<int64_t>& w = weight->initializer().sizes();
  if (w.size() < 3) {
    decision.skip_reason = "weight has rank " + std::to_string(w.size()) + " (< 3)";
    return decision;
  }
  const int64_t groups = std::max<int64_t>(1, node.GetInt("group", 1));
  const bool transpose = node.op_type() == "ConvTranspose";
  // Conv: W [OC, IC/g, k...]; ConvTranspose: W [IC, OC/g, k...].
  const int64_t in_channels = transpose ? w[0] : w[1] * groups;
  const int64_t out_channels = transpose ? w[1] * groups : w[0];
  decision.conv_input_channels = in_channels;
  const bool first_layer = node.input(0)->is_graph_input();
  // Weight-only (the recipe removed the activation quantizer): int8 activations are what
  // small channel counts do not pay for; blocks are FitWeightBlocks' to check.
  if (!first_layer && !context.weight_only) {
    if (in_channels < kMinChannels) {
      decision.skip_reason = Below("input channels", in_channels, kMinChannels);
    } else if (out_channels < kMinChannels) {
      decision.skip_reason = Below("output channels", out_channels, kMinChannels);
    }
    if (!decision.skip_reason.empty()) return decision;
  }
  decision.activation_inputs = {0};
  decision.weight_axis = transpose ? 1 : 0;
  return decision;
}

// M, K, N of A[..., M, K] x B[K, N] (or Gemm's transposes); -1 where unknown.
struct GemmDims {
  int64_t m = -1, k = -1, n = -1;
};

GemmDims MatMulDims(const ir::Node& node, const runtime::ValueInfoMap& infos) {
  GemmDims dims;
  std::optional<std::vector<int64_t>> a = KnownSizes(node.input(0), infos);
  std::optional<std::vector<int64_t>> b = KnownSizes(node.input(1), infos);
  if (node.op_type() == "Gemm") {
    bool trans_a = node.GetInt("transA", 0) != 0, trans_b = node.GetInt("transB", 0) != 0;
    if (a && a->size() == 2) {
      dims.m = (*a)[trans_a ? 1 : 0];
      dims.k = (*a)[trans_a ? 0 : 1];
    }
    if (b && b->size() == 2) dims.n = (*b)[trans_b ? 0 : 1];
    return dims;
  }
  const bool constant_b = IsConstantValue(node.input(1));
  if (a && !a->empty()) {
    dims.k = a->back();
    if (a->size() >= 2) {
      // A constant B is applied to every row of A: M counts all leading dimensions.
      dims.m = constant_b ? std::accumulate(a->begin(), a->end() - 1, int64_t{1},
                                            std::multiplies<int64_t>())
                          : (*a)[a->size() - 2];
    } else {
      dims.m = 1;
    }
  }
  if (b && !b->empty()) dims.n = b->size() >= 2 ? b->back() : 1;
  return dims;
}

// GEMV and small-dimension rules shared by Gemm and MatMul.
std::string SmallMatMulReason(const GemmDims& dims) {
  if (dims.m == 1) return "GEMV shape (M = 1)";
  if (dims.n == 1) return "GEMV shape (N = 1)";
  if (dims.k >= 0 && dims.k < kMinMatMulDim) return Below("K", dims.k, kMinMatMulDim);
  if (dims.n >= 0 && dims.n < kMinMatMulDim) return Below("N", dims.n, kMinMatMulDim);
  return "";
}

LayerDecision DecideMatMul(const ir::Node& node, const LayerContext& context) {
  LayerDecision decision;
  const bool constant_a = IsConstantValue(node.input(0));
  const bool constant_b = IsConstantValue(node.input(1));
  if (constant_a) {
    decision.skip_reason = "first input is a constant";
    return decision;
  }
  GemmDims dims = MatMulDims(node, context.infos);
  if (constant_b) {
    decision.skip_reason = SmallMatMulReason(dims);
    if (context.weight_only) {
      // Weight-only formats block along K (FitWeightBlocks checks K against the block);
      // a GEMV (M = 1) is where they pay, and a small N (a classifier's 10 outputs)
      // costs them nothing: only a short K is a reason here.
      GemmDims rest = dims;
      rest.m = -1;
      rest.n = -1;
      decision.skip_reason = SmallMatMulReason(rest);
    }
    if (!decision.skip_reason.empty()) return decision;
    std::optional<std::vector<int64_t>> b = KnownSizes(node.input(1), context.infos);
    int rank = b ? static_cast<int>(b->size()) : 2;
    if (node.op_type() == "Gemm") {
      decision.weight_axis = node.GetInt("transB", 0) != 0 ? 0 : 1;  // N of B
    } else {
      decision.weight_axis = std::max(0, rank - 1);
    }
    decision.activation_inputs = {0};
    return decision;
  }
  // Two activations: attention BMM1/BMM2 or another batched product.
  if (context.target == Target::kCpu) {
    decision.skip_reason =
        "activation x activation " + node.op_type() + " (the cpu engine has no int8 kernel for it)";
    return decision;
  }
  std::optional<AttentionMatMul> attention =
      node.op_type() == "MatMul" ? MatchAttentionMatMul(node) : std::nullopt;
  if (attention) {
    std::optional<std::vector<int64_t>> probs =
        KnownSizes(attention->softmax->output(0), context.infos);
    int64_t seq_len = probs && !probs->empty() ? probs->back() : -1;
    // BMM1: Q [.., S, H] x K^T [.., H, S]; BMM2: P [.., S, S] x V [.., S, H].
    int64_t head_size = attention->is_bmm1 ? dims.k : dims.n;
    if (context.format == QuantFormat::kInt8 && seq_len > kMaxInt8AttentionSeq) {
      decision.skip_reason = "attention MatMul with sequence length " + std::to_string(seq_len) +
                             " > " + std::to_string(kMaxInt8AttentionSeq) + " (int8)";
      return decision;
    }
    if (context.format == QuantFormat::kFp8E4M3 && head_size >= 0 &&
        (head_size > kMaxFp8HeadSize || head_size <= kMinFp8HeadSize)) {
      decision.skip_reason = "attention MatMul with head size " + std::to_string(head_size) +
                             " outside (" + std::to_string(kMinFp8HeadSize) + ", " +
                             std::to_string(kMaxFp8HeadSize) + "] (fp8)";
      return decision;
    }
    decision.softmax_input = !attention->is_bmm1;
  } else {
    decision.skip_reason = SmallMatMulReason(dims);
    if (!decision.skip_reason.empty()) return decision;
  }
  decision.activation_inputs = {0, 1};
  return decision;
}

}  // namespace

std::optional<std::vector<int64_t>> KnownSizes(const ir::Value* value,
                                               const runtime::ValueInfoMap& infos) {
  if (value == nullptr) return std::nullopt;
  if (value->is_initializer()) return value->initializer().sizes();
  auto it = infos.find(value);
  if (it == infos.end() || it->second.dtype == DataType::kUndefined) return std::nullopt;
  return it->second.sizes;
}

std::optional<int> ReductionAxis(const ir::Node& node, int weight_rank) {
  if (node.op_type() == "Gemm") return node.GetInt("transB", 0) != 0 ? 1 : 0;
  if (node.op_type() == "MatMul") return std::max(0, weight_rank - 2);
  if (node.op_type() == "Conv" && weight_rank >= 3) return 1;  // [O, I / group, k...]
  return std::nullopt;
}

std::string FitWeightBlocks(const ir::Node& node, QuantizerConfig& config) {
  const FormatInfo& info = FormatInfoOf(config.format);
  if (config.block_size <= 0 && !info.blockwise) return "";
  if (config.block_size <= 0) config.block_size = info.default_block_size;
  const std::string what =
      std::string(info.name) + " block_size " + std::to_string(config.block_size);
  const std::vector<int64_t>& w = node.input(1)->initializer().sizes();
  const bool conv = node.op_type() == "Conv";
  std::optional<int> axis = ReductionAxis(node, static_cast<int>(w.size()));
  if (!axis || (!conv && w.size() != 2)) {
    return what + ": block formats apply to 2-D MatMul/Gemm and Conv weights only";
  }
  std::string k_name = "K";
  const int64_t groups = conv ? node.GetInt("group", 1) : 1;
  if (conv) {
    // Blocks run along a Conv weight's input channels, axis 1 of [O, I / group, k...]: a
    // grouped conv's blocks stay inside one group (a depthwise conv's hold one channel).
    k_name = groups == 1 ? "input channels" : "input channels per group";
  }
  const int64_t k = w[*axis];
  config.axis = *axis;
  if (k < config.block_size) {
    return k_name + " = " + std::to_string(k) + " < " + what + " (one block)";
  }
  if (k % config.block_size != 0) {
    return k_name + " = " + std::to_string(k) + " is not a multiple of " + what;
  }
  if (groups != 1 && config.algorithm != WeightAlgorithm::kRtn) {
    return std::string(WeightAlgorithmName(config.algorithm)) +
           " on a grouped conv (group = " + std::to_string(groups) +
           "): clip and awq take group = 1 convs only (rtn does)";
  }
  return "";
}

LayerDecision DecideLayer(const ir::Node& node, const LayerContext& context) {
  if (node.op_type() == "Conv" || node.op_type() == "ConvTranspose") {
    return DecideConv(node, context);
  }
  return DecideMatMul(node, context);
}

}  // namespace qtune::quant
