// The AWS event stream encoding (application/vnd.amazon.eventstream), as the fake provider writes
// it for Bedrock's ConverseStream: each event is one binary message
//
//   total length (u32 BE) | headers length (u32 BE) | prelude CRC-32 (u32 BE)
//   headers: name length (u8) | name | value type (u8, 7 = string) | value length (u16 BE) | value
//   payload | message CRC-32 (u32 BE, over every byte before it)
//
// with the string headers `:event-type`, `:content-type` and `:message-type` ("event"), or, for
// a modelled error inside the stream, `:exception-type` and `:message-type` "exception". A dialect
// writer names an exception event "exception:<type>" (kExceptionPrefix); the encoder turns that
// into the exception headers.
//
// A message's lengths and checksums cover its payload, so a message whose payload changed after
// it was encoded (the per-request ids and token counts that byte templates fill in) must be
// sealed again: Reseal().
//
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fake_provider/wire/dialect.h"

namespace faultline::provider::event_stream {

// The name prefix by which a writer marks an event as a modelled exception.
inline constexpr std::string_view kExceptionPrefix = "exception:";
// The fixed sizes of the framing: the prelude (two lengths and their CRC) and the trailing CRC.
inline constexpr std::size_t kPreludeBytes = 12;
inline constexpr std::size_t kMessageCrcBytes = 4;

// One message for `event`: an event (or, with kExceptionPrefix, an exception) whose JSON payload
// is `event.data`.
std::string EncodeEvent(const SseEvent& event);

// Re-computes the total length, the prelude CRC and the message CRC of the one message that
// starts at `start` in `bytes` and runs to its end; its headers length must be right.
void Reseal(std::string& bytes, std::size_t start);

// Where split_writes cuts a message: inside the first multi-byte UTF-8 character of its payload
// when `inside_utf8_char` (else, or when it has none, in the middle of the payload). 0 for a
// message too short to cut.
std::size_t SplitPoint(std::string_view message, bool inside_utf8_char);

}  // namespace faultline::provider::event_stream
