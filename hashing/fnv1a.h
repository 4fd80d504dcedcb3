// The project's one stable hash: FNV-1a, 64 bits. The same value on every platform, compiler and
// standard library (std::hash is not), so what it makes can be compared across machines and
// releases: run and scenario fingerprints, seeds drawn from a scenario's name, the fake
// provider's ids. Fast and well spread for short texts; not for security (anyone can make
// collisions), which nothing here needs.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

namespace faultline::hashing {

inline constexpr std::uint64_t kFnv1aOffsetBasis = 0xcbf29ce484222325ULL;
inline constexpr std::uint64_t kFnv1aPrime = 0x100000001b3ULL;

// FNV-1a over `text`, continuing from `hash` (the offset basis for a fresh hash): hashing "ab"
// equals hashing "b" from the hash of "a", so a digest can be built from parts.
constexpr std::uint64_t Fnv1a64(std::string_view text, std::uint64_t hash = kFnv1aOffsetBasis) {
  for (const char c : text) hash = (hash ^ static_cast<unsigned char>(c)) * kFnv1aPrime;
  return hash;
}

}  // namespace faultline::hashing
