#include "reference_impl/body_decoder.h"

#include <fmt/format.h>

namespace faultline::ref {
namespace {

constexpr std::size_t kMaxJsonBody = 64 * 1024 * 1024;

}  // namespace

BodyDecoder::BodyDecoder(Dialect dialect, bool stream)
    : stream_(stream),
      framing_(StreamFramingOf(dialect)),
      dialect_(dialect),
      assembler_(dialect, stream) {}

BodyDecoder::Progress BodyDecoder::Feed(std::string_view body) {
  deltas_.clear();
  Progress progress;
  assembler_.CountBytes(body.size());
  if (assembler_.outcome()) return progress;
  if (!stream_) {
    if (body_.size() + body.size() > kMaxJsonBody) {
      assembler_.FailProtocol(fmt::format("response body larger than {} bytes", kMaxJsonBody));
    } else {
      body_.append(body);
    }
    return progress;
  }
  // Events before an SSE error count first: a terminator before the garbage still completes.
  const SseFeedResult fed = FeedFramer(body);
  progress.heartbeats += fed.comments;
  DecodeEvents(fed.events, progress);
  if (fed.error && !assembler_.outcome()) assembler_.FailProtocol(fed.error->message);
  progress.deltas = deltas_;
  return progress;
}

SseFeedResult BodyDecoder::FeedFramer(std::string_view body) {
  switch (framing_) {
    case StreamFraming::kNdjson:
      return ndjson_lines_.Feed(body);
    case StreamFraming::kEventStream:
      return event_stream_.Feed(body);
    case StreamFraming::kSse:
      break;
  }
  return sse_.Feed(body);
}

void BodyDecoder::DecodeEvents(std::span<const SseEventView> events, Progress& progress) {
  for (const SseEventView& event : events) {
    const std::size_t first = deltas_.size();
    auto weight = dialect_.DecodeEvent(event, deltas_);
    if (!weight) {
      assembler_.FailProtocol(weight.error().message);
      return;
    }
    const bool meaningful = *weight != EventWeight::kHeartbeat;
    ++(meaningful ? progress.meaningful_events : progress.heartbeats);
    if (assembler_.Add(std::span<const Delta>(deltas_).subspan(first))) return;
    if (meaningful) assembler_.CountEvent();  // an event before whatever decides the attempt
  }
}

const AttemptOutcome& BodyDecoder::End() {
  if (assembler_.outcome()) return *assembler_.outcome();
  if (stream_) {
    switch (framing_) {
      case StreamFraming::kSse:
        sse_.Finish();
        break;
      case StreamFraming::kNdjson:
        ndjson_lines_.Finish();
        break;
      case StreamFraming::kEventStream:
        event_stream_.Finish();
        break;
    }
    return assembler_.EndOfBody();
  }
  deltas_.clear();
  auto decoded = dialect_.DecodeBody(body_, deltas_);
  if (!decoded) return assembler_.FailProtocol(decoded.error().message);
  if (const auto& outcome = assembler_.Add(deltas_)) return *outcome;
  return assembler_.EndOfBody();
}

}  // namespace faultline::ref
