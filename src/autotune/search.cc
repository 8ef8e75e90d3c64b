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
#include "autotune/search_state.h"
#include "core/file_io.h"
#include "core/logging.h"
#include "core/progress.h"
#include "core/sha256.h"
#include "ir/onnx_io.h"
#include "quant/plan_json.h"

namespace qtune::autotune {
namespace fs = std::filesystem;

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
  // 1. Proposals of every pattern with budget left, all against the incumbent.
  const auto proposing = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::vector<Proposal> batch, ProposeBatch(states, incumbent));
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
  // Measurers still idle measure the next generation ahead, on a guess (Speculate): a
  // right guess makes those measurements the next generation's, a wrong one costs nothing
  // the search uses.
  const size_t own = requests.size();
  const size_t first_count = first_batch_.size();
  std::deque<Measurer::Request> stream(first_batch_.begin(), first_batch_.end());
  stream.insert(stream.end(), requests.begin(), requests.end());
  std::vector<Proposal*> proposal_at;  // by stream index - first_count
  StreamState known;
  for (Proposal& p : batch) {
    if (!p.measure) continue;
    proposal_at.push_back(&p);
    ++known.left_of[p.state];
  }
  size_t left = own, first_left = first_count, answered = 0;
  std::vector<Comparison> extra(first_count);  // the first batch's comparisons
  std::optional<StatusOr<Placement>> start;    // first_batch_done's answer
  std::set<size_t> followed;                   // states whose follow-up was decided
  CombinedReport together;
  Placement combined = incumbent.placement;
  bool combination_decided = false;
  std::set<size_t> speculative_at;  // stream indices of the next generation's requests
  Speculation speculation;
  // Follow-ups may go out once the first batch kept this generation's incumbent.
  auto started = [&] {
    return first_left == 0 &&
           (!start.has_value() || (start->ok() && **start == incumbent.placement));
  };
  auto follow_up = [&] {
    if (!started()) return;
    for (const auto& [state, n] : known.left_of) {
      if (n > 0 || !followed.insert(state).second) continue;
      Proposal* best = BestWin(batch, state);
      if (best == nullptr) continue;
      known.best_win[state] = best;
      known.confirm_at[state] = stream.size();
      stream.push_back(MakeRequest(best->key.Repeated(), states[state].pattern->id,
                                   best->entry.scheme, best->candidate,
                                   static_cast<int>(stream.size()), incumbent));
    }
    if (left > 0 || combination_decided) return;
    combination_decided = true;
    if (known.best_win.size() < 2) return;
    for (const auto& [state, best] : known.best_win) {
      combined = ApplyScheme(*states[state].pattern, best->entry.scheme, combined, exporter_);
      together.parts.push_back(states[state].pattern->id + ":" + best->entry.scheme);
    }
    together.result.scheme = fmt::format("{}", fmt::join(together.parts, "+"));
    const measure::MeasurementKey key{.candidate = PlacementHash(combined),
                                      .reference = incumbent.hash};
    known.combined_at = stream.size();
    for (const measure::MeasurementKey& k : {key, key.Repeated()}) {
      stream.push_back(MakeRequest(k, "combined", together.result.scheme, combined,
                                   static_cast<int>(stream.size()), incumbent));
    }
  };
  // Fills the measurers left idle (fewer requests outstanding than may be in flight) with
  // the next generation's; never when nothing is outstanding (the stream's end; K = 1),
  // nor once the last of this generation's own requests started more than a quarter of a
  // measurement ago: the stream waits for what it started, so a late guess would delay the
  // next generation by more than it can save.
  using Clock = std::chrono::steady_clock;
  const Clock::time_point stream_start = Clock::now();
  Clock::time_point last_own_start = stream_start;
  const auto parallel = static_cast<size_t>(measurer_.max_in_flight());
  auto speculate = [&] {
    const size_t outstanding = stream.size() - answered;
    if (speculation.failed || !started() || outstanding == 0 || outstanding >= parallel) return;
    const double since = std::chrono::duration<double>(Clock::now() - last_own_start).count();
    if (!(since <= 0.25 * shortest_measurement_s_)) return;
    StatusOr<std::vector<Measurer::Request>> ahead = Speculate(
        states, batch, known, incumbent, speculation, parallel - outstanding, stream.size());
    if (!ahead.ok()) {  // the next generation meets the same error and reports it
      speculation.failed = true;
      return;
    }
    for (Measurer::Request& r : *ahead) {
      speculative_at.insert(stream.size());
      stream.push_back(std::move(r));
    }
  };
  RETURN_IF_ERROR(measurer_.CompareAll(stream, [&](size_t i, const Comparison& c) {
    ++answered;
    const Clock::time_point now = Clock::now();
    if (c.ok && !c.replayed && !c.ahead) {  // measured: how long one measurement takes
      shortest_measurement_s_ = std::min(shortest_measurement_s_,
                                         std::chrono::duration<double>(now - stream_start).count());
    }
    // A request waiting for a measurer takes the one this answer freed (speculative ones
    // never wait: they only fill idle measurers).
    if (stream.size() - answered >= parallel) last_own_start = now;
    const size_t before = stream.size();
    if (i < first_count) {
      extra[i] = c;
      if (--first_left == 0) start = options_.first_batch_done(extra);
      follow_up();
    } else if (i < first_count + own) {
      Proposal& p = *proposal_at[i - first_count];
      p.first = c;
      --known.left_of[p.state];
      --left;
      follow_up();
    } else if (speculative_at.count(i) == 0) {
      known.followups[i] = c;
    }
    if (stream.size() > before) last_own_start = now;  // follow-ups: they start now or wait
    speculate();
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
  std::map<size_t, Proposal*>& best_win = known.best_win;
  std::vector<Comparison> confirmed;
  for (const auto& [state, p] : best_win) {
    confirmed.push_back(known.followups.at(known.confirm_at.at(state)));
  }
  if (best_win.size() >= 2) {
    confirmed.push_back(known.followups.at(known.combined_at));
    confirmed.push_back(known.followups.at(known.combined_at + 1));
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
    } else if (!e.adopted && HasRatio(e)) {
      s.OfferLead(e.scheme, e.ratio, e.noise);
    }
    s.report.schemes.push_back(e);
  }
  const bool changed = adopted_all || adopted != nullptr;
  if (changed) {
    Placement next = adopted_all ? combined : adopted->candidate;
    for (auto& [state, p] : best_win) {
      if (p->entry.adopted) {
        states[state].DropLead();
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
