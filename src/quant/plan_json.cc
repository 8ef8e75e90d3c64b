#include "quant/plan_json.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <utility>

#include "core/json_limits.h"

namespace qtune::quant {
namespace {

using nlohmann::json;

json FloatToJson(float value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return static_cast<double>(value);  // float -> double is exact; the reader narrows back
}

// Reads fields of one JSON object, naming them by their path in errors.
class FieldReader {
 public:
  FieldReader(const json& object, std::string path, const std::string& where)
      : object_(object), path_(std::move(path)), where_(where) {}

  Status CheckObject() const {
    if (object_.is_object()) return Status::Ok();
    return DataLossError(fmt::format("{}: {} is not a JSON object", where_, Name("")));
  }
  std::string Name(const std::string& key) const {
    if (key.empty()) return path_.empty() ? "the top level" : path_;
    return path_.empty() ? key : path_ + "." + key;
  }
  Status Error(const std::string& key, const std::string& what) const {
    return DataLossError(fmt::format("{}: field '{}' {}", where_, Name(key), what));
  }
  StatusOr<const json*> Get(const std::string& key, json::value_t type,
                            const char* type_name) const {
    auto it = object_.find(key);
    if (it == object_.end()) return Error(key, "is missing");
    bool ok = it->type() == type || (type == json::value_t::number_float && it->is_number()) ||
              (type == json::value_t::number_integer && it->is_number_integer());
    if (!ok) return Error(key, fmt::format("must be {}", type_name));
    return &*it;
  }
  StatusOr<std::string> String(const std::string& key) const {
    ASSIGN_OR_RETURN(const json* j, Get(key, json::value_t::string, "a string"));
    return j->get<std::string>();
  }
  StatusOr<bool> Bool(const std::string& key) const {
    ASSIGN_OR_RETURN(const json* j, Get(key, json::value_t::boolean, "true or false"));
    return j->get<bool>();
  }
  StatusOr<int64_t> Int(const std::string& key) const {
    ASSIGN_OR_RETURN(const json* j, Get(key, json::value_t::number_integer, "an integer"));
    return j->get<int64_t>();
  }
  StatusOr<double> Double(const std::string& key) const {
    ASSIGN_OR_RETURN(const json* j, Get(key, json::value_t::number_float, "a number"));
    return j->get<double>();
  }
  StatusOr<float> Float(const std::string& key) const {
    auto it = object_.find(key);
    if (it != object_.end() && it->is_string()) {
      const std::string s = it->get<std::string>();
      if (s == "nan") return std::numeric_limits<float>::quiet_NaN();
      if (s == "inf") return std::numeric_limits<float>::infinity();
      if (s == "-inf") return -std::numeric_limits<float>::infinity();
      return Error(key, "must be a number, \"nan\", \"inf\" or \"-inf\"");
    }
    ASSIGN_OR_RETURN(double d, Double(key));
    return static_cast<float>(d);
  }
  StatusOr<const json*> Array(const std::string& key) const {
    return Get(key, json::value_t::array, "an array");
  }

