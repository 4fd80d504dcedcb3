#include "fake_provider/wire/event_splitter.h"

#include <string>
#include <variant>

namespace faultline::provider {

ref::Dialect RefDialect(scenario::Dialect dialect) {
  // Both enums list the dialects in the same order; the names say so at run time too.
  return ref::ParseDialect(scenario::ToString(dialect)).value_or(ref::Dialect::kOpenAiChat);
}

EventSplitter::EventSplitter(ref::Dialect dialect)
    : framing_(ref::StreamFramingOf(dialect)), dialect_decoder_(dialect) {}

ref::SseFeedResult EventSplitter::Feed(std::string_view bytes) {
  switch (framing_) {
    case ref::StreamFraming::kNdjson:
      return ndjson_.Feed(bytes);
    case ref::StreamFraming::kEventStream:
      return event_stream_.Feed(bytes);
    case ref::StreamFraming::kSse:
      break;
  }
  return sse_.Feed(bytes);
}

std::size_t EventSplitter::NextCut(std::string_view bytes) const {
  // A binary message can end at any byte; a text event only with a line end.
  if (framing_ == ref::StreamFraming::kEventStream) return 1;
  const std::size_t end = bytes.find_first_of("\r\n");
  return end == std::string_view::npos ? bytes.size() : end + 1;
}

void EventSplitter::Inspect(const ref::SseEventView& event, Piece& piece) {
  // The SSE decoder names an event without an `event:` line "message"; a writer leaves it "".
  const bool unnamed = framing_ != ref::StreamFraming::kEventStream && event.type == "message";
  if (event.data.starts_with('{')) {
    last_json_ =
        SseEvent{unnamed ? std::string() : std::string(event.type), std::string(event.data)};
  }
  deltas_.clear();
  if (!dialect_decoder_.DecodeEvent(event, deltas_)) {
    malformed_ = true;  // a client fails here (MALFORMED_RESPONSE); events still count
    return;
  }
  for (const ref::Delta& delta : deltas_) {
    if (std::holds_alternative<ref::TerminalDelta>(delta)) piece.terminal = true;
    if (std::holds_alternative<ref::ProviderErrorDelta>(delta)) piece.error = true;
    if (const auto* text = std::get_if<ref::TextDelta>(&delta)) {
      text_ += text->text;
      piece.output = piece.output || !text->text.empty();
    }
    if (const auto* call = std::get_if<ref::ToolCallDelta>(&delta)) {
      tool_arguments_ += call->arguments;
      tool_call_ = true;
      piece.output = true;
    }
  }
}

std::vector<EventSplitter::Piece> EventSplitter::Split(std::string_view bytes) {
  std::vector<Piece> pieces;
  std::size_t start = 0;
  std::size_t at = 0;
  while (at < bytes.size() && !broken_) {
    const std::size_t step = NextCut(bytes.substr(at));
    const ref::SseFeedResult fed = Feed(bytes.substr(at, step));
    at += step;
    if (fed.error) broken_ = true;  // the rest passes as bytes; a client will see the breakage
    if (fed.events.empty()) continue;
    Piece piece{at - start, true};
    for (const ref::SseEventView& event : fed.events) {
      Inspect(event, piece);
    }
    events_ += fed.events.size();
    pieces.push_back(piece);
    start = at;
  }
  if (start < bytes.size()) pieces.push_back({bytes.size() - start, false});
  return pieces;
}

}  // namespace faultline::provider
