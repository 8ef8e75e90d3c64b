// Helpers shared by the .npy/.npz tests: hand-built .npy bytes and temporary paths.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <string>

namespace qtune::npy_testing {

// A .npy file with the given header dict (padded with spaces and '\n' to 64 bytes, like
// numpy) and raw data bytes. major 1 uses a 2-byte header length, 2 and 3 a 4-byte one.
inline std::string MakeNpy(const std::string& dict, const std::string& data, int major = 1) {
  const size_t preamble = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((preamble + header.size() + 1) % 64 != 0) header.push_back(' ');
  header.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  const size_t len_bytes = major == 1 ? 2 : 4;
  for (size_t i = 0; i < len_bytes; ++i) {
    out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xFF));
  }
  return out + header + data;
}

// A unique path under the gtest temporary folder.
inline std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/qtune_" + std::to_string(::getpid()) + "_" + name;
}

// The bytes of `values` as stored in memory (little-endian on every platform qtune runs).
template <typename T>
std::string RawBytes(std::initializer_list<T> values) {
  std::string out;
  for (T v : values) out.append(reinterpret_cast<const char*>(&v), sizeof(T));
  return out;
}

}  // namespace qtune::npy_testing
