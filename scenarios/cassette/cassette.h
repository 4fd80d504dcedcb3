// A cassette: one recorded HTTP exchange with its timing, which the fake provider plays back as a
// response (a scenario entry `cassette: FILE`, docs/cassettes.md). `faultline proxy --record`
// writes one per exchange; `faultline cassette import` makes them from a HAR file or aimock
// fixtures (cassette_import/har_import.h, aimock_import.h).
//
// The file is JSON Lines (schema: scenarios/schema/cassette.schema.json), one object per line,
// each with its "type":
//   {"type": "cassette", "version": 1, "dialect": "openai-chat",
//    "source": "proxy" | "har" | "aimock"}
//   {"type": "request", "method", "target", "headers": [[name, value], ...], "body" |
//   "body_base64"}
//   {"type": "response", "at_us", "status", "reason", "headers": [[name, value], ...]}
//   {"type": "write", "at_us", "bytes" | "bytes_base64"}      (any number, in time order)
//   {"type": "end", "at_us", "kind": "completed" | "closed" | "reset"}
// Times are microseconds from the request's arrival. A write's bytes are the response body's
// (its transfer coding removed: a chunked body's chunk data, in the order it arrived), so a
// cassette does not depend on how the recorded server framed its body; the head's headers are
// the recorded ones, framing headers included, and replay frames the body as they say. Request
// headers and body are written with their secrets redacted (scenarios/redact.h).
//
// Values and pure functions; thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/load_error.h"

namespace faultline::scenario {

struct CassetteHeader {
  std::string name;
  std::string value;
  friend bool operator==(const CassetteHeader&, const CassetteHeader&) = default;
};

struct CassetteWrite {
  std::chrono::microseconds at{0};  // from the request's arrival
  std::string bytes;                // body bytes, without transfer coding
  friend bool operator==(const CassetteWrite&, const CassetteWrite&) = default;
};

struct Cassette {
  enum class End { kCompleted, kClosed, kReset };
  std::string dialect;  // the dialect name the exchange spoke ("" when none was known)
  std::string source;   // what made it: "proxy", "har", "aimock"
  // The request, as recorded (secrets redacted).
  std::string method;
  std::string target;
  std::vector<CassetteHeader> request_headers;
  std::string request_body;
  // The response.
  std::chrono::microseconds head_at{0};  // when the head was complete
  int status = 200;
  std::string reason;
  std::vector<CassetteHeader> headers;
  std::vector<CassetteWrite> writes;
  End end = End::kCompleted;  // completed: the body was whole (framing said so)
  std::chrono::microseconds end_at{0};

  std::size_t body_size() const;
  friend bool operator==(const Cassette&, const Cassette&) = default;
};

// "completed", "closed", "reset"
std::string_view ToString(Cassette::End end);

// Limits of what a cassette file may hold (it is untrusted input: a file from anyone).
inline constexpr std::size_t kMaxCassetteBytes = 64 * 1024 * 1024;
inline constexpr std::size_t kMaxCassetteWrites = 1'000'000;

// Reads a cassette. Errors name the file and the line ("file:3: ..."), with the field at fault.
std::expected<Cassette, LoadError> ParseCassette(std::string_view text, std::string_view file);

// The cassette's JSON Lines, each line ending in '\n'. ParseCassette(WriteCassette(c)) == c.
std::string WriteCassette(const Cassette& cassette);

// The file name of exchange `index` (1-based) of a recording or an import:
// "0007-openai-chat.jsonl" ("0007-exchange.jsonl" without a dialect).
std::string CassetteFileName(std::uint64_t index, std::string_view dialect);

}  // namespace faultline::scenario
