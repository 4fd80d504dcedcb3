// The client lane of the timeline SVG: response/start triangles, assistant/chunk ticks,
// response/interrupted crosses with a bracket over the scheduled retry wait, the terminal event
// (committed green, failed red with its code), and the cancel line across every lane.
#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "fmt/format.h"
#include "reports/text.h"
#include "reports/timeline.h"
#include "reports/timeline_layout.h"

namespace faultline::report::internal {
namespace {

struct ClientRows {
  double label_y[2] = {0, 0};  // two rows of marker labels
  double marker_y = 0;         // the first row of markers, and chunk ticks
  double marker_y2 = 0;        // the second: a marker that would cover another one
  double bracket_y = 0;        // retry brackets
  double note_y = 0;           // their labels
  LabelRows labels{2};
  LabelRows markers{2};
  LabelRows notes{1};
};

ClientRows MakeRows(const Geometry& g) {
  const double top = g.client_top;
  ClientRows rows;
  rows.label_y[0] = top + 13;
  rows.label_y[1] = top + 26;
  rows.marker_y = top + 40;
  rows.marker_y2 = top + 53;
  rows.bracket_y = top + 69;
  rows.note_y = top + 83;
  return rows;
}

// The height of a marker spanning [x - 6, x + 8): the first row where it covers no other marker
// (a retry's start sits right after the interruption before it), else the first row anyway.
double MarkerY(ClientRows& rows, double x) {
  return rows.markers.Place(x - 6, 14) == 1 ? rows.marker_y2 : rows.marker_y;
}

// A label above the markers in the first free row; the shorter form when the long one has no
// room; none when neither fits (the marker's tooltip still says it). Kept inside the picture:
// a label of a marker near the right edge ends at the edge instead of being cut off.
void Label(ClientRows& rows, double x, std::string_view text, std::string_view short_text,
           std::string_view color, std::string& svg) {
  const auto place = [&](std::string_view candidate) {
    const double width = TextWidth(candidate) * 1.1;  // bold: wider than TextWidth's average
    const double left = std::min(x - 2, kSvgWidth - 2 - width);
    return std::pair{rows.labels.Place(left, width), left};
  };
  auto [row, left] = place(text);
  std::string_view shown = text;
  if (row < 0 && !short_text.empty()) {
    std::tie(row, left) = place(short_text);
    shown = short_text;
  }
  if (row < 0) return;
  Emit(svg, R"(<text class="marker-label" x="{:.1f}" y="{:.1f}" fill="{}">{}</text>)", left,
       rows.label_y[row], color, XmlEscape(shown));
}

std::string Tooltip(const TimelineEvent& event) {
  std::string text = event.before_zero_ms
                         ? fmt::format("{} {} before the first request", event.type,
                                       FormatMs(*event.before_zero_ms))
                         : fmt::format("{} at {}", event.type, FormatMs(event.t_ms));
  if (event.attempt > 0) text += fmt::format(", attempt {}", event.attempt);
  if (!event.failure_code.empty()) {
    text += fmt::format(": {} ({})", event.failure_code, event.failure_class);
  }
  if (event.scheduled_retry_ms) {
    text += fmt::format(", retry in {} ({})", FormatMs(*event.scheduled_retry_ms),
                        event.delay_source.empty() ? "unknown source" : event.delay_source);
  }
  return XmlEscape(text);
}

void DrawChunks(const Timeline& timeline, const Geometry& g, const ClientRows& rows,
                std::string& svg) {
  double last_x = -1;
  std::string path;
  for (const TimelineEvent& event : timeline.client) {
    if (event.type != "assistant/chunk") continue;
    const double x = std::round(g.X(event.t_ms) * 2) / 2;
    if (x == last_x) continue;  // one tick per half unit: a 10k-chunk stream stays small
    fmt::format_to(std::back_inserter(path), "M{:.1f} {:.1f}v10", x, rows.marker_y - 5);
    last_x = x;
  }
  if (!path.empty()) Emit(svg, R"(<path class="chunks" d="{}"><title>chunks</title></path>)", path);
}

void DrawHello(const TimelineEvent& event, const Geometry& g, ClientRows& rows, std::string& svg) {
  const double x = g.X(event.t_ms);
  Emit(svg, R"(<circle class="hello" cx="{:.1f}" cy="{:.1f}" r="3"><title>{}</title></circle>)", x,
       MarkerY(rows, x), Tooltip(event));
  Label(rows, x - 3, "hello", "", "#5f6670", svg);
}

void DrawStart(const TimelineEvent& event, const Geometry& g, ClientRows& rows, std::string& svg) {
  const double x = g.X(event.t_ms);
  const double y = MarkerY(rows, x);
  Emit(svg,
       R"(<path class="start" fill="{}" d="M{:.1f} {:.1f}l8 6l-8 6z"><title>{}</title></path>)",
       kStartColor, x, y - 6, Tooltip(event));
  const std::string label =
      event.attempt > 0 ? fmt::format("start #{}", event.attempt) : std::string("start");
  const std::string short_label = event.attempt > 0 ? fmt::format("#{}", event.attempt) : "";
  Label(rows, x, label, short_label, kStartColor, svg);
}

// The start of the attempt after `event`, to show how the real wait compared with the plan.
std::optional<double> NextStart(const Timeline& timeline, const TimelineEvent& event) {
  for (const TimelineEvent& other : timeline.client) {
    if (other.type == "response/start" && other.t_ms >= event.t_ms &&
        (event.attempt == 0 || other.attempt > event.attempt)) {
      return other.t_ms;
    }
  }
  return std::nullopt;
}

std::optional<double> TerminalTime(const Timeline& timeline) {
  for (const TimelineEvent& event : timeline.client) {
    if (event.type == "response/committed" || event.type == "response/failed") return event.t_ms;
  }
  return std::nullopt;
}

void DrawRetryBracket(const Timeline& timeline, const TimelineEvent& event, const Geometry& g,
                      ClientRows& rows, std::string& svg) {
  if (!event.scheduled_retry_ms) return;
  const double x1 = g.X(event.t_ms);
  const double x2 = std::max(x1 + 1, g.X(event.t_ms + *event.scheduled_retry_ms));
  const double y = rows.bracket_y;
  // A wait cut short by the terminal event (a cancel) is drawn solid up to it, dotted after.
  const std::optional<double> terminal = TerminalTime(timeline);
  const double cut = terminal ? std::clamp(g.X(*terminal), x1, x2) : x2;
  Emit(
      svg,
      R"(<path class="bracket" stroke="{}" d="M{:.1f} {:.1f}V{:.1f}H{:.1f}{}"><title>{}</title></path>)",
      kInterruptColor, x1, y - 6, y, cut, cut == x2 ? fmt::format("V{:.1f}", y - 6) : "",
      Tooltip(event));
  if (cut < x2) {
    Emit(svg, R"(<path class="bracket moot" stroke="{}" d="M{:.1f} {:.1f}H{:.1f}V{:.1f}"/>)",
         kInterruptColor, cut, y, x2, y - 6);
  }
  if (auto next = NextStart(timeline, event); next && std::abs(g.X(*next) - x2) > 2) {
    Emit(svg, R"(<path class="drift" d="M{:.1f} {:.1f}H{:.1f}"/>)", x2, y, g.X(*next));
  }
  const std::string source = event.delay_source.empty() ? "retry" : event.delay_source;
  const std::string note = fmt::format("{} {}", source, FormatMs(*event.scheduled_retry_ms));
  if (rows.notes.Place(x1, TextWidth(note)) >= 0) {
    Emit(svg, R"(<text class="note" x="{:.1f}" y="{:.1f}">{}</text>)", x1, rows.note_y,
         XmlEscape(note));
  }
}

void DrawInterrupted(const Timeline& timeline, const TimelineEvent& event, const Geometry& g,
                     ClientRows& rows, std::string& svg) {
  const double x = g.X(event.t_ms);
  const double y = MarkerY(rows, x);
  Emit(
      svg,
      R"(<path class="cross" stroke="{}" d="M{:.1f} {:.1f}l10 10m0 -10l-10 10"><title>{}</title></path>)",
      kInterruptColor, x - 5, y - 5, Tooltip(event));
  const std::string code = event.failure_code.empty() ? "interrupted" : event.failure_code;
  Label(rows, x - 4, code, "", kInterruptColor, svg);
  DrawRetryBracket(timeline, event, g, rows, svg);
}

void DrawTerminal(const TimelineEvent& event, const Geometry& g, ClientRows& rows,
                  std::string& svg) {
  const bool committed = event.type == "response/committed";
  const std::string_view color = committed ? kCommitColor : kFailColor;
  const double x = g.X(event.t_ms);
  const double y = MarkerY(rows, x);
  Emit(
      svg,
      R"(<line class="terminal-line" stroke="{0}" x1="{1:.1f}" y1="{2:.1f}" x2="{1:.1f}" y2="{3:.1f}"/>)",
      color, x, y, g.lanes_bottom);
  Emit(
      svg,
      R"(<circle class="terminal" fill="{}" cx="{:.1f}" cy="{:.1f}" r="6"><title>{}</title></circle>)",
      color, x, y, Tooltip(event));
  const std::string code = event.failure_code.empty() ? "" : " " + event.failure_code;
  const std::string label = committed ? "committed" : "failed" + code;
  Label(rows, x - 6, label, committed ? "" : event.failure_code, color, svg);
}

void DrawCancel(const Timeline& timeline, const Geometry& g, ClientRows& rows, std::string& svg) {
  if (!timeline.cancel_ms) return;
  const double x = g.X(*timeline.cancel_ms);
  Emit(
      svg,
      R"(<line class="cancel" x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}"><title>cancel at {3}</title></line>)",
      x, g.client_top + 4, g.lanes_bottom, XmlEscape(FormatMs(*timeline.cancel_ms)));
  Label(rows, x + 4, "cancel", "", "#222", svg);
}

}  // namespace

