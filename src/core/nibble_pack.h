// Two-per-byte packing of the 4-bit types (int4, uint4, float4e2m1) as ONNX files store
// them: element 2k in the low nibble of byte k, element 2k+1 in its high nibble; an odd
// count leaves the last high nibble 0. In memory qtune holds these types unpacked, one
// element per byte (core/dtype.h), so packing happens only where files are read and
// written.
#pragma once

#include <cstdint>
#include <span>

#include "core/dtype.h"

namespace qtune {

// Packs the low nibble of each byte of `unpacked` into `packed`.
// REQUIRES: packed.size() == (unpacked.size() + 1) / 2.
void PackNibbles(std::span<const uint8_t> unpacked, std::span<uint8_t> packed);

// Unpacks unpacked.size() elements of `type` from `packed`: int4 nibbles are sign-extended
// into int8_t in [-8, 7]; uint4 and float4e2m1 nibbles become bytes in [0, 15]. The high
// nibble of a final odd byte is ignored.
// REQUIRES: IsPackedInFiles(type), packed.size() == (unpacked.size() + 1) / 2.
void UnpackNibbles(DataType type, std::span<const uint8_t> packed, std::span<uint8_t> unpacked);

}  // namespace qtune
