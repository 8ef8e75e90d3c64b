// What the search proposes (search.h): patterns grouped by signature, each pattern's
// state and generator, and the candidates of one generation, deduplicated before any
// measurement.
#include <algorithm>
#include <map>
#include <optional>

#include "autotune/pattern.h"
#include "autotune/scheme_generator.h"
#include "autotune/search.h"
#include "autotune/search_state.h"

namespace qtune::autotune {

std::vector<PatternInfo> GroupPatterns(const RegionTree& tree, const SignatureOptions& signature,
                                       const PlacementExporter& exporter) {
  std::map<std::string, PatternInfo> by_signature;
  for (int id = 0; id < tree.num_leaves; ++id) {
    std::string sig = PatternSignature(tree, id, signature);
    PatternInfo& info = by_signature[sig];
    if (info.regions.empty()) {
      info.signature = sig;
      info.id = PatternId(sig);
      info.points = CandidatePoints(tree, id);
    }
    info.regions.push_back(id);
    info.nodes += static_cast<int>(tree.regions[static_cast<size_t>(id)].nodes.size());
    std::vector<ResolvedPoint> resolved;
    for (const InsertionPoint& p : info.points) resolved.push_back(Resolve(tree, id, p));
    info.resolved.push_back(std::move(resolved));
  }
  std::vector<PatternInfo> patterns;
  for (auto& [sig, info] : by_signature) {
    // Keep the points some region of the pattern can quantize.
    std::vector<size_t> keep;
    for (size_t i = 0; i < info.points.size(); ++i) {
      for (const auto& region_points : info.resolved) {
        if (exporter.Quantizable(region_points[i])) {
          keep.push_back(i);
          break;
        }
      }
    }
    PatternInfo kept = info;
    kept.points.clear();
    for (auto& r : kept.resolved) r.clear();
    for (size_t i : keep) {
      kept.points.push_back(info.points[i]);
      for (size_t r = 0; r < info.resolved.size(); ++r) {
        kept.resolved[r].push_back(info.resolved[r][i]);
      }
    }
    patterns.push_back(std::move(kept));
  }
  std::sort(patterns.begin(), patterns.end(), [](const PatternInfo& a, const PatternInfo& b) {
    return a.nodes != b.nodes ? a.nodes > b.nodes : a.id < b.id;
  });
  return patterns;
}

std::string ProjectScheme(const PatternInfo& pattern, size_t region, const Placement& placement) {
  std::string scheme;
  for (const ResolvedPoint& p : pattern.resolved[region]) {
    scheme += placement.count(p) ? '1' : '0';
  }
  return scheme;
}

Placement ApplyScheme(const PatternInfo& pattern, const std::string& scheme,
                      const Placement& placement, const PlacementExporter& exporter) {
  Placement out = placement;
  for (const auto& region_points : pattern.resolved) {
    for (size_t i = 0; i < region_points.size(); ++i) {
      out.erase(region_points[i]);
      if (scheme[i] == '1' && exporter.Quantizable(region_points[i])) out.insert(region_points[i]);
    }
  }
  return out;
}

StatusOr<std::optional<Searcher::Proposal>> Searcher::Propose(PatternState& state, size_t index,
                                                              const Incumbent& incumbent) {
  const PatternInfo& pattern = *state.pattern;
  const std::string best_scheme =
      state.lead.empty() ? ProjectScheme(pattern, 0, incumbent.placement) : state.lead;
  std::optional<std::string> scheme = state.generator->Next(best_scheme);
  if (!scheme.has_value()) return std::optional<Proposal>();
  ++state.proposals;
  Proposal p;
  p.state = index;
  p.entry.scheme = *scheme;
  p.candidate = ApplyScheme(pattern, *scheme, incumbent.placement, exporter_);
  if (p.candidate == incumbent.placement) {
    p.entry.status = "same_placement";
    return std::optional<Proposal>(std::move(p));
  }
  const std::string plan_key = PlanKey(p.candidate);
  if (plan_key == incumbent.plan_key || state.tried_plans.count(plan_key)) {
    p.entry.status = "same_plan";
    return std::optional<Proposal>(std::move(p));
  }
  state.tried_plans.insert(plan_key);
  if (options_.sqnr && options_.min_sqnr_db > 0) {
    auto known = sqnr_db_of_plan_.find(plan_key);  // proposed ahead (Speculate) already
    if (known == sqnr_db_of_plan_.end()) {
      ASSIGN_OR_RETURN(auto graph, exporter_.Export(p.candidate));
      ASSIGN_OR_RETURN(double sqnr_db, options_.sqnr(*graph));
      known = sqnr_db_of_plan_.emplace(plan_key, sqnr_db).first;
    }
    p.entry.sqnr_db = known->second;
    if (!(p.entry.sqnr_db >= options_.min_sqnr_db)) {
      p.entry.status = "below_accuracy";
      return std::optional<Proposal>(std::move(p));
    }
  }
  p.measure = true;
  ++state.measured;
  p.key = {.candidate = PlacementHash(p.candidate), .reference = incumbent.hash};
  return std::optional<Proposal>(std::move(p));
}

std::vector<Searcher::PatternState> Searcher::InitStates(const Incumbent& incumbent) const {
  std::vector<PatternState> states;
  for (const PatternInfo& pattern : patterns_) {
    PatternState s;
    s.pattern = &pattern;
    s.report.id = pattern.id;
    s.report.signature = pattern.signature;
    s.report.regions = static_cast<int>(pattern.regions.size());
    s.report.points = static_cast<int>(pattern.points.size());
    s.report.nodes = pattern.nodes;
    s.done = pattern.points.empty();
    // Seeds: the incumbent's projections (regions may differ), the cache's and
    // --import-qdq's schemes, all points, none.
    std::vector<std::string> seeds;
    for (size_t r = 0; r < pattern.regions.size() && seeds.size() < 3; ++r) {
      seeds.push_back(ProjectScheme(pattern, r, incumbent.placement));
    }
    if (auto it = options_.seeds.find(pattern.signature); it != options_.seeds.end()) {
      seeds.insert(seeds.end(), it->second.begin(), it->second.end());
    }
    seeds.push_back(std::string(pattern.points.size(), '1'));
    seeds.push_back(std::string(pattern.points.size(), '0'));
    const uint64_t pattern_seed =
        options_.seed ^ std::stoull(pattern.id.substr(0, 12), nullptr, 16);
    s.max_proposals = 4 * options_.schemes_per_pattern + static_cast<int>(seeds.size()) +
                      static_cast<int>(pattern.points.size());
    s.generator.emplace(static_cast<int>(pattern.points.size()), seeds,
                        options_.exhaustive_max_points, pattern_seed);
    states.push_back(std::move(s));
  }
  return states;
}

StatusOr<std::vector<Searcher::Proposal>> Searcher::ProposeBatch(std::vector<PatternState>& states,
                                                                 const Incumbent& incumbent) {
  const int per_generation = std::max(1, (options_.schemes_per_pattern + 1) / 2);
  std::vector<Proposal> batch;
  for (size_t i = 0; i < states.size(); ++i) {
    PatternState& s = states[i];
    for (int n = 0; !s.done && n < per_generation;) {
      if (s.measured >= options_.schemes_per_pattern || s.proposals >= s.max_proposals) {
        s.done = true;
        break;
      }
      ASSIGN_OR_RETURN(std::optional<Proposal> p, Propose(s, i, incumbent));
      if (!p.has_value()) {
        s.done = true;
        break;
      }
      n += p->measure ? 1 : 0;
      batch.push_back(std::move(*p));
    }
  }
  return batch;
}

}  // namespace qtune::autotune
