// The quantization summary: one row per layer of the float graph that placement looked at,
// saying whether it runs quantized, in which format, with which ranges, why not, and which
// guards fired. Printed by `qtune quantize` (text or JSON); the JSON schema is documented
// in docs/formats/summary.md.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "quant/accuracy_fallback.h"
#include "quant/export_qdq.h"
#include "quant/quant_types.h"

namespace qtune::quant {

struct SummaryRow {
  std::string node;
  std::string op_type;
  bool quantized = false;               // at least one enabled quantizer feeds the node
  std::string format;                   // "int8", "uint8" (asymmetric), "fp8_e4m3", "-" when float
  std::optional<float> input_amax;      // largest amax of its quantized activation inputs
  std::optional<float> weight_amax;     // largest channel amax of its quantized weight
  std::optional<double> weight_bits;    // bits per weight, scales included (EffectiveBits)
  std::string reason;                   // why it stays float (or a quantizer was disabled)
  std::vector<std::string> guard_hits;  // "dead_quantizer: detail", ...
};

struct QuantSummary {
  std::string target;            // "cpu" / "trt"
  std::vector<SummaryRow> rows;  // in graph (topological) order
  int quantized_layers = 0;
  int float_layers = 0;
  int enabled_sites = 0;
  int disabled_sites = 0;
  int64_t opset_before = 0;  // 0 when no export ran (--report)
  int64_t opset_after = 0;
  std::vector<std::string> warnings;
  std::optional<FallbackReport> fallback;  // set when the accuracy fallback ran
  // Bits per weight element over every Conv/ConvTranspose/Gemm/MatMul constant weight of
  // the graph, scales included; float weights count 32. nullopt without such weights.
  std::optional<double> weight_effective_bits;
};

// Rows for every node that a site feeds, that placement skipped, or that is of a
// quantizable op type (Conv, ConvTranspose, Gemm, MatMul, Add); nodes of other types
// appear only when a quantizer feeds them. `graph` is the float graph the plan was made
// for; `exported` (optional) supplies weight amaxes and warnings after export.
QuantSummary BuildSummary(const ir::Graph& graph, const QuantPlan& plan,
                          const ExportReport* exported);

// A fixed-width table plus a totals line.
std::string SummaryToText(const QuantSummary& summary);
nlohmann::json SummaryToJson(const QuantSummary& summary);

}  // namespace qtune::quant
