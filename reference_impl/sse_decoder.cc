#include "reference_impl/sse_decoder.h"

#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <utility>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

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

constexpr std::uint64_t kHighBits = 0x8080808080808080ULL;

std::uint64_t Load64(const unsigned char* p) {
  std::uint64_t word;
  std::memcpy(&word, p, sizeof word);
  return word;
}

// The offset of the first byte of p[0, 8) whose high bit is set in `high` (`word & kHighBits`,
// not zero).
std::size_t FirstFlagged(std::uint64_t high) {
  if constexpr (std::endian::native == std::endian::little) {
    return static_cast<std::size_t>(std::countr_zero(high)) / 8;
  } else {
    return static_cast<std::size_t>(std::countl_zero(high)) / 8;
  }
}

// The offset of the first non-ASCII byte of p[i, n), or n. Words of eight bytes, four at a time
// while there are 32; the last few bytes are the word that ends at n (re-reading some bytes is
// cheaper than a byte loop).
std::size_t SkipAscii(const unsigned char* p, std::size_t i, std::size_t n) {
#ifdef __SSE2__
  // Where SSE2 is there (every x86-64): 64 bytes a step, the high bits gathered by movemask.
  const auto load = [p](std::size_t at) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + at));
  };
  while (n - i >= 64) {
    const __m128i any =
        _mm_or_si128(_mm_or_si128(load(i), load(i + 16)), _mm_or_si128(load(i + 32), load(i + 48)));
    if (_mm_movemask_epi8(any) != 0) break;
    i += 64;
  }
#endif
  while (n - i >= 32) {
    if (((Load64(p + i) | Load64(p + i + 8) | Load64(p + i + 16) | Load64(p + i + 24)) &
         kHighBits) != 0) {
      break;
    }
    i += 32;
  }
  for (; n - i >= 8; i += 8) {
    if (const std::uint64_t high = Load64(p + i) & kHighBits; high != 0) {
      return i + FirstFlagged(high);
    }
  }
  if (i == n) return n;
  if (n >= 8) {
    // The word's bytes before i were dealt with already (they may be the non-ASCII bytes of a
    // character just scanned): they are masked out.
    const std::size_t before = i - (n - 8);
    std::uint64_t high = Load64(p + n - 8) & kHighBits;
    if constexpr (std::endian::native == std::endian::little) {
      high &= ~std::uint64_t{0} << (8 * before);
    } else {
      high &= ~std::uint64_t{0} >> (8 * before);
    }
    return high == 0 ? n : n - 8 + FirstFlagged(high);
  }
  while (i < n && p[i] < 0x80) ++i;
  return i;
}

// The length of the longest prefix of `in` that is valid UTF-8 (all of it, nearly always).
std::size_t ValidUtf8Prefix(std::string_view in) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(in.data());
  const std::size_t n = in.size();
  std::size_t i = 0;
  while ((i = SkipAscii(bytes, i, n)) < n) {
    const Utf8Scan scan = ScanUtf8(bytes + i, n - i);
    if (!scan.valid) break;
    i += scan.length;
  }
  return i;
}

// Appends `in` to `out`, replacing every invalid UTF-8 sequence by U+FFFD. Valid runs are
// appended with one copy each.
void AppendUtf8(std::string& out, std::string_view in) {
  while (true) {
    const std::size_t valid = ValidUtf8Prefix(in);
    out.append(in.substr(0, valid));
    if (valid == in.size()) return;
    out.append(kReplacement);
    const auto* invalid = reinterpret_cast<const unsigned char*>(in.data() + valid);
    in.remove_prefix(valid + ScanUtf8(invalid, in.size() - valid).length);
  }
}

void AssignUtf8(std::string& out, std::string_view in) {
  out.clear();
  AppendUtf8(out, in);
}

constexpr std::string_view kMessage = "message";  // the type of an event without `event:`

