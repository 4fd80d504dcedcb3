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
//     bytes that are not valid UTF-8 become U+FFFD, as the spec's UTF-8 decode does.
//
// Performance: complete lines are parsed in place from the caller's bytes (memchr), and an event
// whose data is one line of valid UTF-8 inside one feed — nearly every event of an LLM stream — is
// handed out as views into those bytes, without a copy. Only an event that spans feeds or has
// several data lines is copied, into storage that is recycled, so steady-state decoding does not
// allocate. One instance per stream; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace faultline::ref {

struct SseEvent;

// One dispatched event, as the decoder hands it out: views into the bytes given to Feed() (a field
// that was one complete line of valid UTF-8 there) or into the decoder's own storage.
struct SseEventView {
  std::string_view type;  // the `event:` field; "message" when there was none
  std::string_view data;  // `data:` lines joined with "\n"
  std::string_view id;    // the last event ID at dispatch time (it persists across events)
  explicit operator SseEvent() const;  // a copy that owns its bytes
  friend bool operator==(const SseEventView&, const SseEventView&) = default;
};

// An event that owns its bytes, to keep beyond the next Feed() or to build by hand (tests).
struct SseEvent {
  std::string type;
  std::string data;
  std::string id;
  // Implicit, as std::string converts to std::string_view.
  operator SseEventView() const { return {type, data, id}; }  // NOLINT(google-explicit-constructor)
  friend bool operator==(const SseEvent&, const SseEvent&) = default;
};

inline SseEventView::operator SseEvent() const {
  return SseEvent{std::string(type), std::string(data), std::string(id)};
}

struct SseError {
  std::string message;
};

// What one Feed() produced, in stream order: the events and comments completed by the bytes
// before any error, then the error. `events` (and the bytes they view) stay valid until the next
// call of any non-const member, and only while the bytes passed to that Feed() are alive and
// unchanged.
struct SseFeedResult {
  std::span<const SseEventView> events;
  std::size_t comments = 0;       // comment lines completed by this feed
  std::optional<SseError> error;  // the stream broke after `events`; it stays broken
};

struct SseFinishResult {
  bool discarded_event = false;     // an event had fields but no terminating blank line
  std::size_t discarded_bytes = 0;  // bytes of an unterminated last line
};

class SseDecoder {
 public:
  struct Options {
    // A line, or an event's joined data, larger than this is refused: the bytes come from the
    // network and must not grow memory without bound. Both are properties of the bytes, so the
    // error comes at the same byte however the stream is split (an unfinished line is refused
    // as soon as it is longer).
    std::size_t max_event_bytes = 64 * 1024 * 1024;
  };

  SseDecoder() : SseDecoder(Options{}) {}
  explicit SseDecoder(Options options);

  // Decodes the next bytes. After an error every later call returns only the same error.
  SseFeedResult Feed(std::string_view bytes);
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

  // A field value of the event in progress: a view while it is one line of valid UTF-8 inside
  // the bytes being fed (nothing to copy), otherwise a copy with invalid UTF-8 replaced.
  class FieldValue {
   public:
    // `viewable`: `value` is valid UTF-8 and lies in the bytes of the current Feed(), so a view
    // of it stays valid until Feed() returns (a line pieced together in partial_line_ does not).
    void Assign(std::string_view value, bool viewable);
    void AppendLine(std::string_view value);  // "\n" + value: joining lines needs a copy
    void Own();                               // copies a view before the fed bytes go away
    void Clear();
    std::size_t size() const { return copied_ ? copy_.size() : view_.size(); }
    std::string_view view() const { return copied_ ? std::string_view(copy_) : view_; }
    bool copied() const { return copied_; }
    std::string& copy() { return copy_; }

   private:
    std::string_view view_;  // the value unless copied_
    std::string copy_;
    bool copied_ = false;
  };

  const char* SkipBom(const char* begin, const char* end);
  void DecodeLines(const char* begin, const char* end);
  // `viewable`: as for FieldValue::Assign.
  void ProcessLine(std::string_view line, bool viewable);
  void ProcessOtherLine(std::string_view line, bool viewable);  // comments, id, retry, ...
  void AddData(std::string_view value, bool viewable);
  void Dispatch();
  void Oversized(std::string_view what);  // sets error_
  // A view of `value` that stays valid until the next Feed(): the value itself when it is a view,
  // else its copy, moved into kept_.
  std::string_view Keep(FieldValue& value);
  std::string_view KeepCopy(std::string_view value);
  void Reset();

  Options options_;
  std::vector<SseEventView> events_;  // dispatched by this feed
  // The event in progress. The spec's "data buffer" and "event type buffer".
  FieldValue data_;
  FieldValue type_;
  std::size_t data_lines_ = 0;  // `data:` lines in the event in progress
  // Copied values of the events dispatched by this feed, [0, kept_used_); a deque, so that growing
  // it moves no string that a view points into. The strings are recycled from feed to feed.
  std::deque<std::string> kept_;
  std::size_t kept_used_ = 0;
  std::size_t comments_ = 0;         // in this feed
  std::string partial_line_;         // a line cut by a feed boundary
  const char* valid_end_ = nullptr;  // in this feed: the bytes before it are valid UTF-8
  std::string last_event_id_;
  std::optional<std::uint64_t> retry_ms_;
  std::optional<SseError> error_;
  BomState bom_ = BomState::kNone;
  bool skip_lf_ = false;  // the previous feed ended with CR
  std::uint64_t total_events_ = 0;
  std::uint64_t total_comments_ = 0;
};

}  // namespace faultline::ref
