// The parts of the timeline SVG that RenderTimelineSvg adds to the request lanes: with several
// calls, one lane per call (its requests as bars along it, its interruptions and its ending on
// it), so that a 50-call storm draws 50 lanes, not one per request; and over either layout the
// bounds the judge held the times to, each a band with its mark (outside: drawn red and named).
#include <algorithm>
#include <map>
#include <string>

#include "fmt/format.h"
#include "reports/text.h"
#include "reports/timeline.h"
#include "reports/timeline_layout.h"

namespace faultline::report::internal {
namespace {

// How a call ended, from its terminal event: "committed", its failure code or "no ending".
struct CallEnd {
  std::string text = "no ending";
  std::string_view color = "#8a8a8a";
  std::optional<double> t_ms;
};

std::map<int, CallEnd> CallEnds(const Timeline& timeline) {
  std::map<int, CallEnd> ends;
  for (const TimelineEvent& event : timeline.client) {
    const bool committed = event.type == "response/committed";
    if ((!committed && event.type != "response/failed") || ends.contains(event.call)) continue;
    // A failure by its code alone: the colour says failed, and the lane label has little room.
    ends[event.call] = {committed                    ? "committed"
                        : event.failure_code.empty() ? "failed"
                                                     : event.failure_code,
                        committed ? kCommitColor : kFailColor, event.t_ms};
  }
  return ends;
}

void DrawCallBar(const TimelineLane& lane, double top, const Geometry& g, std::string& svg) {
  const std::string_view color = LaneColor(lane.end, lane.status);
  const double x1 = g.X(lane.arrived_ms);
  const double x2 = std::max(x1 + 2, g.X(lane.ended_ms.value_or(g.span)));
  Emit(
      svg,
      R"(<rect class="bar{}" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" stroke="{}" fill="{}"><title>attempt {} · {} · {} to {}</title></rect>)",
      lane.ended_ms ? "" : " open", x1, top + 4, x2 - x1, kCallLaneHeight - 8, color, color,
      lane.attempt, lane.status, XmlEscape(FormatMs(lane.arrived_ms)),
      XmlEscape(FormatMs(lane.ended_ms)));
  const std::string label = fmt::format("#{}", lane.attempt);
  if (TextWidth(label) + 4 < x2 - x1) {
    Emit(svg, R"(<text class="call-attempt" x="{:.1f}" y="{:.1f}">{}</text>)", x1 + 2,
         top + kCallLaneHeight / 2 + 4, label);
  }
}

void DrawCallMarkers(const Timeline& timeline, int call, double top, const CallEnd& end,
                     const Geometry& g, std::string& svg) {
  const double y = top + kCallLaneHeight / 2;
  for (const TimelineEvent& event : timeline.client) {
    if (event.call != call || event.type != "response/interrupted") continue;
    Emit(
        svg,
        R"(<path class="cross small" stroke="{}" d="M{:.1f} {:.1f}l6 6m0 -6l-6 6"><title>{} at {}</title></path>)",
        kInterruptColor, g.X(event.t_ms) - 3, y - 3, XmlEscape(event.failure_code),
        XmlEscape(FormatMs(event.t_ms)));
  }
  if (end.t_ms) {
    Emit(
        svg,
        R"(<circle class="terminal" fill="{}" cx="{:.1f}" cy="{:.1f}" r="4"><title>{} at {}</title></circle>)",
        end.color, g.X(*end.t_ms), y, XmlEscape(end.text), XmlEscape(FormatMs(*end.t_ms)));
  }
}

void DrawDeadline(const TimelineBound& bound, const Geometry& g, std::string& svg) {
  const double x = g.X(*bound.to_ms);  // on the axis (BoundIsDrawn)
  const std::string_view color = bound.inside ? BoundColor("deadline") : kFailColor;
  Emit(
      svg,
      R"(<line class="deadline" stroke="{0}" x1="{1:.1f}" y1="{2:.1f}" x2="{1:.1f}" y2="{3:.1f}"><title>{4}</title></line>)",
      color, x, g.client_top, g.lanes_bottom, XmlEscape(bound.label));
  Emit(svg, R"(<text class="bound-label end" x="{:.1f}" y="{:.1f}" style="fill:{}">{}</text>)",
       x - 3, g.lanes_bottom - 4, color,
       XmlEscape(bound.inside ? "deadline" : "deadline passed at " + FormatMs(bound.mark_ms)));
}

// `named`: a mark outside the band is also named in text (a call lane names only its first,
// so that the names of close marks do not overlap; each mark's title still says it). `labels`:
// the rows of names on this lane (near its top, near its bottom); a name with no free row is
// left out, never drawn over another.
void DrawBand(const TimelineBound& bound, double top, double height, const Geometry& g,
              std::string& svg, bool named = true, LabelRows* labels = nullptr) {
  const std::string_view color = BoundColor(bound.kind);
  const double x1 = g.X(bound.from_ms);
  const double x2 = std::max(x1 + 1.5, g.X(bound.to_ms.value_or(g.span)));
  const std::string range = fmt::format("{} to {}", FormatMs(bound.from_ms),
                                        bound.to_ms ? FormatMs(*bound.to_ms) : "any time later");
  Emit(
      svg,
      R"(<rect class="band {}" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}" stroke="{}"><title>{}: {}</title></rect>)",
      bound.kind, x1, top + 1, x2 - x1, height - 2, color, color, XmlEscape(bound.label),
      XmlEscape(range));
  if (!bound.to_ms) {  // a floor: its edge is what counts
    Emit(
        svg,
        R"(<line class="floor" stroke="{0}" x1="{1:.1f}" y1="{2:.1f}" x2="{1:.1f}" y2="{3:.1f}"/>)",
        color, x1, top + 1, top + height - 1);
  }
  // The mark: the time the band bounds. Inside: a short dark tick; outside: red and named.
  const double mark = g.X(bound.mark_ms);
  Emit(
      svg,
      R"(<line class="mark{}" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"><title>{} at {}: {} {}</title></line>)",
      bound.inside ? "" : " out", mark, top - 1, mark, top + height + 1,
      bound.kind == "idle" || bound.kind == "headers" ? "closed" : "arrived",
      XmlEscape(FormatMs(bound.mark_ms)), bound.inside ? "inside" : "OUTSIDE",
      XmlEscape(bound.label));
  if (!bound.inside && named) {
    // Near the lane's top (the byte count sits at its middle), left of the mark near the edge.
    const std::string text = "outside " + bound.label;
    const double width = TextWidth(text);
    const bool left = mark + 3 + width > kSvgWidth - 2;
    const int row =
        labels == nullptr ? 0 : labels->Place(left ? mark - 3 - width : mark + 3, width);
    if (row < 0) return;
    Emit(svg, R"(<text class="bound-label out{}" x="{:.1f}" y="{:.1f}">{}</text>)",
         left ? " end" : "", left ? mark - 3 : mark + 3, row == 0 ? top + 11 : top + height - 3,
         XmlEscape(text));
  }
}

}  // namespace

