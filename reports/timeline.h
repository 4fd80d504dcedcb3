// The timeline of one scenario run, as the HTML report draws it. One call: one lane per request
// the provider journaled (arrival to end, bytes over time, stalls) under the client's lifecycle
// events (starts, chunks, interruptions with their scheduled retry, cancel, the terminal event).
// Several calls at once (`request.calls`): one lane per call, its requests as bars along it and
// its own interruptions and ending on it. Over both, the bounds the judge held the times to
// (Retry-After floor, backoff window, idle and headers timeouts, the deadline), each a band with
// its mark, so that a violation shows as a mark outside its band.
//
// BuildTimeline reads the trace JSON the runner recorded (see ScenarioResult::trace) and skips
// whatever it cannot read: a trace is only displayed, never judged here. RenderTimelineSvg draws
// an inline SVG (no external resources). Pure functions; thread-safety: none needed.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace faultline::report::internal {

// A gap without writes longer than this, while an exchange was open, is drawn as a stall.
inline constexpr double kStallThresholdMs = 250;

struct TimelineWrite {
  double t_ms = 0;
  std::uint64_t cumulative_bytes = 0;  // bytes sent on this exchange up to and including it
};

struct TimelineGap {
  double from_ms = 0;
  double to_ms = 0;
};

// One journaled request: an attempt as the server saw it.
struct TimelineLane {
  std::uint64_t index = 0;
  int call = 0;     // which call sent it (several calls): the call whose start it answers
  int attempt = 0;  // 0: a request that did not count as an attempt
  int status = 0;
  std::string plan;
  double arrived_ms = 0;
  std::optional<double> ended_ms;  // absent while in progress
  std::string end;                 // journal end kind, "in-progress" when absent
  std::vector<TimelineWrite> writes;
  std::uint64_t bytes_sent = 0;
  std::vector<TimelineGap> stalls;
};

// One client lifecycle line.
struct TimelineEvent {
  double t_ms = 0;
  int call = 0;
  std::string type;  // "response/start", "assistant/chunk", ...
  int attempt = 0;
  std::string failure_code;
  std::string failure_class;
  std::optional<double> scheduled_retry_ms;  // response/interrupted: the wait before the retry
  std::string delay_source;
  // A line written before time zero (the first request at the provider): an adapter's hello
  // while its library loaded. Drawn at zero; this says how long before.
  std::optional<double> before_zero_ms;
};

// A band the judge held one time to (harness/judge/timeline_bounds.h), and that time: its mark.
struct TimelineBound {
  std::string kind;  // "retry-after" | "backoff" | "idle" | "headers" | "deadline"
  int attempt = 0;   // the attempt whose lane it is drawn on; 0: across the whole call
  int call = 0;      // several calls: the call whose lane it is drawn in
  double from_ms = 0;
  std::optional<double> to_ms;  // absent: no upper bound
  double mark_ms = 0;
  bool inside = true;
  std::string label;
};

struct Timeline {
  int calls = 1;  // concurrent calls of the scenario
  std::vector<TimelineLane> lanes;
  std::vector<TimelineBound> bounds;
  std::vector<TimelineEvent> client;
  std::optional<double> cancel_ms;
  double end_ms = 0;  // the latest time anything happened (or was scheduled), or the run ended
  bool empty() const { return lanes.empty() && client.empty(); }
};

Timeline BuildTimeline(const nlohmann::json& trace, double stall_threshold_ms = kStallThresholdMs);

// The colour of a lane that ended with `end` (journal end kind) after answering `status`.
std::string_view LaneColor(std::string_view end, int status);

// Writes one <svg> element. `title` is the accessible name of the picture; `id` is unique within
// the page (the SVG's pattern ids derive from it).
void RenderTimelineSvg(const Timeline& timeline, std::string_view title, std::string_view id,
                       std::ostream& out);

// The colour of a bound's band by its kind ("retry-after", "backoff", "idle", "headers",
// "deadline"): none is a lane colour (LaneColor) or a client marker's, so a band never reads as
// a request that ended some way.
std::string_view BoundColor(std::string_view kind);

// The legend of one timeline, as HTML under its picture: the lane colours and client markers, and
// an entry for every kind of bound band the timeline has (with its colour), and the marks.
void RenderTimelineLegend(const Timeline& timeline, std::ostream& out);

}  // namespace faultline::report::internal