// A field's value: what follows the colon at `colon`, less one leading space.
std::string_view ValueAfter(std::string_view line, std::size_t colon) {
  std::string_view value = line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  return value;
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

void SseDecoder::FieldValue::Assign(std::string_view value, bool viewable) {
  if (viewable) {  // the common case: no copy
    view_ = value;
    copied_ = false;
  } else {
    AssignUtf8(copy_, value);
    copied_ = true;
  }
}

void SseDecoder::FieldValue::AppendLine(std::string_view value) {
  Own();
  copy_.push_back('\n');
  AppendUtf8(copy_, value);
}

void SseDecoder::FieldValue::Own() {
  if (copied_) return;
  copy_.assign(view_);  // a view is valid UTF-8 already
  copied_ = true;
}

void SseDecoder::FieldValue::Clear() {
  view_ = {};
  copy_.clear();
  copied_ = false;
}

SseDecoder::SseDecoder(Options options) : options_(options) {}

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

SseFeedResult SseDecoder::Feed(std::string_view bytes) {
  if (error_) return SseFeedResult{{}, 0, error_};
  events_.clear();  // the previous feed's events are no longer needed: recycle their storage
  kept_used_ = 0;
  comments_ = 0;
  const char* const end = bytes.data() + bytes.size();
  const char* p = SkipBom(bytes.data(), end);
  if (skip_lf_ && p < end) {  // the previous feed ended with CR: this LF belongs to it
    if (*p == '\n') ++p;
    skip_lf_ = false;
  }
  // Lines split valid UTF-8 at ASCII bytes into valid UTF-8, so checking the bytes once here
  // checks every complete line before valid_end_ (one pass, instead of one per field value).
  valid_end_ = p + ValidUtf8Prefix(std::string_view(p, static_cast<std::size_t>(end - p)));
  DecodeLines(p, end);
  // The event in progress outlives `bytes`: its views become copies.
  data_.Own();
  type_.Own();
  if (!error_ && partial_line_.size() > options_.max_event_bytes) Oversized("line");
  return SseFeedResult{events_, comments_, error_};
}

// Inline into DecodeLines, small: the three kinds of line nearly every event is made of. A call
// with its frame per line, for a few comparisons, cost a tenth of decoding a short event.
inline void SseDecoder::ProcessLine(std::string_view line, bool viewable) {
  if (line.empty()) {
    Dispatch();
  } else if (line.starts_with("data:")) {  // the field name is what precedes the first colon
    AddData(ValueAfter(line, 4), viewable);
  } else if (line.starts_with("event:")) {
    type_.Assign(ValueAfter(line, 5), viewable);
  } else {
    ProcessOtherLine(line, viewable);
  }
}

void SseDecoder::ProcessOtherLine(std::string_view line, bool viewable) {
  if (line.front() == ':') {
    ++comments_;
    ++total_comments_;
    return;
  }
  const std::size_t colon = line.find(':');
  const std::string_view name = line.substr(0, colon);
  const std::string_view value = colon == std::string_view::npos ? "" : ValueAfter(line, colon);
  if (name == "data") {
    AddData(value, viewable);
  } else if (name == "event") {
    type_.Assign(value, viewable);
  } else if (name == "id") {
    if (value.find('\0') == std::string_view::npos) AssignUtf8(last_event_id_, value);
  } else if (name == "retry") {
    if (auto retry = ParseRetry(value)) retry_ms_ = retry;
  }  // other fields are ignored
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
    if (lf == nullptr || lf < p) {
      // A blank line ends each event: when p is at an LF, that LF is the line end (no CR can
      // come before it), and the search can wait for the next line.
      lf = *p == '\n' ? p : find(p, '\n');
    }
    if (cr == nullptr || cr < p) cr = find(p, '\r');
    const char* eol = cr < lf ? cr : lf;
    if (eol == end) {  // an incomplete line: keep it for the next feed
      partial_line_.append(p, end);
      return;
    }
    if (partial_line_.size() + static_cast<std::size_t>(eol - p) > options_.max_event_bytes) {
      Oversized("line");
      return;
    }
    if (partial_line_.empty()) {  // the common case: the line is parsed in place
      ProcessLine(std::string_view(p, eol), /*viewable=*/eol <= valid_end_);
    } else {
      partial_line_.append(p, eol);
      ProcessLine(partial_line_, /*viewable=*/false);
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

void SseDecoder::AddData(std::string_view value, bool viewable) {
  if (data_lines_++ == 0) {
    data_.Assign(value, viewable);
  } else {
    data_.AppendLine(value);
  }
  if (data_.size() > options_.max_event_bytes) Oversized("event");
}

void SseDecoder::Oversized(std::string_view what) {
  error_ = SseError{fmt::format("SSE {} larger than {} bytes", what, options_.max_event_bytes)};
}

void SseDecoder::Dispatch() {
  if (data_lines_ == 0) {  // nothing to dispatch; the event type buffer is reset all the same
    type_.Clear();
    return;
  }
  SseEventView event;
  event.data = Keep(data_);
  event.type = type_.size() == 0 ? kMessage : Keep(type_);
  // last_event_id_ may change before this feed's events are read: the event keeps a copy.
  if (!last_event_id_.empty()) event.id = KeepCopy(last_event_id_);
  events_.push_back(event);
  data_.Clear();
  type_.Clear();
  data_lines_ = 0;
  ++total_events_;
}

std::string_view SseDecoder::Keep(FieldValue& value) {
  if (!value.copied()) return value.view();  // a view into this feed's bytes
  if (kept_used_ == kept_.size()) kept_.emplace_back();
  std::string& kept = kept_[kept_used_++];
  kept.swap(value.copy());  // no copy; `value` gets the recycled buffer
  return kept;
}

std::string_view SseDecoder::KeepCopy(std::string_view value) {
  if (kept_used_ == kept_.size()) kept_.emplace_back();
  std::string& kept = kept_[kept_used_++];
  kept.assign(value);
  return kept;
}

SseFinishResult SseDecoder::Finish() {
  SseFinishResult result;
  result.discarded_event = data_lines_ > 0;
  result.discarded_bytes = partial_line_.size();
  Reset();
  return result;
}

void SseDecoder::Reset() {
  events_.clear();
  data_.Clear();
  type_.Clear();
  data_lines_ = 0;
  kept_.clear();
  kept_used_ = 0;
  comments_ = 0;
  partial_line_.clear();
  error_.reset();
  bom_ = BomState::kNone;
  skip_lf_ = false;
}

}  // namespace faultline::ref
