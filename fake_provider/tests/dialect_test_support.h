// Helpers for the dialect writer tests: fixed inputs and checks on ids and UTF-8 pieces.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "fake_provider/wire/dialect.h"
#include "scenarios/scenario.h"

namespace faultline::provider::dialect_testing {

using nlohmann::json;

// 2025-06-13T19:11:20.250Z: a fixed request arrival.
inline WallTime FixedNow() {
  using namespace std::chrono;
  return WallTime{sys_days{year{2025} / June / 13} + hours{19} + minutes{11} + seconds{20} +
                  milliseconds{250}};
}
inline constexpr std::int64_t kFixedNowSeconds = 1749841880;

// Multi-byte text: 2-byte é/ö and a 4-byte emoji.
inline constexpr std::string_view kUtf8Text = "h\xc3\xa9llo \xf0\x9f\x91\x8b w\xc3\xb6rld";

inline scenario::Content TextContent(std::string text, int chunk_size = 4) {
  scenario::Content content;
  content.text = std::move(text);
  content.chunk_size = chunk_size;
  return content;
}

inline scenario::ErrorSpec Spec(scenario::ErrorKind kind, scenario::ContextWording wording =
                                                              scenario::ContextWording::kDialect) {
  scenario::ErrorSpec spec;
  spec.kind = kind;
  spec.wording = wording;
  return spec;
}

inline bool AllOf(std::string_view text, std::string_view alphabet) {
  return std::ranges::all_of(text,
                             [&](char c) { return alphabet.find(c) != std::string_view::npos; });
}
inline bool IsBase62(std::string_view text) {
  return AllOf(text, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");
}
inline bool IsLowerHex(std::string_view text) { return AllOf(text, "0123456789abcdef"); }

// Whether `id` is `prefix` followed by exactly `body_length` characters accepted by `alphabet`.
inline ::testing::AssertionResult IdShape(std::string_view id, std::string_view prefix,
                                          std::size_t body_length,
                                          bool (*alphabet)(std::string_view)) {
  if (!id.starts_with(prefix)) return ::testing::AssertionFailure() << id << " lacks " << prefix;
  const std::string_view body = id.substr(prefix.size());
  if (body.size() != body_length) {
    return ::testing::AssertionFailure()
           << id << ": " << body.size() << " characters after the prefix, not " << body_length;
  }
  if (!alphabet(body)) return ::testing::AssertionFailure() << id << ": unexpected characters";
  return ::testing::AssertionSuccess();
}

// Whether `piece` is a whole number of UTF-8 characters (never cut inside one).
inline bool IsWholeUtf8(std::string_view piece) {
  std::size_t at = 0;
  while (at < piece.size()) {
    const auto lead = static_cast<unsigned char>(piece[at]);
    std::size_t length = lead < 0x80    ? 1
                         : lead >= 0xF0 ? 4
                         : lead >= 0xE0 ? 3
                         : lead >= 0xC0 ? 2
                                        : 0;
    if (length == 0 || at + length > piece.size()) return false;
    for (std::size_t i = 1; i < length; ++i) {
      if ((static_cast<unsigned char>(piece[at + i]) & 0xC0) != 0x80) return false;
    }
    at += length;
  }
  return true;
}

inline std::size_t CodePoints(std::string_view text) {
  return static_cast<std::size_t>(std::ranges::count_if(
      text, [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// Parses every event's data; fails the test (returns null) on data that is not JSON.
inline std::vector<json> ParseData(const StreamEvents& stream) {
  std::vector<json> parsed;
  for (const SseEvent& event : stream.events) {
    parsed.push_back(json::parse(event.data, nullptr, /*allow_exceptions=*/false));
  }
  return parsed;
}

inline const std::vector<scenario::ErrorKind>& AllErrorKinds() {
  using K = scenario::ErrorKind;
  static const std::vector<K> kinds = {
      K::kInvalidRequest, K::kContextWindow,  K::kAuth,           K::kPermission,
      K::kNotFound,       K::kRequestTimeout, K::kConflict,       K::kTooLarge,
      K::kUnprocessable,  K::kRateLimit,      K::kQuota,          K::kServer,
      K::kBadGateway,     K::kUnavailable,    K::kGatewayTimeout, K::kOverloaded};
  return kinds;
}

}  // namespace faultline::provider::dialect_testing
