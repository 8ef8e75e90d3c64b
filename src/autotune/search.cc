#include "autotune/search.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
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
#include "quant/plan_json.h"

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

std::string Searcher::PlanText(const Placement& placement) const {
  // The quantization plan (sites, configs, calibrated ranges) is what the exported model
  // is made of: equal plans export equal models. No compile, no export.
  return quant::PlanToJsonText(exporter_.PlanFor(placement));
}

std::string Searcher::PlanKey(const Placement& placement) const {
  return PlanKeyOfText(PlanText(placement));
}

std::string Searcher::PlanKeyOfText(const std::string& plan_text) {
  return Sha256Hex(plan_text).substr(0, 16);
}

Measurer::Request Searcher::MakeRequest(const measure::MeasurementKey& key,
                                        const std::string& pattern, const std::string& scheme,
                                        const Placement& candidate, int slot,
                                        const Incumbent& incumbent) const {
  const std::string path =
      (fs::path(options_.work_dir) / "candidates" / std::to_string(slot) / "candidate.onnx")
          .string();
  Measurer::Request request{key, pattern, scheme};
  request.write_files = [this, candidate, path,
                         reference =
                             incumbent.path]() -> StatusOr<std::pair<std::string, std::string>> {
    ASSIGN_OR_RETURN(auto graph, exporter_.Export(candidate));
    ASSIGN_OR_RETURN(std::string bytes, ir::SerializeModel(*graph));
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    RETURN_IF_ERROR(WriteFileAtomic(path, bytes));
    return std::make_pair(path, reference);
  };
  if (!base_path_.empty()) {  // a back end that may build candidates from plans
    request.candidate_plan = measure::PlannedModel{base_path_, PlanText(candidate)};
    request.reference_plan = measure::PlannedModel{base_path_, incumbent.plan_text};
  }
  return request;
}

StatusOr<Searcher::Incumbent> Searcher::MakeIncumbent(Placement placement, bool adopted) {
  Incumbent inc;
  inc.placement = std::move(placement);
  inc.hash = PlacementHash(inc.placement);
  inc.path = (fs::path(options_.work_dir) / "models" / (inc.hash + ".onnx")).string();
  inc.plan_text = PlanText(inc.placement);
  inc.plan_key = PlanKeyOfText(inc.plan_text);
  if (!fs::exists(inc.path) || (adopted && options_.on_new_best)) {
    ASSIGN_OR_RETURN(auto graph, exporter_.Export(inc.placement));
    if (!fs::exists(inc.path)) {
      ASSIGN_OR_RETURN(std::string bytes, ir::SerializeModel(*graph));
      RETURN_IF_ERROR(WriteFileAtomic(inc.path, bytes));
    }
    if (adopted && options_.on_new_best) RETURN_IF_ERROR(options_.on_new_best(*graph));
  }
  return inc;
}

// One pattern's side of the search: its generator and what it learned so far.
struct Searcher::PatternState {
  const PatternInfo* pattern = nullptr;
  PatternReport report;
  std::optional<SchemeGenerator> generator;
  std::set<std::string> tried_plans;  // plan keys measured against the current incumbent
  int measured = 0;                   // candidates handed to the measurer
  int proposals = 0, max_proposals = 0;
  bool done = false;
  // The lead: a scheme measured faster than the incumbent by more than its noise, but too
  // little to adopt. Flips and mutations start from it instead of the incumbent's scheme.
  std::string lead;
  double lead_ratio = 1.0;
};

// A scheme skipped before measuring (entry.status set), or a candidate to measure.
struct Searcher::Proposal {
  size_t state = 0;  // index into the pattern states
  SchemeResult entry;
  bool measure = false;
  Placement candidate;
  measure::MeasurementKey key;  // the candidate against the incumbent
  Comparison first;
};

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
    ASSIGN_OR_RETURN(auto graph, exporter_.Export(p.candidate));
    ASSIGN_OR_RETURN(p.entry.sqnr_db, options_.sqnr(*graph));
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

