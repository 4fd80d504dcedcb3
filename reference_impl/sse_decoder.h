// A Server-Sent Events decoder that follows the WHATWG event-stream interpretation rules
// (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation).
//
// Feed it body bytes in any split; it returns the events completed by those bytes:
//   - lines end with CR, LF or CRLF, mixed freely; a CR at the end of one feed and an LF at the
//     start of the next are one line end;
//   - one leading UTF-8 BOM is ignored, even when split across feeds;
//   - comment lines (starting with ':') are counted, not dispatched, so an idle watchdog can decide
//     whether keep-alive comments count as activity;
//   - `data:` lines are joined with "\n"; `event:`, `id:` and `retry:` are honoured; a single space
//     after the colon is removed; unknown fields are ignored;
//   - a blank line dispatches the event (none when no `data:` line was seen); an event that is not
//     ended by a blank line when the stream ends is discarded (Finish());
//   - only complete lines are decoded, so a UTF-8 character split across feeds is reassembled;
//   bytes
//     that are not valid UTF-8 become U+FFFD, as the spec's UTF-8 decode does.
//
// Performance: complete lines are parsed in place from the caller's bytes (memchr), only a line cut
// by a feed boundary is copied, and event storage is recycled, so steady-state decoding does not
// allocate. One instance per stream; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace faultline::ref {

struct SseEvent {
  std::string type;  // the `event:` field; "message" when there was none
  std::string data;  // `data:` lines joined with "\n"
  std::string id;    // the last event ID at dispatch time (it persists across events)
  friend bool operator==(const SseEvent&, const SseEvent&) = default;
};

// What one Feed() produced. `events` points into the decoder and stays valid until the next call
// of any non-const member.
struct SseFeedResult {
  std::span<const SseEvent> events;
  std::size_t comments = 0;  // comment lines completed by this feed
};

struct SseFinishResult {
  bool discarded_event = false;     // an event had fields but no terminating blank line
  std::size_t discarded_bytes = 0;  // bytes of an unterminated last line
};

struct SseError {
  std::string message;
};

class SseDecoder {
 public:
  struct Options {
    // An event (its data plus the line being read) larger than this is refused: the bytes come
    // from the network and must not grow memory without bound.
    std::size_t max_event_bytes = 64 * 1024 * 1024;
  };

  SseDecoder() : SseDecoder(Options{}) {}
  explicit SseDecoder(Options options);

  // Decodes the next bytes. After an error every later call returns the same error.
  std::expected<SseFeedResult, SseError> Feed(std::string_view bytes);
  // The stream ended: whatever was pending is discarded (and reported). The decoder is then ready
  // for a new stream (BOM handling included); last_event_id() and retry_ms() are kept, as an
  // EventSource keeps them across reconnections.
  SseFinishResult Finish();

  const std::string& last_event_id() const { return last_event_id_; }
  std::optional<std::uint64_t> retry_ms() const { return retry_ms_; }  // the last valid `retry:`
  std::uint64_t total_events() const { return total_events_; }
  std::uint64_t total_comments() const { return total_comments_; }

 private:
  enum class BomState : std::uint8_t { kNone, kOne, kTwo, kDone };  // BOM bytes seen so far

  const char* SkipBom(const char* begin, const char* end);
  void DecodeLines(const char* begin, const char* end);
  void ProcessLine(std::string_view line);
  void ProcessField(std::string_view name, std::string_view value);
  void Dispatch();
  SseEvent& current() { return events_[ready_]; }
  void Reset();

  Options options_;
  std::vector<SseEvent> events_;  // [0, ready_) dispatched by this feed, [ready_] in progress
  std::size_t ready_ = 0;
  std::size_t data_lines_ = 0;  // `data:` lines in the event in progress
  std::size_t comments_ = 0;    // in this feed
  std::string partial_line_;    // a line cut by a feed boundary
  std::string last_event_id_;
  std::optional<std::uint64_t> retry_ms_;
  std::optional<SseError> error_;
  BomState bom_ = BomState::kNone;
  bool skip_lf_ = false;  // the previous feed ended with CR
  std::uint64_t total_events_ = 0;
  std::uint64_t total_comments_ = 0;
};

}  // namespace faultline::ref
