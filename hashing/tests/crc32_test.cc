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

// Lengths from 64 up are folded with carry-less multiplication where the CPU has it, in 16-byte
// blocks with the rest through the tables: every length and alignment must give the same value.
TEST(Crc32Test, FoldingAgreesWithTheBitwiseDefinitionAtEveryLengthAndOffset) {
  std::string bytes;
  std::uint32_t seed = 12345;
  for (int i = 0; i < 700; ++i) {
    seed = seed * 1103515245u + 12345u;
    bytes.push_back(static_cast<char>(seed >> 24));
  }
  const std::string_view view = bytes;
  for (std::size_t length = 0; length <= 600; ++length) {
    for (std::size_t offset : {0, 1, 7, 15}) {
      const std::string_view part = view.substr(offset, length);
      ASSERT_EQ(Crc32(part), BitwiseCrc32(part)) << "length " << length << " offset " << offset;
    }
  }
  EXPECT_EQ(Crc32(std::string(4096, '\xFF')), BitwiseCrc32(std::string(4096, '\xFF')));
  EXPECT_EQ(Crc32(std::string(100, '\0')), BitwiseCrc32(std::string(100, '\0')));
}

TEST(Crc32Test, ContinuesAcrossParts) {
  const std::string text =
      "an event stream message, sealed in two parts, long enough that either part may be folded "
      "(64 bytes and more) or go through the tables";
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    const std::string_view view = text;
    EXPECT_EQ(Crc32(view.substr(cut), Crc32(view.substr(0, cut))), Crc32(view)) << cut;
  }
}

}  // namespace
}  // namespace faultline::hashing
