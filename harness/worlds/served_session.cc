#include "harness/worlds/served_session.h"

#include <algorithm>
#include <map>

#include "harness/worlds/subjects/app_subject.h"

namespace faultline::harness {
namespace {

// When an exchange was last heard of: its end, or its arrival while it is still open.
Duration LastHeard(const provider::JournalEntry& entry) {
  return entry.end == provider::EndKind::kInProgress ? entry.arrived
                                                     : std::max(entry.arrived, entry.ended);
}

}  // namespace

std::optional<Trace> ServedTrace(ServedSession session, std::optional<nlohmann::json> policy,
                                 std::optional<StatedOutcome> outcome) {
  const bool counted = std::ranges::any_of(
      session.journal, [](const provider::JournalEntry& entry) { return entry.attempt > 0; });
  if (!counted) return std::nullopt;
  Trace trace;
  trace.journal = std::move(session.journal);
  trace.scripted_from = session.scripted_from;
  trace.wall_start = session.wall_start;
  trace.own_request = true;  // whatever the app chose to send
  // Each call named in the base URL (`/call/<i>`) is a call of its own; else one call.
  std::map<int, Duration> last_of_call;
  for (const provider::JournalEntry& entry : trace.journal) {
    Duration& last = last_of_call[std::max(entry.call, 0)];
    last = std::max(last, LastHeard(entry));
    trace.ended = std::max(trace.ended, LastHeard(entry));
  }
  trace.calls = last_of_call.rbegin()->first + 1;
  trace.client.push_back({Duration{0}, 0, AppHello(std::move(policy))});
  if (outcome) {
    for (const auto& [call, last] : last_of_call) {
      trace.client.push_back({last, call, AppEnded(*outcome == StatedOutcome::kCommitted)});
    }
  } else {
    trace.outcome_unknown = true;
  }
  trace.scheduling_lateness = ProviderWriteLateness(trace);
  ShiftTimes(trace, FirstRequestAt(trace));
  return trace;
}

}  // namespace faultline::harness
