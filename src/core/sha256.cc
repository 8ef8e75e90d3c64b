#include "core/sha256.h"

#include <openssl/evp.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/check.h"

namespace qtune {

struct Sha256::Context {
  EVP_MD_CTX* md = nullptr;
  ~Context() { EVP_MD_CTX_free(md); }
};

Sha256::Sha256() : context_(std::make_unique<Context>()) {
  context_->md = EVP_MD_CTX_new();
  QTUNE_CHECK(context_->md != nullptr);
  QTUNE_CHECK(EVP_DigestInit_ex(context_->md, EVP_sha256(), nullptr) == 1);
}

Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::Update(std::string_view bytes) {
  QTUNE_CHECK(context_ != nullptr && !finished_);
  if (bytes.empty()) return;
  QTUNE_CHECK(EVP_DigestUpdate(context_->md, bytes.data(), bytes.size()) == 1);
}

std::string Sha256::HexDigest() {
  QTUNE_CHECK(context_ != nullptr && !finished_);
  finished_ = true;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  QTUNE_CHECK(EVP_DigestFinal_ex(context_->md, digest, &length) == 1);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 0x0F]);
  }
  return hex;
}

std::string Sha256Hex(std::string_view bytes) {
  Sha256 hasher;
  hasher.Update(bytes);
  return hasher.HexDigest();
}

StatusOr<std::string> Sha256File(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return InvalidArgumentError("cannot hash '" + path + "': it is a folder, not a file");
  }
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    int err = errno;
    std::string message = "cannot open '" + path + "' to hash it: " + std::strerror(err);
    if (err == ENOENT) return NotFoundError(message);
    return InvalidArgumentError(message);
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> closer(file, &std::fclose);
  Sha256 hasher;
  std::vector<char> buffer(1 << 20);
  while (true) {
    size_t n = std::fread(buffer.data(), 1, buffer.size(), file);
    if (n > 0) hasher.Update(std::string_view(buffer.data(), n));
    if (n < buffer.size()) {
      if (std::ferror(file)) {
        return DataLossError("read error while hashing '" + path + "': " + std::strerror(errno));
      }
      break;
    }
  }
  return hasher.HexDigest();
}

bool IsSha256Hex(std::string_view text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace qtune
