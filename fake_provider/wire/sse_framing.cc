#include "fake_provider/wire/sse_framing.h"

#include <array>
#include <utility>

#include "fake_provider/wire/event_stream_encoder.h"

namespace faultline::provider {
namespace {

using LineEnding = scenario::Framing::LineEnding;

constexpr std::string_view kBom = "\xEF\xBB\xBF";
// The mixed cycle: every line takes the next ending in turn.
constexpr std::array<std::string_view, 3> kMixedCycle = {"\n", "\r\n", "\r"};

std::string_view FixedEnding(LineEnding ending) {
  switch (ending) {
    case LineEnding::kLf:
      return "\n";
    case LineEnding::kCr:
      return "\r";
    case LineEnding::kCrlf:
    case LineEnding::kMixed:
      break;
  }
  return "\r\n";
}

// Only objects are cut: "[DONE]" starts like a JSON array but is not JSON.
bool StartsJsonObject(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t");
  return first != std::string_view::npos && text[first] == '{';
}

// Appends the pieces of one JSON line, cut after '{', '[' and ',' outside strings.
void SplitJson(std::string_view json, std::vector<std::string_view>& out) {
  bool in_string = false;
  bool escaped = false;
  std::size_t start = 0;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[' || c == ',') {
      out.push_back(json.substr(start, i + 1 - start));
      start = i + 1;
    }
  }
  if (start < json.size()) out.push_back(json.substr(start));
}

}  // namespace

SseFramer::SseFramer(const scenario::Framing& framing, scenario::StreamFraming stream)
    : framing_(framing), stream_(stream) {}

ByteTemplate SseFramer::Template(std::string framed, const SlotValues& placeholders) const {
  if (stream_ == scenario::StreamFraming::kEventStream) {
    return ByteTemplate::SealedMessage(std::move(framed), placeholders);
  }
  return ByteTemplate::WithHoles(std::move(framed), placeholders);
}

std::size_t SseFramer::SplitPointOf(std::string_view framed) const {
  if (stream_ == scenario::StreamFraming::kEventStream) {
    return event_stream::SplitPoint(framed, framing_.split_utf8);
  }
  return SplitPoint(framed, framing_.split_utf8);
}

std::string_view SseFramer::NextEnding(bool blank_line) {
  if (framing_.line_ending != LineEnding::kMixed) return FixedEnding(framing_.line_ending);
  std::string_view ending = kMixedCycle[line_count_++ % kMixedCycle.size()];
  // "\r" then an empty "\n"-terminated line would read as a single CRLF and swallow the
  // blank line that dispatches the event.
  if (blank_line && previous_was_cr_ && ending == "\n") ending = "\r\n";
  return ending;
}

void SseFramer::AppendLine(std::string& out, std::string_view text) {
  const std::string_view ending = NextEnding(text.empty());
  out.append(text);
  out.append(ending);
  previous_was_cr_ = ending == "\r";
}

void SseFramer::AppendBomOnce(std::string& out) {
  if (!started_ && framing_.bom) out.append(kBom);
  started_ = true;
}

std::string SseFramer::Event(const SseEvent& event) {
  if (stream_ == scenario::StreamFraming::kNdjson) return event.data + "\n";
  if (stream_ == scenario::StreamFraming::kEventStream) return event_stream::EncodeEvent(event);
  std::string out;
  AppendBomOnce(out);
  if (framing_.comments) AppendLine(out, kFramingComment);
  if (event.name.empty() && event.data.empty()) {
    AppendLine(out, kKeepAliveComment);
    AppendLine(out, "");
    return out;
  }
  if (!event.name.empty()) AppendLine(out, "event: " + event.name);
  std::string line;
  for (std::string_view piece : DataLines(event.data, framing_.multiline_data)) {
    line.assign("data: ");
    line.append(piece);
    AppendLine(out, line);
  }
  AppendLine(out, "");
  return out;
}

std::string SseFramer::Raw(std::string_view bytes) {
  std::string out;
  AppendBomOnce(out);
  out.append(bytes);
  return out;
}

std::string HeartbeatText(const SseEvent& heartbeat, LineEnding ending) {
  scenario::Framing framing;
  framing.line_ending = ending == LineEnding::kMixed ? LineEnding::kCrlf : ending;
  SseFramer framer(framing);
  return framer.Event(heartbeat);
}

std::vector<std::string_view> DataLines(std::string_view data, bool multiline) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = data.find_first_of("\r\n", start);
    const std::string_view line = data.substr(start, end - start);
    if (multiline && StartsJsonObject(line)) {
      SplitJson(line, lines);
    } else {
      lines.push_back(line);
    }
    if (end == std::string_view::npos) break;
    start = end + ((data[end] == '\r' && end + 1 < data.size() && data[end + 1] == '\n') ? 2 : 1);
  }
  return lines;
}

std::size_t SplitPoint(std::string_view framed, bool inside_utf8_char) {
  if (framed.size() < 2) return 0;
  const std::size_t body_start = framed.starts_with(kBom) ? kBom.size() : 0;
  if (inside_utf8_char) {
    for (std::size_t i = body_start; i + 1 < framed.size(); ++i) {
      const auto byte = static_cast<unsigned char>(framed[i]);
      if ((byte & 0xC0) == 0xC0) return i + 1;  // after a lead byte, before its continuation
    }
  }
  std::size_t line = framed.find("data:", body_start);
  if (line == std::string_view::npos) line = body_start;
  std::size_t line_end = framed.find_first_of("\r\n", line);
  if (line_end == std::string_view::npos) line_end = framed.size();
  std::size_t cut = line + (line_end - line) / 2;
  if (cut == 0) cut = 1;
  return cut < framed.size() ? cut : framed.size() / 2;
}

}  // namespace faultline::provider
