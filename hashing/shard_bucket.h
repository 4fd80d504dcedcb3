// Which of N shards a unit of work belongs to, from a stable hash of what names it (a
// scenario's name, a fleet job's policy and sweep value). A function of the key alone: adding or
// removing other units never moves this one, which assignment by position (i % N) did. The same
// answer on every machine (FNV-1a, hashing/fnv1a.h), so every shard of a CI matrix agrees on the
// split without talking to the others.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

#include "hashing/fnv1a.h"

namespace faultline::hashing {

// MurmurHash3's 64-bit finalizer: every input bit reaches every output bit. FNV-1a alone mixes
// poorly at both ends for keys that differ in their last bytes (as "case-1", "case-2" do): the
// last multiply carries a change upwards only through the prime's two set bit groups, and the
// lowest bit is just the parity of the bytes' lowest bits.
constexpr std::uint64_t Avalanche(std::uint64_t hash) {
  hash ^= hash >> 33;
  hash *= 0xff51afd7ed558ccdULL;
  hash ^= hash >> 33;
  hash *= 0xc4ceb9fe1a85ec53ULL;
  hash ^= hash >> 33;
  return hash;
}

// The 1-based shard of `key` among `count` (count >= 1): the mixed hash's high 32 bits scaled to
// [0, count) (multiply-shift, no modulo bias worth the name).
constexpr int ShardBucket(std::string_view key, int count) {
  const std::uint64_t high = Avalanche(Fnv1a64(key)) >> 32;
  return static_cast<int>((high * static_cast<std::uint64_t>(count)) >> 32) + 1;
}

}  // namespace faultline::hashing
