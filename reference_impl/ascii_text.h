// ASCII case folding and substring search for matching a provider's words (error messages,
// header values), which are ASCII where they matter; other bytes pass through unchanged.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace faultline::ref::ascii {

inline std::string Lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + ('a' - 'A'));
  }
  return out;
}

inline bool Contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

}  // namespace faultline::ref::ascii
