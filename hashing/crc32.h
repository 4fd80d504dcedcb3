// CRC-32 (IEEE 802.3, the polynomial of zlib, PNG and Ethernet): the checksum of the AWS event
// stream framing (application/vnd.amazon.eventstream), whose messages carry one over their
// prelude and one over the whole message. The fake provider seals the messages it writes with it
// and the reference client checks the messages it reads, each with its own framing code: only
// the checksum, a published function, is shared.
//
// Every byte of a Bedrock stream passes through it on the client's side, so it has to keep up
// with the rest of the decoder. At run time, on x86-64 CPUs with carry-less multiplication
// (PCLMULQDQ, checked once), buffers of 64 bytes or more are folded 64 bytes at a time (Gopal et
// al., "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ Instruction", Intel 2009):
// several times faster than tables, whose speed is bound by one table lookup's latency per eight
// bytes. Everything else, including evaluation at compile time, goes through slicing-by-8 over
// tables built at compile time. Both give the same values (tests compare them at every length).
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define FAULTLINE_CRC32_FOLDING 1
#endif

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

// The table-driven update of a CRC register (the pre-inverted CRC) with `bytes`.
constexpr std::uint32_t UpdateWithTables(std::string_view bytes, std::uint32_t crc) {
  const auto& t = kTables;
  std::size_t at = 0;
  for (; at + 8 <= bytes.size(); at += 8) {
    const std::uint32_t low = crc ^ (Byte(bytes, at) | Byte(bytes, at + 1) << 8 |
                                     Byte(bytes, at + 2) << 16 | Byte(bytes, at + 3) << 24);
    crc = t[7][low & 0xFFu] ^ t[6][(low >> 8) & 0xFFu] ^ t[5][(low >> 16) & 0xFFu] ^
          t[4][low >> 24] ^ t[3][Byte(bytes, at + 4)] ^ t[2][Byte(bytes, at + 5)] ^
          t[1][Byte(bytes, at + 6)] ^ t[0][Byte(bytes, at + 7)];
  }
  // Four bytes in one step too: each byte on its own waits for the one before (a table lookup's
  // latency), and the tails that folding leaves are up to 15 bytes long.
  if (bytes.size() - at >= 4) {
    const std::uint32_t low = crc ^ (Byte(bytes, at) | Byte(bytes, at + 1) << 8 |
                                     Byte(bytes, at + 2) << 16 | Byte(bytes, at + 3) << 24);
    crc =
        t[3][low & 0xFFu] ^ t[2][(low >> 8) & 0xFFu] ^ t[1][(low >> 16) & 0xFFu] ^ t[0][low >> 24];
    at += 4;
  }
  for (; at < bytes.size(); ++at) crc = (crc >> 8) ^ t[0][(crc ^ Byte(bytes, at)) & 0xFFu];
  return crc;
}

#ifdef FAULTLINE_CRC32_FOLDING

// The paper's constants for this polynomial, in its bit-reflected form: x^(512+32) and
// x^(512-32) mod P fold a lane 64 bytes ahead, x^(128+32) and x^(128-32) mod P 16 bytes ahead,
// x^64 mod P folds 64 bits into 32; then P and floor(x^64 / P) for the Barrett reduction.
inline constexpr std::uint64_t kFold64[2] = {0x0154442bd4, 0x01c6e41596};
inline constexpr std::uint64_t kFold16[2] = {0x01751997d0, 0x00ccaa009e};
inline constexpr std::uint64_t kFold8 = 0x0163cd6124;
inline constexpr std::uint64_t kBarrett[2] = {0x01db710641, 0x01f7011641};

// Whether this CPU multiplies without carries (decided once, thread-safely).
inline bool HasCarrylessMultiply() {
  static const bool has = [] {
    __builtin_cpu_init();  // Crc32 may run before the runtime has done it (static initialisers)
    return __builtin_cpu_supports("pclmul") != 0;
  }();
  return has;
}

