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
// measure a placement twice) and by compiled plan (qtune's engine compiles it first; a
// plan equal to the incumbent's or to one already measured against it runs the same
// kernels, so measuring it would tell nothing). Each measurement compares the candidate
// with the incumbent, interleaved; a win must exceed both `min_gain` and twice the noise
// seen in that measurement, and is confirmed by a second measurement before it is adopted.
//
// Parallel measuring (SearchOptions::parallel = K > 1): the searcher proposes the next K
// candidates of a pattern as if none of them will be adopted or lead (all against the same
// incumbent), has them measured at once (Measurer::CompareMany), then takes the results in
// proposal order exactly as a one-at-a-time search would. When one is adopted or becomes
// the lead, the proposals after it are dropped (counted in speculative_discarded; their
// measurements stay in the state log) and proposing resumes from the state right after
// it. So the result, every report entry and the measured pairs are those of K = 1; only
// the discarded speculative measurements come on top.
//
// Small wins: after the pattern pass, the wins too small to adopt alone (below min_gain or
// inside the noise) may add up. The best measured scheme below ratio 1 of every pattern
// that adopted nothing is applied together, as one candidate, measured and confirmed as
// above; when that does not win, the half with the larger gains is tried, down to two.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "autotune/insertion_points.h"
#include "autotune/measurer.h"
#include "autotune/pattern.h"
#include "autotune/placement_export.h"
#include "autotune/region.h"
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
  std::string work_dir;           // models/ and candidate.onnx go there
  std::map<std::string, std::vector<int64_t>> input_sizes;  // to compile plan keys
  int threads = 1;
  int parallel = 1;  // candidates proposed and measured at once (see the top of this file)
  // Extra seed schemes per pattern signature ("0110"...: the pattern cache, --import-qdq).
  std::map<std::string, std::vector<std::string>> seeds;
  // When set, a candidate whose outputs score below min_sqnr_db is not measured.
  std::function<StatusOr<double>(const ir::Graph&)> sqnr;
  double min_sqnr_db = 0;
  // Called after each adoption with the new incumbent's QDQ model and its ratio to the
  // starting placement.
  std::function<Status(const ir::Graph&)> on_new_best;
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
  int speculative_discarded = 0;  // measured, then dropped after an earlier adoption
  double noise_median = 0;        // over every measurement
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
    std::string hash, path, plan_key;
  };
  struct ProposalState;
  struct Proposal;
  StatusOr<Incumbent> MakeIncumbent(Placement placement);
  StatusOr<std::string> PlanKey(const ir::Graph& graph) const;
  Status SearchPattern(const PatternInfo& pattern, Incumbent& incumbent, SearchResult& result);
  // The next proposal from `state` (advanced past it); nullopt when the generator is done.
  // `slot` numbers the batch's measured candidates (their model files differ).
  StatusOr<std::optional<Proposal>> Propose(const PatternInfo& pattern, const Incumbent& incumbent,
                                            ProposalState& state, int slot);
  // Takes a measured proposal's result as the one-at-a-time search does: confirms a win,
  // adopts it (then returns true). Appends its report entry.
  StatusOr<bool> TakeResult(const PatternInfo& pattern, Proposal& proposal, const Comparison& c,
                            Incumbent& incumbent, PatternReport& report);
  // Whether `first` (a measurement of `key` against the incumbent) is a win that holds: it
  // beats the incumbent by more than min_gain and twice its noise, and so does its mean
  // with a confirming measurement. Fills `entry` with the measured figures.
  StatusOr<bool> WinHolds(const Comparison& first, const std::string& key,
                          const std::string& pattern_id, const Measurer::FileWriter& write_files,
                          SchemeResult& entry);
  // The small-wins step (see the top of this file).
  Status CombineSmallWins(Incumbent& incumbent, SearchResult& result);

  const PlacementExporter& exporter_;
  Measurer& measurer_;
  std::vector<PatternInfo> patterns_;
  SearchOptions options_;
  std::vector<double> noises_;
};

// Scheme text of `placement` on region `region` of `pattern` ("1" = point quantized).
std::string ProjectScheme(const PatternInfo& pattern, size_t region, const Placement& placement);

// `placement` with every region of `pattern` set to `scheme`.
Placement ApplyScheme(const PatternInfo& pattern, const std::string& scheme,
                      const Placement& placement, const PlacementExporter& exporter);

}  // namespace qtune::autotune
