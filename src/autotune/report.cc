#include "autotune/report.h"

#include <fmt/format.h>

#include <algorithm>

#include "autotune/autotune.h"

namespace qtune::autotune {
namespace {

// A scheme entry: the figures of a measured one, the error of a failed one.
nlohmann::json SchemeJson(const SchemeResult& r) {
  nlohmann::json j = {{"scheme", r.scheme}, {"status", r.status}};
  if (HasRatio(r)) {
    j["ratio"] = r.ratio;
    j["noise"] = r.noise;
    j["candidate_ms"] = r.candidate_ms;
    j["incumbent_ms"] = r.reference_ms;
    j["adopted"] = r.adopted;
  }
  if (!r.error.empty()) j["error"] = r.error;
  if (r.sqnr_db != 0) j["sqnr_db"] = r.sqnr_db;
  return j;
}

nlohmann::json ComparisonJson(const Comparison& c) {
  if (!c.ok) return {{"ok", false}, {"error", c.error}};
  return {{"ok", true},
          {"ratio", c.ratio},
          {"noise", c.noise},
          {"candidate_ms", c.candidate_ms},
          {"reference_ms", c.reference_ms},
          {"replayed", c.replayed}};
}

// Where the time went: the tuner's own work per candidate against the measuring.
nlohmann::json TimeJson(const ReportInputs& in) {
  const SearchResult& s = *in.search;
  const MeasurerTiming& t = in.timing;
  const double tuner_s = s.tuner_propose_s + t.prepare_s + t.transfer_s;
  // Per measurement made in this run (candidates, confirmations, baselines: whether their
  // files were written or, with workers that build plans, their plans shipped).
  const MeasurerCounters& c = in.counters;
  const int measurements = c.measured + c.failed + c.retried;
  return {{"setup_s", in.setup_s},
          {"generations", s.generations},
          {"candidates", s.candidates},
          {"measurements", measurements},
          {"files_written", t.prepared},
          {"tuner_propose_s", s.tuner_propose_s},
          {"tuner_write_s", t.prepare_s},
          {"tuner_upload_s", t.transfer_s},
          {"tuner_s", tuner_s},
          {"tuner_ms_per_candidate", 1000.0 * tuner_s / std::max(1, measurements)},
          {"measure_wall_s", t.measure_wall_s}};
}

}  // namespace

nlohmann::json BuildReport(const ReportInputs& in) {
  const AutotuneOptions& o = *in.options;
  const SearchResult& s = *in.search;
  nlohmann::json patterns = nlohmann::json::array();
  for (const PatternReport& p : s.patterns) {
    nlohmann::json schemes = nlohmann::json::array();
    for (const SchemeResult& r : p.schemes) schemes.push_back(SchemeJson(r));
    patterns.push_back({{"id", p.id},
                        {"signature", p.signature},
                        {"regions", p.regions},
                        {"nodes", p.nodes},
                        {"points", p.points},
                        {"best_scheme", p.best_scheme},
                        {"schemes", schemes}});
  }
  nlohmann::json combined = nlohmann::json::array();
  for (const CombinedReport& c : s.combined) {
    nlohmann::json j = SchemeJson(c.result);
    j["parts"] = c.parts;
    combined.push_back(j);
  }
  const double fp32_ms = in.vs_fp32.ok ? in.vs_fp32.reference_ms : 0;
  const double rule_ms = in.vs_rule.ok ? in.vs_rule.reference_ms : 0;
  nlohmann::json final_json = {{"vs_fp32", ComparisonJson(in.vs_fp32)},
                               {"vs_rule", ComparisonJson(in.vs_rule)},
                               {"quantized_points", s.best.size()},
                               {"guard_reverted", in.guard_reverted}};
  if (in.vs_fp32.ok) final_json["speedup_vs_fp32"] = 1.0 / in.vs_fp32.ratio;
  if (in.vs_rule.ok) final_json["speedup_vs_rule"] = 1.0 / in.vs_rule.ratio;
  if (in.vs_fp32.ok) final_json["latency_ms"] = in.vs_fp32.candidate_ms;
  return {
      {"format", "qtune-autotune-report"},
      {"version", 1},
      {"model", o.model_path},
      {"model_sha256", in.model_sha256},
      {"output", o.output_path},
      {"mode", o.mode},
      {"threads", o.threads},
      {"min_sqnr_db", o.min_sqnr_db},
      {"seed", o.seed},
      {"benchmark", in.benchmark},
      {"baseline",
       {{"rule_vs_fp32", ComparisonJson(in.baseline)},
        {"fp32_ms", fp32_ms},
        {"rule_ms", rule_ms},
        {"rule_points", in.rule_points},
        {"rule_sqnr_db", in.rule_sqnr_db},
        {"start", in.start_from_rule ? "rule" : "fp32"}}},
      {"leaf_regions", in.leaf_regions},
      {"patterns", patterns},
      {"combined", combined},
      {"final", final_json},
      {"counts",
       {{"measured", in.counters.measured},
        {"replayed", in.counters.replayed},
        {"failed", in.counters.failed},
        {"retried", in.counters.retried},
        {"retried_from_log", in.counters.retried_from_log},
        {"skipped_same_placement", s.skipped_same_placement},
        {"skipped_same_plan", s.skipped_same_plan},
        {"skipped_accuracy", s.skipped_accuracy},
        {"speculative_discarded", s.speculative_discarded},
        {"speculated", in.counters.speculated},
        {"speculated_unused", in.counters.speculated - in.counters.speculation_used}}},
      {"noise_median", s.noise_median},
      {"elapsed_s", in.elapsed_s},
      {"time", TimeJson(in)},
  };
}

std::string ReportToText(const nlohmann::json& r) {
  std::string out;
  const auto& base = r["baseline"];
  out += fmt::format("model     {}\nbenchmark {}\n", r["model"].get<std::string>(),
                     r["benchmark"].get<std::string>());
  out += fmt::format("baseline  fp32 {:.3f} ms   rules {:.3f} ms ({} points)   start from {}\n",
                     base["fp32_ms"].get<double>(), base["rule_ms"].get<double>(),
                     base["rule_points"].get<int>(), base["start"].get<std::string>());
  out += fmt::format("\n{:<14} {:>7} {:>6} {:>6} {:>8}  {:<12} {}\n", "pattern", "regions", "nodes",
                     "points", "schemes", "best", "adopted wins");
  for (const auto& p : r["patterns"]) {
    int tried = 0, adopted = 0;
    for (const auto& s : p["schemes"]) {
      std::string status = s["status"];
      tried += status == "measured" || status == "replayed" || status == "failed";
      adopted += s.value("adopted", false);
    }
    std::string best = p["best_scheme"];
    if (best.size() > 12) best = best.substr(0, 11) + "~";
    out += fmt::format("{:<14} {:>7} {:>6} {:>6} {:>8}  {:<12} {}\n", p["id"].get<std::string>(),
                       p["regions"].get<int>(), p["nodes"].get<int>(), p["points"].get<int>(),
                       tried, best, adopted);
  }
  for (const auto& j : r.value("combined", nlohmann::json::array())) {
    const std::string status = j["status"];
    const size_t parts = j["parts"].size();
    if (status == "measured" || status == "replayed") {
      out += fmt::format("wins together ({} patterns): {:.3f}x of the incumbent{}\n", parts,
                         j["ratio"].get<double>(), j["adopted"].get<bool>() ? ", adopted" : "");
    } else {
      out += fmt::format("wins together ({} patterns): {}\n", parts, status);
    }
  }
  const auto& f = r["final"];
  const auto& c = r["counts"];
  out += fmt::format(
      "\nmeasured {}  replayed {}  failed {}  skipped: same placement {}, same plan {}, "
      "accuracy {}   noise (median) {:.3f}\n",
      c["measured"].get<int>(), c["replayed"].get<int>(), c["failed"].get<int>(),
      c["skipped_same_placement"].get<int>(), c["skipped_same_plan"].get<int>(),
      c["skipped_accuracy"].get<int>(), r["noise_median"].get<double>());
  if (f.contains("speedup_vs_fp32") && f.contains("speedup_vs_rule")) {
    out += fmt::format("final     {:.3f} ms   {:.2f}x vs fp32   {:.2f}x vs rules   {} points\n",
                       f.value("latency_ms", 0.0), f["speedup_vs_fp32"].get<double>(),
                       f["speedup_vs_rule"].get<double>(), f["quantized_points"].get<int>());
  } else {
    out += "final     not measured (see report.json)\n";
  }
  out += fmt::format("time      {:.1f} s\n", r["elapsed_s"].get<double>());
  if (r.contains("time")) {
    const auto& t = r["time"];
    out += fmt::format(
        "tuner     {:.1f} ms per measurement (propose {:.2f} s, write {:.2f} s for {} files, "
        "upload {:.2f} s)   measuring {:.1f} s wall   {} generations\n",
        t["tuner_ms_per_candidate"].get<double>(), t["tuner_propose_s"].get<double>(),
        t["tuner_write_s"].get<double>(), t["files_written"].get<int>(),
        t["tuner_upload_s"].get<double>(), t["measure_wall_s"].get<double>(),
        t["generations"].get<int>());
  }
  return out;
}

}  // namespace qtune::autotune
