#include "reference_impl/ndjson_decoder.h"

#include <fmt/format.h>

namespace faultline::ref {
namespace {

bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

}  // namespace

SseFeedResult NdjsonDecoder::Feed(std::string_view bytes) {
  lines_.clear();
  views_.clear();
  if (error_) return {{}, 0, error_};
  while (!bytes.empty()) {
    const std::size_t newline = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, newline);
    if (partial_.size() + piece.size() > max_line_bytes_) {
      error_ = SseError{fmt::format("an NDJSON line is longer than {} bytes", max_line_bytes_)};
      partial_.clear();
      break;
    }
    partial_.append(piece);
    if (newline == std::string_view::npos) break;
    bytes.remove_prefix(newline + 1);
    if (!partial_.empty() && partial_.back() == '\r') partial_.pop_back();
    if (!IsBlank(partial_)) lines_.push_back(std::move(partial_));
    partial_.clear();
  }
  views_.reserve(lines_.size());
  for (const std::string& line : lines_) views_.push_back({"message", line, ""});
  return {views_, 0, error_};
}

std::size_t NdjsonDecoder::Finish() {
  const std::size_t discarded = IsBlank(partial_) ? 0 : partial_.size();
  partial_.clear();
  return discarded;
}

}  // namespace faultline::ref
