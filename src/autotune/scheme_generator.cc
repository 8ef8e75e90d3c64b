#include "autotune/scheme_generator.h"

namespace qtune::autotune {
namespace {

constexpr int kRandomAttempts = 200;

std::string SchemeOfBits(uint64_t bits, int points) {
  std::string scheme(static_cast<size_t>(points), '0');
  for (int i = 0; i < points; ++i) {
    if (bits >> i & 1) scheme[static_cast<size_t>(i)] = '1';
  }
  return scheme;
}

}  // namespace

SchemeGenerator::SchemeGenerator(int points, std::vector<std::string> seeds,
                                 int exhaustive_max_points, uint64_t seed)
    : points_(points),
      seeds_(std::move(seeds)),
      exhaustive_max_points_(exhaustive_max_points),
      rng_(seed) {}

std::optional<std::string> SchemeGenerator::Next(const std::string& current_best) {
  // Bounded: every phase ends, and the random phase gives up after kRandomAttempts misses.
  while (auto scheme = Propose(current_best)) {
    if (scheme->size() != static_cast<size_t>(points_)) continue;
    if (seen_.insert(*scheme).second) return scheme;
  }
  return std::nullopt;
}

std::optional<std::string> SchemeGenerator::Propose(const std::string& current_best) {
  switch (phase_) {
    case Phase::kSeeds:
      if (index_ < seeds_.size()) return seeds_[index_++];
      phase_ = points_ <= exhaustive_max_points_ ? Phase::kExhaustive : Phase::kFlips;
      index_ = 0;
      return Propose(current_best);
    case Phase::kExhaustive:
      if (index_ < (uint64_t{1} << points_)) return SchemeOfBits(index_++, points_);
      return std::nullopt;  // every subset proposed
    case Phase::kFlips:
      if (current_best != flips_of_) {  // a new best: its flips, from the first bit
        flips_of_ = current_best;
        index_ = 0;
      }
      if (index_ < static_cast<uint64_t>(points_) &&
          current_best.size() == static_cast<size_t>(points_)) {
        std::string flipped = current_best;
        char& bit = flipped[index_++];
        bit = bit == '1' ? '0' : '1';
        return flipped;
      }
      phase_ = Phase::kRandom;
      return Propose(current_best);
    case Phase::kRandom: {
      if (current_best != flips_of_) {  // a new best since the flips: flip it first
        phase_ = Phase::kFlips;
        return Propose(current_best);
      }
      if (points_ <= 0 || random_tries_++ >= kRandomAttempts) return std::nullopt;
      // (mu+1) local search: 2 or 3 flips of the current best, or a uniform scheme.
      std::string scheme = current_best.size() == static_cast<size_t>(points_)
                               ? current_best
                               : std::string(static_cast<size_t>(points_), '0');
      std::uniform_int_distribution<int> pick(0, points_ - 1);
      const int flips = 2 + static_cast<int>(rng_() % 2);
      for (int f = 0; f < flips; ++f) {
        char& bit = scheme[static_cast<size_t>(pick(rng_))];
        bit = bit == '1' ? '0' : '1';
      }
      return scheme;
    }
  }
  return std::nullopt;
}

}  // namespace qtune::autotune
