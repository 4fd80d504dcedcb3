// A newline-delimited JSON decoder: Ollama's streams, one JSON value per line.
//
// Each complete line is handed over as an SseEventView (type "message", the line as its data),
// so that the dialect decoders read both framings through one interface; whether the line is
// JSON, and of which shape, is theirs to say. A line ends at "\n"; a "\r" before it is dropped;
// blank lines are skipped. A line longer than the limit is refused as soon as it is, however the
// bytes are split, so the network cannot grow memory without bound.
//
// One decoder per response body; not thread-safe.
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
  // call returns only that error). The events stay valid until the next call.
  SseFeedResult Feed(std::string_view bytes);
  // The body ended: the bytes of an unfinished last line are discarded; returns how many.
  std::size_t Finish();

 private:
  std::size_t max_line_bytes_;
  std::string partial_;             // an unfinished line carried over from earlier feeds
  std::vector<std::string> lines_;  // this feed's lines, owned
  std::vector<SseEventView> views_;
  std::optional<SseError> error_;
};

}  // namespace faultline::ref
