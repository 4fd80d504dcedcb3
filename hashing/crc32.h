// CRC-32 (IEEE 802.3, the polynomial of zlib, PNG and Ethernet): the checksum of the AWS event
// stream framing (application/vnd.amazon.eventstream), whose messages carry one over their
// prelude and one over the whole message. The fake provider seals the messages it writes with it
// and the reference client checks the messages it reads, each with its own framing code: only
// the checksum, a published function, is shared.
//
// Slicing-by-8 over tables built at compile time: every byte of a Bedrock stream passes through
// it on the client's side, so it has to keep up with the rest of the decoder.
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace faultline::hashing {

namespace crc32_internal {

inline constexpr std::uint32_t kPolynomial = 0xEDB88320u;  // reflected 0x04C11DB7

using Tables = std::array<std::array<std::uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables tables{};
  for (std::uint32_t byte = 0; byte < 256; ++byte) {
    std::uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) != 0 ? kPolynomial : 0u);
    tables[0][byte] = crc;
  }
  for (std::size_t slice = 1; slice < 8; ++slice) {
    for (std::size_t byte = 0; byte < 256; ++byte) {
      const std::uint32_t previous = tables[slice - 1][byte];
      tables[slice][byte] = (previous >> 8) ^ tables[0][previous & 0xFFu];
    }
  }
  return tables;
}

inline constexpr Tables kTables = MakeTables();

constexpr std::uint32_t Byte(std::string_view bytes, std::size_t at) {
  return static_cast<unsigned char>(bytes[at]);
}

}  // namespace crc32_internal

// CRC-32 of `bytes`, continuing from `crc` (0 for a fresh checksum): the CRC of "ab" equals the
// CRC of "b" continued from the CRC of "a".
constexpr std::uint32_t Crc32(std::string_view bytes, std::uint32_t crc = 0) {
  using crc32_internal::Byte;
  const auto& t = crc32_internal::kTables;
  crc = ~crc;
  std::size_t at = 0;
  for (; at + 8 <= bytes.size(); at += 8) {
    const std::uint32_t low = crc ^ (Byte(bytes, at) | Byte(bytes, at + 1) << 8 |
                                     Byte(bytes, at + 2) << 16 | Byte(bytes, at + 3) << 24);
    crc = t[7][low & 0xFFu] ^ t[6][(low >> 8) & 0xFFu] ^ t[5][(low >> 16) & 0xFFu] ^
          t[4][low >> 24] ^ t[3][Byte(bytes, at + 4)] ^ t[2][Byte(bytes, at + 5)] ^
          t[1][Byte(bytes, at + 6)] ^ t[0][Byte(bytes, at + 7)];
  }
  for (; at < bytes.size(); ++at) crc = (crc >> 8) ^ t[0][(crc ^ Byte(bytes, at)) & 0xFFu];
  return ~crc;
}

}  // namespace faultline::hashing
