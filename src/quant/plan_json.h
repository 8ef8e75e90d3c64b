// QuantPlan <-> JSON: the quantization decisions of a plan as plain data, so they can be
// stored (a `qtune tune` checkpoint's plan.json, `qtune autotune`'s plan.json) and
// exported again later onto the same float graph, possibly with other weights (weight
// scales are computed at export, from whatever weights the graph holds then).
//
// Every field round-trips exactly: floats are written with enough digits to read back
// bit-identical, and non-finite range values as the strings "nan", "inf", "-inf".
// Format (docs/formats/checkpoint.md, "plan.json"):
//   {"format": "qtune-quant-plan", "version": 1, "target": "cpu"|"trt",
//    "sites": [{"kind": "activation"|"weight", "value", "consumers": [[node, index]...],
//               "config": {"enable", "format": "int8"|"fp8_e4m3", "bits", "axis": int|null,
//                          "symmetric", "calibrator": {"kind", "percentile", "bins"}},
//               "role", "scale_group", "enabled", "disabled_reason",
//               "range": null | {"min", "max", "amax", "samples"}}...],
//    "skipped": [{"node", "op_type", "reason"}...],
//    "guard_hits": [{"guard", "site", "detail"}...],
//    "quantized_nodes": [name...]}
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/status.h"
#include "quant/quant_types.h"

namespace qtune::quant {

inline constexpr int kPlanJsonVersion = 1;

nlohmann::json PlanToJson(const QuantPlan& plan);

// Inverse of PlanToJson. DataLoss naming the field (e.g. "sites[3].config.axis") when one
// is missing, mistyped or out of range; Unimplemented naming both versions for a newer
// version. `where` prefixes the messages (e.g. "'model.qtc' plan.json").
StatusOr<QuantPlan> PlanFromJson(const nlohmann::json& json, const std::string& where);

// The JSON text (2-space indented) and its parse; ParsePlanJson adds DataLoss for text
// that is not JSON.
std::string PlanToJsonText(const QuantPlan& plan);
StatusOr<QuantPlan> ParsePlanJson(const std::string& text, const std::string& where);

}  // namespace qtune::quant
