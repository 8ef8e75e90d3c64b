// `qtune quantize --auto`: the weight-only block formats int4, nvfp4 and mxfp8 as
// candidates of a group (auto_groups.h), and int8 on a group that has only weights.
//
// A group can take a block format when every Conv/Gemm/MatMul in it reads a constant
// weight through a weight quantizer of the plan and FitWeightBlocks (placement_rules.h)
// accepts the format's block on that weight. In that format the group's activation
// quantizers are removed (its layers read float activations, as in the int4 preset) and
// its weights are quantized blockwise along the reduction axis: symmetric, fp32 scales,
// round to nearest; int4 takes the largest block of 128, 64 and 32 that fits each layer,
// nvfp4 16, mxfp8 32. A weight quantizer already in that format (a weight-only recipe such
// as int4_awq) keeps the recipe's configuration (block size, algorithm, scales).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "quant/auto_groups.h"
#include "quant/quant_types.h"

namespace qtune::quant {

// The block format an auto format stands for; nullopt for int8, fp8, bf16 and fp32.
std::optional<QuantFormat> BlockFormatOf(AutoFormat format);

// Whether the group `members` can take block format `format`: "" and its bits per weight
// element (scales counted, averaged over the group's weights) in `bits`, or why not
// ("/fc1 (MatMul): K = 48 < int4 block_size 32 (one block)").
std::string FitGroupBlocks(const ir::Graph& graph, const QuantPlan& plan,
                           const std::vector<std::string>& members, QuantFormat format,
                           double& bits);

// True when no enabled activation quantizer of the plan feeds `members` (a weight-only
// group, e.g. of the int4 preset): int8 there means int8 weights per output channel, and
// fp8 is no candidate.
bool IsWeightOnlyGroup(const QuantPlan& plan, const std::set<std::string>& members);

// The sites of the group `members` in block format `format` (REQUIRES: FitGroupBlocks
// accepted it): activation quantizers disabled with a reason, weights in that format.
void ApplyBlockFormat(const ir::Graph& graph, QuantPlan& plan, const std::set<std::string>& members,
                      QuantFormat format);

// The weights of a weight-only group in int8 per output channel (no blocks).
void ApplyWeightOnlyInt8(const ir::Graph& graph, QuantPlan& plan,
                         const std::set<std::string>& members);

}  // namespace qtune::quant
