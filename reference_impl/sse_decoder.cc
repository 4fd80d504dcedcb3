#include "reference_impl/sse_decoder.h"

#include <fmt/format.h>

#include <cstring>
#include <utility>

namespace faultline::ref {
namespace {

constexpr unsigned char kBom[3] = {0xEF, 0xBB, 0xBF};
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

struct Utf8Scan {
  bool valid;
  std::size_t length;  // of the valid sequence, or of the maximal invalid subpart (>= 1)
};

// One step of the WHATWG "UTF-8 decode" algorithm at p[0] (which is not ASCII).
Utf8Scan ScanUtf8(const unsigned char* p, std::size_t n) {
  const unsigned char lead = p[0];
  std::size_t needed = 0;
  unsigned char lower = 0x80;
  unsigned char upper = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    needed = 1;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    needed = 2;
    if (lead == 0xE0) lower = 0xA0;  // no overlong forms
    if (lead == 0xED) upper = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    needed = 3;
    if (lead == 0xF0) lower = 0x90;
    if (lead == 0xF4) upper = 0x8F;  // nothing above U+10FFFF
  } else {
    return {false, 1};
  }
  for (std::size_t k = 1; k <= needed; ++k) {
    if (k >= n || p[k] < lower || p[k] > upper) return {false, k};
    lower = 0x80;
    upper = 0xBF;
  }
  return {true, needed + 1};
}

bool IsAsciiWord(const unsigned char* p) {
  std::uint64_t word;
  std::memcpy(&word, p, sizeof word);
  return (word & 0x8080808080808080ULL) == 0;
}

// Four words at once: the common all-ASCII run costs one test per 32 bytes.
bool IsAscii32(const unsigned char* p) {
  std::uint64_t words[4];
  std::memcpy(words, p, sizeof words);
  return ((words[0] | words[1] | words[2] | words[3]) & 0x8080808080808080ULL) == 0;
}

// Appends `in` to `out`, replacing every invalid UTF-8 sequence by U+FFFD. ASCII and valid text
// are appended with one copy.
void AppendUtf8(std::string& out, std::string_view in) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(in.data());
  const std::size_t n = in.size();
  std::size_t i = 0;
  std::size_t copied = 0;  // in[copied, i) is valid and not yet appended
  while (i < n) {
    if (i + 32 <= n && IsAscii32(bytes + i)) {
      i += 32;
    } else if (i + 8 <= n && IsAsciiWord(bytes + i)) {
      i += 8;
    } else if (bytes[i] < 0x80) {
      ++i;
    } else if (const Utf8Scan scan = ScanUtf8(bytes + i, n - i); scan.valid) {
      i += scan.length;
    } else {
      out.append(in.data() + copied, i - copied);
      out.append(kReplacement);
      i += scan.length;
      copied = i;
    }
  }
  out.append(in.data() + copied, n - copied);
}

void AssignUtf8(std::string& out, std::string_view in) {
  out.clear();
  AppendUtf8(out, in);
}

// "consists of only ASCII digits": base ten, saturating instead of overflowing.
std::optional<std::uint64_t> ParseRetry(std::string_view value) {
  if (value.empty()) return std::nullopt;
  std::uint64_t result = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return std::nullopt;
    const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    result = result > (UINT64_MAX - digit) / 10 ? UINT64_MAX : result * 10 + digit;
  }
  return result;
}

}  // namespace

SseDecoder::SseDecoder(Options options) : options_(options) { events_.resize(1); }

const char* SseDecoder::SkipBom(const char* begin, const char* end) {
  while (bom_ != BomState::kDone && begin < end) {
    const auto seen = static_cast<std::size_t>(bom_);
    if (static_cast<unsigned char>(*begin) != kBom[seen]) {
      // Not a BOM after all: the bytes held back are the start of the first line.
      partial_line_.append(reinterpret_cast<const char*>(kBom), seen);
      bom_ = BomState::kDone;
      break;
    }
    ++begin;
    bom_ = seen == 2 ? BomState::kDone : static_cast<BomState>(seen + 1);
  }
  return begin;
}

