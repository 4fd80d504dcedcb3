// A newline-delimited JSON decoder: Ollama's streams, one JSON value per line.
//
// Each complete line is handed over as an SseEventView (type "message", the line as its data),
// so that the dialect decoders read both framings through one interface; whether the line is
// JSON, and of which shape, is theirs to say. A line ends at "\n"; a "\r" before it is dropped;
// blank lines are skipped. A line longer than the limit is refused as soon as it is, however the
// bytes are split, so the network cannot grow memory without bound.
//
// Performance: a line that lies inside one feed (nearly all of them) is handed over as a view of
// the caller's bytes, without a copy; only a line cut by a feed boundary is pieced together, in
// storage that is recycled. One decoder per response body; not thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reference_impl/sse_decoder.h"

namespace faultline::ref {

class NdjsonDecoder {
 public:
  explicit NdjsonDecoder(std::size_t max_line_bytes = 64 * 1024 * 1024)
      : max_line_bytes_(max_line_bytes) {}

  // Decodes the next bytes: the lines they complete, in order, then any error (after which every
  // call returns only that error). The events stay valid until the next call, and only while
  // `bytes` is alive and unchanged.
  SseFeedResult Feed(std::string_view bytes);
  // The body ended: the bytes of an unfinished last line are discarded; returns how many.
  std::size_t Finish();

 private:
  // Completes the line carried over from earlier feeds with the start of `bytes`; returns how
  // many bytes of them it took (all of them when the line is still unfinished).
  std::size_t CompleteCarriedLine(std::string_view bytes);
  void AddLine(std::string_view line);       // hands the line over unless it is blank
  bool WithinLimit(std::size_t line_bytes);  // false, having set error_, for a line too long

  std::size_t max_line_bytes_;
  std::string carried_;    // an unfinished line carried over from earlier feeds
  std::string completed_;  // the carried line this feed completed, which a view points into
  std::vector<SseEventView> views_;
  std::optional<SseError> error_;
};

}  // namespace faultline::ref
