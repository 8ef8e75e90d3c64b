#include "quant/auto_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace qtune::quant {
namespace {

std::string Db(double db) {
  if (std::isinf(db)) return db > 0 ? "exact" : "-inf";
  return fmt::format("{:.1f}", db);
}

nlohmann::json DbJson(double db) {
  if (std::isinf(db)) return db > 0 ? "inf" : "-inf";
  return db;
}

std::string GroupName(const AutoGroupResult& g) {
  return g.nodes.size() == 1 ? g.nodes.front()
                             : fmt::format("{} (+{})", g.nodes.front(), g.nodes.size() - 1);
}

std::string FormatCounts(const std::vector<AutoFormat>& formats) {
  std::string out;
  for (AutoFormat f : AllAutoFormats()) {
    const auto n = std::count(formats.begin(), formats.end(), f);
    if (n > 0) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", n, AutoFormatName(f));
  }
  return out;
}

}  // namespace

std::string AutoReportToText(const AutoReport& report) {
  const bool latency = report.cost_model == "latency";
  std::string out =
      fmt::format("auto: {} groups, objective {} {}, cost model {}, scored on {} samples\n",
                  report.groups.size(),
                  report.objective == "effective_bits" ? "effective bits"
                  : report.objective == "min_sqnr_db"  ? "min SQNR (dB)"
                                                       : "latency budget (ms)",
                  report.target, report.cost_model, report.samples);
  out += fmt::format("  {:<40} {:>9} {:>6}  {:<28} {}\n", "layer (group)", "weights", "format",
                     "alone (dB) per candidate", "why");
  for (const AutoGroupResult& g : report.groups) {
    std::string alone;
    for (size_t k = 0; k < g.formats.size(); ++k) {
      alone += fmt::format("{}{} {}", k ? ", " : "", AutoFormatName(g.formats[k]),
                           Db(g.sensitivity_db[k]));
      if (latency) alone += fmt::format(" ({:.2f} ms)", g.latency_ms[k]);
    }
    out += fmt::format("  {:<40} {:>9} {:>6}  {:<28} {}{}\n", GroupName(g), g.weight_elements,
                       AutoFormatName(g.chosen), alone, g.why,
                       g.cost_excluded ? " [cost-excluded]" : "");
    for (const std::string& note : g.notes) out += "      note: " + note + "\n";
  }
  out += latency ? "  frontier (predicted / measured ms -> predicted / measured SQNR dB):\n"
                 : "  frontier (effective bits -> predicted / measured SQNR dB):\n";
  for (const AutoFrontierPoint& p : report.frontier) {
    const std::string cost =
        latency ? fmt::format("{:7.2f} / {:7.2f} ms", p.predicted_ms, p.measured_ms)
                : fmt::format("{:6.2f} bits", p.effective_bits);
    out += fmt::format("    {}  {:>7} / {:>7}  ({})\n", cost, Db(p.predicted_db), Db(p.measured_db),
                       FormatCounts(p.formats));
  }
  out += fmt::format(
      "  chosen: {:.2f} effective bits{}, predicted {} dB, measured {} dB{}{}\n",
      report.effective_bits, latency ? fmt::format(", {:.2f} ms measured", report.measured_ms) : "",
      Db(report.predicted_db), Db(report.measured_db),
      report.reached ? "" : " (objective NOT reached)", report.exact ? "" : " (greedy search)");
  if (latency) {
    out += fmt::format("  steps of no layer group (not chosen, in every choice): {:.2f} ms\n",
                       report.unattributed_ms);
  }
  for (const std::string& c : report.corrections) out += "  corrected: " + c + "\n";
  for (const std::string& n : report.notes) out += "  note: " + n + "\n";
  return out;
}

nlohmann::json AutoReportToJson(const AutoReport& report) {
  nlohmann::json j;
  j["objective"] = report.objective;
  j["cost_model"] = report.cost_model;
  j["target"] = report.target;
  j["samples"] = report.samples;
  j["measured_tensors"] = report.measured;
  j["effective_bits"] = report.effective_bits;
  j["predicted_sqnr_db"] = DbJson(report.predicted_db);
  j["measured_sqnr_db"] = DbJson(report.measured_db);
  j["reached"] = report.reached;
  if (report.cost_model == "latency") {
    j["measured_ms"] = report.measured_ms;
    j["unattributed_ms"] = report.unattributed_ms;
  }
  j["exact"] = report.exact;
  j["corrections"] = report.corrections;
  j["notes"] = report.notes;
  j["bf16_nodes"] = report.bf16_nodes;
  j["groups"] = nlohmann::json::array();
  for (const AutoGroupResult& g : report.groups) {
    nlohmann::json jg;
    jg["nodes"] = g.nodes;
    jg["weight_elements"] = g.weight_elements;
    jg["cost_excluded"] = g.cost_excluded;
    jg["pinned"] = g.pinned;
    jg["format"] = AutoFormatName(g.chosen);
    const auto chosen = std::find(g.formats.begin(), g.formats.end(), g.chosen);
    jg["bits"] =
        chosen == g.formats.end() ? AutoFormatBits(g.chosen) : g.bits[chosen - g.formats.begin()];
    jg["why"] = g.why;
    jg["notes"] = g.notes;
    nlohmann::json alone = nlohmann::json::object();
    for (size_t k = 0; k < g.formats.size(); ++k) {
      alone[AutoFormatName(g.formats[k])] = DbJson(g.sensitivity_db[k]);
    }
    jg["sensitivity_db"] = alone;
    if (!g.latency_ms.empty()) {
      nlohmann::json ms = nlohmann::json::object();
      for (size_t k = 0; k < g.formats.size(); ++k)
        ms[AutoFormatName(g.formats[k])] = g.latency_ms[k];
      jg["latency_ms"] = ms;
    }
    j["groups"].push_back(jg);
  }
  j["frontier"] = nlohmann::json::array();
  for (const AutoFrontierPoint& p : report.frontier) {
    nlohmann::json formats = nlohmann::json::array();
    for (AutoFormat f : p.formats) formats.push_back(AutoFormatName(f));
    nlohmann::json point = {{"effective_bits", p.effective_bits},
                            {"predicted_sqnr_db", DbJson(p.predicted_db)},
                            {"measured_sqnr_db", DbJson(p.measured_db)},
                            {"formats", formats}};
    if (report.cost_model == "latency") {
      point["predicted_ms"] = p.predicted_ms;
      point["measured_ms"] = p.measured_ms;
    }
    j["frontier"].push_back(point);
  }
  return j;
}

}  // namespace qtune::quant
