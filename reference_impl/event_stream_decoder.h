// A decoder of the AWS event stream encoding (application/vnd.amazon.eventstream): Bedrock's
// ConverseStream.
//
// The stream is a sequence of binary messages, each
//   total length (u32 BE) | headers length (u32 BE) | prelude CRC-32 (u32 BE)
//   headers (name length u8, name, value type u8, value) | payload | message CRC-32 (u32 BE)
// Both checksums are checked, and the lengths before anything is buffered: a message that claims
// more than the limit is refused at once, however the bytes are split, so the network cannot grow
// memory without bound. Header values of every type are skipped correctly; the string headers
// :message-type, :event-type, :exception-type, :error-code and :error-message are read.
//
// Each complete message is handed over as an SseEventView, so that the dialect decoders read every
// framing through one interface:
//   :message-type event       type = :event-type                      data = the payload
//   :message-type exception   type = "exception:" + :exception-type   data = the payload
//   :message-type error       type = "error:" + :error-code           data = :error-message
// Any other message type, a message without the header its type needs, a bad checksum or an
// impossible length is an error, after which every call returns only that error.
//
// Performance: messages inside one feed are handed over as views of the caller's bytes; only a
// message cut by a feed boundary is copied, and only its own bytes. One decoder per response
// body; not thread-safe.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reference_impl/sse_decoder.h"

namespace faultline::ref {

// The prefixes by which a view's type says it is not an event (see above).
inline constexpr std::string_view kEventStreamExceptionPrefix = "exception:";
inline constexpr std::string_view kEventStreamErrorPrefix = "error:";

class EventStreamDecoder {
 public:
  // AWS caps a message's payload at 16 MiB and its headers at 128 KiB.
  explicit EventStreamDecoder(std::size_t max_message_bytes = (16 << 20) + (128 << 10) + 16)
      : max_message_bytes_(max_message_bytes) {}

  // Decodes the next bytes: the messages they complete, in order, then any error. The events
  // stay valid until the next call, and only while `bytes` is alive and unchanged.
  SseFeedResult Feed(std::string_view bytes);
  // The body ended: the bytes of an unfinished last message are discarded; returns how many.
  std::size_t Finish();

 private:
  // Completes the message carried over from earlier feeds with the start of `bytes`, and decodes
  // it once whole; returns how many bytes of them it took.
  std::size_t CompleteCarriedMessage(std::string_view bytes);
  // The total length the prelude at the start of `input` (12 bytes at least) claims, once its CRC
  // and lengths are checked; nullopt, having failed, when they are wrong.
  std::optional<std::size_t> CheckPrelude(std::string_view input);
  // Decodes the whole messages at the start of `input`; returns how many bytes they took.
  std::size_t DecodeMessages(std::string_view input);
  bool DecodeMessage(std::string_view message);
  void Fail(std::string message);

  std::size_t max_message_bytes_;
  std::string carried_;    // the start of a message cut by a feed boundary
  std::string completed_;  // the carried message this feed completed, which a view points into
  std::deque<std::string> names_;  // this feed's prefixed types (stable addresses)
  std::vector<SseEventView> views_;
  std::optional<SseError> error_;
};

}  // namespace faultline::ref
