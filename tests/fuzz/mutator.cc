#include "fuzz/mutator.h"

#include <algorithm>
#include <array>

namespace qtune::fuzz {
namespace {

// Decodes the varint starting at `pos`; returns its length in bytes (0 if none ends
// within 10 bytes or the input).
size_t DecodeVarint(const std::string& s, size_t pos, uint64_t* value) {
  uint64_t v = 0;
  for (size_t i = 0; i < 10 && pos + i < s.size(); ++i) {
    uint8_t byte = static_cast<uint8_t>(s[pos + i]);
    v |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      *value = v;
      return i + 1;
    }
  }
  return 0;
}

std::string EncodeVarint(uint64_t v) {
  std::string out;
  do {
    uint8_t byte = v & 0x7f;
    v >>= 7;
    if (v != 0) byte |= 0x80;
    out.push_back(static_cast<char>(byte));
  } while (v != 0);
  return out;
}

// Encodes `v` in exactly `length` bytes (padding with continuation bytes), so the
// enclosing message lengths stay valid.
std::string EncodeVarintPadded(uint64_t v, size_t length) {
  std::string out;
  for (size_t i = 0; i < length; ++i) {
    uint8_t byte = v & 0x7f;
    v >>= 7;
    if (i + 1 < length) byte |= 0x80;
    out.push_back(static_cast<char>(byte));
  }
  return out;
}

}  // namespace

void Mutator::FlipBit(std::string& s) {
  if (s.empty()) return;
  s[Below(s.size())] ^= static_cast<char>(1u << Below(8));
}

void Mutator::SetInterestingByte(std::string& s) {
  static constexpr std::array<uint8_t, 10> kValues = {0,    1,    2,    0x7f, 0x80,
                                                      0xff, 0x10, 0x40, 0xfe, 0x20};
  if (s.empty()) return;
  s[Below(s.size())] = static_cast<char>(kValues[Below(kValues.size())]);
}

void Mutator::InsertBytes(std::string& s) {
  size_t count = 1 + Below(8);
  std::string bytes;
  for (size_t i = 0; i < count; ++i) bytes.push_back(static_cast<char>(Below(256)));
  s.insert(Below(s.size() + 1), bytes);
}

void Mutator::DeleteBytes(std::string& s) {
  if (s.empty()) return;
  size_t pos = Below(s.size());
  s.erase(pos, 1 + Below(std::min<size_t>(16, s.size() - pos)));
}

void Mutator::DuplicateBytes(std::string& s) {
  if (s.empty()) return;
  size_t pos = Below(s.size());
  size_t length = 1 + Below(std::min<size_t>(64, s.size() - pos));
  s.insert(Below(s.size() + 1), s.substr(pos, length));
}

void Mutator::Splice(std::string& s, const std::vector<std::string>& corpus) {
  const std::string& donor = corpus[Below(corpus.size())];
  if (donor.empty()) return;
  size_t from = Below(donor.size());
  size_t length = 1 + Below(std::min<size_t>(256, donor.size() - from));
  size_t at = Below(s.size() + 1);
  size_t replaced = Below(std::min<size_t>(length, s.size() - at) + 1);
  s.replace(at, replaced, donor.substr(from, length));
}

void Mutator::RewriteVarint(std::string& s, bool keep_length) {
  // Try a few positions for a varint; on a protobuf most positions decode as one.
  for (int attempt = 0; attempt < 8 && !s.empty(); ++attempt) {
    size_t pos = Below(s.size());
    uint64_t value = 0;
    size_t length = DecodeVarint(s, pos, &value);
    if (length == 0) continue;
    static constexpr std::array<uint64_t, 12> kInteresting = {0,
                                                              1,
                                                              2,
                                                              3,
                                                              7,
                                                              16,
                                                              255,
                                                              65536,
                                                              uint64_t{1} << 31,
                                                              uint64_t{1} << 32,
                                                              ~uint64_t{0} /* -1 as int64 */,
                                                              (uint64_t{1} << 63) - 1};
    uint64_t next;
    switch (Below(4)) {
      case 0:
        next = value + 1;
        break;
      case 1:
        next = value - 1;
        break;
      case 2:
        next = kInteresting[Below(kInteresting.size())];
        break;
      default:
        next = rng_() >> Below(64);
        break;
    }
    // Keep the byte length (enclosing message lengths stay valid) when asked, or half the
    // time; a value too large for `length` bytes is then cut to its low bits.
    std::string encoded = EncodeVarint(next);
    if (keep_length || (Below(2) == 0 && encoded.size() <= length)) {
      encoded = EncodeVarintPadded(next, length);
    }
    s.replace(pos, length, encoded);
    return;
  }
}

std::string Mutator::Mutate(const std::string& base, const std::vector<std::string>& corpus) {
  std::string s = base;
  // Half the inputs get only same-length varint rewrites: on a protobuf they almost always
  // still parse, so they reach shape inference, compilation and the kernels; the other
  // half get 1 to 4 mutations of any kind.
  if (Below(2) == 0) {
    size_t count = 1 + Below(3);
    for (size_t i = 0; i < count; ++i) RewriteVarint(s, /*keep_length=*/true);
    return s;
  }
  size_t count = 1 + Below(4);
  for (size_t i = 0; i < count; ++i) {
    switch (Below(9)) {
      case 0:
        FlipBit(s);
        break;
      case 1:
        SetInterestingByte(s);
        break;
      case 2:
        InsertBytes(s);
        break;
      case 3:
        DeleteBytes(s);
        break;
      case 4:
        DuplicateBytes(s);
        break;
      case 5:
        Splice(s, corpus);
        break;
      default:
        RewriteVarint(s, /*keep_length=*/false);
        break;  // the most productive on protobufs
    }
  }
  if (s.size() > max_size_) s.resize(max_size_);
  return s;
}

}  // namespace qtune::fuzz
