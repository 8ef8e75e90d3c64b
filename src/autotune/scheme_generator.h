// Proposes the schemes of one pattern, in order, never the same one twice (search.h says
// which order and why). Deterministic for a given seed and sequence of current bests.
// When the current best changes (an adoption, a new lead), its single-bit flips come
// next, from the first bit, before further random mutations.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace qtune::autotune {

class SchemeGenerator {
 public:
  // `points`: the pattern's point count; `seeds`: schemes to try first (ones of the wrong
  // length are ignored); patterns with at most `exhaustive_max_points` points get every
  // subset after the seeds.
  SchemeGenerator(int points, std::vector<std::string> seeds, int exhaustive_max_points,
                  uint64_t seed);

  // The next scheme given the best one so far; nullopt when nothing new is left.
  std::optional<std::string> Next(const std::string& current_best);

  // Marks `scheme` as already tried (e.g. the incumbent's own projection).
  void MarkSeen(const std::string& scheme) { seen_.insert(scheme); }

 private:
  enum class Phase { kSeeds, kExhaustive, kFlips, kRandom };
  std::optional<std::string> Propose(const std::string& current_best);

  int points_;
  std::vector<std::string> seeds_;
  int exhaustive_max_points_;
  std::mt19937_64 rng_;
  Phase phase_ = Phase::kSeeds;
  uint64_t index_ = 0;
  std::string flips_of_;  // the best whose single-bit flips are being proposed
  int random_tries_ = 0;
  std::set<std::string> seen_;
};

}  // namespace qtune::autotune