void DrawCallLanes(const Timeline& timeline, const Geometry& g, std::string& svg) {
  const std::map<int, CallEnd> ends = CallEnds(timeline);
  for (int call = 0; call < timeline.calls; ++call) {
    const double top = g.lanes_top + kCallLaneHeight * call;
    const auto found = ends.find(call);
    const CallEnd end = found == ends.end() ? CallEnd{} : found->second;
    if (call % 2 == 1) {
      Emit(svg, R"(<rect class="client-bg" x="0" y="{:.1f}" width="{:.0f}" height="{:.1f}"/>)", top,
           kSvgWidth, kCallLaneHeight);
    }
    Emit(svg, R"(<text class="lane-name" x="8" y="{:.1f}">call {}</text>)",
         top + kCallLaneHeight / 2 + 4, call);
    Emit(svg, R"(<text class="lane-end" x="58" y="{:.1f}" style="fill:{}">{}</text>)",
         top + kCallLaneHeight / 2 + 4, end.color, XmlEscape(Shorten(end.text, 14)));
    for (const TimelineLane& lane : timeline.lanes) {
      if (lane.call == call && lane.attempt > 0) DrawCallBar(lane, top, g, svg);
    }
    // The call's bounds in its lane; its deadline only when it was passed (fifty deadline boxes
    // would hide the bars).
    bool named = false;
    for (const TimelineBound& bound : timeline.bounds) {
      if (bound.call != call || !BoundIsDrawn(timeline, bound)) continue;
      DrawBand(bound, top, kCallLaneHeight, g, svg, !named);
      named = named || !bound.inside;
    }
    DrawCallMarkers(timeline, call, top, end, g, svg);
  }
  if (timeline.cancel_ms) {
    Emit(
        svg,
        R"(<line class="cancel" x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}"><title>cancel at {3}</title></line>)",
        g.X(*timeline.cancel_ms), g.lanes_top, g.lanes_bottom,
        XmlEscape(FormatMs(*timeline.cancel_ms)));
  }
}

void DrawBounds(const Timeline& timeline, const Geometry& g,
                const std::function<std::optional<double>(int attempt)>& lane_top,
                double lane_height, std::string& svg) {
  std::map<double, LabelRows> labels;  // per lane, by its top
  for (const TimelineBound& bound : timeline.bounds) {
    if (!BoundIsDrawn(timeline, bound)) continue;
    if (bound.attempt == 0) {
      DrawDeadline(bound, g, svg);
      continue;
    }
    if (const std::optional<double> top = lane_top(bound.attempt)) {
      DrawBand(bound, *top, lane_height, g, svg, true, &labels.try_emplace(*top, 2).first->second);
    }
  }
}

}  // namespace faultline::report::internal
