#include "autotune/search.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "autotune/pattern.h"
#include "autotune/scheme_generator.h"
#include "core/file_io.h"
#include "core/logging.h"
#include "core/progress.h"
#include "ir/onnx_io.h"
#include "runtime/session.h"

namespace qtune::autotune {
namespace fs = std::filesystem;

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

Searcher::Searcher(const PlacementExporter& exporter, Measurer& measurer,
                   std::vector<PatternInfo> patterns, SearchOptions options)
    : exporter_(exporter),
      measurer_(measurer),
      patterns_(std::move(patterns)),
      options_(std::move(options)) {}

StatusOr<std::string> Searcher::PlanKey(const ir::Graph& graph) const {
  runtime::SessionOptions session_options;
  session_options.threads = options_.threads;
  ASSIGN_OR_RETURN(auto session, runtime::Session::Create(graph, session_options));
  ASSIGN_OR_RETURN(const runtime::Plan* plan, session->Prepare(options_.input_sizes));
  return CompiledPlanKey(*plan);
}

StatusOr<Searcher::Incumbent> Searcher::MakeIncumbent(Placement placement) {
  Incumbent inc;
  inc.placement = std::move(placement);
  inc.hash = PlacementHash(inc.placement);
  inc.path = (fs::path(options_.work_dir) / "models" / (inc.hash + ".onnx")).string();
  ASSIGN_OR_RETURN(auto graph, exporter_.Export(inc.placement));
  ASSIGN_OR_RETURN(inc.plan_key, PlanKey(*graph));
  if (!fs::exists(inc.path)) {
    ASSIGN_OR_RETURN(std::string bytes, ir::SerializeModel(*graph));
    RETURN_IF_ERROR(WriteFileAtomic(inc.path, bytes));
  }
  return inc;
}

StatusOr<SearchResult> Searcher::Run(Placement start) {
  SearchResult result;
  std::error_code ec;
  fs::create_directories(fs::path(options_.work_dir) / "models", ec);
  ASSIGN_OR_RETURN(Incumbent incumbent, MakeIncumbent(std::move(start)));
  int64_t total = 0;
  for (const PatternInfo& p : patterns_)
    total += p.points.empty() ? 0 : options_.schemes_per_pattern;
  ProgressBar progress("autotune: measuring", total);
  for (const PatternInfo& pattern : patterns_) {
    RETURN_IF_ERROR(SearchPattern(pattern, incumbent, result));
    if (!pattern.points.empty()) progress.Advance(options_.schemes_per_pattern);
  }
  progress.Finish();
  for (PatternReport& report : result.patterns) {
    for (const PatternInfo& p : patterns_) {
      if (p.id == report.id) report.best_scheme = ProjectScheme(p, 0, incumbent.placement);
    }
  }
  result.best = incumbent.placement;
  if (!noises_.empty()) result.noise_median = Median(noises_);
  return result;
}

Status Searcher::SearchPattern(const PatternInfo& pattern, Incumbent& incumbent,
                               SearchResult& result) {
  PatternReport report;
  report.id = pattern.id;
  report.signature = pattern.signature;
  report.regions = static_cast<int>(pattern.regions.size());
  report.points = static_cast<int>(pattern.points.size());
  report.nodes = pattern.nodes;
  if (pattern.points.empty()) {
    result.patterns.push_back(std::move(report));
    return Status::Ok();
  }
  // Seeds: the incumbent's projections (regions may differ), the cache's and --import-qdq's
  // schemes, all points, none.
  std::vector<std::string> seeds;
  for (size_t r = 0; r < pattern.regions.size() && seeds.size() < 3; ++r) {
    seeds.push_back(ProjectScheme(pattern, r, incumbent.placement));
  }
  if (auto it = options_.seeds.find(pattern.signature); it != options_.seeds.end()) {
    seeds.insert(seeds.end(), it->second.begin(), it->second.end());
  }
  seeds.push_back(std::string(pattern.points.size(), '1'));
  seeds.push_back(std::string(pattern.points.size(), '0'));
  const uint64_t pattern_seed = options_.seed ^ std::stoull(pattern.id.substr(0, 12), nullptr, 16);
  SchemeGenerator generator(static_cast<int>(pattern.points.size()), seeds,
                            options_.exhaustive_max_points, pattern_seed);
  std::set<std::string> tried_plans;  // plan keys measured against the current incumbent
  int measured = 0;
  const int max_proposals = 4 * options_.schemes_per_pattern + static_cast<int>(seeds.size()) +
                            static_cast<int>(pattern.points.size());
  for (int proposals = 0; measured < options_.schemes_per_pattern && proposals < max_proposals;
       ++proposals) {
    const std::string best_scheme = ProjectScheme(pattern, 0, incumbent.placement);
    std::optional<std::string> scheme = generator.Next(best_scheme);
    if (!scheme.has_value()) break;
    SchemeResult entry;
    entry.scheme = *scheme;
    Placement candidate = ApplyScheme(pattern, *scheme, incumbent.placement, exporter_);
    if (candidate == incumbent.placement) {
      entry.status = "same_placement";
      ++result.skipped_same_placement;
      report.schemes.push_back(entry);
      continue;
    }
    ASSIGN_OR_RETURN(auto graph, exporter_.Export(candidate));
    ASSIGN_OR_RETURN(std::string plan_key, PlanKey(*graph));
    if (plan_key == incumbent.plan_key || tried_plans.count(plan_key)) {
      entry.status = "same_plan";
      ++result.skipped_same_plan;
      report.schemes.push_back(entry);
      continue;
    }
    tried_plans.insert(plan_key);
    if (options_.sqnr && options_.min_sqnr_db > 0) {
      ASSIGN_OR_RETURN(entry.sqnr_db, options_.sqnr(*graph));
      if (!(entry.sqnr_db >= options_.min_sqnr_db)) {
        entry.status = "below_accuracy";
        ++result.skipped_accuracy;
        report.schemes.push_back(entry);
        continue;
      }
    }
    const std::string candidate_hash = PlacementHash(candidate);
    const std::string candidate_path = (fs::path(options_.work_dir) / "candidate.onnx").string();
    auto write_files = [&]() -> StatusOr<std::pair<std::string, std::string>> {
      ASSIGN_OR_RETURN(std::string bytes, ir::SerializeModel(*graph));
      RETURN_IF_ERROR(WriteFileAtomic(candidate_path, bytes));
      return std::make_pair(candidate_path, incumbent.path);
    };
    const std::string key = candidate_hash + ":" + incumbent.hash;
    ++measured;
    ASSIGN_OR_RETURN(Comparison c, measurer_.Compare(key, pattern.id, *scheme, write_files));
    entry.status = !c.ok ? "failed" : c.replayed ? "replayed" : "measured";
    entry.error = c.error;
    entry.ratio = c.ratio;
    entry.noise = c.noise;
    entry.candidate_ms = c.candidate_ms;
    entry.reference_ms = c.reference_ms;
    if (c.ok) noises_.push_back(c.noise);
    if (c.ok && c.ratio < 1.0 - std::max(options_.min_gain, 2 * c.noise)) {
      // A win: confirm it with a second measurement before adopting.
      ASSIGN_OR_RETURN(Comparison again,
                       measurer_.Compare(key + "/confirm", pattern.id, *scheme, write_files));
      if (again.ok) {
        noises_.push_back(again.noise);
        const Comparison both = CombineComparisons(c, again);
        const double ratio = both.ratio, noise = both.noise;
        entry.ratio = ratio;
        entry.noise = noise;
        if (ratio < 1.0 - std::max(options_.min_gain, 2 * noise)) {
          entry.adopted = true;
          ASSIGN_OR_RETURN(incumbent, MakeIncumbent(std::move(candidate)));
          tried_plans.clear();
          QTUNE_LOG_INFO(
              "autotune: pattern {} scheme {}: {:.3f}x of the incumbent, adopted "
              "(noise {:.3f})",
              pattern.id, *scheme, ratio, noise);
          if (options_.on_new_best) RETURN_IF_ERROR(options_.on_new_best(*graph));
        }
      }
    }
    report.schemes.push_back(entry);
  }
  result.patterns.push_back(std::move(report));
  return Status::Ok();
}

}  // namespace qtune::autotune
