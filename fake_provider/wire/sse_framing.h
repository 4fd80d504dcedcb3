// SSE framing: logical events (SseEvent) -> the text the fake provider puts on the wire (or, for
// Ollama, newline-delimited JSON: one event's data per line; for Bedrock, binary event-stream
// messages: event_stream_encoder.h).
//
// A dialect writer says what the events are; the framer says how they look on the wire, as the
// scenario's Framing asks: line endings (LF, CRLF, CR, or a mix of the three), a UTF-8 BOM before
// the first event, a comment line before every event, and JSON payloads spread over several
// `data:` lines. It also picks where split_writes cuts an event in two.
//
// Everything a compliant SSE parser reads from the output is the same event sequence whatever
// the framing: the variants exercise parsers, never change meaning. In particular a CR line end
// is never followed by an empty LF-terminated line (that pair would read as one CRLF), and
// multi-line data is cut only between JSON tokens, so joining the data lines with "\n" (what the
// SSE spec does) gives back equivalent JSON.
//
// SseFramer is stateful (BOM only once, the mixed line-ending cycle runs across events): use one
// per response, feeding events in wire order. Not thread-safe; the free functions are pure.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "fake_provider/wire/byte_template.h"
#include "fake_provider/wire/dialect.h"
#include "scenarios/scenario.h"

namespace faultline::provider {

// The comment the framer writes for a heartbeat event (empty name and data).
inline constexpr std::string_view kKeepAliveComment = ": keep-alive";
// The comment line written before every event when Framing::comments is set.
inline constexpr std::string_view kFramingComment = ": faultline";

class SseFramer {
 public:
  // `stream`: the dialect's framing. kNdjson writes each event's data as one line ending in
  // "\n", its name dropped; kEventStream one binary message per event. The loader refuses the
  // SSE-only framing options for both.
  explicit SseFramer(const scenario::Framing& framing,
                     scenario::StreamFraming stream = scenario::StreamFraming::kSse);

  // The wire text of one event: [BOM] [comment line] [`event:` line] `data:` line(s), blank line.
  // An event with an empty name and empty data is a heartbeat: ": keep-alive" and a blank line.
  std::string Event(const SseEvent& event);
  // The template of one framed event; an event-stream message is sealed again when filled in.
  ByteTemplate Template(std::string framed, const SlotValues& placeholders) const;
  // Where split_writes cuts one framed event (SplitPoint below, or the event-stream rule).
  std::size_t SplitPointOf(std::string_view framed) const;
  // Bytes that go out verbatim (an injected raw fault); the BOM still comes first if due.
  std::string Raw(std::string_view bytes);

 private:
  std::string_view NextEnding(bool blank_line);
  void AppendLine(std::string& out, std::string_view text);
  void AppendBomOnce(std::string& out);

  scenario::Framing framing_;
  scenario::StreamFraming stream_;
  bool started_ = false;
  unsigned line_count_ = 0;
  bool previous_was_cr_ = false;
};

// One heartbeat, framed on its own (no BOM, no comment line, one fixed line ending: LF, CRLF or
// CR as configured; CRLF for mixed), so that it can be repeated between any two events.
std::string HeartbeatText(const SseEvent& heartbeat, scenario::Framing::LineEnding ending);

// Splits `data` into the values of its `data:` lines. Line breaks in `data` always start a new
// line; with `multiline` a JSON object is also cut after every '{', '[' and ',' outside strings
// (other text, such as "[DONE]", stays whole). Joining the result with "\n" gives `data` back up
// to JSON whitespace.
std::vector<std::string_view> DataLines(std::string_view data, bool multiline);

// Where split_writes cuts one framed event: inside the first multi-byte UTF-8 character after
// any BOM when `inside_utf8_char` (falling back to the middle of the first `data:` line when the
// event has none), else in the middle of the first `data:` line. Always in (0, size) for events
// of two bytes or more; 0 means "do not split".
std::size_t SplitPoint(std::string_view framed, bool inside_utf8_char);

}  // namespace faultline::provider
