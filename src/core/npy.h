// Reading and writing numpy's .npy format (docs/formats/npy-npz.md).
//
// Read: format versions 1.0, 2.0 and 3.0; little-endian (or byte-order-free) float16/32/64,
// int8/16/32/64, uint8/16/32/64 and bool; C order; any rank including scalars. Everything
// else (Fortran order, big-endian, complex, object, strings, structured dtypes) is
// rejected with a Status that names the file and says what to do.
// Write: version 1.0 (2.0 when the header needs it), the same dtypes, 64-byte aligned data.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/status.h"
#include "core/tensor.h"

namespace qtune {

// Upper bound on the header dictionary we accept (numpy itself refuses more than 10000
// bytes unless told otherwise).
inline constexpr int64_t kMaxNpyHeaderBytes = int64_t{1} << 20;

// What the preamble and header of a .npy file declare.
struct NpyHeader {
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> sizes;
  int64_t data_offset = 0;  // bytes from the start of the file to the array data
  int64_t data_bytes = 0;   // NumElements(sizes) * DataTypeSize(dtype), <= kMaxTensorBytes
};

// Parses the preamble and header at the start of `prefix` (which may hold more bytes, or
// only the header). Checks magic, version, dict syntax, dtype, order and shape, and that
// data_bytes <= kMaxTensorBytes; does not check that the data is present.
// `source_name` (a path, or "archive.npz:member.npy") prefixes every error message.
StatusOr<NpyHeader> ParseNpyHeader(std::string_view prefix, const std::string& source_name);

// Decodes a whole .npy file held in memory into a new owned tensor. Fails with DataLoss if
// the data is shorter than the header declares or followed by extra bytes.
StatusOr<Tensor> ParseNpy(std::string_view bytes, const std::string& source_name);

// Reads a .npy file straight into a new tensor (no intermediate copy of the data).
StatusOr<Tensor> ReadNpy(const std::string& path);

// The .npy serialization of `tensor`. Fails with Unimplemented for dtypes numpy cannot
// represent (bfloat16, the float8 types, complex) and InvalidArgument for an invalid tensor.
StatusOr<std::string> SerializeNpy(const Tensor& tensor);
// Just the preamble and header for `tensor` (the data follows it verbatim).
StatusOr<std::string> SerializeNpyHeader(const Tensor& tensor);

// Writes SerializeNpy(tensor) to `path` atomically (see WriteFileAtomic).
Status WriteNpy(const std::string& path, const Tensor& tensor);

}  // namespace qtune
