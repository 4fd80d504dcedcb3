// Helpers shared by the reference client's libFuzzer targets (reference_impl/fuzz/*_fuzz.cc):
// cutting an input into pieces at points derived from the input itself (so a crash reproduces
// from its input file alone), and a check that reports and aborts.
//
// Header-only; used only by the fuzz targets. Not thread-safe (libFuzzer runs one input at a
// time).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "hashing/fnv1a.h"
#include "reference_impl/dialect.h"

namespace faultline::ref::fuzz {

// FNV-1a: a seed that depends on every byte of the input.
inline std::uint64_t Hash(std::string_view input) { return hashing::Fnv1a64(input); }

// xorshift64*: the cut positions' generator.
inline std::uint64_t Next(std::uint64_t& state) {
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return state * 2685821657736338717ULL;
}

// `input` cut into 1 to 17 pieces at positions drawn from its hash (empty pieces included: an
// empty read must change nothing either).
inline std::vector<std::string_view> SplitByInput(std::string_view input) {
  std::uint64_t state = Hash(input) | 1;
  const std::size_t cuts = Next(state) % 17;
  std::vector<std::size_t> at{0, input.size()};
  for (std::size_t i = 0; i < cuts; ++i) at.push_back(Next(state) % (input.size() + 1));
  std::sort(at.begin(), at.end());
  std::vector<std::string_view> pieces;
  for (std::size_t i = 0; i + 1 < at.size(); ++i)
    pieces.push_back(input.substr(at[i], at[i + 1] - at[i]));
  return pieces;
}

// `input` one byte at a time (inputs up to `limit` bytes; longer ones in pieces of 64).
inline std::vector<std::string_view> Bytewise(std::string_view input, std::size_t limit = 4096) {
  const std::size_t step = input.size() <= limit ? 1 : 64;
  std::vector<std::string_view> pieces;
  for (std::size_t i = 0; i < input.size(); i += step) pieces.push_back(input.substr(i, step));
  return pieces;
}

// libFuzzer's input as text.
inline std::string_view AsText(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A property that failed: print what differs and abort, so libFuzzer saves the input.
[[noreturn]] inline void Fail(const char* property, const std::string& whole,
                              const std::string& other) {
  std::fprintf(stderr, "fuzz property violated: %s\n  whole: %s\n  other: %s\n", property,
               whole.c_str(), other.c_str());
  std::abort();
}

// For every dialect, streamed and not: `run(dialect, stream, pieces)` describes the result of
// feeding `pieces`; each segmentation in `others` must describe the same as the whole input.
template <typename Run>
void ExpectSameInEveryDialect(const char* property, std::string_view input,
                              const std::vector<std::vector<std::string_view>>& others, Run run) {
  for (const Dialect dialect : faultline::ref::AllDialects()) {
    for (const bool stream : {true, false}) {
      const std::string whole = run(dialect, stream, std::vector<std::string_view>{input});
      for (const auto& pieces : others) {
        if (std::string other = run(dialect, stream, pieces); other != whole) {
          Fail(property, whole, other);
        }
      }
    }
  }
}

}  // namespace faultline::ref::fuzz
