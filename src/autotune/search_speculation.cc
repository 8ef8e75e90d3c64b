// Measuring ahead (search.h, "Generations"): while a generation's stream leaves measurers
// idle, they measure the generation its decision most likely leads to. The guess is only
// a prefetch: the next generation proposes and decides exactly as it would without it,
// and a measurement made ahead serves it only when it asks for the same key (the same
// candidate against the same incumbent), so the placement never depends on the guess.
#include <fmt/format.h>

#include <utility>

#include "autotune/search.h"
#include "autotune/search_state.h"

namespace qtune::autotune {
namespace {

// The follow-up result at stream index `at`, when it has arrived.
const Comparison* Known(const std::map<size_t, Comparison>& followups, size_t at) {
  auto it = followups.find(at);
  return it == followups.end() ? nullptr : &it->second;
}

}  // namespace

Placement Searcher::GuessAdoption(const std::vector<PatternState>& states,
                                  std::vector<Proposal>& batch, const StreamState& known,
                                  const Incumbent& incumbent, std::set<size_t>& adopted) const {
  // Each pattern's best win so far: decided (its candidates all measured) or provisional.
  std::map<size_t, Proposal*> wins = known.best_win;
  for (const auto& [state, left] : known.left_of) {
    if (left > 0) {
      if (Proposal* best = BestWin(batch, state)) wins[state] = best;
    }
  }
  // The best single win that holds (its confirmation, when measured, must win too).
  const Proposal* single = nullptr;
  double single_ratio = 1.0;
  for (const auto& [state, p] : wins) {
    Comparison c = p->first;
    auto at = known.confirm_at.find(state);
    if (const Comparison* again =
            at == known.confirm_at.end() ? nullptr : Known(known.followups, at->second)) {
      if (!again->ok) continue;
      c = CombineComparisons(p->first, *again);
      if (!Wins(c)) continue;
    }
    if (single == nullptr || c.ratio < single_ratio) {
      single = p;
      single_ratio = c.ratio;
    }
  }
  // All the wins together, unless the combination's measurements already say no.
  bool all = wins.size() >= 2;
  if (all && known.combined_at > 0) {
    const Comparison* first = Known(known.followups, known.combined_at);
    const Comparison* again = Known(known.followups, known.combined_at + 1);
    if (first != nullptr) all = Wins(*first);
    if (all && first != nullptr && again != nullptr) {
      all = again->ok;
      if (all) {
        const Comparison both = CombineComparisons(*first, *again);
        all = Wins(both) && (single == nullptr || both.ratio < single_ratio);
      }
    }
  }
  Placement out = incumbent.placement;
  if (all) {
    for (const auto& [state, p] : wins) {
      out = ApplyScheme(*states[state].pattern, p->entry.scheme, out, exporter_);
      adopted.insert(state);
    }
  } else if (single != nullptr) {
    out = single->candidate;
    adopted.insert(single->state);
  }
  return out;
}

StatusOr<std::vector<Measurer::Request>> Searcher::Speculate(
    const std::vector<PatternState>& states, std::vector<Proposal>& batch, const StreamState& known,
    const Incumbent& incumbent, Speculation& speculation, size_t n, size_t slot) {
  std::set<size_t> adopted;
  Placement guess = GuessAdoption(states, batch, known, incumbent, adopted);
  // The pattern states the decision leaves (Generation, step 6), given the guess: an
  // adopting pattern drops its lead; another may take a measured scheme as its lead.
  std::vector<PatternState> next = states;
  for (const Proposal& p : batch) {
    if (!p.measure || !p.first.ok || adopted.count(p.state) > 0) continue;
    Comparison c = p.first;
    auto win = known.best_win.find(p.state);
    if (win != known.best_win.end() && win->second == &p) {
      const Comparison* again = Known(known.followups, known.confirm_at.at(p.state));
      if (again != nullptr && again->ok) c = CombineComparisons(p.first, *again);
    }
    next[p.state].OfferLead(p.entry.scheme, c.ratio, c.noise);
  }
  for (size_t state : adopted) next[state].DropLead();
  if (guess != incumbent.placement) {
    for (PatternState& s : next) s.tried_plans.clear();
  }
  std::string signature = PlacementHash(guess);
  for (const PatternState& s : next) signature += "|" + s.lead;
  if (signature != speculation.guess) {  // a new guess: propose its generation
    speculation.guess = signature;
    speculation.sent = 0;
    speculation.proposals.clear();
    ASSIGN_OR_RETURN(speculation.incumbent, MakeIncumbent(std::move(guess), false));
    ASSIGN_OR_RETURN(std::vector<Proposal> proposals, ProposeBatch(next, speculation.incumbent));
    for (Proposal& p : proposals) {
      if (p.measure) speculation.proposals.push_back(std::move(p));
    }
  }
  std::vector<Measurer::Request> requests;
  for (; requests.size() < n && speculation.sent < speculation.proposals.size();
       ++speculation.sent) {
    const Proposal& p = speculation.proposals[speculation.sent];
    Measurer::Request r =
        MakeRequest(p.key, next[p.state].pattern->id, p.entry.scheme, p.candidate,
                    static_cast<int>(slot + requests.size()), speculation.incumbent);
    r.speculative = true;
    requests.push_back(std::move(r));
  }
  return requests;
}

}  // namespace qtune::autotune
