// Fuzz target for the .npy and .npz readers (core/npy.h, core/npz.h). The bytes are parsed
// as a .npy held in memory, read back from a file as .npy (ReadNpy's own path) and as a
// .npz archive. A .npy that parses must serialize and parse again to the same tensor.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "core/file_io.h"
#include "core/npy.h"
#include "core/npz.h"
#include "fuzz/fuzz_target.h"

namespace qtune::fuzz {

const char* const kTargetName = "npy";

namespace {

int64_t g_npy_parsed = 0, g_npy_read = 0, g_npz_read = 0, g_inputs = 0;

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "npy fuzz target: %s\n", what.c_str());
  std::abort();
}

// One scratch file per process (fuzzers may run side by side).
const std::string& ScratchPath() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir != nullptr ? dir : "/tmp") + "/qtune_fuzz_npy_" +
           std::to_string(getpid());
  }();
  return path;
}

void WriteScratch(std::string_view bytes) {
  std::FILE* f = std::fopen(ScratchPath().c_str(), "wb");
  if (f == nullptr) Fail("cannot write " + ScratchPath());
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
    Fail("cannot write " + ScratchPath());
  }
  std::fclose(f);
}

void CheckRoundTrip(const Tensor& tensor) {
  auto serialized = SerializeNpy(tensor);
  if (!serialized.ok()) Fail("SerializeNpy of a parsed tensor: " + serialized.status().ToString());
  auto again = ParseNpy(*serialized, "roundtrip.npy");
  if (!again.ok()) Fail("reparse: " + again.status().ToString());
  if (again->dtype() != tensor.dtype() || again->sizes() != tensor.sizes() ||
      (tensor.byte_size() > 0 &&
       std::memcmp(again->bytes().data(), tensor.bytes().data(), tensor.byte_size()) != 0)) {
    Fail("round trip changed the tensor");
  }
}

}  // namespace

int FuzzOne(const uint8_t* data, size_t size) {
  ++g_inputs;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)ParseNpyHeader(bytes, "fuzz.npy");
  auto parsed = ParseNpy(bytes, "fuzz.npy");
  if (parsed.ok()) {
    ++g_npy_parsed;
    CheckRoundTrip(*parsed);
  }
  WriteScratch(bytes);
  auto read = ReadNpy(ScratchPath());
  if (read.ok() != parsed.ok()) {
    Fail("ParseNpy and ReadNpy disagree: " +
         (read.ok() ? parsed.status().ToString() : read.status().ToString()));
  }
  if (read.ok()) ++g_npy_read;
  auto archive = ReadNpz(ScratchPath());
  if (archive.ok()) ++g_npz_read;
  return 0;
}

void PrintTargetStats() {
  std::remove(ScratchPath().c_str());
  std::fprintf(stderr, "npy target: %lld inputs, %lld parsed as .npy, %lld read as .npz\n",
               static_cast<long long>(g_inputs), static_cast<long long>(g_npy_parsed),
               static_cast<long long>(g_npz_read));
}

}  // namespace qtune::fuzz
