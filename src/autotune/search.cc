#include "autotune/search.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>

#include "autotune/pattern.h"
#include "autotune/scheme_generator.h"
#include "core/file_io.h"
#include "core/logging.h"
#include "core/progress.h"
#include "core/sha256.h"
#include "ir/onnx_io.h"
#include "runtime/session.h"

namespace qtune::autotune {
namespace fs = std::filesystem;
namespace {

// Writes `graph` (which must outlive the writer) to `path` when the measurer needs the
// files; the reference is already on disk.
Measurer::FileWriter CandidateWriter(const ir::Graph* graph, std::string path,
                                     std::string reference) {
  return [graph, path = std::move(path),
          reference = std::move(reference)]() -> StatusOr<std::pair<std::string, std::string>> {
    ASSIGN_OR_RETURN(std::string bytes, ir::SerializeModel(*graph));
    RETURN_IF_ERROR(WriteFileAtomic(path, bytes));
    return std::make_pair(path, reference);
  };
}

}  // namespace

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
  StatusOr<const runtime::Plan*> plan = session->Prepare(options_.input_sizes);
  if (!plan.ok() && plan.status().code() == StatusCode::kFailedPrecondition) {
    // Sizes known only while the model runs (NonMaxSuppression, ...): there is no plan to
    // compare before running, so the exported graph is its own key (no deduplication).
    ASSIGN_OR_RETURN(std::string bytes, ir::SerializeModel(graph));
    return "graph:" + Sha256Hex(bytes).substr(0, 16);
  }
  if (!plan.ok()) return plan.status();
  return CompiledPlanKey(**plan);
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
  // The back end's live status (Redis: workers, jobs in flight, throughput) in the line.
  measurer_.benchmark().SetStatusListener(
      [&progress](const std::string& note) { progress.SetNote(note); });
  Status searched = Status::Ok();
  for (const PatternInfo& pattern : patterns_) {
    searched = SearchPattern(pattern, incumbent, result);
    if (!searched.ok()) break;
    if (!pattern.points.empty()) progress.Advance(options_.schemes_per_pattern);
  }
  if (searched.ok()) searched = CombineSmallWins(incumbent, result);
  measurer_.benchmark().SetStatusListener(nullptr);
  RETURN_IF_ERROR(searched);
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

// What the proposing side of one pattern's search holds. Copied after each measured
// proposal, so an adoption can rewind to the state right after the adopted candidate.
struct Searcher::ProposalState {
  SchemeGenerator generator;
  std::set<std::string> tried_plans;  // plan keys measured against the current incumbent
  int measured = 0;                   // candidates handed to the measurer
  int proposals = 0;
  // The lead: a scheme measured faster than the incumbent by more than its noise, but too
  // little to adopt. Flips and mutations start from it instead of the incumbent's scheme.
  std::string lead;
  double lead_ratio = 1.0;
};

// A scheme skipped before measuring (entry.status set), or a candidate to measure.
struct Searcher::Proposal {
  SchemeResult entry;
  bool measure = false;
  Placement candidate;
  std::unique_ptr<ir::Graph> graph;
  std::string key;                     // candidate hash : incumbent hash
  Measurer::FileWriter write_files;    // the candidate's file and the incumbent's
  std::optional<ProposalState> after;  // the state right after it (measured ones)
};

StatusOr<std::optional<Searcher::Proposal>> Searcher::Propose(const PatternInfo& pattern,
                                                              const Incumbent& incumbent,
                                                              ProposalState& state, int slot) {
  const std::string best_scheme =
      state.lead.empty() ? ProjectScheme(pattern, 0, incumbent.placement) : state.lead;
  std::optional<std::string> scheme = state.generator.Next(best_scheme);
  if (!scheme.has_value()) return std::optional<Proposal>();
  ++state.proposals;
  Proposal p;
  p.entry.scheme = *scheme;
  p.candidate = ApplyScheme(pattern, *scheme, incumbent.placement, exporter_);
  if (p.candidate == incumbent.placement) {
    p.entry.status = "same_placement";
    return std::optional<Proposal>(std::move(p));
  }
  ASSIGN_OR_RETURN(p.graph, exporter_.Export(p.candidate));
  ASSIGN_OR_RETURN(std::string plan_key, PlanKey(*p.graph));
  if (plan_key == incumbent.plan_key || state.tried_plans.count(plan_key)) {
    p.entry.status = "same_plan";
    return std::optional<Proposal>(std::move(p));
  }
  state.tried_plans.insert(plan_key);
  if (options_.sqnr && options_.min_sqnr_db > 0) {
    ASSIGN_OR_RETURN(p.entry.sqnr_db, options_.sqnr(*p.graph));
    if (!(p.entry.sqnr_db >= options_.min_sqnr_db)) {
      p.entry.status = "below_accuracy";
      return std::optional<Proposal>(std::move(p));
    }
  }
  p.measure = true;
  ++state.measured;
  p.key = PlacementHash(p.candidate) + ":" + incumbent.hash;
  const std::string file = slot == 0 ? "candidate.onnx" : fmt::format("candidate-{}.onnx", slot);
  const std::string candidate_path = (fs::path(options_.work_dir) / file).string();
  p.write_files = CandidateWriter(p.graph.get(), candidate_path, incumbent.path);
  p.after = state;
  return std::optional<Proposal>(std::move(p));
}

StatusOr<bool> Searcher::WinHolds(const Comparison& first, const std::string& key,
                                  const std::string& pattern_id,
                                  const Measurer::FileWriter& write_files, SchemeResult& entry) {
  entry.status = !first.ok ? "failed" : first.replayed ? "replayed" : "measured";
  entry.error = first.error;
  entry.ratio = first.ratio;
  entry.noise = first.noise;
  entry.candidate_ms = first.candidate_ms;
  entry.reference_ms = first.reference_ms;
  if (!first.ok) return false;
  noises_.push_back(first.noise);
  auto wins = [&](const Comparison& c) {
    return c.ratio < 1.0 - std::max(options_.min_gain, 2 * c.noise);
  };
  if (!wins(first)) return false;
  ASSIGN_OR_RETURN(Comparison again,
                   measurer_.Compare(key + "/confirm", pattern_id, entry.scheme, write_files));
  if (!again.ok) return false;
  noises_.push_back(again.noise);
  const Comparison both = CombineComparisons(first, again);
  entry.ratio = both.ratio;
  entry.noise = both.noise;
  return wins(both);
}

StatusOr<bool> Searcher::TakeResult(const PatternInfo& pattern, Proposal& p, const Comparison& c,
                                    Incumbent& incumbent, PatternReport& report) {
  SchemeResult& entry = p.entry;
  ASSIGN_OR_RETURN(entry.adopted, WinHolds(c, p.key, pattern.id, p.write_files, entry));
  if (entry.adopted) {
    ASSIGN_OR_RETURN(incumbent, MakeIncumbent(std::move(p.candidate)));
    QTUNE_LOG_INFO(
        "autotune: pattern {} scheme {}: {:.3f}x of the incumbent, adopted (noise {:.3f})",
        pattern.id, entry.scheme, entry.ratio, entry.noise);
    if (options_.on_new_best) RETURN_IF_ERROR(options_.on_new_best(*p.graph));
  }
  report.schemes.push_back(entry);
  return entry.adopted;
}

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
  for (size_t n = wins.size(); n >= 2; n /= 2) {
    CombinedReport combined;
    Placement candidate = incumbent.placement;
    for (size_t i = 0; i < n; ++i) {
      candidate = ApplyScheme(*wins[i].pattern, wins[i].scheme, candidate, exporter_);
      combined.parts.push_back(wins[i].pattern->id + ":" + wins[i].scheme);
    }
    SchemeResult& entry = combined.result;
    entry.scheme = fmt::format("{}", fmt::join(combined.parts, "+"));
    if (candidate == incumbent.placement) continue;
    ASSIGN_OR_RETURN(std::unique_ptr<ir::Graph> graph, exporter_.Export(candidate));
    ASSIGN_OR_RETURN(std::string plan_key, PlanKey(*graph));
    if (plan_key == incumbent.plan_key) continue;
    if (options_.sqnr && options_.min_sqnr_db > 0) {
      ASSIGN_OR_RETURN(entry.sqnr_db, options_.sqnr(*graph));
      if (!(entry.sqnr_db >= options_.min_sqnr_db)) {
        entry.status = "below_accuracy";
        result.combined.push_back(std::move(combined));
        continue;
      }
    }
    const std::string key = PlacementHash(candidate) + ":" + incumbent.hash;
    const Measurer::FileWriter write_files = CandidateWriter(
        graph.get(), (fs::path(options_.work_dir) / "candidate.onnx").string(), incumbent.path);
    ASSIGN_OR_RETURN(Comparison first,
                     measurer_.Compare(key, "combined", entry.scheme, write_files));
    ASSIGN_OR_RETURN(entry.adopted, WinHolds(first, key, "combined", write_files, entry));
    QTUNE_LOG_INFO("autotune: {} small wins together: {:.3f}x of the incumbent{} (noise {:.3f})", n,
                   entry.ratio, entry.adopted ? ", adopted" : "", entry.noise);
    result.combined.push_back(std::move(combined));
    if (result.combined.back().result.adopted) {
      ASSIGN_OR_RETURN(incumbent, MakeIncumbent(std::move(candidate)));
      if (options_.on_new_best) RETURN_IF_ERROR(options_.on_new_best(*graph));
      break;
    }
  }
  return Status::Ok();
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
  ProposalState state{SchemeGenerator(static_cast<int>(pattern.points.size()), seeds,
                                      options_.exhaustive_max_points, pattern_seed),
                      {},
                      0,
                      0};
  const int max_proposals = 4 * options_.schemes_per_pattern + static_cast<int>(seeds.size()) +
                            static_cast<int>(pattern.points.size());
  const int parallel = std::max(1, options_.parallel);
  for (;;) {
    // Propose up to `parallel` candidates against the current incumbent (with the skipped
    // schemes between them), as the one-at-a-time search would propose them if none won.
    std::vector<Proposal> batch;
    int to_measure = 0;
    bool exhausted = false;
    while (to_measure < parallel && state.measured < options_.schemes_per_pattern &&
           state.proposals < max_proposals) {
      ASSIGN_OR_RETURN(std::optional<Proposal> p, Propose(pattern, incumbent, state, to_measure));
      if (!p.has_value()) {
        exhausted = true;
        break;
      }
      to_measure += p->measure ? 1 : 0;
      batch.push_back(std::move(*p));
    }
    if (batch.empty()) break;
    std::vector<Measurer::Request> requests;
    for (const Proposal& p : batch) {
      if (p.measure) requests.push_back({p.key, pattern.id, p.entry.scheme, p.write_files});
    }
    ASSIGN_OR_RETURN(std::vector<Comparison> results, measurer_.CompareMany(requests));
    // The results in proposal order, as if measured one at a time. An adoption or a new
    // lead changes what comes next: the proposals after it are dropped and proposing
    // resumes from the state right after it.
    bool rewound = false;
    size_t r = 0;
    for (Proposal& p : batch) {
      if (rewound) {  // proposed from the state of before: dropped
        if (p.measure && !results[r++].replayed) ++result.speculative_discarded;
        continue;
      }
      if (!p.measure) {
        result.skipped_same_placement += p.entry.status == "same_placement";
        result.skipped_same_plan += p.entry.status == "same_plan";
        result.skipped_accuracy += p.entry.status == "below_accuracy";
        report.schemes.push_back(p.entry);
        continue;
      }
      ASSIGN_OR_RETURN(bool adopted, TakeResult(pattern, p, results[r++], incumbent, report));
      const SchemeResult& e = p.entry;
      const bool leads =
          !adopted && HasRatio(e) && e.ratio < 1.0 - e.noise && e.ratio < p.after->lead_ratio;
      if (adopted || leads) {
        state = std::move(*p.after);
        state.lead = adopted ? "" : e.scheme;
        state.lead_ratio = adopted ? 1.0 : e.ratio;
        if (adopted) state.tried_plans.clear();
        rewound = true;
      }
    }
    if (exhausted && !rewound) break;
  }
  result.patterns.push_back(std::move(report));
  return Status::Ok();
}

}  // namespace qtune::autotune
