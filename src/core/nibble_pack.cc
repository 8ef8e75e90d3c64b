#include "core/nibble_pack.h"

#include "core/check.h"

namespace qtune {

void PackNibbles(std::span<const uint8_t> unpacked, std::span<uint8_t> packed) {
  QTUNE_CHECK(packed.size() == (unpacked.size() + 1) / 2);
  const size_t n = unpacked.size();
  for (size_t k = 0; k < packed.size(); ++k) {
    const uint8_t low = unpacked[2 * k] & 0x0F;
    const uint8_t high = 2 * k + 1 < n ? static_cast<uint8_t>(unpacked[2 * k + 1] & 0x0F) : 0;
    packed[k] = static_cast<uint8_t>(low | (high << 4));
  }
}

void UnpackNibbles(DataType type, std::span<const uint8_t> packed, std::span<uint8_t> unpacked) {
  QTUNE_CHECK(IsPackedInFiles(type));
  QTUNE_CHECK(packed.size() == (unpacked.size() + 1) / 2);
  const bool sign_extend = type == DataType::kInt4;
  for (size_t i = 0; i < unpacked.size(); ++i) {
    uint8_t nibble = (packed[i / 2] >> (4 * (i % 2))) & 0x0F;
    if (sign_extend && (nibble & 0x08) != 0) nibble |= 0xF0;  // two's complement int8
    unpacked[i] = nibble;
  }
}

}  // namespace qtune
