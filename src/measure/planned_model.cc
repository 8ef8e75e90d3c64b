#include "measure/planned_model.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/json_limits.h"
#include "core/sha256.h"
#include "quant/export_qdq.h"
#include "quant/plan_json.h"

namespace qtune::measure {
std::string EncodePlannedModel(const std::string& base_sha256, const std::string& plan_json) {
  return fmt::format("{{\"format\": \"{}\", \"version\": {}, \"base\": \"{}\",\n\"plan\": {}}}\n",
                     kPlannedModelFormat, kPlannedModelVersion, base_sha256, plan_json);
}

StatusOr<PlannedModelDoc> ParsePlannedModel(const std::string& bytes, const std::string& source) {
  StatusOr<nlohmann::json> parsed = ParseUntrustedJson(bytes, source);
  if (!parsed.ok()) return InvalidArgumentError(parsed.status().message());
  const nlohmann::json& j = *parsed;
  auto bad = [&](const std::string& what) {
    return InvalidArgumentError(fmt::format("{}: {}", source, what));
  };
  if (!j.is_object()) return bad("not a JSON object");
  const auto format = j.find("format");
  if (format == j.end() || *format != kPlannedModelFormat) {
    return bad(fmt::format("'format' is not \"{}\"", kPlannedModelFormat));
  }
  const auto version = j.find("version");
  if (version == j.end() || !version->is_number_integer() || *version != kPlannedModelVersion) {
    return bad(fmt::format("'version' is not {} (a tuner of another qtune version?)",
                           kPlannedModelVersion));
  }
  const auto base = j.find("base");
  if (base == j.end() || !base->is_string() || !IsSha256Hex(base->get<std::string>())) {
    return bad("'base' is not a SHA-256 in lowercase hex");
  }
  const auto plan = j.find("plan");
  if (plan == j.end()) return bad("'plan' is missing");
  PlannedModelDoc doc;
  doc.base_sha256 = base->get<std::string>();
  StatusOr<quant::QuantPlan> decoded = quant::PlanFromJson(*plan, source + " plan");
  if (!decoded.ok()) return InvalidArgumentError(decoded.status().message());
  doc.plan = std::move(*decoded);
  return doc;
}

StatusOr<std::unique_ptr<ir::Graph>> ExportPlannedModel(const ir::Graph& base,
                                                        const quant::QuantPlan& plan) {
  std::unique_ptr<ir::Graph> graph = base.Clone();
  const quant::ExportOptions options;
  RETURN_IF_ERROR(quant::ExportQdq(*graph, plan, options).status());
  return graph;
}

}  // namespace qtune::measure
