// `qtune quantize --auto`, part 1: the units the per-layer format search chooses for
// ("groups") and how a choice of formats turns into a plan.
//
// A group is a set of quantized nodes (QuantPlan::quantized_nodes) that must share one
// format: nodes reading one quantizer (a Q/DQ pair has one format), the consumers of one
// scale group (Concat inputs, pass-through ops and the layer they feed), and a residual
// Add's quantizer with the convs feeding that Add (branch and downsample convs).
//
// Formats: int8 and fp8 (Q/DQ), bf16 (no Q/DQ; qtune's engine computes the layer's
// Conv/Gemm/MatMul in bfloat16, ONNX Runtime in fp32), fp32 (no Q/DQ), and the weight-only
// block formats int4, nvfp4 and mxfp8 (auto_block_formats.h: the group's activation
// quantizers are removed, its weights blocked along the reduction axis, scales by round to
// nearest). Costs count bits per weight element (8, 8, 16, 32), as ModelOpt's
// auto_quantize counts them; block formats count their scales (nvfp4 4.5, mxfp8 8.25,
// int4 4 + 32 / block).
//
// Candidates per group: the requested formats, less those a rule forbids, each with a
// note: fp8 needs symmetric quantizers and, for --target trt, the TensorRT fp8 layer rules
// (placement_rules.h); bf16 needs a CPU with avx512_bf16 or amx_bf16 (otherwise dropped
// everywhere, with a note). A group whose quantizers the recipe set to another format than
// its default (e.g. a residual quantizer pinned to fp8) is pinned: its only candidate is
// that format, still scored and counted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "quant/placement.h"
#include "quant/quant_types.h"
#include "quant/recipe.h"

namespace qtune::quant {

// In order of bits per weight (a group's candidates are kept in this order).
enum class AutoFormat { kInt4, kNvfp4, kInt8, kFp8, kMxfp8, kBf16, kFp32 };
const std::vector<AutoFormat>& AllAutoFormats();  // in enum order
// "int4", "nvfp4", "int8", "fp8", "mxfp8", "bf16", "fp32"
const char* AutoFormatName(AutoFormat format);
std::optional<AutoFormat> ParseAutoFormat(const std::string& text);  // also "fp8_e4m3"
std::string AutoFormatNameList();                                    // "int4, nvfp4, ..."
// Bits per weight element of the non-block formats: 8, 8, 16, 32. Block formats: their
// bits depend on the layer (AutoGroup::bits).
double AutoFormatBits(AutoFormat format);

// True when this CPU has avx512_bf16 or amx_bf16 (/proc/cpuinfo flags).
bool CpuHasBf16();

struct AutoGroup {
  std::vector<std::string> nodes;   // in graph order; nodes.front() names the group
  int64_t weight_elements = 0;      // constant weights of its Conv/Gemm/MatMul nodes
  std::vector<AutoFormat> formats;  // candidates, in AutoFormat order; never empty
  std::vector<double> bits;         // per candidate: bits per weight element, scales counted
  bool pinned = false;              // the recipe fixed its format (formats.size() == 1)
  bool cost_excluded = false;       // matches --cost-excluded-layers: cost 0
  std::vector<std::string> notes;   // why a requested format is not a candidate, ...
};

struct AutoGroupOptions {
  std::vector<AutoFormat> candidate_formats;     // REQUIRES: not empty
  std::vector<std::string> cost_excluded_globs;  // fnmatch globs on node names
  bool bf16_available = true;                    // CpuHasBf16() in production
};

// REQUIRES: `plan` was made for `graph` by PlanQuantization with `recipe` and calibrated.
// `sizes`: the input sizes placement used (for the fp8 TensorRT layer rules).
// Errors: a glob matching no node (InvalidArgument: a misspelt layer name must not pass
// silently), shape inference failures.
StatusOr<std::vector<AutoGroup>> BuildAutoGroups(const ir::Graph& graph, const QuantPlan& plan,
                                                 const Recipe& recipe, const InputSizes& sizes,
                                                 const AutoGroupOptions& options);

// The plan with groups[i] in formats[i] (REQUIRES: a candidate of that group), and the
// nodes qtune's engine computes in bfloat16. fp8 applies the fp8 low-channel guard (an
// input of a conv with <= 3 input channels stays float; GuardHit). Float groups fall back
// as in the accuracy fallback (KeepLayersInFloat) with `reason` naming the format.
struct AppliedFormats {
  QuantPlan plan;
  std::vector<std::string> bf16_nodes;
};
AppliedFormats ApplyFormats(const ir::Graph& graph, const QuantPlan& plan,
                            const std::vector<AutoGroup>& groups,
                            const std::vector<AutoFormat>& formats);

}  // namespace qtune::quant