std::optional<Comparison> Searcher::RecordTwice(SchemeResult& e, const Comparison& first,
                                                const Comparison& again) {
  e.status = !first.ok ? "failed" : first.replayed ? "replayed" : "measured";
  e.error = first.ok ? again.error : first.error;
  e.ratio = first.ratio;
  e.noise = first.noise;
  e.candidate_ms = first.candidate_ms;
  e.reference_ms = first.reference_ms;
  if (!first.ok || !again.ok) return std::nullopt;
  noises_.push_back(first.noise);
  noises_.push_back(again.noise);
  const Comparison mean = CombineComparisons(first, again);
  e.ratio = mean.ratio;
  e.noise = mean.noise;
  e.candidate_ms = mean.candidate_ms;
  e.reference_ms = mean.reference_ms;
  return mean;
}

bool Searcher::Wins(const Comparison& c) const {
  return c.ok && c.ratio < 1.0 - std::max(options_.min_gain, 2 * c.noise);
}

Searcher::Proposal* Searcher::BestWin(std::vector<Proposal>& batch, size_t state) const {
  Proposal* best = nullptr;
  for (Proposal& p : batch) {
    if (p.state != state || !p.measure || !Wins(p.first)) continue;
    if (best == nullptr || p.first.ratio < best->first.ratio) best = &p;
  }
  return best;
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

StatusOr<SearchResult> Searcher::Run(Placement start) {
  SearchResult result;
  std::error_code ec;
  fs::create_directories(fs::path(options_.work_dir) / "models", ec);
  // The float model every plan applies to, written only for back ends that may build
  // candidates from plans (the others get files).
  base_path_.clear();
  if (measurer_.benchmark().may_build_plans()) {
    base_path_ = (fs::path(options_.work_dir) / "models" / "float.onnx").string();
    ASSIGN_OR_RETURN(std::string bytes, ir::SerializeModel(exporter_.float_graph()));
    RETURN_IF_ERROR(WriteFileAtomic(base_path_, bytes));
  }
  ASSIGN_OR_RETURN(Incumbent incumbent, MakeIncumbent(std::move(start), false));
  first_batch_ = options_.first_batch;
  std::vector<PatternState> states = InitStates(incumbent);
  int64_t total = 0;
  for (const PatternState& s : states) total += s.done ? 0 : options_.schemes_per_pattern;
  ProgressBar progress("autotune: measuring", total);
  // The back end's live status (Redis: workers, jobs in flight, throughput) in the line.
  measurer_.benchmark().SetStatusListener(
      [&progress](const std::string& note) { progress.SetNote(note); });
  Status searched = Status::Ok();
  while (searched.ok()) {
    StatusOr<bool> more = Generation(states, incumbent, result, progress);
    if (!more.ok()) searched = more.status();
    if (more.ok() && restart_.has_value()) {  // the first batch chose another start
      QTUNE_LOG_INFO("autotune: the baseline chose another start; searching again from it");
      StatusOr<Incumbent> restarted = MakeIncumbent(std::move(*restart_), false);
      restart_.reset();
      if (!restarted.ok()) {
        searched = restarted.status();
        break;
      }
      incumbent = std::move(*restarted);
      states = InitStates(incumbent);
      noises_.clear();
      continue;
    }
    if (!more.ok() || !*more) break;
  }
  if (searched.ok()) searched = CombineSmallWins(incumbent, result);
  measurer_.benchmark().SetStatusListener(nullptr);
  fs::remove_all(fs::path(options_.work_dir) / "candidates", ec);
  RETURN_IF_ERROR(searched);
  progress.Finish();
  // result.patterns was filled, in pattern order, by the last generation.
  for (size_t i = 0; i < result.patterns.size() && i < states.size(); ++i) {
    result.patterns[i].best_scheme = ProjectScheme(*states[i].pattern, 0, incumbent.placement);
  }
  result.best = incumbent.placement;
  if (!noises_.empty()) result.noise_median = measure::Median(noises_);
  return result;
}

StatusOr<bool> Searcher::Generation(std::vector<PatternState>& states, Incumbent& incumbent,
                                    SearchResult& result, ProgressBar& progress) {
  // 1. Proposals of every pattern with budget left, all against the incumbent, in pattern
  // order: at most half the budget per pattern and generation (rounded up).
  const int per_generation = std::max(1, (options_.schemes_per_pattern + 1) / 2);
  const auto proposing = std::chrono::steady_clock::now();
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
  std::vector<Measurer::Request> requests;
  for (Proposal& p : batch) {
    if (!p.measure) continue;
    requests.push_back(MakeRequest(p.key, states[p.state].pattern->id, p.entry.scheme, p.candidate,
                                   static_cast<int>(requests.size()), incumbent));
  }
  result.tuner_propose_s +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - proposing).count();
  result.candidates += static_cast<int>(requests.size());
  ++result.generations;
  // 2. All measured at once (the back end keeps K in flight), the first batch first. Each
  // pattern's confirmation (step 4) joins the stream as soon as its own candidates are
  // measured, and the combination as soon as all are, so measurers do not wait for the
  // slowest pattern; which follow-ups are made does not depend on when they are made.
  const size_t own = requests.size();
  const size_t first_count = first_batch_.size();
  std::deque<Measurer::Request> stream(first_batch_.begin(), first_batch_.end());
  stream.insert(stream.end(), requests.begin(), requests.end());
  std::vector<Proposal*> proposal_at;  // by stream index - first_count
  std::map<size_t, int> left_of;       // candidates not measured yet, by state index
  for (Proposal& p : batch) {
    if (!p.measure) continue;
    proposal_at.push_back(&p);
    ++left_of[p.state];
  }
  size_t left = own, first_left = first_count;
  std::vector<Comparison> extra(first_count);  // the first batch's comparisons
  std::optional<StatusOr<Placement>> start;    // first_batch_done's answer
  // Each pattern's best first-measurement win (BestWin), once its candidates are measured,
  // and the stream index of its confirmation; by state index.
  std::map<size_t, Proposal*> best_win;
  std::map<size_t, size_t> confirm_at;
  std::set<size_t> followed;  // states whose follow-up was decided
  CombinedReport together;
  Placement combined = incumbent.placement;
  size_t combined_at = 0;  // stream index of the combination's first measurement, 0: none
  bool combination_decided = false;
  std::map<size_t, Comparison> followups;  // by stream index
  // Follow-ups may go out once the first batch kept this generation's incumbent.
  auto follow_up = [&] {
    if (first_left > 0 || (start.has_value() && !(start->ok() && **start == incumbent.placement))) {
      return;
    }
    for (const auto& [state, n] : left_of) {
      if (n > 0 || !followed.insert(state).second) continue;
      Proposal* best = BestWin(batch, state);
      if (best == nullptr) continue;
      best_win[state] = best;
      confirm_at[state] = stream.size();
      stream.push_back(MakeRequest(best->key.Repeated(), states[state].pattern->id,
                                   best->entry.scheme, best->candidate,
                                   static_cast<int>(stream.size()), incumbent));
    }
    if (left > 0 || combination_decided) return;
    combination_decided = true;
    if (best_win.size() < 2) return;
    for (const auto& [state, best] : best_win) {
      combined = ApplyScheme(*states[state].pattern, best->entry.scheme, combined, exporter_);
      together.parts.push_back(states[state].pattern->id + ":" + best->entry.scheme);
    }
    together.result.scheme = fmt::format("{}", fmt::join(together.parts, "+"));
    const measure::MeasurementKey key{.candidate = PlacementHash(combined),
                                      .reference = incumbent.hash};
    combined_at = stream.size();
    for (const measure::MeasurementKey& k : {key, key.Repeated()}) {
      stream.push_back(MakeRequest(k, "combined", together.result.scheme, combined,
                                   static_cast<int>(stream.size()), incumbent));
    }
  };
  RETURN_IF_ERROR(measurer_.CompareAll(stream, [&](size_t i, const Comparison& c) {
    if (i < first_count) {
      extra[i] = c;
      if (--first_left == 0) start = options_.first_batch_done(extra);
    } else if (i < first_count + own) {
      Proposal& p = *proposal_at[i - first_count];
      p.first = c;
      --left_of[p.state];
      --left;
    } else {
      followups[i] = c;
      return;
    }
    follow_up();
  }));
  if (first_count > 0) {
    first_batch_.clear();
    if (!start->ok()) return start->status();
    if (**start != incumbent.placement) {
      result.speculative_discarded += static_cast<int>(own);
      restart_ = std::move(**start);
      return true;
    }
  }
  progress.Advance(static_cast<int64_t>(own));
  // 3. The report entries of the first measurements.
  for (Proposal& p : batch) {
    if (!p.measure) continue;
    SchemeResult& e = p.entry;
    e.status = !p.first.ok ? "failed" : p.first.replayed ? "replayed" : "measured";
    e.error = p.first.error;
    e.ratio = p.first.ratio;
    e.noise = p.first.noise;
    e.candidate_ms = p.first.candidate_ms;
    e.reference_ms = p.first.reference_ms;
    if (p.first.ok) noises_.push_back(p.first.noise);
  }
  // 4. The confirmations and the combination, measured in the stream above.
  std::vector<Comparison> confirmed;
  for (const auto& [state, p] : best_win) confirmed.push_back(followups.at(confirm_at.at(state)));
  if (best_win.size() >= 2) {
    confirmed.push_back(followups.at(combined_at));
    confirmed.push_back(followups.at(combined_at + 1));
  }
  // 5. Adopt: all the wins together when that holds, else the best single win that holds.
  Proposal* adopted = nullptr;
  bool adopted_all = false;
  size_t c = 0;
  for (auto& [state, p] : best_win) {
    const Comparison& again = confirmed[c++];
    if (!again.ok) continue;
    noises_.push_back(again.noise);
    const Comparison both = CombineComparisons(p->first, again);
    p->entry.ratio = both.ratio;
    p->entry.noise = both.noise;
    if (Wins(both) && (adopted == nullptr || both.ratio < adopted->entry.ratio)) adopted = p;
  }
  if (best_win.size() >= 2) {
    const Comparison& first = confirmed[c];
    const Comparison& again = confirmed[c + 1];
    SchemeResult& e = together.result;
    if (std::optional<Comparison> both = RecordTwice(e, first, again)) {
      // Together it must win, and beat the best single win it would replace.
      adopted_all =
          Wins(first) && Wins(*both) && (adopted == nullptr || both->ratio < adopted->entry.ratio);
    }
    e.adopted = adopted_all;
    result.combined.push_back(together);
  }
  // 6. The report entries, the leads, and the new incumbent.
  for (Proposal& p : batch) {
    PatternState& s = states[p.state];
    auto it = best_win.find(p.state);
    p.entry.adopted = it != best_win.end() && it->second == &p && (adopted_all || adopted == &p);
    const SchemeResult& e = p.entry;
    if (!p.measure) {
      result.skipped_same_placement += e.status == "same_placement";
      result.skipped_same_plan += e.status == "same_plan";
      result.skipped_accuracy += e.status == "below_accuracy";
    } else if (!e.adopted && HasRatio(e) && e.ratio < 1.0 - e.noise && e.ratio < s.lead_ratio) {
      s.lead = e.scheme;
      s.lead_ratio = e.ratio;
    }
    s.report.schemes.push_back(e);
  }
  const bool changed = adopted_all || adopted != nullptr;
  if (changed) {
    Placement next = adopted_all ? combined : adopted->candidate;
    for (auto& [state, p] : best_win) {
      if (p->entry.adopted) {
        states[state].lead.clear();
        states[state].lead_ratio = 1.0;
        QTUNE_LOG_INFO(
            "autotune: pattern {} scheme {}: {:.3f}x of the incumbent, adopted (noise {:.3f})",
            states[state].pattern->id, p->entry.scheme, p->entry.ratio, p->entry.noise);
      }
    }
    if (adopted_all) {
      QTUNE_LOG_INFO("autotune: {} wins together: {:.3f}x of the incumbent, adopted",
                     together.parts.size(), together.result.ratio);
    }
    ASSIGN_OR_RETURN(incumbent, MakeIncumbent(std::move(next), true));
    for (PatternState& s : states) s.tried_plans.clear();
  }
  bool more = false;
  for (const PatternState& s : states) more |= !s.done;
  if (!more || batch.empty()) {
    result.patterns.clear();
    for (const PatternState& s : states) result.patterns.push_back(s.report);
    return false;
  }
  return true;
}

}  // namespace qtune::autotune
