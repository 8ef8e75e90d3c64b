// The placement search: greedy coordinate descent over leaf patterns, measured.
//
// For each pattern (most nodes covered first) candidate schemes (one bit per insertion
// point, applied to every region of the pattern) are proposed in this order:
//   seeds (the incumbent's projections, the pattern cache's and --import-qdq's schemes, all
//   points, none), then every subset when the pattern has few points, otherwise
//   single-point flips of the current best, then seeded random schemes. The current best
//   is the incumbent's scheme, or the lead: a scheme measured faster than the incumbent
//   by more than its noise but too little to adopt (a step towards a larger win).
// Before a candidate is measured it is deduplicated twice: by placement hash (never
// measure a placement twice) and by plan key: the SHA-256 of the quantization plan the
// placement exports (sites, configs, calibrated ranges), so two placements that export the
// same model are measured once. No compile and no export is needed for either key.
//
// Generations (the search does not depend on how many measurements run at once): in a
// generation every pattern with budget left proposes its next candidates (at most half its
// schemes_per_pattern, rounded up), all against the same incumbent, and all of them are
// measured at once (Measurer::CompareAll; the back end keeps K in flight). Each
// measurement compares the candidate with the incumbent, interleaved; a win must exceed
// both `min_gain` and twice the noise seen in that measurement. In the same stream, as
// soon as a pattern's own candidates are measured, its best win (the lowest ratio; ties to
// the first proposed) is measured again to confirm it, and, as soon as all are and two or
// more patterns won, all those wins applied together are measured twice: the follow-ups
// fill the workers the generation's last candidates leave idle. The combination is adopted
// when both its measurements and their mean win and it beats the best confirmed single
// win; else that best confirmed single win is adopted (its mean with the confirmation must
// win). Every decision follows the proposal order, never the order in which results
// arrive, so the final placement is a function of the seed and the measured values only:
// the same for every K, and under kills, timeouts and retries (the state log replays what
// was measured). A pattern whose scheme measured faster than the incumbent by more than
// its noise but too little to adopt keeps it as its lead: its next flips and mutations
// start from it.
//
// Measuring ahead (search_speculation.cc): measurers the stream leaves idle measure the
// next generation's first candidates against the incumbent this generation most likely
// adopts (the wins so far together, or the best single win once the combination fails).
// Those requests are speculative (Measurer::Request): the next generation proposes and
// decides as it would without them, and uses one only when it asks for the same key. So
// the guess changes the time a search takes, never its result.
//
// Small wins: after the generations, the wins too small to adopt alone (below min_gain or
// inside the noise) may add up. The best measured scheme below ratio 1 of every pattern
// that adopted nothing is applied together, as one candidate; so are the half with the
// larger gains, its half, ... down to two. All these levels are measured twice, all at once
// (one round of the workers, not one per level), and the first level in that order whose
// two measurements and their mean win is adopted.
#pragma once

#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "autotune/insertion_points.h"
#include "autotune/measurer.h"
#include "autotune/pattern.h"
#include "autotune/placement_export.h"
#include "autotune/region.h"
#include "core/progress.h"
#include "core/status.h"

