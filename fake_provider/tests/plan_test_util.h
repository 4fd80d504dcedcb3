// Test helpers for the plan compiler, session core and virtual driver tests: a small fake dialect
// writer with predictable bytes, and independent decoders for what a plan puts on the wire (HTTP
// head, chunked transfer coding, SSE, HTTP dates). Written separately from the code under test
// on purpose: a shared codec would hide bugs common to both sides.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fake_provider/plan/plan.h"
#include "fake_provider/wire/dialect.h"
#include "scenarios/scenario.h"

namespace faultline::provider::testing {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Fixed-length ids, one content event per `chunk_size` bytes, a usage event, then "[DONE]".
class FakeWriter : public DialectWriter {
 public:
  scenario::Dialect dialect() const override { return scenario::Dialect::kOpenAiChat; }
  std::string_view endpoint_path() const override { return "/v1/chat/completions"; }
  std::string_view default_model() const override { return "fake-model"; }
  std::string_view request_id_header() const override { return "x-request-id"; }

  ResponseIds MakeIds(std::uint64_t seed, int attempt, WallTime now,
                      std::string_view model) const override {
    const std::uint64_t mix = seed * 1000003ULL + static_cast<std::uint64_t>(attempt) * 7919ULL +
                              static_cast<std::uint64_t>(now.time_since_epoch().count());
    ResponseIds ids;
    ids.response_id = "resp-" + Alnum(mix, 12);
    ids.item_id = "item_" + Alnum(mix ^ 0xabcdef, 10);
    ids.request_id = "req_" + Alnum(mix ^ 0x123456, 16);
    ids.created = std::clamp<std::int64_t>(
        std::chrono::floor<seconds>(now).time_since_epoch().count(), 1'000'000'000, 9'999'999'999);
    ids.model = std::string(model);
    return ids;
  }

  StreamEvents Stream(const scenario::Content& content, const ResponseIds& ids,
                      const Usage& usage) const override {
    StreamEvents out;
    const auto size = static_cast<std::size_t>(std::max(1, content.chunk_size));
    for (std::size_t at = 0; at < content.text.size(); at += size) {
      nlohmann::json event = {{"id", ids.response_id},
                              {"created", ids.created},
                              {"delta", content.text.substr(at, size)}};
      out.events.push_back({"", event.dump()});
    }
    nlohmann::json usage_event = {{"id", ids.response_id},
                                  {"item", ids.item_id},
                                  {"usage",
                                   {{"in", usage.input_tokens},
                                    {"out", usage.output_tokens},
                                    {"total", usage.input_tokens + usage.output_tokens}}}};
    out.events.push_back({"", usage_event.dump()});
    out.terminator = out.events.size();
    out.events.push_back({"", "[DONE]"});
    return out;
  }

  Body Json(const scenario::Content& content, const ResponseIds& ids,
            const Usage& usage) const override {
    nlohmann::json body = {{"id", ids.response_id},
                           {"created", ids.created},
                           {"text", content.text},
                           {"usage", {{"in", usage.input_tokens}, {"out", usage.output_tokens}}}};
    return {"application/json", body.dump()};
  }

  Body Error(const scenario::ErrorSpec& error, int status) const override {
    if (error.kind == scenario::ErrorKind::kBadGateway) return {"text/plain", "bad gateway\n"};
    nlohmann::json body = {{"error",
                            {{"kind", scenario::ToString(error.kind)},
                             {"status", status},
                             {"message", error.message.value_or("default message")}}}};
    return {"application/json", body.dump()};
  }

  SseEvent StreamError(const scenario::ErrorSpec& error, scenario::EventFault::Shape,
                       const ResponseIds& ids) const override {
    nlohmann::json body = {{"error", {{"kind", scenario::ToString(error.kind)}}},
                           {"id", ids.response_id}};
    return {"error", body.dump()};
  }

