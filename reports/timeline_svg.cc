// RenderTimelineSvg: a Timeline as one inline SVG. Layout, top to bottom: the client lane (starts,
// chunks, interruptions with their retry bracket, the terminal event), one lane per journaled
// request (a bar from arrival to end coloured by how it ended, the cumulative bytes as a step line,
// stalls hatched), then the time axis. Drawn in a 1000-unit-wide viewBox that scales to the page.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>

#include "fmt/format.h"
#include "reports/text.h"
#include "reports/timeline.h"
#include "reports/timeline_layout.h"

namespace faultline::report::internal {
namespace {

using Svg = std::string;

double NiceStep(double raw) {
  if (raw <= 0) return 1;
  const double base = std::pow(10.0, std::floor(std::log10(raw)));
  const double fraction = raw / base;
  if (fraction <= 1) return base;
  if (fraction <= 2) return 2 * base;
  if (fraction <= 5) return 5 * base;
  return 10 * base;
}

double TickStep(double end_ms) { return NiceStep(std::max(end_ms, 1.0) / 7); }

Geometry MakeGeometry(const Timeline& timeline) {
  Geometry g;
  const double step = TickStep(timeline.end_ms);
  g.span = std::max(step, std::ceil(timeline.end_ms * 1.02 / step) * step);
  if (timeline.calls > 1) {  // one lane per call, no client lane above them
    g.lanes_top = g.client_top;
    g.lanes_bottom = g.lanes_top + kCallLaneHeight * timeline.calls;
    g.height = g.lanes_bottom + kAxisHeight;
    return g;
  }
  // No request reached the provider: one empty lane says so.
  const std::size_t lanes = std::max<std::size_t>(1, timeline.lanes.size());
  g.lanes_bottom = g.lanes_top + kLaneHeight * static_cast<double>(lanes);
  g.height = g.lanes_bottom + kAxisHeight;
  return g;
}

std::string TickLabel(double t_ms, double step) {
  if (step >= 1000) return fmt::format("{:g} s", t_ms / 1000);
  if (step >= 100 && t_ms >= 1000) return fmt::format("{:g} s", t_ms / 1000);
  return fmt::format("{:g} ms", t_ms);
}

void DrawAxis(const Geometry& g, double end_ms, Svg& svg) {
  const double step = TickStep(end_ms);
  const double axis_y = g.lanes_bottom + 2;
  Emit(svg, R"(<line class="axis" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)", kPlotLeft,
       axis_y, kSvgWidth - kPlotRight, axis_y);
  const int ticks = static_cast<int>(std::lround(g.span / step));
  for (int i = 0; i <= ticks; ++i) {
    const double t = step * i;  // multiplied, not summed: no drift on 0.1-ms steps
    const double x = g.X(t);
    Emit(svg, R"(<line class="grid" x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}"/>)", x,
         g.client_top, axis_y + 4);
    Emit(svg, R"(<text class="tick" x="{:.1f}" y="{:.1f}">{}</text>)", x, axis_y + 16,
         TickLabel(t, step));
  }
}

std::string_view EndName(std::string_view end) {
  if (end == "closed-by-server") return "closed by server";
  if (end == "reset-by-server") return "reset by server";
  if (end == "client-closed") return "client closed";
  if (end == "stalled-client-gave-up") return "client gave up (stall)";
  if (end == "in-progress") return "still open";
  if (end == "server-shutdown") return "server shut down";
  if (end == "write-failed") return "write failed";
  return end;
}

std::string LaneName(const TimelineLane& lane) {
  const std::string who = lane.attempt > 0 ? fmt::format("attempt {}", lane.attempt)
                                           : fmt::format("request {}", lane.index);
  return lane.status > 0 ? fmt::format("{} · {}", who, lane.status) : who;
}

std::string LaneTooltip(const TimelineLane& lane) {
  std::string text =
      fmt::format("{}: {}, {} in {} writes, {} to {}", LaneName(lane), EndName(lane.end),
                  FormatBytes(lane.bytes_sent), lane.writes.size(), FormatMs(lane.arrived_ms),
                  FormatMs(lane.ended_ms));
  if (!lane.plan.empty()) text += "\nplan: " + lane.plan;
  return XmlEscape(text);
}

// The cumulative bytes as a step line inside the bar; writes closer than a pixel are merged.
void DrawBytes(const TimelineLane& lane, std::uint64_t max_bytes, double bar_y, double end_x,
               std::string_view color, const Geometry& g, Svg& svg) {
  if (lane.writes.empty() || max_bytes == 0) return;
  const double bottom = bar_y + kBarHeight - 2;
  auto y_of = [&](std::uint64_t bytes) {
    return bottom - static_cast<double>(bytes) / static_cast<double>(max_bytes) * (kBarHeight - 5);
  };
  std::string points = fmt::format("{:.1f},{:.1f}", g.X(lane.arrived_ms), bottom);
  double last_x = -1;
  double last_y = bottom;
  for (const TimelineWrite& write : lane.writes) {
    const double x = std::round(g.X(write.t_ms) * 2) / 2;
    const double y = y_of(write.cumulative_bytes);
    if (x != last_x) fmt::format_to(std::back_inserter(points), " {:.1f},{:.1f}", x, last_y);
    fmt::format_to(std::back_inserter(points), " {:.1f},{:.1f}", x, y);
    last_x = x;
    last_y = y;
  }
  fmt::format_to(std::back_inserter(points), " {:.1f},{:.1f}", std::max(end_x, last_x), last_y);
  Emit(svg, R"(<polyline class="bytes" stroke="{}" points="{}"/>)", color, points);
}

void DrawStalls(const TimelineLane& lane, double bar_y, std::string_view pattern_id,
                const Geometry& g, Svg& svg) {
  for (const TimelineGap& stall : lane.stalls) {
    const double x1 = g.X(stall.from_ms);
    const double width = std::max(1.0, g.X(stall.to_ms) - x1);
    const std::string label = "stall " + FormatMs(stall.to_ms - stall.from_ms);
    Emit(
        svg,
        R"svg(<rect class="stall" fill="url(#{})" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}"><title>{}</title></rect>)svg",
        pattern_id, x1, bar_y + 2, width, kBarHeight - 4, XmlEscape(label));
    const double label_width = TextWidth(label) + 8;
    if (label_width < width) {
      const double mid = x1 + width / 2;
      Emit(
          svg,
          R"(<rect class="stall-label-bg" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="14" rx="3"/>)",
          mid - label_width / 2, bar_y + kBarHeight / 2 - 7, label_width);
      Emit(svg, R"(<text class="stall-label" x="{:.1f}" y="{:.1f}">{}</text>)", mid,
           bar_y + kBarHeight / 2 + 4, XmlEscape(label));
    }
  }
}

void DrawLane(const TimelineLane& lane, std::size_t row, std::uint64_t max_bytes,
              std::string_view pattern_id, const Geometry& g, Svg& svg) {
  const double top = g.lanes_top + kLaneHeight * static_cast<double>(row);
  const double bar_y = top + (kLaneHeight - kBarHeight) / 2;
  const std::string_view color = LaneColor(lane.end, lane.status);
  const double x1 = g.X(lane.arrived_ms);
  const double x2 = std::max(x1 + 2, g.X(lane.ended_ms.value_or(g.span)));
  Emit(svg, R"(<g class="lane"><title>{}</title>)", LaneTooltip(lane));
  Emit(svg, R"(<text class="lane-name" x="8" y="{:.1f}">{}</text>)", top + 16,
       XmlEscape(LaneName(lane)));
  Emit(svg, R"(<text class="lane-end" x="8" y="{:.1f}" fill="{}">{}</text>)", top + 29, color,
       XmlEscape(EndName(lane.end)));
  Emit(
      svg,
      R"(<rect class="bar{}" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" stroke="{}" fill="{}"/>)",
      lane.ended_ms ? "" : " open", x1, bar_y, x2 - x1, kBarHeight, color, color);
  DrawStalls(lane, bar_y, pattern_id, g, svg);
  DrawBytes(lane, max_bytes, bar_y, x2, color, g, svg);
  if (lane.bytes_sent > 0) {
    Emit(svg, R"(<text class="bytes-label" x="{:.1f}" y="{:.1f}">{}</text>)", x2 + 4,
         bar_y + kBarHeight / 2 + 4, FormatBytes(lane.bytes_sent));
  }
  svg += "</g>";
}

std::uint64_t MaxBytes(const Timeline& timeline) {
  std::uint64_t max_bytes = 0;
  for (const TimelineLane& lane : timeline.lanes) {
    if (!lane.writes.empty()) max_bytes = std::max(max_bytes, lane.writes.back().cumulative_bytes);
  }
  return max_bytes;
}

}  // namespace

