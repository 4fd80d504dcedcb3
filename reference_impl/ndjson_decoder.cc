#include "reference_impl/ndjson_decoder.h"

#include <fmt/format.h>

#include <cstring>

namespace faultline::ref {
namespace {

bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

}  // namespace

SseFeedResult NdjsonDecoder::Feed(std::string_view bytes) {
  views_.clear();
  completed_.clear();  // the last feed's views no longer need it
  if (error_) return {{}, 0, error_};
  std::size_t at = carried_.empty() ? 0 : CompleteCarriedLine(bytes);
  while (!error_ && at < bytes.size()) {
    const std::string_view rest = bytes.substr(at);
    const void* found = std::memchr(rest.data(), '\n', rest.size());
    if (found == nullptr) {  // an unfinished last line: kept for the next feed
      if (WithinLimit(rest.size())) carried_.assign(rest);
      break;
    }
    const auto length = static_cast<std::size_t>(static_cast<const char*>(found) - rest.data());
    if (!WithinLimit(length)) break;
    AddLine(rest.substr(0, length));  // a view of the caller's bytes
    at += length + 1;
  }
  return {views_, 0, error_};
}

std::size_t NdjsonDecoder::CompleteCarriedLine(std::string_view bytes) {
  const std::size_t newline = bytes.find('\n');
  const std::string_view piece = bytes.substr(0, newline);
  if (!WithinLimit(carried_.size() + piece.size())) return bytes.size();
  carried_.append(piece);
  if (newline == std::string_view::npos) return bytes.size();
  completed_.swap(carried_);  // carried_ takes completed_'s (cleared) buffer
  AddLine(completed_);
  return newline + 1;
}

void NdjsonDecoder::AddLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (!IsBlank(line)) views_.push_back({"message", line, ""});
}

bool NdjsonDecoder::WithinLimit(std::size_t line_bytes) {
  if (line_bytes <= max_line_bytes_) return true;
  error_ = SseError{fmt::format("an NDJSON line is longer than {} bytes", max_line_bytes_)};
  carried_.clear();
  return false;
}

std::size_t NdjsonDecoder::Finish() {
  const std::size_t discarded = IsBlank(carried_) ? 0 : carried_.size();
  carried_.clear();
  return discarded;
}

}  // namespace faultline::ref
