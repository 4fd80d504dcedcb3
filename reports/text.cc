#include "reports/text.h"

#include <algorithm>
#include <cmath>

#include "fmt/format.h"

namespace faultline::report::internal {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

struct CodePoint {
  char32_t value = 0;
  std::size_t length = 1;
  bool valid = false;
};

// Decodes the UTF-8 sequence at text[i]; an invalid byte decodes as {valid = false, length 1}.
CodePoint DecodeAt(std::string_view text, std::size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  if (lead < 0x80) return {lead, 1, true};
  std::size_t length = 0;
  char32_t value = 0;
  char32_t minimum = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, value = lead & 0x1F, minimum = 0x80;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3, value = lead & 0x0F, minimum = 0x800;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, value = lead & 0x07, minimum = 0x10000;
  } else {
    return {};
  }
  if (i + length > text.size()) return {};
  for (std::size_t k = 1; k < length; ++k) {
    const auto next = static_cast<unsigned char>(text[i + k]);
    if ((next & 0xC0) != 0x80) return {};
    value = value << 6 | (next & 0x3F);
  }
  const bool surrogate = value >= 0xD800 && value <= 0xDFFF;
  if (value < minimum || value > 0x10FFFF || surrogate) return {};
  return {value, length, true};
}

// Calls `emit(code_point, bytes)` for every code point; invalid bytes arrive as U+FFFD.
template <typename Emit>
void ForEachCodePoint(std::string_view text, Emit emit) {
  for (std::size_t i = 0; i < text.size();) {
    const CodePoint cp = DecodeAt(text, i);
    if (cp.valid) {
      emit(cp.value, text.substr(i, cp.length));
    } else {
      emit(char32_t{0xFFFD}, kReplacement);
    }
    i += cp.length;
  }
}

std::string ControlText(char32_t c) {
  if (c < 0x100) return fmt::format("\\x{:02X}", static_cast<unsigned>(c));
  return fmt::format("\\u{:04X}", static_cast<unsigned>(c));
}

}  // namespace

std::string RepairUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  ForEachCodePoint(text, [&](char32_t, std::string_view bytes) { out += bytes; });
  return out;
}

std::string XmlEscape(std::string_view text, bool attribute) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  ForEachCodePoint(text, [&](char32_t c, std::string_view bytes) {
    switch (c) {
      case '&':
        out += "&amp;";
        return;
      case '<':
        out += "&lt;";
        return;
      case '>':
        out += "&gt;";
        return;
      case '"':
        out += "&quot;";
        return;
      case '\'':
        out += "&#39;";
        return;
      case '\t':
        out += attribute ? "&#9;" : "\t";
        return;
      case '\n':
        out += attribute ? "&#10;" : "\n";
        return;
      case '\r':
        out += attribute ? "&#13;" : "\r";
        return;
      default:
        break;
    }
    if (c < 0x20 || c == 0xFFFE || c == 0xFFFF) {
      out += ControlText(c);
    } else {
      out += bytes;
    }
  });
  return out;
}

std::string MarkdownCell(std::string_view text) {
  static constexpr std::string_view kSpecials = "\\`*_[]|~";
  std::string out;
  out.reserve(text.size() + 8);
  ForEachCodePoint(text, [&](char32_t c, std::string_view bytes) {
    if (c == '&') return void(out += "&amp;");
    if (c == '<') return void(out += "&lt;");
    if (c == '>') return void(out += "&gt;");
    if (c == '\n') return void(out += "<br>");
    if (c == '\r') return;
    if (c == '\t') return void(out += ' ');
    if (c < 0x20 || c == 0x7F) return void(out += ControlText(c));
    if (c < 0x80 && kSpecials.find(static_cast<char>(c)) != std::string_view::npos) out += '\\';
    out += bytes;
  });
  return out;
}

std::string Shorten(std::string_view text, std::size_t max_chars) {
  std::string out;
  std::size_t count = 0;
  bool cut = false;
  ForEachCodePoint(text, [&](char32_t, std::string_view bytes) {
    if (cut) return;
    if (count + 1 > max_chars) {
      cut = true;
      return;
    }
    out += bytes;
    ++count;
  });
  if (cut) {
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "…";
  }
  return out;
}

std::string_view FirstLine(std::string_view text) { return text.substr(0, text.find('\n')); }

std::string FormatMs(double ms) {
  const double magnitude = std::fabs(ms);
  if (magnitude < 10) return fmt::format("{:.1f} ms", ms);
  if (magnitude < 1000) return fmt::format("{:.0f} ms", ms);
  if (magnitude < 100000) return fmt::format("{:.2f} s", ms / 1000);
  return fmt::format("{:.0f} s", ms / 1000);
}

std::string FormatMs(const std::optional<double>& ms) { return ms ? FormatMs(*ms) : "–"; }

std::string FormatBytes(std::uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  const double kib = static_cast<double>(bytes) / 1024;
  if (kib < 1024) return fmt::format("{:.1f} KiB", kib);
  return fmt::format("{:.1f} MiB", kib / 1024);
}

std::string JUnitSeconds(double ms) { return fmt::format("{:.3f}", ms / 1000); }

std::string_view Category(std::string_view scenario_name) {
  const std::size_t slash = scenario_name.find('/');
  if (slash == std::string_view::npos || slash == 0) return "uncategorized";
  return scenario_name.substr(0, slash);
}

std::string InterruptionText(const RunResult& result) {
  if (!result.interrupted) return {};
  const int finished = static_cast<int>(result.scenarios.size());
  return fmt::format(
      "by {}: {} of {} runs finished; the other {} were not run or were stopped, and are not "
      "judged",
      result.interrupted->reason, finished, result.interrupted->planned_runs,
      std::max(0, result.interrupted->planned_runs - finished));
}

}  // namespace faultline::report::internal