std::expected<SseFeedResult, SseError> SseDecoder::Feed(std::string_view bytes) {
  if (error_) return std::unexpected(*error_);
  if (ready_ > 0) {  // recycle: the event in progress moves to the front
    std::swap(events_[0], events_[ready_]);
    ready_ = 0;
  }
  comments_ = 0;
  const char* const end = bytes.data() + bytes.size();
  const char* p = SkipBom(bytes.data(), end);
  if (skip_lf_ && p < end) {  // the previous feed ended with CR: this LF belongs to it
    if (*p == '\n') ++p;
    skip_lf_ = false;
  }
  DecodeLines(p, end);
  if (!error_ && partial_line_.size() + current().data.size() > options_.max_event_bytes) {
    error_ = SseError{fmt::format("SSE event larger than {} bytes", options_.max_event_bytes)};
  }
  if (error_) return std::unexpected(*error_);
  return SseFeedResult{std::span<const SseEvent>(events_.data(), ready_), comments_};
}

void SseDecoder::DecodeLines(const char* p, const char* end) {
  // The first LF and the first CR at or after p (end when none), each searched again only once
  // p has passed it: a feed without CRs is searched for CR once, one without LFs for LF once.
  const char* lf = nullptr;
  const char* cr = nullptr;
  auto find = [end](const char* from, char c) {
    const void* found = std::memchr(from, c, static_cast<std::size_t>(end - from));
    return found != nullptr ? static_cast<const char*>(found) : end;
  };
  while (p < end && !error_) {
    if (lf == nullptr || lf < p) lf = find(p, '\n');
    if (cr == nullptr || cr < p) cr = find(p, '\r');
    const char* eol = cr < lf ? cr : lf;
    if (eol == end) {  // an incomplete line: keep it for the next feed
      partial_line_.append(p, end);
      return;
    }
    if (partial_line_.empty()) {  // the common case: the line is parsed in place
      ProcessLine(std::string_view(p, eol));
    } else {
      partial_line_.append(p, eol);
      ProcessLine(partial_line_);
      partial_line_.clear();
    }
    p = eol + 1;
    if (*eol == '\r') {  // CRLF is one line end, even when the LF comes in the next feed
      if (p == end) {
        skip_lf_ = true;
      } else if (*p == '\n') {
        ++p;
      }
    }
  }
}

void SseDecoder::ProcessLine(std::string_view line) {
  if (line.empty()) {
    Dispatch();
    return;
  }
  if (line.front() == ':') {
    ++comments_;
    ++total_comments_;
    return;
  }
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) {
    ProcessField(line, {});
    return;
  }
  std::string_view value = line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  ProcessField(line.substr(0, colon), value);
}

void SseDecoder::ProcessField(std::string_view name, std::string_view value) {
  if (name == "data") {
    std::string& data = current().data;
    if (data_lines_++ > 0) data.push_back('\n');
    AppendUtf8(data, value);
    if (data.size() > options_.max_event_bytes) {
      error_ = SseError{fmt::format("SSE event larger than {} bytes", options_.max_event_bytes)};
    }
  } else if (name == "event") {
    AssignUtf8(current().type, value);
  } else if (name == "id") {
    if (value.find('\0') == std::string_view::npos) AssignUtf8(last_event_id_, value);
  } else if (name == "retry") {
    if (auto retry = ParseRetry(value)) retry_ms_ = retry;
  }
}

void SseDecoder::Dispatch() {
  SseEvent& event = current();
  if (data_lines_ == 0) {  // nothing to dispatch; the event type buffer is reset all the same
    event.type.clear();
    return;
  }
  if (event.type.empty()) event.type.assign("message");
  event.id.assign(last_event_id_);
  data_lines_ = 0;
  ++ready_;
  ++total_events_;
  if (ready_ == events_.size()) events_.emplace_back();
  SseEvent& next = events_[ready_];
  next.type.clear();
  next.data.clear();
  next.id.clear();
}

SseFinishResult SseDecoder::Finish() {
  SseFinishResult result;
  result.discarded_event = data_lines_ > 0;
  result.discarded_bytes = partial_line_.size();
  Reset();
  return result;
}

void SseDecoder::Reset() {
  for (SseEvent& event : events_) event = SseEvent{};
  events_.resize(1);
  ready_ = 0;
  data_lines_ = 0;
  comments_ = 0;
  partial_line_.clear();
  error_.reset();
  bom_ = BomState::kNone;
  skip_lf_ = false;
}

}  // namespace faultline::ref
