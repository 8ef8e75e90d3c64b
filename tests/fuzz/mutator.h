// Byte-level mutations for the standalone fuzz driver (no coverage feedback): bit flips,
// interesting byte values, insertions, deletions, duplications, splices with another
// corpus input, and protobuf-varint-aware rewrites that change a number (a dim, an
// attribute, a data type, a length) while usually keeping the message parseable.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace qtune::fuzz {

class Mutator {
 public:
  // `max_size`: mutated inputs are cut to at most this many bytes.
  Mutator(uint64_t seed, size_t max_size) : rng_(seed), max_size_(max_size) {}

  // Returns `base` changed by 1 to 3 same-length varint rewrites (half the time) or by 1 to
  // 4 mutations of any kind; `corpus` supplies splice donors.
  std::string Mutate(const std::string& base, const std::vector<std::string>& corpus);

  std::mt19937_64& rng() { return rng_; }

 private:
  size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng_() % n); }
  void FlipBit(std::string& s);
  void SetInterestingByte(std::string& s);
  void InsertBytes(std::string& s);
  void DeleteBytes(std::string& s);
  void DuplicateBytes(std::string& s);
  void Splice(std::string& s, const std::vector<std::string>& corpus);
  void RewriteVarint(std::string& s, bool keep_length);

  std::mt19937_64 rng_;
  size_t max_size_;
};

}  // namespace qtune::fuzz
