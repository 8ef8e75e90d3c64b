#include "core/nibble_pack.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace qtune {
namespace {

TEST(NibblePackTest, LowNibbleFirstAndAnOddTailLeavesTheHighNibbleZero) {
  const std::vector<uint8_t> unpacked = {0x1, 0x2, 0xF3, 0xE};  // only low nibbles count
  std::vector<uint8_t> packed(2);
  PackNibbles(unpacked, packed);
  EXPECT_EQ(packed, (std::vector<uint8_t>{0x21, 0xE3}));
  std::vector<uint8_t> odd(2);
  PackNibbles(std::vector<uint8_t>{0x7, 0x8, 0x9}, odd);
  EXPECT_EQ(odd, (std::vector<uint8_t>{0x87, 0x09}));
}

TEST(NibblePackTest, Int4SignExtendsUint4AndFloat4DoNot) {
  const std::vector<uint8_t> packed = {0xF8, 0x07};
  std::vector<uint8_t> out(3);
  UnpackNibbles(DataType::kInt4, packed, out);
  EXPECT_EQ(static_cast<int8_t>(out[0]), -8);
  EXPECT_EQ(static_cast<int8_t>(out[1]), -1);
  EXPECT_EQ(static_cast<int8_t>(out[2]), 7);
  UnpackNibbles(DataType::kUint4, packed, out);
  EXPECT_EQ(out, (std::vector<uint8_t>{8, 15, 7}));
  UnpackNibbles(DataType::kFloat4E2M1, packed, out);
  EXPECT_EQ(out, (std::vector<uint8_t>{8, 15, 7}));
}

TEST(NibblePackTest, PackThenUnpackIsTheIdentityForEveryInt4Value) {
  std::vector<uint8_t> values;
  for (int v = -8; v <= 7; ++v) values.push_back(static_cast<uint8_t>(static_cast<int8_t>(v)));
  values.push_back(static_cast<uint8_t>(int8_t{-3}));  // odd count
  std::vector<uint8_t> packed((values.size() + 1) / 2), back(values.size());
  PackNibbles(values, packed);
  UnpackNibbles(DataType::kInt4, packed, back);
  EXPECT_EQ(back, values);
}

}  // namespace
}  // namespace qtune
