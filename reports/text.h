// Text helpers shared by the renderers: escaping for XML/HTML and Markdown table cells, UTF-8
// repair, shortening, and the human formats of times and sizes. Evidence strings come from the
// network (a server's bytes, an adapter's stderr), so every helper accepts any byte string.
//
// Pure functions. Thread-safety: none needed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "reports/run_result.h"

namespace faultline::report::internal {

// Replaces every invalid UTF-8 sequence with U+FFFD.
std::string RepairUtf8(std::string_view text);

// Escapes text for XML 1.0 (and HTML) content and attribute values: & < > " ' become entities;
// \t \n \r become character references inside attributes (so attribute normalisation keeps
// them); the other C0 controls and U+FFFE/U+FFFF, which XML 1.0 cannot carry even escaped, are
// shown as "\xNN" / "\uFFFE"; invalid UTF-8 becomes U+FFFD.
std::string XmlEscape(std::string_view text, bool attribute = false);

// One Markdown table cell (GitHub flavour): | and the Markdown specials are backslash-escaped,
// & < > become entities, a line break becomes <br>, other controls "\xNN".
std::string MarkdownCell(std::string_view text);

// At most `max_chars` code points; a cut text ends with "…". Counts code points, never splits one.
std::string Shorten(std::string_view text, std::size_t max_chars);

// The first line of `text` (for one-line summaries of multi-line evidence).
std::string_view FirstLine(std::string_view text);

// "0.4 ms", "12.3 ms", "850 ms", "2.35 s", "125 s".
std::string FormatMs(double ms);
// FormatMs, or "–" when absent.
std::string FormatMs(const std::optional<double>& ms);
// "512 B", "1.5 KiB", "2.0 MiB".
std::string FormatBytes(std::uint64_t bytes);
// Milliseconds as JUnit seconds: "0.012".
std::string JUnitSeconds(double ms);

// How every report states an interrupted run: "by SIGINT: 101 of 200 runs finished; the other 99
// were not run or were stopped, and are not judged". "" when the run was not interrupted.
std::string InterruptionText(const RunResult& result);

// The category of a scenario name: the part before the first '/', or "uncategorized".
std::string_view Category(std::string_view scenario_name);

}  // namespace faultline::report::internal
