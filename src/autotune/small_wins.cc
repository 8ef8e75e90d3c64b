// The search's small-wins step (search.h, "Small wins"): Searcher::CombineSmallWins.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>

#include "autotune/search.h"
#include "core/logging.h"

namespace qtune::autotune {

Status Searcher::CombineSmallWins(Incumbent& incumbent, SearchResult& result) {
  struct SmallWin {
    const PatternInfo* pattern;
    std::string scheme;
    double ratio;
  };
  std::vector<SmallWin> wins;
  for (const PatternReport& report : result.patterns) {
    const SchemeResult* best = nullptr;
    for (const SchemeResult& s : report.schemes) {
      if (s.adopted) {
        best = nullptr;
        break;
      }
      if (HasRatio(s) && s.ratio < 1.0 && (best == nullptr || s.ratio < best->ratio)) best = &s;
    }
    if (best == nullptr) continue;
    for (const PatternInfo& p : patterns_) {
      if (p.id == report.id) wins.push_back({&p, best->scheme, best->ratio});
    }
  }
  std::stable_sort(wins.begin(), wins.end(),
                   [](const SmallWin& a, const SmallWin& b) { return a.ratio < b.ratio; });
  // Every level (all the wins, the better half, ... down to two) proposed at once, each
  // measured twice, all in one batch; the first level in that order that wins is adopted.
  struct Level {
    CombinedReport report;
    Placement candidate;
    bool measure = false;
  };
  std::vector<Level> levels;
  std::vector<Measurer::Request> requests;
  for (size_t n = wins.size(); n >= 2; n /= 2) {
    Level& level = levels.emplace_back();
    level.candidate = incumbent.placement;
    for (size_t i = 0; i < n; ++i) {
      level.candidate = ApplyScheme(*wins[i].pattern, wins[i].scheme, level.candidate, exporter_);
      level.report.parts.push_back(wins[i].pattern->id + ":" + wins[i].scheme);
    }
    SchemeResult& entry = level.report.result;
    entry.scheme = fmt::format("{}", fmt::join(level.report.parts, "+"));
    if (level.candidate == incumbent.placement || PlanKey(level.candidate) == incumbent.plan_key) {
      levels.pop_back();
      continue;
    }
    if (options_.sqnr && options_.min_sqnr_db > 0) {
      ASSIGN_OR_RETURN(std::unique_ptr<ir::Graph> graph, exporter_.Export(level.candidate));
      ASSIGN_OR_RETURN(entry.sqnr_db, options_.sqnr(*graph));
      if (!(entry.sqnr_db >= options_.min_sqnr_db)) {
        entry.status = "below_accuracy";
        continue;
      }
    }
    level.measure = true;
    const measure::MeasurementKey key{.candidate = PlacementHash(level.candidate),
                                      .reference = incumbent.hash};
    const int slot = static_cast<int>(requests.size());
    requests.push_back(
        MakeRequest(key, "combined", entry.scheme, level.candidate, slot, incumbent));
    requests.push_back(MakeRequest(key.Repeated(), "combined", entry.scheme, level.candidate,
                                   slot + 1, incumbent));
  }
  ASSIGN_OR_RETURN(std::vector<Comparison> measured, measurer_.CompareMany(requests));
  size_t r = 0;
  const Level* adopted = nullptr;
  for (Level& level : levels) {
    SchemeResult& entry = level.report.result;
    if (level.measure) {
      const Comparison& first = measured[r];
      const Comparison& again = measured[r + 1];
      r += 2;
      if (std::optional<Comparison> mean = RecordTwice(entry, first, again)) {
        entry.adopted = adopted == nullptr && Wins(first) && Wins(*mean);  // both must win
      }
      QTUNE_LOG_INFO("autotune: {} small wins together: {:.3f}x of the incumbent{} (noise {:.3f})",
                     level.report.parts.size(), entry.ratio, entry.adopted ? ", adopted" : "",
                     entry.noise);
    }
    if (entry.adopted) adopted = &level;
    result.combined.push_back(level.report);
  }
  if (adopted != nullptr) {
    ASSIGN_OR_RETURN(incumbent, MakeIncumbent(adopted->candidate, true));
  }
  return Status::Ok();
}

}  // namespace qtune::autotune
