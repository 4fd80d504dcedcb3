// Enum <-> name tables: the one lookup every vocabulary of the reference client uses (failure
// classes and codes, backoff strategies, policy modes, give-up reasons). A vocabulary the policy
// file spells out has its table in its header, beside the enum: ToString and Parse read it, and
// so do the policy reader's messages that list what may be written (policy_json.cc).
//
// Header-only, constexpr data; thread-safe.
#pragma once

#include <array>
#include <optional>
#include <string_view>
#include <utility>

namespace faultline::ref {

template <typename Enum, std::size_t N>
using NameTable = std::array<std::pair<Enum, std::string_view>, N>;

// The name of `value`, or `fallback` when the table lacks it.
template <typename Enum, std::size_t N>
std::string_view NameOf(const NameTable<Enum, N>& table, Enum value, std::string_view fallback) {
  for (const auto& [entry, name] : table) {
    if (entry == value) return name;
  }
  return fallback;
}

// The names of `table` in its order, for a message that lists a vocabulary.
template <typename Enum, std::size_t N>
constexpr std::array<std::string_view, N> NamesOf(const NameTable<Enum, N>& table) {
  std::array<std::string_view, N> names{};
  for (std::size_t i = 0; i < N; ++i) names[i] = table[i].second;
  return names;
}

// The value named `text`, if any.
template <typename Enum, std::size_t N>
std::optional<Enum> ValueOf(const NameTable<Enum, N>& table, std::string_view text) {
  for (const auto& [entry, name] : table) {
    if (name == text) return entry;
  }
  return std::nullopt;
}

}  // namespace faultline::ref
