// Shared by the decoder and assembler tests: gtest printers for deltas and outcomes, and a helper
// that runs SSE text through the SSE and dialect decoders.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "reference_impl/assembler.h"
#include "reference_impl/dialect_decoder.h"
#include "reference_impl/sse_decoder.h"

namespace faultline::ref {

inline void PrintTo(const Delta& delta, std::ostream* os) {
  struct Printer {
    std::ostream& os;
    void operator()(const TextDelta& d) { os << "Text{" << d.text << "}"; }
    void operator()(const ReasoningDelta& d) { os << "Reasoning{" << d.text << "}"; }
    void operator()(const RefusalDelta& d) { os << "Refusal{" << d.text << "}"; }
    void operator()(const ToolCallDelta& d) {
      os << "ToolCall{" << d.index << ", " << d.id << ", " << d.name << ", " << d.arguments << "}";
    }
    void operator()(const FinishDelta& d) { os << "Finish{" << d.reason << "}"; }
    void operator()(const UsageDelta& d) {
      os << "Usage{" << (d.input_tokens ? std::to_string(*d.input_tokens) : "-") << ", "
         << (d.output_tokens ? std::to_string(*d.output_tokens) : "-") << "}";
    }
    void operator()(const TerminalDelta& d) { os << "Terminal{" << ToString(d.marker) << "}"; }
    void operator()(const ProviderErrorDelta& d) {
      os << "ProviderError{" << d.type << ", " << d.code << ", " << d.message << "}";
    }
  };
  std::visit(Printer{*os}, delta);
}

inline void PrintTo(const Failure& failure, std::ostream* os) {
  *os << "Failure{" << ToString(failure.code) << ", " << ToString(failure.failure_class) << ", "
      << ToString(failure.phase) << ", retryable=" << failure.retryable << ", "
      << ToString(failure.partial_output) << ", " << failure.message << "}";
}

inline void PrintTo(const AttemptOutcome& outcome, std::ostream* os) {
  if (const auto* failure = std::get_if<Failure>(&outcome)) {
    PrintTo(*failure, os);
  } else {
    const auto& done = std::get<Completed>(outcome);
    *os << "Completed{" << done.text << ", " << done.tool_calls.size() << " tool calls, "
        << done.finish_reason << "}";
  }
}

struct DecodedStream {
  std::vector<Delta> deltas;
  int meaningful = 0;
  int heartbeats = 0;  // ping events and comments
  std::optional<DecodeError> error;
};

// Runs `sse` through an SseDecoder and a DialectDecoder; stops at the first decode error.
// One event through a decoder: the deltas it produced and whether it was accepted.
struct DecodedEvent {
  std::vector<Delta> deltas;
  bool ok = false;
  friend bool operator==(const DecodedEvent&, const DecodedEvent&) = default;
};

inline DecodedEvent DecodeOne(DialectDecoder& decoder, const SseEvent& event) {
  DecodedEvent result;
  result.ok = decoder.DecodeEvent(event, result.deltas).has_value();
  return result;
}

// Every deletion of one byte of `data`, and every replacement of one byte by a few that matter
// to a JSON reader: the near misses of a hot event, for the differential tests of the fast path.
inline std::vector<std::string> Mutations(const std::string& data) {
  static constexpr std::string_view kReplacements[] = {"\"", "\\", "{", "}",    ",",    ":",
                                                       "0",  "x",  " ", "\x01", "\xC3", "\\u00e9"};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < data.size(); ++i) {
    out.push_back(data.substr(0, i) + data.substr(i + 1));  // deletion
    for (std::string_view replacement : kReplacements) {
      out.push_back(data.substr(0, i) + std::string(replacement) + data.substr(i + 1));
    }
  }
  return out;
}

inline DecodedStream DecodeSse(Dialect dialect, std::string_view sse) {
  DecodedStream out;
  SseDecoder sse_decoder;
  DialectDecoder decoder(dialect);
  auto fed = sse_decoder.Feed(sse);
  EXPECT_FALSE(fed.error);
  if (fed.error) return out;
  out.heartbeats += static_cast<int>(fed.comments);
  for (const SseEventView& event : fed.events) {
    auto weight = decoder.DecodeEvent(event, out.deltas);
    if (!weight) {
      out.error = weight.error();
      return out;
    }
    ++(*weight == EventWeight::kHeartbeat ? out.heartbeats : out.meaningful);
  }
  return out;
}

}  // namespace faultline::ref
