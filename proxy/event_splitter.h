// Where the events of a live stream end, in its bytes: the proxy forwards the upstream's bytes
// as they are and needs to know after which byte event N is complete.
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
#include <string_view>
#include <vector>

#include "fake_provider/dialect.h"
#include "reference_impl/dialect.h"
#include "reference_impl/dialect_decoder.h"
#include "reference_impl/event_stream_decoder.h"
#include "reference_impl/ndjson_decoder.h"
#include "reference_impl/sse_decoder.h"

namespace faultline::proxy {

class EventSplitter {
 public:
  explicit EventSplitter(ref::Dialect dialect);

  // A run of consecutive body bytes; all but possibly the last of one Split() end an event.
  struct Piece {
    std::size_t size = 0;
    bool event_end = false;  // the piece's last byte completes an event
    bool terminal = false;   // that event is the dialect's terminal one ([DONE], message_stop, ...)
  };
  // Splits the next body bytes; their sizes add up to bytes.size().
  std::vector<Piece> Split(std::string_view bytes);

  std::uint64_t events() const { return events_; }
  // The last complete event whose data is a JSON object, as a dialect writer names it (a
  // malformed injection imitates it: provider::MalformedEvent); null before the first.
  const provider::SseEvent* last_json_event() const { return last_json_ ? &*last_json_ : nullptr; }
  // The Responses stream's last sequence_number (an injected error event takes the next one).
  std::optional<std::int64_t> last_sequence_number() const {
    return dialect_decoder_.state().last_sequence_number;
  }

 private:
  ref::SseFeedResult Feed(std::string_view bytes);
  std::size_t NextCut(std::string_view bytes) const;  // bytes to feed before a possible end
  bool Inspect(const ref::SseEventView& event);       // true: the event is terminal

  ref::StreamFraming framing_;
  ref::SseDecoder sse_;
  ref::NdjsonDecoder ndjson_;
  ref::EventStreamDecoder event_stream_;
  ref::DialectDecoder dialect_decoder_;
  std::vector<ref::Delta> deltas_;
  std::optional<provider::SseEvent> last_json_;
  std::uint64_t events_ = 0;
  bool broken_ = false;  // the framing broke: the rest is bytes without events
};

}  // namespace faultline::proxy
