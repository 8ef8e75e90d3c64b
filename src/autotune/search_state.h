// The search's working state, shared by search.cc (the generations) and
// search_speculation.cc (measuring ahead): internal to the search, not an API.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>

#include "autotune/scheme_generator.h"
#include "autotune/search.h"

namespace qtune::autotune {

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

  // Takes `scheme` as the lead when it beats the incumbent by more than its noise and
  // beats the lead it has.
  void OfferLead(const std::string& scheme, double ratio, double noise) {
    if (ratio < 1.0 - noise && ratio < lead_ratio) {
      lead = scheme;
      lead_ratio = ratio;
    }
  }
  // An adopted pattern starts again from the new incumbent's scheme.
  void DropLead() {
    lead.clear();
    lead_ratio = 1.0;
  }
};

// A scheme skipped before measuring (entry.status set), or a candidate to measure.
struct Searcher::Proposal {
  size_t state = 0;  // index into the pattern states
  SchemeResult entry;
  bool measure = false;
  Placement candidate;
  measure::MeasurementKey key;  // the candidate against the incumbent
  Comparison first;             // !ok until measured
};

// What one generation's stream knows so far, filled as results arrive.
struct Searcher::StreamState {
  std::map<size_t, int> left_of;  // candidates not measured yet, by state index
  // Each pattern's best first-measurement win (BestWin), once its candidates are measured,
  // and the stream index of its confirmation; by state index.
  std::map<size_t, Proposal*> best_win;
  std::map<size_t, size_t> confirm_at;
  std::map<size_t, Comparison> followups;  // results of the follow-ups, by stream index
  size_t combined_at = 0;  // stream index of the combination's first measurement, 0: none
};

// The next generation, proposed ahead on a guess (Searcher::Speculate).
struct Searcher::Speculation {
  std::string guess;  // the guessed incumbent's hash and the leads it assumes; "": none
  Incumbent incumbent;
  std::vector<Proposal> proposals;  // those to measure, in the generation's order
  size_t sent = 0;
  bool failed = false;  // proposing failed: no more speculation this generation
};

}  // namespace qtune::autotune