  SseEvent WrongShape() const override { return {"", R"({"unexpected":true})"}; }
  SseEvent Ping() const override { return {"ping", R"({"type":"ping"})"}; }

  void AppendRateLimitHeaders(const scenario::RateLimitHeaders& limits, WallTime,
                              std::vector<scenario::Header>& out) const override {
    out.push_back({"x-ratelimit-limit-requests", std::to_string(limits.requests_limit)});
    out.push_back({"x-ratelimit-remaining-requests", std::to_string(limits.requests_remaining)});
  }

 private:
  static std::string Alnum(std::uint64_t x, std::size_t length) {
    static constexpr std::string_view kAlphabet = "0123456789abcdefghijklmnopqrstuvwxyz";
    std::string out;
    for (std::size_t i = 0; i < length; ++i) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      out += kAlphabet[(x >> 33) % kAlphabet.size()];
    }
    return out;
  }
};

// --- Wire decoding --------------------------------------------------------------------------

struct DecodedResponse {
  std::string status_line;
  std::vector<std::pair<std::string, std::string>> headers;  // in order, names lower-cased
  std::string raw_body;                                      // every byte after the head
  std::string body;                                          // de-chunked (or raw when not chunked)
  std::vector<std::string> chunks;
  bool final_chunk = false;           // a zero-length chunk ended the body
  bool complete_chunks = true;        // every announced chunk was complete
  std::size_t partial_announced = 0;  // size announced by an incomplete last chunk
  std::size_t partial_received = 0;   // bytes of it that followed

  std::optional<std::string> Header(std::string_view name) const {
    for (const auto& [key, value] : headers) {
      if (key == name) return value;
    }
    return std::nullopt;
  }
  std::vector<std::string> Headers(std::string_view name) const {
    std::vector<std::string> out;
    for (const auto& [key, value] : headers) {
      if (key == name) out.push_back(value);
    }
    return out;
  }
};

// Every byte the plan sends (kSend steps only), in order.
inline std::string SentBytes(const ResponsePlan& plan) {
  std::string out;
  for (const PlanStep& step : plan.steps) {
    if (step.kind == PlanStep::Kind::kSend) out += step.bytes;
  }
  return out;
}

inline std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

inline void DecodeChunks(DecodedResponse& out) {
  std::string_view rest = out.raw_body;
  while (!rest.empty()) {
    const std::size_t line_end = rest.find("\r\n");
    if (line_end == std::string_view::npos) {
      out.complete_chunks = false;
      return;
    }
    const std::size_t size = std::stoul(std::string(rest.substr(0, line_end)), nullptr, 16);
    rest.remove_prefix(line_end + 2);
    if (size == 0) {
      out.final_chunk = rest == "\r\n";
      return;
    }
    if (rest.size() < size + 2) {
      out.complete_chunks = false;
      out.partial_announced = size;
      out.partial_received = std::min(rest.size(), size);
      out.body += rest.substr(0, out.partial_received);
      return;
    }
    out.chunks.emplace_back(rest.substr(0, size));
    out.body += rest.substr(0, size);
    rest.remove_prefix(size + 2);
  }
}

inline DecodedResponse Decode(std::string_view bytes) {
  DecodedResponse out;
  const std::size_t head_end = bytes.find("\r\n\r\n");
  if (head_end == std::string_view::npos) return out;
  std::string_view head = bytes.substr(0, head_end + 2);
  out.raw_body = std::string(bytes.substr(head_end + 4));
  std::size_t line_end = head.find("\r\n");
  out.status_line = std::string(head.substr(0, line_end));
  head.remove_prefix(line_end + 2);
  while (!head.empty()) {
    line_end = head.find("\r\n");
    const std::string_view line = head.substr(0, line_end);
    const std::size_t colon = line.find(':');
    out.headers.emplace_back(Lower(std::string(line.substr(0, colon))),
                             std::string(line.substr(colon + 2)));
    head.remove_prefix(line_end + 2);
  }
  if (out.Header("transfer-encoding") == "chunked") {
    DecodeChunks(out);
  } else {
    out.body = out.raw_body;
  }
  return out;
}