 private:
  const json& object_;
  std::string path_;
  const std::string& where_;
};

json SiteToJson(const QuantSite& site) {
  json consumers = json::array();
  for (const auto& [node, index] : site.consumers) consumers.push_back({node, index});
  const QuantizerConfig& c = site.config;
  json config = {{"enable", c.enable},
                 {"format", QuantFormatName(c.format)},
                 {"bits", c.bits},
                 {"axis", c.axis.has_value() ? json(*c.axis) : json(nullptr)},
                 {"symmetric", c.symmetric},
                 {"calibrator",
                  {{"kind", CalibratorName(c.calibrator.kind)},
                   {"percentile", c.calibrator.percentile},
                   {"bins", c.calibrator.bins}}}};
  if (c.block_size > 0 || c.algorithm != WeightAlgorithm::kRtn ||
      c.scale_type != ScaleType::kFloat32) {
    config["block_size"] = c.block_size;
    config["algorithm"] = WeightAlgorithmName(c.algorithm);
    config["scale_type"] = ScaleTypeName(c.scale_type);
  }
  json range = nullptr;
  if (site.range.has_value()) {
    range = {{"min", FloatToJson(site.range->min)},
             {"max", FloatToJson(site.range->max)},
             {"amax", FloatToJson(site.range->amax)},
             {"samples", site.range->samples}};
  }
  return {{"kind", site.kind == QuantSite::Kind::kWeight ? "weight" : "activation"},
          {"value", site.value},
          {"consumers", std::move(consumers)},
          {"config", std::move(config)},
          {"role", site.role},
          {"scale_group", site.scale_group},
          {"enabled", site.enabled},
          {"disabled_reason", site.disabled_reason},
          {"weight_only", site.weight_only},
          {"input_scale", site.input_scale},
          {"range", std::move(range)}};
}

StatusOr<QuantizerConfig> ConfigFromJson(const json& j, const std::string& path,
                                         const std::string& where) {
  FieldReader r(j, path, where);
  RETURN_IF_ERROR(r.CheckObject());
  QuantizerConfig c;
  ASSIGN_OR_RETURN(c.enable, r.Bool("enable"));
  ASSIGN_OR_RETURN(std::string format, r.String("format"));
  bool known_format = false;
  for (const FormatInfo& f : AllFormats()) {
    if (format == f.name) c.format = f.format, known_format = true;
  }
  if (!known_format) {
    return r.Error("format", fmt::format("is '{}', not one of {}", format, FormatNameList()));
  }
  ASSIGN_OR_RETURN(int64_t bits, r.Int("bits"));
  if (bits != FormatInfoOf(c.format).bits) {
    return r.Error("bits", fmt::format("is {}; {} has {}-bit values", bits, format,
                                       FormatInfoOf(c.format).bits));
  }
  c.bits = static_cast<int>(bits);
  if (j.contains("block_size")) {
    ASSIGN_OR_RETURN(int64_t block, r.Int("block_size"));
    if (block < 0 || block > 4096) return r.Error("block_size", "must be in [0, 4096]");
    c.block_size = static_cast<int>(block);
    ASSIGN_OR_RETURN(std::string algorithm, r.String("algorithm"));
    std::optional<WeightAlgorithm> a = ParseWeightAlgorithm(algorithm);
    if (!a) return r.Error("algorithm", fmt::format("is '{}', not rtn, clip or awq", algorithm));
    c.algorithm = *a;
    ASSIGN_OR_RETURN(std::string scale_type, r.String("scale_type"));
    if (scale_type != "fp32" && scale_type != "fp16") {
      return r.Error("scale_type", fmt::format("is '{}', not fp32 or fp16", scale_type));
    }
    c.scale_type = scale_type == "fp16" ? ScaleType::kFloat16 : ScaleType::kFloat32;
  }
  auto axis = j.find("axis");
  if (axis == j.end()) return r.Error("axis", "is missing (null for per-tensor)");
  if (axis->is_number_integer()) {
    c.axis = axis->get<int>();
  } else if (!axis->is_null()) {
    return r.Error("axis", "must be an integer or null");
  }
  ASSIGN_OR_RETURN(c.symmetric, r.Bool("symmetric"));
  auto calib = j.find("calibrator");
  if (calib == j.end()) return r.Error("calibrator", "is missing");
  FieldReader cr(*calib, r.Name("calibrator"), where);
  RETURN_IF_ERROR(cr.CheckObject());
  ASSIGN_OR_RETURN(std::string kind, cr.String("kind"));
  bool found = false;
  for (CalibratorKind k : {CalibratorKind::kMax, CalibratorKind::kPercentile,
                           CalibratorKind::kEntropy, CalibratorKind::kMse}) {
    if (kind == CalibratorName(k)) c.calibrator.kind = k, found = true;
  }
  if (!found)
    return cr.Error("kind", fmt::format("is '{}', not max, percentile, entropy or mse", kind));
  ASSIGN_OR_RETURN(c.calibrator.percentile, cr.Double("percentile"));
  ASSIGN_OR_RETURN(int64_t bins, cr.Int("bins"));
  c.calibrator.bins = static_cast<int>(bins);
  return c;
}

StatusOr<QuantSite> SiteFromJson(const json& j, const std::string& path, const std::string& where) {
  FieldReader r(j, path, where);
  RETURN_IF_ERROR(r.CheckObject());
  QuantSite site;
  ASSIGN_OR_RETURN(std::string kind, r.String("kind"));
  if (kind == "weight") {
    site.kind = QuantSite::Kind::kWeight;
  } else if (kind != "activation") {
    return r.Error("kind", fmt::format("is '{}', not activation or weight", kind));
  }
  ASSIGN_OR_RETURN(site.value, r.String("value"));
  if (site.value.empty()) return r.Error("value", "is empty");
  ASSIGN_OR_RETURN(const json* consumers, r.Array("consumers"));
  for (size_t i = 0; i < consumers->size(); ++i) {
    const json& c = (*consumers)[i];
    if (!c.is_array() || c.size() != 2 || !c[0].is_string() || !c[1].is_number_integer()) {
      return r.Error(fmt::format("consumers[{}]", i), "must be [node name, input index]");
    }
    site.consumers.emplace_back(c[0].get<std::string>(), c[1].get<int>());
  }
  auto config = j.find("config");
  if (config == j.end()) return r.Error("config", "is missing");
  ASSIGN_OR_RETURN(site.config, ConfigFromJson(*config, r.Name("config"), where));
  ASSIGN_OR_RETURN(site.role, r.String("role"));
  ASSIGN_OR_RETURN(site.scale_group, r.String("scale_group"));
  ASSIGN_OR_RETURN(site.enabled, r.Bool("enabled"));
  ASSIGN_OR_RETURN(site.disabled_reason, r.String("disabled_reason"));
  if (j.contains("weight_only")) {
    ASSIGN_OR_RETURN(site.weight_only, r.Bool("weight_only"));
  }
  if (auto s = j.find("input_scale"); s != j.end()) {
    if (!s->is_array()) return r.Error("input_scale", "must be an array of numbers");
    for (const json& v : *s) {
      if (!v.is_number()) return r.Error("input_scale", "must be an array of numbers");
      site.input_scale.push_back(v.get<float>());
    }
  }
  auto range = j.find("range");
  if (range == j.end()) return r.Error("range", "is missing (null when not calibrated)");
  if (!range->is_null()) {
    FieldReader rr(*range, r.Name("range"), where);
    RETURN_IF_ERROR(rr.CheckObject());
    TensorRange tr;
    ASSIGN_OR_RETURN(tr.min, rr.Float("min"));
    ASSIGN_OR_RETURN(tr.max, rr.Float("max"));
    ASSIGN_OR_RETURN(tr.amax, rr.Float("amax"));
    ASSIGN_OR_RETURN(tr.samples, rr.Int("samples"));
    site.range = tr;
  }
  return site;
}

}  // namespace

json PlanToJson(const QuantPlan& plan) {
  json sites = json::array();
  for (const QuantSite& site : plan.sites) sites.push_back(SiteToJson(site));
  json skipped = json::array();
  for (const SkippedLayer& s : plan.skipped) {
    skipped.push_back({{"node", s.node}, {"op_type", s.op_type}, {"reason", s.reason}});
  }
  json hits = json::array();
  for (const GuardHit& h : plan.guard_hits) {
    hits.push_back({{"guard", h.guard}, {"site", h.site}, {"detail", h.detail}});
  }
  return {{"format", "qtune-quant-plan"},           {"version", kPlanJsonVersion},
          {"target", TargetName(plan.target)},      {"sites", std::move(sites)},
          {"skipped", std::move(skipped)},          {"guard_hits", std::move(hits)},
          {"quantized_nodes", plan.quantized_nodes}};
}

StatusOr<QuantPlan> PlanFromJson(const json& j, const std::string& where) {
  FieldReader r(j, "", where);
  RETURN_IF_ERROR(r.CheckObject());
  ASSIGN_OR_RETURN(std::string format, r.String("format"));
  if (format != "qtune-quant-plan") {
    return r.Error("format", fmt::format("is '{}', not 'qtune-quant-plan'", format));
  }
  ASSIGN_OR_RETURN(int64_t version, r.Int("version"));
  if (version > kPlanJsonVersion) {
    return UnimplementedError(
        fmt::format("{}: plan version {} is newer than this qtune reads ({}); use a newer qtune",
                    where, version, kPlanJsonVersion));
  }
  if (version < 1) return r.Error("version", fmt::format("is {}, must be >= 1", version));
  QuantPlan plan;
  ASSIGN_OR_RETURN(std::string target, r.String("target"));
  if (target == "cpu") {
    plan.target = Target::kCpu;
  } else if (target == "trt") {
    plan.target = Target::kTrt;
  } else if (target == "ort") {
    plan.target = Target::kOrt;
  } else {
    return r.Error("target", fmt::format("is '{}', not cpu, trt or ort", target));
  }
  ASSIGN_OR_RETURN(const json* sites, r.Array("sites"));
  for (size_t i = 0; i < sites->size(); ++i) {
    ASSIGN_OR_RETURN(QuantSite site, SiteFromJson((*sites)[i], fmt::format("sites[{}]", i), where));
    plan.sites.push_back(std::move(site));
  }
  ASSIGN_OR_RETURN(const json* skipped, r.Array("skipped"));
  for (size_t i = 0; i < skipped->size(); ++i) {
    FieldReader sr((*skipped)[i], fmt::format("skipped[{}]", i), where);
    RETURN_IF_ERROR(sr.CheckObject());
    SkippedLayer s;
    ASSIGN_OR_RETURN(s.node, sr.String("node"));
    ASSIGN_OR_RETURN(s.op_type, sr.String("op_type"));
    ASSIGN_OR_RETURN(s.reason, sr.String("reason"));
    plan.skipped.push_back(std::move(s));
  }
  ASSIGN_OR_RETURN(const json* hits, r.Array("guard_hits"));
  for (size_t i = 0; i < hits->size(); ++i) {
    FieldReader hr((*hits)[i], fmt::format("guard_hits[{}]", i), where);
    RETURN_IF_ERROR(hr.CheckObject());
    GuardHit h;
    ASSIGN_OR_RETURN(h.guard, hr.String("guard"));
    ASSIGN_OR_RETURN(h.site, hr.String("site"));
    ASSIGN_OR_RETURN(h.detail, hr.String("detail"));
    plan.guard_hits.push_back(std::move(h));
  }
  ASSIGN_OR_RETURN(const json* nodes, r.Array("quantized_nodes"));
  for (size_t i = 0; i < nodes->size(); ++i) {
    if (!(*nodes)[i].is_string()) {
      return r.Error(fmt::format("quantized_nodes[{}]", i), "must be a string");
    }
    plan.quantized_nodes.push_back((*nodes)[i].get<std::string>());
  }
  return plan;
}

std::string PlanToJsonText(const QuantPlan& plan) { return DumpJson(PlanToJson(plan), 2) + "\n"; }

StatusOr<QuantPlan> ParsePlanJson(const std::string& text, const std::string& where) {
  ASSIGN_OR_RETURN(json j, ParseUntrustedJson(text, where));
  return PlanFromJson(j, where);
}

}  // namespace qtune::quant
