// ASCII case folding, trimming and substring search for matching a provider's words (error
// messages, header values), which are ASCII where they matter; other bytes pass through unchanged.
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

// `text` without the blanks (space, tab, CR, LF) around it.
inline std::string_view Trim(std::string_view text) {
  constexpr std::string_view kBlank = " \t\r\n";
  const std::size_t first = text.find_first_not_of(kBlank);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kBlank) - first + 1);
}

inline bool Contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

}  // namespace faultline::ref::ascii