// A WHATWG-style SSE parser: events as (name, data) with data lines joined by "\n".
struct ParsedEvent {
  std::string name;
  std::string data;
  friend bool operator==(const ParsedEvent&, const ParsedEvent&) = default;
};

inline std::vector<ParsedEvent> ParseSse(std::string_view text, int* comments = nullptr) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  std::vector<ParsedEvent> events;
  std::string name, data;
  bool has_data = false;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find_first_of("\r\n", at);
    if (end == std::string_view::npos) break;  // incomplete last line
    const std::string_view line = text.substr(at, end - at);
    at = end + ((text[end] == '\r' && end + 1 < text.size() && text[end + 1] == '\n') ? 2 : 1);
    if (line.empty()) {
      if (has_data) events.push_back({name, data});
      name.clear();
      data.clear();
      has_data = false;
      continue;
    }
    if (line.starts_with(':')) {
      if (comments != nullptr) ++*comments;
      continue;
    }
    const std::size_t colon = line.find(':');
    const std::string_view field = line.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
    if (value.starts_with(' ')) value.remove_prefix(1);
    if (field == "event") name = value;
    if (field == "data") {
      if (has_data) data += "\n";
      data += value;
      has_data = true;
    }
  }
  return events;
}

// --- HTTP dates: an independent parser for the three RFC 9110 forms -------------------------

inline int MonthIndex(std::string_view name) {
  static constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (int i = 0; i < 12; ++i) {
    if (kMonths[i] == name) return i + 1;
  }
  return 0;
}

inline std::optional<std::chrono::sys_seconds> ToInstant(int year, int month, int day, int hour,
                                                         int minute, int second) {
  using namespace std::chrono;
  const year_month_day date{std::chrono::year(year), std::chrono::month(month),
                            std::chrono::day(day)};
  if (!date.ok() || month == 0) return std::nullopt;
  return sys_days(date) + hours(hour) + minutes(minute) + seconds(second);
}

inline std::optional<std::chrono::sys_seconds> ParseHttpDate(const std::string& text) {
  char weekday[16] = {}, month[4] = {};
  int day = 0, year = 0, hour = 0, minute = 0, second = 0;
  // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
  if (text.size() == 29 && std::sscanf(text.c_str(), "%3s, %2d %3s %4d %2d:%2d:%2d GMT", weekday,
                                       &day, month, &year, &hour, &minute, &second) == 7) {
    return ToInstant(year, MonthIndex(month), day, hour, minute, second);
  }
  // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT (two-digit years: 70..99 -> 19xx, else 20xx)
  if (std::sscanf(text.c_str(), "%15[A-Za-z], %2d-%3s-%2d %2d:%2d:%2d GMT", weekday, &day, month,
                  &year, &hour, &minute, &second) == 7 &&
      text.find('-') != std::string::npos) {
    return ToInstant(year + (year >= 70 ? 1900 : 2000), MonthIndex(month), day, hour, minute,
                     second);
  }
  // asctime: Sun Nov  6 08:49:37 1994
  if (text.size() == 24 && std::sscanf(text.c_str(), "%3s %3s %2d %2d:%2d:%2d %4d", weekday, month,
                                       &day, &hour, &minute, &second, &year) == 7) {
    return ToInstant(year, MonthIndex(month), day, hour, minute, second);
  }
  return std::nullopt;
}

// The instant `now` used by most tests: 2024-03-10T12:34:56.789Z.
inline WallTime TestNow() {
  using namespace std::chrono;
  return WallTime{sys_days{2024y / March / 10} + hours(12) + minutes(34) + seconds(56) +
                  milliseconds(789)};
}

}  // namespace faultline::provider::testing