namespace qtune::autotune {

// Every leaf region of one signature, with its quantizable points.
struct PatternInfo {
  std::string signature;
  std::string id;                                    // PatternId(signature)
  std::vector<int> regions;                          // leaf region ids
  std::vector<InsertionPoint> points;                // pattern-relative
  std::vector<std::vector<ResolvedPoint>> resolved;  // [region][point]
  int nodes = 0;                                     // nodes in all its regions
};

// Groups the leaves of `tree` by signature, keeping the points `exporter` can quantize in
// every region of the pattern. Ordered most nodes first (ties by id).
std::vector<PatternInfo> GroupPatterns(const RegionTree& tree, const SignatureOptions& signature,
                                       const PlacementExporter& exporter);

struct SearchOptions {
  int schemes_per_pattern = 8;    // measurements per pattern (replayed ones count)
  int exhaustive_max_points = 3;  // patterns with at most this many points: every subset
  double min_gain = 0.02;         // a win must beat the incumbent by this fraction...
  uint64_t seed = 0;              // ...and twice the noise; random schemes use this seed
  std::string work_dir;           // models/ and candidates/N/candidate.onnx go there
  // Extra seed schemes per pattern signature ("0110"...: the pattern cache, --import-qdq).
  std::map<std::string, std::vector<std::string>> seeds;
  // When set, a candidate whose outputs score below min_sqnr_db is not measured.
  std::function<StatusOr<double>(const ir::Graph&)> sqnr;
  double min_sqnr_db = 0;
  // Called after each adoption with the new incumbent's QDQ model and its ratio to the
  // starting placement.
  std::function<Status(const ir::Graph&)> on_new_best;
  // Measured in one batch with the first generation's candidates (autotune's baseline:
  // alone it would keep K - 1 workers idle for a round). first_batch_done gets their
  // comparisons, in order, and returns the placement the search starts from; when that is
  // not Run()'s `start` (a start guessed before the baseline was known), the first
  // generation's measurements are set aside (SearchResult::speculative_discarded) and the
  // search starts again from it. Its error ends the search.
  std::vector<Measurer::Request> first_batch;
  std::function<StatusOr<Placement>(const std::vector<Comparison>&)> first_batch_done;
};

struct SchemeResult {
  std::string scheme;
  // measured, replayed, failed, same_placement, same_plan, below_accuracy
  std::string status;
  double ratio = 0, noise = 0, candidate_ms = 0, reference_ms = 0, sqnr_db = 0;
  std::string error;
  bool adopted = false;
};

// Whether `r` has a ratio: measured in this run or replayed from the state log.
inline bool HasRatio(const SchemeResult& r) {
  return r.status == "measured" || r.status == "replayed";
}

struct PatternReport {
  std::string id, signature;
  int regions = 0, points = 0, nodes = 0;
  std::string best_scheme;  // projection of the final incumbent on the first region
  std::vector<SchemeResult> schemes;
};

// One candidate of the small-wins step: the patterns' schemes applied together.
struct CombinedReport {
  std::vector<std::string> parts;  // "pattern id:scheme" of each small win it applies
  SchemeResult result;             // scheme: the parts joined by '+'
};

struct SearchResult {
  Placement best;
  std::vector<PatternReport> patterns;
  std::vector<CombinedReport> combined;
  int skipped_same_placement = 0;
  int skipped_same_plan = 0;
  int skipped_accuracy = 0;
  // Measurements of a first generation set aside because the start placement guessed
  // before the baseline was not the one it chose (SearchOptions::first_batch).
  int speculative_discarded = 0;
  double noise_median = 0;  // over every measurement
  int generations = 0;
  int candidates = 0;          // measurement requests of the generations' proposals
  double tuner_propose_s = 0;  // proposing them: schemes, keys, SQNR (not the files)
};

class Searcher {
 public:
  // Borrows everything; all must outlive Run().
  Searcher(const PlacementExporter& exporter, Measurer& measurer, std::vector<PatternInfo> patterns,
           SearchOptions options);
  StatusOr<SearchResult> Run(Placement start);