void DrawClientLane(const Timeline& timeline, const Geometry& g, std::string& svg) {
  ClientRows rows = MakeRows(g);
  Emit(svg, R"(<rect class="client-bg" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}"/>)",
       kPlotLeft, g.client_top, kSvgWidth - kPlotLeft - kPlotRight, kClientHeight - 6);
  Emit(svg, R"(<text class="lane-name" x="8" y="{:.1f}">client</text>)", rows.marker_y + 4);
  if (timeline.client.empty()) {
    Emit(svg, R"(<text class="lane-end" x="8" y="{:.1f}">no lifecycle events</text>)",
         rows.marker_y + 17);
  }
  DrawChunks(timeline, g, rows, svg);
  // Labels go to the first free row, so the most telling markers are drawn first: the outcome,
  // then failures, the cancel, the attempts, and the adapter's hello last.
  for (const TimelineEvent& event : timeline.client) {
    if (event.type == "response/committed" || event.type == "response/failed") {
      DrawTerminal(event, g, rows, svg);
    }
  }
  for (const TimelineEvent& event : timeline.client) {
    if (event.type == "response/interrupted") DrawInterrupted(timeline, event, g, rows, svg);
  }
  DrawCancel(timeline, g, rows, svg);
  for (const TimelineEvent& event : timeline.client) {
    if (event.type == "response/start") DrawStart(event, g, rows, svg);
  }
  for (const TimelineEvent& event : timeline.client) {
    if (event.type == "adapter/hello") DrawHello(event, g, rows, svg);
  }
}

}  // namespace faultline::report::internal
