// The lifecycle assembler of ONE attempt: decoded deltas in, the attempt's outcome out.
//
// Output is uncommitted while it streams. The attempt completes only on its dialect's committing
// terminal event ([DONE], message_stop, response.completed / response.incomplete, or a complete
// JSON body); then the answer is checked:
//   - no text and no tool call                       -> EMPTY_RESPONSE (empty, retryable)
//   - finish "content_filter" / stop "refusal", or
//     a refusal and nothing else                     -> CONTENT_FILTER (safety, not retryable)
//   - tool-call arguments that are not complete JSON -> MALFORMED_RESPONSE (protocol)
//   - otherwise                                      -> Completed
// A body that ends cleanly before the terminator is STREAM_TRUNCATED (truncated, retryable; phase
// finish when the finish reason had arrived, else stream). An in-stream provider error is
// classified like its HTTP twin (stream_error_class.h). A transport failure, timeout or cancel
// (Interrupt) fails the attempt unless it had already completed: once the terminator is seen, the
// answer is whole and what happens to the connection afterwards does not matter.
//
// Every Failure reports partial_output = uncommitted when text or a tool-call fragment had been
// decoded, carries the response's status and request id when SetResponseInfo() was called, and
// of a stream says how many meaningful events went by before it (CountEvent) and whether the
// provider's error event decided it (error_event).
// The first outcome is final; later input is ignored. Wasted work (the bytes and approximate
// tokens of an attempt that did not complete) is kept for the lifecycle report.
//
// No I/O, no clock. One instance per attempt; not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "reference_impl/dialect.h"
#include "reference_impl/dialect_decoder.h"
#include "reference_impl/failure.h"

namespace faultline::ref {

struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // complete JSON text ("{}" when the provider sent none)
  friend bool operator==(const ToolCall&, const ToolCall&) = default;
};

struct Usage {
  std::optional<std::int64_t> input_tokens;
  std::optional<std::int64_t> output_tokens;
  friend bool operator==(const Usage&, const Usage&) = default;
};

struct Completed {
  std::string text;
  std::string reasoning;
  std::vector<ToolCall> tool_calls;  // in order of first appearance
  std::string finish_reason;         // the provider's words (see FinishDelta)
  Usage usage;
  TerminalMarker terminal = TerminalMarker::kDone;
  friend bool operator==(const Completed&, const Completed&) = default;
};

using AttemptOutcome = std::variant<Completed, Failure>;

struct WastedWork {
  std::uint64_t bytes = 0;          // every byte received by an attempt that did not complete
  std::uint64_t approx_tokens = 0;  // reported output tokens, else decoded output bytes / 4
  friend bool operator==(const WastedWork&, const WastedWork&) = default;
};

class AttemptAssembler {
 public:
  // `streamed`: the body is an event stream (its failures are marked Failure::streamed).
  explicit AttemptAssembler(Dialect dialect, bool streamed = false)
      : dialect_(dialect), streamed_(streamed) {}

  // The head of the (2xx) response, copied into any Failure of this attempt.
  void SetResponseInfo(int status, std::optional<std::string> request_id);
  // Raw bytes received by this attempt (head and body), for the wasted-work accounting.
  void CountBytes(std::uint64_t bytes) { bytes_ += bytes; }
  // A meaningful stream event went by without deciding the attempt (Failure::stream_events).
  void CountEvent() { ++events_; }

  // Feeds the deltas of one event or body. Returns the outcome once one is decided.
  const std::optional<AttemptOutcome>& Add(std::span<const Delta> deltas);
  const std::optional<AttemptOutcome>& Add(const Delta& delta);
  // The response broke the protocol (a DecodeError, an SseError): MALFORMED_RESPONSE.
  const AttemptOutcome& FailProtocol(std::string message);
  // The attempt was cut by the transport, a deadline or the caller: `failure` as classified by
  // the driver, with partial_output, status and request id filled in here.
  const AttemptOutcome& Interrupt(Failure failure);
  // The body ended cleanly (HttpFeed::complete); without the terminator: STREAM_TRUNCATED.
  const AttemptOutcome& EndOfBody();

  const std::optional<AttemptOutcome>& outcome() const { return outcome_; }
  bool completed() const { return outcome_ && std::holds_alternative<Completed>(*outcome_); }

  // The uncommitted output so far.
  const std::string& text() const { return text_; }
  const std::string& reasoning() const { return reasoning_; }
  bool has_output() const { return !text_.empty() || !calls_.empty(); }
  WastedWork wasted() const;

 private:
  struct PendingCall {
    int index = 0;
    ToolCall call;
  };

  void Apply(const Delta& delta);
  void ApplyToolCall(const ToolCallDelta& delta);
  void Finalize(TerminalMarker marker);
  const AttemptOutcome& Decide(AttemptOutcome outcome);
  Failure MakeFailure(FailureCode code, FailureClass failure_class, Phase phase, bool retryable,
                      std::string message) const;

  Dialect dialect_;
  bool streamed_;
  std::optional<int> status_;
  std::optional<std::string> request_id_;
  std::uint64_t bytes_ = 0;
  std::string text_;
  std::string reasoning_;
  std::string refusal_;
  std::vector<PendingCall> calls_;
  std::string finish_reason_;
  bool finish_seen_ = false;
  int events_ = 0;
  Usage usage_;
  std::optional<AttemptOutcome> outcome_;
};

// A 2xx answer must carry the media type of what was asked for: text/event-stream for a stream
// (application/x-ndjson in a dialect that streams NDJSON), JSON (application/json or */*+json)
// for a body. Returns MALFORMED_RESPONSE (phase response-headers, retryable) otherwise; a missing
// Content-Type is accepted.
std::optional<Failure> CheckContentType(bool stream, std::optional<std::string_view> content_type,
                                        Dialect dialect = Dialect::kOpenAiChat);

}  // namespace faultline::ref
