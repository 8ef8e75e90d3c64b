// Planned models (issue 25, "a cheap candidate"): a candidate named by its float model and
// the quantization plan to export onto it, instead of by the exported file. The autotuner's
// candidates differ from the float model only by the plan (kilobytes of JSON), so a
// measurer that holds the float model builds each candidate itself and the tuner ships the
// plan, not a 45 MB model per candidate.
//
// The planned-model document (docs/workers.md, "Planned candidates"), UTF-8 JSON:
//   {"format": "qtune-planned-model", "version": 1,
//    "base": "<SHA-256 of the float model's bytes, 64 lowercase hex>",
//    "plan": <quant/plan_json.h document>}
// Its SHA-256 names it. Building it is ExportPlannedModel on the base graph with the
// default quant::ExportOptions: the one definition of "the model of a plan", used by the
// tuner (autotune::PlacementExporter::Export) and by the worker, so both write the same
// bytes for the same document.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"
#include "ir/graph.h"
#include "quant/quant_types.h"

namespace qtune::measure {

inline constexpr const char* kPlannedModelFormat = "qtune-planned-model";
inline constexpr int kPlannedModelVersion = 1;

// The document's text. `plan_json` is quant::PlanToJsonText's (inserted as it is).
std::string EncodePlannedModel(const std::string& base_sha256, const std::string& plan_json);

struct PlannedModelDoc {
  std::string base_sha256;
  quant::QuantPlan plan;
};
// The document from untrusted bytes (a Redis value): InvalidArgument naming `source` and
// what is wrong (not JSON, too deep, another format or version, a bad base SHA-256, a plan
// field; quant::PlanFromJson names it).
StatusOr<PlannedModelDoc> ParsePlannedModel(const std::string& bytes, const std::string& source);

// A clone of `base` with `plan` exported (quant::ExportQdq, default options). Errors name
// the site (a value or consumer the graph does not have...).
StatusOr<std::unique_ptr<ir::Graph>> ExportPlannedModel(const ir::Graph& base,
                                                        const quant::QuantPlan& plan);

}  // namespace qtune::measure