void RenderTimelineSvg(const Timeline& timeline, std::string_view title, std::string_view id,
                       std::ostream& out) {
  if (timeline.empty()) {
    // Plain text, not a scaled SVG: a scaled label is clipped on narrow screens.
    out << R"(<p class="timeline empty">No trace: nothing reached the provider.</p>)";
    return;
  }
  const Geometry g = MakeGeometry(timeline);
  const std::string pattern = fmt::format("{}-stall", id);
  Svg svg;
  Emit(
      svg,
      R"(<svg class="timeline" viewBox="0 0 {:.0f} {:.0f}" role="img" aria-label="{}">)"
      R"svg(<defs><pattern id="{}" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">)svg"
      R"(<rect width="6" height="6" fill="#fff8e1"/><line x1="0" y1="0" x2="0" y2="6" stroke="#f0a000" stroke-width="3"/></pattern></defs>)",
      kSvgWidth, g.height, XmlEscape(title, true), pattern);
  DrawAxis(g, timeline.end_ms, svg);
  if (timeline.calls > 1) {
    DrawCallLanes(timeline, g, svg);
    svg += "</svg>";
    out << svg;
    return;
  }
  const std::uint64_t max_bytes = MaxBytes(timeline);
  for (std::size_t row = 0; row < timeline.lanes.size(); ++row) {
    DrawLane(timeline.lanes[row], row, max_bytes, pattern, g, svg);
  }
  if (timeline.lanes.empty()) {
    Emit(svg,
         R"(<text class="lane-end" x="{:.1f}" y="{:.1f}">no request reached the provider</text>)",
         kPlotLeft + 8, g.lanes_top + kLaneHeight / 2 + 4);
  }
  DrawClientLane(timeline, g, svg);
  DrawBounds(
      timeline, g,
      [&](int attempt) -> std::optional<double> {
        for (std::size_t row = 0; row < timeline.lanes.size(); ++row) {
          if (timeline.lanes[row].attempt == attempt) {
            return g.lanes_top + kLaneHeight * static_cast<double>(row);
          }
        }
        return std::nullopt;
      },
      kLaneHeight, svg);
  svg += "</svg>";
  out << svg;
}

bool BoundIsDrawn(const Timeline& timeline, const TimelineBound& bound) {
  if (timeline.calls > 1) return !(bound.attempt == 0 && bound.inside);
  if (bound.attempt == 0) return bound.to_ms && *bound.to_ms <= MakeGeometry(timeline).span;
  return std::ranges::any_of(
      timeline.lanes, [&](const TimelineLane& lane) { return lane.attempt == bound.attempt; });
}

}  // namespace faultline::report::internal
