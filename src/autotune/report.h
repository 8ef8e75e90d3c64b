// The autotune report: report.json in the work directory and the --json output
// (docs/formats/autotune-report.md), and the table the command prints.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "autotune/measurer.h"
#include "autotune/search.h"

namespace qtune::autotune {

struct AutotuneOptions;

struct ReportInputs {
  const AutotuneOptions* options = nullptr;
  std::string model_sha256;
  std::string benchmark;  // Benchmark::Describe()
  Comparison baseline;    // rule-based placement against fp32
  bool start_from_rule = true;
  int rule_points = 0;
  double rule_sqnr_db = 0;  // with --min-sqnr
  int leaf_regions = 0;
  const SearchResult* search = nullptr;
  Comparison vs_fp32;           // final model against fp32
  Comparison vs_rule;           // final model against the rule-based placement
  bool guard_reverted = false;  // the tuned placement lost to the start as a whole
  MeasurerCounters counters;
  MeasurerTiming timing;
  double elapsed_s = 0;
  double setup_s = 0;  // from the start to the first measurement (the baselines)
};

nlohmann::json BuildReport(const ReportInputs& in);

// The human-readable summary of a report: baselines, per-pattern results, final speedup.
std::string ReportToText(const nlohmann::json& report);

}  // namespace qtune::autotune
