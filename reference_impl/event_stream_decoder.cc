#include "reference_impl/event_stream_decoder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "hashing/crc32.h"

namespace faultline::ref {
namespace {

constexpr std::size_t kPreludeBytes = 12;
constexpr std::size_t kCrcBytes = 4;

std::uint32_t U32(std::string_view bytes, std::size_t at) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    value = (value << 8) | static_cast<unsigned char>(bytes[at + i]);
  }
  return value;
}

std::uint16_t U16(std::string_view bytes, std::size_t at) {
  return static_cast<std::uint16_t>(static_cast<unsigned char>(bytes[at]) << 8 |
                                    static_cast<unsigned char>(bytes[at + 1]));
}

// The header values a message may carry, by type: their fixed size, or -1 for a value that
// starts with its own u16 length (byte arrays and strings).
constexpr int kValueSizes[] = {0, 0, 1, 2, 4, 8, -1, -1, 8, 16};
constexpr std::uint8_t kStringType = 7;

struct Headers {
  std::string_view message_type;
  std::string_view event_type;
  std::string_view exception_type;
  std::string_view error_code;
  std::string_view error_message;
};

// Reads the headers block; nullopt with `why` set when it breaks the encoding.
std::optional<Headers> ReadHeaders(std::string_view block, std::string& why) {
  Headers out;
  std::size_t at = 0;
  while (at < block.size()) {
    const std::size_t name_length = static_cast<unsigned char>(block[at]);
    if (name_length == 0 || at + 1 + name_length + 1 > block.size()) {
      why = "a header name runs past the headers";
      return std::nullopt;
    }
    const std::string_view name = block.substr(at + 1, name_length);
    at += 1 + name_length;
    const std::uint8_t type = static_cast<unsigned char>(block[at++]);
    if (type >= std::size(kValueSizes)) {
      why = fmt::format("header '{}' has the unknown value type {}", name, type);
      return std::nullopt;
    }
    std::size_t value_length = 0;
    if (kValueSizes[type] >= 0) {
      value_length = static_cast<std::size_t>(kValueSizes[type]);
    } else {
      if (at + 2 > block.size()) {
        why = fmt::format("header '{}' has no value length", name);
        return std::nullopt;
      }
      value_length = U16(block, at);
      at += 2;
    }
    if (at + value_length > block.size()) {
      why = fmt::format("the value of header '{}' runs past the headers", name);
      return std::nullopt;
    }
    const std::string_view value = block.substr(at, value_length);
    at += value_length;
    if (type != kStringType) continue;
    if (name == ":message-type") out.message_type = value;
    if (name == ":event-type") out.event_type = value;
    if (name == ":exception-type") out.exception_type = value;
    if (name == ":error-code") out.error_code = value;
    if (name == ":error-message") out.error_message = value;
  }
  return out;
}

}  // namespace

SseFeedResult EventStreamDecoder::Feed(std::string_view bytes) {
  names_.clear();
  views_.clear();
  completed_.clear();  // the last feed's views no longer need it
  if (error_) return {{}, 0, error_};
  const std::size_t used = carried_.empty() ? 0 : CompleteCarriedMessage(bytes);
  if (error_ || used == bytes.size()) return {views_, 0, error_};
  // The common case: whole messages viewed in the caller's bytes; only an unfinished one is kept.
  const std::string_view rest = bytes.substr(used);
  const std::size_t decoded = DecodeMessages(rest);
  if (!error_) carried_.assign(rest.substr(decoded));
  return {views_, 0, error_};
}

std::size_t EventStreamDecoder::CompleteCarriedMessage(std::string_view bytes) {
  // Up to `length` bytes of the message: what `bytes` has of them; returns how many it took.
  const auto carry_up_to = [&](std::size_t length, std::size_t from) {
    const std::size_t taken = std::min(length - carried_.size(), bytes.size() - from);
    carried_.append(bytes.substr(from, taken));
    return from + taken;
  };
  std::size_t used = 0;
  if (carried_.size() < kPreludeBytes) used = carry_up_to(kPreludeBytes, used);
  if (carried_.size() < kPreludeBytes) return used;
  // Only a prelude that passes its checks says how much more to buffer.
  const std::optional<std::size_t> total = CheckPrelude(carried_);
  if (!total) return bytes.size();
  used = carry_up_to(*total, used);
  if (carried_.size() < *total) return used;
  completed_.swap(carried_);  // carried_ takes completed_'s (cleared) buffer
  DecodeMessage(completed_);
  return used;
}