__attribute__((target("pclmul"))) inline __m128i Constants(const std::uint64_t (&pair)[2]) {
  return _mm_set_epi64x(static_cast<long long>(pair[1]), static_cast<long long>(pair[0]));
}

__attribute__((target("pclmul"))) inline __m128i Load(const char* at) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
}

// The 128 bits of `lane`, moved as many bytes ahead as `k` says, added to `next`.
__attribute__((target("pclmul"))) inline __m128i FoldInto(__m128i lane, __m128i next, __m128i k) {
  const __m128i low = _mm_clmulepi64_si128(lane, k, 0x00);
  const __m128i high = _mm_clmulepi64_si128(lane, k, 0x11);
  return _mm_xor_si128(_mm_xor_si128(low, high), next);
}

// The CRC register after `size` bytes at `data` (size >= 64, a multiple of 16): four lanes of
// 16 bytes folded 64 bytes at a time, then into one lane, which takes the 16-byte blocks left;
// its 128 bits are then reduced to the 32 of the register.
__attribute__((target("pclmul"))) inline std::uint32_t UpdateByFolding(const char* data,
                                                                       std::size_t size,
                                                                       std::uint32_t crc) {
  __m128i lanes[4] = {Load(data), Load(data + 16), Load(data + 32), Load(data + 48)};
  lanes[0] = _mm_xor_si128(lanes[0], _mm_cvtsi32_si128(static_cast<int>(crc)));
  std::size_t at = 64;
  const __m128i fold64 = Constants(kFold64);
  for (; size - at >= 64; at += 64) {
    for (int i = 0; i < 4; ++i) lanes[i] = FoldInto(lanes[i], Load(data + at + 16 * i), fold64);
  }
  const __m128i fold16 = Constants(kFold16);
  __m128i x = lanes[0];
  for (int i = 1; i < 4; ++i) x = FoldInto(x, lanes[i], fold16);
  for (; at < size; at += 16) x = FoldInto(x, Load(data + at), fold16);
  // 128 bits to 64, then to 32 (with a 32-bit shift folded in), then the Barrett reduction.
  const __m128i low32 = _mm_setr_epi32(-1, 0, -1, 0);
  x = _mm_xor_si128(_mm_srli_si128(x, 8), _mm_clmulepi64_si128(x, fold16, 0x10));
  const __m128i fold8 = _mm_cvtsi64_si128(static_cast<long long>(kFold8));
  x = _mm_xor_si128(_mm_srli_si128(x, 4),
                    _mm_clmulepi64_si128(_mm_and_si128(x, low32), fold8, 0x00));
  const __m128i barrett = Constants(kBarrett);
  __m128i quotient = _mm_clmulepi64_si128(_mm_and_si128(x, low32), barrett, 0x10);
  quotient = _mm_clmulepi64_si128(_mm_and_si128(quotient, low32), barrett, 0x00);
  x = _mm_xor_si128(x, quotient);
  return static_cast<std::uint32_t>(_mm_cvtsi128_si32(_mm_srli_si128(x, 4)));
}

#endif  // FAULTLINE_CRC32_FOLDING

}  // namespace crc32_internal

// CRC-32 of `bytes`, continuing from `crc` (0 for a fresh checksum): the CRC of "ab" equals the
// CRC of "b" continued from the CRC of "a".
constexpr std::uint32_t Crc32(std::string_view bytes, std::uint32_t crc = 0) {
  crc = ~crc;
#ifdef FAULTLINE_CRC32_FOLDING
  if (!std::is_constant_evaluated() && bytes.size() >= 64 &&
      crc32_internal::HasCarrylessMultiply()) {
    const std::size_t folded = bytes.size() & ~std::size_t{15};
    crc = crc32_internal::UpdateByFolding(bytes.data(), folded, crc);
    bytes.remove_prefix(folded);
  }
#endif
  return ~crc32_internal::UpdateWithTables(bytes, crc);
}

}  // namespace faultline::hashing
