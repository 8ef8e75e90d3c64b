// SHA-256 digests (OpenSSL EVP), as lowercase hex strings. Used for model fingerprints
// and the `.sha256` sidecar files of checkpoints.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace qtune {

// Incremental hashing: Update() any number of times, then HexDigest() once.
// Not thread-safe; non-copyable (owns an OpenSSL context), movable.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void Update(std::string_view bytes);
  // Returns the 64-character lowercase hex digest of everything passed to Update().
  // REQUIRES: not called before on this object (the context is finalized).
  std::string HexDigest();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
  bool finished_ = false;
};

// Digest of `bytes`, e.g. Sha256Hex("abc") == "ba7816bf...15ad".
std::string Sha256Hex(std::string_view bytes);
// Whether `text` is a digest as Sha256Hex writes it: exactly 64 lowercase hex digits.
bool IsSha256Hex(std::string_view text);
// Digest of a file's contents, read in chunks (constant memory). NotFound if the file
// does not exist; other I/O failures name the path and the OS reason.
StatusOr<std::string> Sha256File(const std::string& path);

}  // namespace qtune
