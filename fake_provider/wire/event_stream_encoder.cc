#include "fake_provider/wire/event_stream_encoder.h"

#include "hashing/crc32.h"

namespace faultline::provider::event_stream {
namespace {

constexpr std::uint8_t kStringType = 7;

void AppendU32(std::string& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((value >> shift) & 0xFFu));
  }
}

void WriteU32(std::string& bytes, std::size_t at, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) {
    bytes[at + i] = static_cast<char>((value >> (24 - 8 * i)) & 0xFFu);
  }
}

std::uint32_t ReadU32(std::string_view bytes, std::size_t at) {
  std::uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value = (value << 8) | static_cast<unsigned char>(bytes[at + i]);
  return value;
}

void AppendHeader(std::string& out, std::string_view name, std::string_view value) {
  out.push_back(static_cast<char>(name.size()));
  out.append(name);
  out.push_back(static_cast<char>(kStringType));
  out.push_back(static_cast<char>((value.size() >> 8) & 0xFFu));
  out.push_back(static_cast<char>(value.size() & 0xFFu));
  out.append(value);
}

}  // namespace

std::string EncodeEvent(const SseEvent& event) {
  std::string headers;
  if (event.name.starts_with(kExceptionPrefix)) {
    AppendHeader(headers, ":exception-type",
                 std::string_view(event.name).substr(kExceptionPrefix.size()));
    AppendHeader(headers, ":content-type", "application/json");
    AppendHeader(headers, ":message-type", "exception");
  } else {
    AppendHeader(headers, ":event-type", event.name);
    AppendHeader(headers, ":content-type", "application/json");
    AppendHeader(headers, ":message-type", "event");
  }
  std::string message;
  message.reserve(kPreludeBytes + headers.size() + event.data.size() + kMessageCrcBytes);
  AppendU32(message, 0);  // the lengths and checksums are written by Reseal
  AppendU32(message, static_cast<std::uint32_t>(headers.size()));
  AppendU32(message, 0);
  message.append(headers);
  message.append(event.data);
  AppendU32(message, 0);
  Reseal(message, 0);
  return message;
}

void Reseal(std::string& bytes, std::size_t start) {
  const std::size_t total = bytes.size() - start;
  WriteU32(bytes, start, static_cast<std::uint32_t>(total));
  const std::string_view view = bytes;
  WriteU32(bytes, start + 8, hashing::Crc32(view.substr(start, 8)));
  const std::size_t crc_at = bytes.size() - kMessageCrcBytes;
  WriteU32(bytes, crc_at, hashing::Crc32(view.substr(start, crc_at - start)));
}

std::size_t SplitPoint(std::string_view message, bool inside_utf8_char) {
  if (message.size() < kPreludeBytes + kMessageCrcBytes) return 0;
  const std::size_t payload = kPreludeBytes + ReadU32(message, 4);
  const std::size_t end = message.size() - kMessageCrcBytes;
  if (payload >= end) return message.size() / 2;
  if (inside_utf8_char) {
    for (std::size_t i = payload; i + 1 < end; ++i) {
      const auto byte = static_cast<unsigned char>(message[i]);
      if ((byte & 0xC0) == 0xC0) return i + 1;  // after a lead byte, before its continuation
    }
  }
  return payload + (end - payload) / 2;
}

}  // namespace faultline::provider::event_stream
