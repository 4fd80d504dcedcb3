// BuildTimeline: the trace JSON -> Timeline. Lenient on purpose: a missing or ill-typed field
// drops that one detail, never the picture.
#include "reports/timeline.h"

#include <algorithm>

namespace faultline::report::internal {
namespace {

using nlohmann::json;

std::optional<double> Number(const json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string Text(const json& object, const char* key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return {};
  return it->get<std::string>();
}

int Integer(const json& object, const char* key) {
  const std::optional<double> value = Number(object, key);
  return value ? static_cast<int>(*value) : 0;
}

const json& Array(const json& object, const char* key) {
  static const json kEmpty = json::array();
  if (!object.is_object()) return kEmpty;
  auto it = object.find(key);
  return it != object.end() && it->is_array() ? *it : kEmpty;
}

// Gaps longer than `threshold` between arrival, the writes and the end of the exchange.
std::vector<TimelineGap> FindStalls(const TimelineLane& lane, double until_ms, double threshold) {
  std::vector<double> instants{lane.arrived_ms};
  for (const TimelineWrite& write : lane.writes) instants.push_back(write.t_ms);
  instants.push_back(lane.ended_ms.value_or(until_ms));
  std::vector<TimelineGap> stalls;
  for (std::size_t i = 1; i < instants.size(); ++i) {
    if (instants[i] - instants[i - 1] > threshold) {
      stalls.push_back({.from_ms = instants[i - 1], .to_ms = instants[i]});
    }
  }
  return stalls;
}

TimelineLane ReadLane(const json& entry) {
  TimelineLane lane;
  lane.index = static_cast<std::uint64_t>(std::max(0, Integer(entry, "index")));
  lane.attempt = Integer(entry, "attempt");
  if (entry.contains("call")) lane.call = Integer(entry, "call");  // several calls: who sent it
  lane.status = Integer(entry, "status");
  lane.plan = Text(entry, "plan");
  lane.arrived_ms = Number(entry, "arrived_ms").value_or(0);
  lane.end = Text(entry, "end");
  if (lane.end.empty()) lane.end = "in-progress";
  if (lane.end != "in-progress") lane.ended_ms = Number(entry, "ended_ms");
  std::uint64_t total = 0;
  for (const json& write : Array(entry, "writes")) {
    const std::optional<double> t = Number(write, "t_ms");
    if (!t) continue;
    total += static_cast<std::uint64_t>(std::max(0.0, Number(write, "bytes").value_or(0)));
    lane.writes.push_back({.t_ms = *t, .cumulative_bytes = total});
  }
  std::sort(lane.writes.begin(), lane.writes.end(),
            [](const TimelineWrite& a, const TimelineWrite& b) { return a.t_ms < b.t_ms; });
  const std::optional<double> sent = Number(entry, "bytes_sent");
  lane.bytes_sent = sent ? static_cast<std::uint64_t>(std::max(0.0, *sent)) : total;
  return lane;
}

std::optional<TimelineEvent> ReadClientEvent(const json& line) {
  const std::optional<double> t = Number(line, "t_ms");
  if (!t || !line.is_object() || !line.contains("event")) return std::nullopt;
  const json& event = line["event"];
  TimelineEvent out;
  out.t_ms = std::max(0.0, *t);
  if (*t < 0) out.before_zero_ms = -*t;
  out.type = Text(event, "type");
  out.attempt = Integer(event, "attempt");
  if (out.type.empty()) return std::nullopt;
  if (event.is_object() && event.contains("failure")) {
    out.failure_code = Text(event["failure"], "code");
    out.failure_class = Text(event["failure"], "class");
  }
  out.scheduled_retry_ms = Number(event, "scheduled_retry_ms");
  out.delay_source = Text(event, "delay_source");
  out.call = Integer(line, "call");
  return out;
}

std::optional<TimelineBound> ReadBound(const json& entry) {
  const std::optional<double> from = Number(entry, "from_ms");
  const std::optional<double> mark = Number(entry, "mark_ms");
  if (!from || !mark) return std::nullopt;
  TimelineBound bound{.kind = Text(entry, "kind"),
                      .attempt = Integer(entry, "attempt"),
                      .call = Integer(entry, "call"),
                      .from_ms = *from,
                      .to_ms = Number(entry, "to_ms"),
                      .mark_ms = *mark,
                      .inside = true,
                      .label = Text(entry, "label")};
  if (entry.contains("inside") && entry["inside"].is_boolean())
    bound.inside = entry["inside"].get<bool>();
  return bound;
}

// Which call sent each request, for a timeline of several calls whose journal does not say (a
// result written before the journal recorded the call): the k-th request that counted answers
// the k-th response/start (both in time order). Drawn, never judged.
void AttributeCalls(Timeline& timeline) {
  std::vector<const TimelineEvent*> starts;
  for (const TimelineEvent& event : timeline.client) {
    if (event.type == "response/start") starts.push_back(&event);  // client is in time order
  }
  std::vector<TimelineLane*> requests;
  for (TimelineLane& lane : timeline.lanes) {
    if (lane.attempt > 0) requests.push_back(&lane);
  }
  std::stable_sort(requests.begin(), requests.end(),
                   [](const auto* a, const auto* b) { return a->arrived_ms < b->arrived_ms; });
  for (std::size_t k = 0; k < requests.size() && k < starts.size(); ++k) {
    requests[k]->call = starts[k]->call;
  }
}

double LatestTime(const Timeline& timeline) {
  double end = timeline.cancel_ms.value_or(0);
  for (const TimelineLane& lane : timeline.lanes) {
    end = std::max({end, lane.arrived_ms, lane.ended_ms.value_or(0)});
    if (!lane.writes.empty()) end = std::max(end, lane.writes.back().t_ms);
  }
  for (const TimelineEvent& event : timeline.client) {
    end = std::max(end, event.t_ms + event.scheduled_retry_ms.value_or(0));
  }
  // A floor or a band's start the run never reached is the point when a mark falls short of it:
  // on the chart. Upper bounds are not (a backoff cap of minutes would squash the run); nor is
  // the deadline, drawn only when the chart reaches it.
  for (const TimelineBound& bound : timeline.bounds) {
    if (bound.kind == "deadline") continue;
    end = std::max(end, bound.from_ms);
    if (bound.to_ms && (bound.kind == "idle" || bound.kind == "headers")) {
      end = std::max(end, *bound.to_ms);
    }
  }
  return end;
}

}  // namespace

Timeline BuildTimeline(const nlohmann::json& trace, double stall_threshold_ms) {
  Timeline timeline;
  for (const json& entry : Array(trace, "journal")) timeline.lanes.push_back(ReadLane(entry));
  for (const json& line : Array(trace, "client")) {
    if (auto event = ReadClientEvent(line)) timeline.client.push_back(std::move(*event));
  }
  std::stable_sort(timeline.client.begin(), timeline.client.end(),
                   [](const TimelineEvent& a, const TimelineEvent& b) { return a.t_ms < b.t_ms; });
  timeline.cancel_ms = Number(trace, "cancel_ms");
  timeline.calls = std::max(1, Integer(trace, "calls"));
  const bool journal_names_calls = std::ranges::any_of(
      Array(trace, "journal"), [](const json& entry) { return entry.contains("call"); });
  if (timeline.calls > 1 && !journal_names_calls) AttributeCalls(timeline);
  for (const json& entry : Array(trace, "bounds")) {
    if (auto bound = ReadBound(entry)) timeline.bounds.push_back(std::move(*bound));
  }
  // The run's own end (when the runner stopped watching) bounds lanes still open.
  timeline.end_ms = std::max(LatestTime(timeline), Number(trace, "ended_ms").value_or(0));
  for (TimelineLane& lane : timeline.lanes) {
    lane.stalls = FindStalls(lane, timeline.end_ms, stall_threshold_ms);
  }
  return timeline;
}

std::string_view LaneColor(std::string_view end, int status) {
  if (end == "completed") return status >= 400 ? "#d98b00" : "#2e9e5b";
  if (end == "closed-by-server") return "#e0602b";
  if (end == "reset-by-server") return "#c62828";
  if (end == "client-closed") return "#3f6fd1";
  if (end == "stalled-client-gave-up") return "#8e44ad";
  if (end == "in-progress") return "#8a8a8a";
  return "#6d4c41";  // server-shutdown, write-failed, anything new
}

}  // namespace faultline::report::internal