std::optional<std::size_t> EventStreamDecoder::CheckPrelude(std::string_view input) {
  const std::string_view prelude = input.substr(0, kPreludeBytes);
  const std::uint32_t total = U32(prelude, 0);
  const std::uint32_t headers = U32(prelude, 4);
  if (hashing::Crc32(prelude.substr(0, 8)) != U32(prelude, 8)) {
    Fail(
        fmt::format("an event-stream prelude's CRC does not match (total length {}, headers "
                    "length {})",
                    total, headers));
  } else if (total < kPreludeBytes + kCrcBytes || headers > total - kPreludeBytes - kCrcBytes) {
    Fail(fmt::format("an event-stream message claims {} bytes with {} bytes of headers", total,
                     headers));
  } else if (total > max_message_bytes_) {
    Fail(fmt::format("an event-stream message claims {} bytes, more than {}", total,
                     max_message_bytes_));
  } else {
    return total;
  }
  return std::nullopt;
}

std::size_t EventStreamDecoder::DecodeMessages(std::string_view input) {
  std::size_t at = 0;
  while (!error_ && input.size() - at >= kPreludeBytes) {
    const std::optional<std::size_t> total = CheckPrelude(input.substr(at));
    if (!total || input.size() - at < *total) break;  // an error, or the rest comes later
    if (DecodeMessage(input.substr(at, *total))) at += *total;
  }
  return at;
}

bool EventStreamDecoder::DecodeMessage(std::string_view message) {
  const std::size_t crc_at = message.size() - kCrcBytes;
  // The message's CRC covers the prelude too, whose first 8 bytes' CRC was just checked to be
  // the prelude's last 4: it continues from there rather than reading those bytes again.
  constexpr std::size_t kPreludeCrcAt = kPreludeBytes - kCrcBytes;
  const std::uint32_t prelude_crc = U32(message, kPreludeCrcAt);
  if (hashing::Crc32(message.substr(kPreludeCrcAt, crc_at - kPreludeCrcAt), prelude_crc) !=
      U32(message, crc_at)) {
    Fail("an event-stream message's CRC does not match its bytes");
    return false;
  }
  const std::size_t headers_length = U32(message, 4);
  std::string why;
  const std::optional<Headers> headers =
      ReadHeaders(message.substr(kPreludeBytes, headers_length), why);
  if (!headers) {
    Fail("an event-stream message's headers are broken: " + why);
    return false;
  }
  const std::string_view payload =
      message.substr(kPreludeBytes + headers_length, crc_at - kPreludeBytes - headers_length);
  const auto prefixed = [&](std::string_view prefix, std::string_view name) {
    return std::string_view(names_.emplace_back(fmt::format("{}{}", prefix, name)));
  };
  if (headers->message_type == "event" && !headers->event_type.empty()) {
    views_.push_back({headers->event_type, payload, ""});
  } else if (headers->message_type == "exception" && !headers->exception_type.empty()) {
    views_.push_back({prefixed(kEventStreamExceptionPrefix, headers->exception_type), payload, ""});
  } else if (headers->message_type == "error" && !headers->error_code.empty()) {
    views_.push_back(
        {prefixed(kEventStreamErrorPrefix, headers->error_code), headers->error_message, ""});
  } else {
    Fail(fmt::format("an event-stream message of type '{}' without the header that names it",
                     headers->message_type));
    return false;
  }
  return true;
}

void EventStreamDecoder::Fail(std::string message) { error_ = SseError{std::move(message)}; }

std::size_t EventStreamDecoder::Finish() {
  const std::size_t discarded = carried_.size();
  carried_.clear();
  return discarded;
}

}  // namespace faultline::ref
