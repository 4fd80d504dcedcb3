#include "harness/judge/timeline_bounds.h"

#include <algorithm>

#include "harness/judge/judge_internal.h"

namespace faultline::harness {
namespace {

using judge_internal::View;
using nlohmann::json;

constexpr double kAny = 1e299;  // a Window's "no upper bound"

json Band(std::string_view kind, int attempt, double from, std::optional<double> to, double mark,
          std::string label) {
  json band = {{"kind", kind}, {"attempt", attempt}, {"from_ms", from}};
  if (to) band["to_ms"] = *to;
  band["mark_ms"] = mark;
  band["inside"] = mark >= from && (!to || mark <= *to);
  band["label"] = std::move(label);
  return band;
}

// Between attempt k's end and attempt k+1's arrival: the hint's floor when the policy reads it,
// and the span of every delay the policy may have waited.
void RetryBands(const View& view, std::size_t k, json& out) {
  const provider::JournalEntry& entry = *view.attempts[k];
  const provider::JournalEntry& next = *view.attempts[k + 1];
  const double ended = judge_internal::EndedMs(entry);
  const double arrived = judge_internal::ArrivedMs(next);
  const judge_internal::HintDemand demand = judge_internal::DemandOf(view, entry);
  if (demand.floor_ms && *demand.floor_ms > 0) {
    const double hint = *demand.floor_ms;
    out.push_back(Band("retry-after", next.attempt, ended + hint - view.tolerance.early_ms,
                       std::nullopt, arrived,
                       fmt::format("Retry-After floor {:.0f} ms ({})", hint, demand.floor_source)));
  }
  const std::vector<judge_internal::Window> windows = judge_internal::AllowedGaps(view, k);
  double lower = kAny, upper = 0;
  for (const judge_internal::Window& window : windows) {
    lower = std::min(lower, window.lower_ms);
    upper = std::max(upper, window.upper_ms);
  }
  const bool inside = std::ranges::any_of(windows, [&](const judge_internal::Window& window) {
    const double gap = arrived - ended;
    return gap >= window.lower_ms - view.tolerance.early_ms &&
           gap <= window.upper_ms + view.tolerance.late_ms;
  });
  json band =
      Band("backoff", next.attempt, ended + lower - view.tolerance.early_ms,
           upper >= kAny ? std::nullopt : std::optional(ended + upper + view.tolerance.late_ms),
           arrived, fmt::format("retry {} window", k + 1));
  band["inside"] = inside;  // the union of windows, not their hull, decides
  out.push_back(std::move(band));
}

// A silence longer than the declared timeout must be cut short within it.
void SilenceBands(const View& view, const provider::JournalEntry& entry, json& out) {
  for (const provider::Silence& silence : entry.truth.silences) {
    if (!view.declared.States("timeouts")) return;  // a partial declaration's: not drawn
    const auto limit =
        silence.before_headers ? view.declared.response_headers_ms() : view.declared.idle_ms();
    if (!limit || (silence.to && Ms(*silence.to - silence.from) <= *limit)) continue;
    if (silence.heartbeat && !silence.before_headers &&
        view.policy().timeouts.heartbeats_reset_idle) {
      continue;
    }
    const double from = judge_internal::ArrivedMs(entry) + Ms(silence.from);
    out.push_back(Band(
        silence.before_headers ? "headers" : "idle", entry.attempt, from,
        from + *limit + view.tolerance.late_ms, judge_internal::EndedMs(entry),
        fmt::format("{} timeout {:.0f} ms", silence.before_headers ? "headers" : "idle", *limit)));
  }
}

void DeadlineBand(const View& view, json& out) {
  const auto total = view.declared.total_ms();
  if (!total || view.attempts.empty() || view.calls.empty()) return;
  const double start = judge_internal::ArrivedMs(*view.attempts.front());
  const ClientRecord* terminal = view.calls[0].terminal;
  const double end = terminal ? Ms(terminal->at) : Ms(view.trace.ended);
  out.push_back(Band("deadline", 0, start, start + *total + view.tolerance.late_ms, end,
                     fmt::format("total deadline {:.0f} ms", *total)));
}

}  // namespace

json TimelineBounds(const scenario::Scenario& scenario, const Trace& trace,
                    const Tolerance& tolerance) {
  json out = json::array();
  if (const std::optional<std::vector<Trace>> calls = SplitByCall(trace)) {
    for (std::size_t i = 0; i < calls->size(); ++i) {
      for (json& band : TimelineBounds(scenario, (*calls)[i], tolerance)) {
        band["call"] = i;
        out.push_back(std::move(band));
      }
    }
    return out;
  }
  const View view = judge_internal::MakeView(scenario, trace, tolerance, nullptr);
  if (!view.single_call() || !view.has_policy()) return out;
  // Only what the declaration states is drawn (a partial one is judged only on that).
  const bool waits_stated = view.declared.States("backoff") && view.declared.States("retry_after");
  if (scenario.listener_outages.empty() && waits_stated) {  // refused connections: gaps unknown
    for (std::size_t k = 0; k + 1 < view.attempts.size(); ++k) RetryBands(view, k, out);
  }
  for (const provider::JournalEntry* entry : view.attempts) SilenceBands(view, *entry, out);
  if (view.declared.States("timeouts.total_ms")) DeadlineBand(view, out);
  return out;
}

}  // namespace faultline::harness
