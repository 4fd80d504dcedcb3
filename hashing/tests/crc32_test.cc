// CRC-32 gives the published check values (the AWS event stream's checksums must match what
// every AWS SDK computes) and continues across parts, on both sides of the 8-byte slicing.
#include "hashing/crc32.h"

#include <gtest/gtest.h>

#include <string>

namespace faultline::hashing {
namespace {

// The bit-by-bit definition, to check the sliced tables against.
std::uint32_t BitwiseCrc32(std::string_view bytes) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (char c : bytes) {
    crc ^= static_cast<unsigned char>(c);
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) != 0 ? 0xEDB88320u : 0u);
  }
  return ~crc;
}

TEST(Crc32Test, GivesThePublishedCheckValues) {
  EXPECT_EQ(Crc32(""), 0u);
  EXPECT_EQ(Crc32("123456789"), 0xCBF43926u);  // the CRC catalogue's check value for CRC-32
  EXPECT_EQ(Crc32("The quick brown fox jumps over the lazy dog"), 0x414FA339u);
  static_assert(Crc32("123456789") == 0xCBF43926u, "usable at compile time");
}

TEST(Crc32Test, AgreesWithTheBitwiseDefinitionAtEveryLength) {
  std::string bytes;
  for (int i = 0; i < 70; ++i) {
    EXPECT_EQ(Crc32(bytes), BitwiseCrc32(bytes)) << "length " << bytes.size();
    bytes.push_back(static_cast<char>(i * 37 + 200));
  }
}

TEST(Crc32Test, ContinuesAcrossParts) {
  const std::string text = "an event stream message, sealed in two parts";
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    const std::string_view view = text;
    EXPECT_EQ(Crc32(view.substr(cut), Crc32(view.substr(0, cut))), Crc32(view)) << cut;
  }
}

}  // namespace
}  // namespace faultline::hashing