 private:
  struct Incumbent {
    Placement placement;
    std::string hash, path, plan_text, plan_key;
  };
  // search_state.h.
  struct PatternState;
  struct Proposal;
  struct StreamState;
  struct Speculation;
  // The pattern states of a search from `incumbent` (seeds: its projections...).
  std::vector<PatternState> InitStates(const Incumbent& incumbent) const;
  // The incumbent of `placement` (its model file written once); `adopted`: calls
  // on_new_best with its QDQ model.
  StatusOr<Incumbent> MakeIncumbent(Placement placement, bool adopted);
  // quant::PlanToJsonText of `placement`'s plan, and the first 16 hex digits of its SHA-256.
  std::string PlanText(const Placement& placement) const;
  std::string PlanKey(const Placement& placement) const;
  static std::string PlanKeyOfText(const std::string& plan_text);
  // A request to measure `candidate` against `incumbent`: with its plans onto
  // models/float.onnx when the back end may build them, and as files (the candidate written to
  // candidates/<slot>/candidate.onnx when the back end asks for it).
  Measurer::Request MakeRequest(const measure::MeasurementKey& key, const std::string& pattern,
                                const std::string& scheme, const Placement& candidate, int slot,
                                const Incumbent& incumbent) const;
  // The next proposal of `state` (pattern `index`); nullopt when its generator is done.
  StatusOr<std::optional<Proposal>> Propose(PatternState& state, size_t index,
                                            const Incumbent& incumbent);
  // A generation's proposals from `states` against `incumbent`: every pattern with budget
  // left, in pattern order, at most half its budget (rounded up) measured.
  StatusOr<std::vector<Proposal>> ProposeBatch(std::vector<PatternState>& states,
                                               const Incumbent& incumbent);
  bool Wins(const Comparison& c) const;
  // The measured proposal of pattern `state` in `batch` with the lowest first-measurement
  // ratio among those that win (ties: the first proposed); nullptr when none wins.
  Proposal* BestWin(std::vector<Proposal>& batch, size_t state) const;
  // Records a candidate measured twice in `e`: status and error; ratio, noise and
  // latencies of the first, or of the mean (CombineComparisons) when both are ok, which
  // then notes both noises and returns the mean.
  std::optional<Comparison> RecordTwice(SchemeResult& e, const Comparison& first,
                                        const Comparison& again);
  // One generation (see the top of this file); false when no pattern has anything left.
  StatusOr<bool> Generation(std::vector<PatternState>& states, Incumbent& incumbent,
                            SearchResult& result, ProgressBar& progress);
  // Measuring ahead (search_speculation.cc): the placement the generation of `batch`
  // adopts if the follow-ups not measured yet hold and the candidates not measured yet
  // lose; `adopted` gets the states whose wins it applies.
  Placement GuessAdoption(const std::vector<PatternState>& states, std::vector<Proposal>& batch,
                          const StreamState& known, const Incumbent& incumbent,
                          std::set<size_t>& adopted) const;
  // Up to `n` requests of the generation that follows the guess, the next ones in its
  // order (re-proposed when the guess changed), marked speculative; `slot`: the stream
  // index the first one gets.
  StatusOr<std::vector<Measurer::Request>> Speculate(const std::vector<PatternState>& states,
                                                     std::vector<Proposal>& batch,
                                                     const StreamState& known,
                                                     const Incumbent& incumbent,
                                                     Speculation& speculation, size_t n,
                                                     size_t slot);
  // The small-wins step (see the top of this file).
  Status CombineSmallWins(Incumbent& incumbent, SearchResult& result);

  const PlacementExporter& exporter_;
  Measurer& measurer_;
  std::vector<PatternInfo> patterns_;
  SearchOptions options_;
  std::vector<double> noises_;
  // models/float.onnx, written by Run() when the back end may build plans; else empty.
  std::string base_path_;
  // options_.first_batch until the first generation has measured it.
  std::vector<Measurer::Request> first_batch_;
  // Set by the first generation when first_batch_done chose another start.
  std::optional<Placement> restart_;
  // The SQNR of each plan scored (by plan key): a generation proposed ahead scores its
  // candidates once, for both.
  std::map<std::string, double> sqnr_db_of_plan_;
  // The shortest time from a stream's start to a measured answer: about one measurement.
  double shortest_measurement_s_ = std::numeric_limits<double>::infinity();
};

// Scheme text of `placement` on region `region` of `pattern` ("1" = point quantized).
std::string ProjectScheme(const PatternInfo& pattern, size_t region, const Placement& placement);

// `placement` with every region of `pattern` set to `scheme`.
Placement ApplyScheme(const PatternInfo& pattern, const std::string& scheme,
                      const Placement& placement, const PlacementExporter& exporter);

}  // namespace qtune::autotune
