// Where the events of a live stream end, in its bytes, and what they say: the proxy forwards the
// upstream's bytes as they are and needs to know after which byte event N is complete; a cassette
// (plan_cassette.cc) is cut at event N of recorded bytes, and its ground truth is what the
// decoded events say (the text, the tool call's arguments, whether an error or the terminal
// event came).
//
// The reference client's own decoders say it (the SSE decoder, the NDJSON one for Ollama, the AWS
// event-stream one for Bedrock; the dialect decoder for the terminal event), so the proxy counts
// events exactly as a client does: an SSE comment or an NDJSON blank line is no event, an event
// ends with the byte that dispatches it. They are fed the bytes up to each possible end (a line
// end; for the binary event stream each byte), which is how a boundary is found without a second
// framer.
//
// No I/O; one splitter per response body; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fake_provider/wire/dialect.h"
#include "reference_impl/dialect.h"
#include "reference_impl/dialect_decoder.h"
#include "reference_impl/event_stream_decoder.h"
#include "reference_impl/ndjson_decoder.h"
#include "reference_impl/sse_decoder.h"

namespace faultline::provider {

// The reference client's name for a scenario dialect (both enums list the same dialects).
ref::Dialect RefDialect(scenario::Dialect dialect);

class EventSplitter {
 public:
  explicit EventSplitter(ref::Dialect dialect);

  // A run of consecutive body bytes; all but possibly the last of one Split() end an event.
  struct Piece {
    std::size_t size = 0;
    bool event_end = false;  // the piece's last byte completes an event
    bool terminal = false;   // that event is the dialect's terminal one ([DONE], message_stop, ...)
    bool output = false;     // that event carried text or a tool call (a client's output)
    bool error = false;      // that event is the provider's in-stream error
  };
  // Splits the next body bytes; their sizes add up to bytes.size().
  std::vector<Piece> Split(std::string_view bytes);

  std::uint64_t events() const { return events_; }
  // What the events so far said, as the reference client decodes them: the text (reasoning
  // excluded), the tool calls' arguments in order, and whether the bytes broke the framing or an
  // event broke the dialect's protocol (a client fails there: MALFORMED_RESPONSE).
  const std::string& text() const { return text_; }
  const std::string& tool_arguments() const { return tool_arguments_; }
  bool tool_call() const { return tool_call_; }
  bool broken() const { return broken_; }  // the framing broke: the rest is bytes without events
  bool malformed() const { return malformed_; }
  // The last complete event whose data is a JSON object, as a dialect writer names it (a
  // malformed injection imitates it: provider::MalformedEvent); null before the first.
  const SseEvent* last_json_event() const { return last_json_ ? &*last_json_ : nullptr; }
  // The Responses stream's last sequence_number (an injected error event takes the next one).
  std::optional<std::int64_t> last_sequence_number() const {
    return dialect_decoder_.state().last_sequence_number;
  }

 private:
  ref::SseFeedResult Feed(std::string_view bytes);
  std::size_t NextCut(std::string_view bytes) const;  // bytes to feed before a possible end
  void Inspect(const ref::SseEventView& event, Piece& piece);  // sets terminal, output, error

  ref::StreamFraming framing_;
  ref::SseDecoder sse_;
  ref::NdjsonDecoder ndjson_;
  ref::EventStreamDecoder event_stream_;
  ref::DialectDecoder dialect_decoder_;
  std::vector<ref::Delta> deltas_;
  std::optional<SseEvent> last_json_;
  std::uint64_t events_ = 0;
  std::string text_;
  std::string tool_arguments_;
  bool tool_call_ = false;
  bool malformed_ = false;
  bool broken_ = false;  // the framing broke: the rest is bytes without events
};

}  // namespace faultline::provider
