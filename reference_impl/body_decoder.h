// The decoding pipeline of one attempt's response body: the SSE decoder (the NDJSON one for
// Ollama, the event-stream one for Bedrock; for a non-streamed call, the whole JSON body), the
// dialect decoder and the lifecycle assembler, wired together.
//
// The driver feeds it the body bytes that HttpResponseParser produced and learns, per feed, which
// deltas to show as uncommitted output, whether anything meaningful arrived (for the idle
// watchdog) and, once decided, the attempt's outcome. A decode error becomes MALFORMED_RESPONSE.
// It counts the body bytes as received work; add the head's bytes through assembler().
//
// No I/O, no clock. One instance per attempt; not thread-safe.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reference_impl/assembler.h"
#include "reference_impl/dialect.h"
#include "reference_impl/dialect_decoder.h"
#include "reference_impl/event_stream_decoder.h"
#include "reference_impl/ndjson_decoder.h"
#include "reference_impl/sse_decoder.h"

namespace faultline::ref {

class BodyDecoder {
 public:
  BodyDecoder(Dialect dialect, bool stream);

  struct Progress {
    std::span<const Delta> deltas;      // decoded by this call; valid until the next call
    std::size_t meaningful_events = 0;  // events that are progress
    std::size_t heartbeats = 0;         // Anthropic `ping` events and SSE comment lines
  };

  // Body bytes in arrival order. Once the outcome is decided, bytes are counted and ignored.
  Progress Feed(std::string_view body);
  // The body ended cleanly: decodes a buffered JSON body, or ends the stream (an event cut short
  // is discarded; no terminator means STREAM_TRUNCATED).
  const AttemptOutcome& End();

  AttemptAssembler& assembler() { return assembler_; }
  const AttemptAssembler& assembler() const { return assembler_; }

 private:
  SseFeedResult FeedFramer(std::string_view body);
  void DecodeEvents(std::span<const SseEventView> events, Progress& progress);

  bool stream_;
  StreamFraming framing_;
  SseDecoder sse_;
  NdjsonDecoder ndjson_lines_;
  EventStreamDecoder event_stream_;
  DialectDecoder dialect_;
  AttemptAssembler assembler_;
  std::vector<Delta> deltas_;
  std::string body_;  // non-streamed calls: the body so far
};

}  // namespace faultline::ref
