#include "harness/judge/metrics.h"

#include <algorithm>

#include "harness/trace/protocol.h"
#include "harness/trace/response_hints.h"

namespace faultline::harness {
namespace {

const ClientRecord* Terminal(const Trace& trace, int call) {
  for (const ClientRecord& record : trace.client) {
    if (record.call == call && record.event.terminal()) return &record;
  }
  return nullptr;
}

// The first chunk of the attempt that `terminal` committed, if it committed.
std::optional<Duration> FirstToken(const Trace& trace, const ClientRecord* terminal) {
  if (terminal == nullptr || terminal->event.kind != EventKind::kCommitted) return std::nullopt;
  const std::optional<int> attempt = terminal->event.attempt;
  for (const ClientRecord& record : trace.client) {
    if (record.call == terminal->call && record.event.kind == EventKind::kChunk &&
        record.event.attempt == attempt) {
      return record.at;
    }
  }
  return std::nullopt;
}

// When call `call` began, for latency: its first request at the provider (the journal names the
// call of each request when there are several), else its first event.
Duration CallZero(const Trace& trace, int call) {
  for (const provider::JournalEntry& entry : trace.journal) {
    if (entry.attempt > 0 && (trace.calls <= 1 || entry.call == call)) return entry.arrived;
  }
  for (const ClientRecord& record : trace.client) {
    if (record.call == call && record.event.kind != EventKind::kHello) return record.at;
  }
  return Duration{0};
}

// Every call's latency from its own beginning (calls may start apart: request.call_interval),
// for a scenario of several calls.
std::vector<report::CallMetrics> PerCall(const Trace& trace) {
  std::vector<report::CallMetrics> calls;
  if (trace.calls <= 1) return calls;
  for (int call = 0; call < trace.calls; ++call) {
    const Duration zero = CallZero(trace, call);
    report::CallMetrics metrics{.call = call};
    const ClientRecord* terminal = Terminal(trace, call);
    if (terminal) metrics.terminal_ms = Ms(terminal->at - zero);
    if (const auto token = FirstToken(trace, terminal)) metrics.first_token_ms = Ms(*token - zero);
    metrics.attempts = static_cast<int>(std::ranges::count_if(trace.client, [&](const auto& r) {
      return r.call == call && r.event.kind == EventKind::kStart;
    }));
    calls.push_back(metrics);
  }
  return calls;
}

// When the last write of `entry` was planned (offset from its arrival).
Duration ScriptedLength(const provider::JournalEntry& entry) {
  Duration last{0};
  for (const provider::WriteRecord& write : entry.writes) last = std::max(last, write.planned);
  return last - entry.arrived;
}

// Each call's requests (every request, for a single call), in arrival order; requests credited
// to no call count as waste at once.
using AttemptsByCall = std::vector<std::vector<const provider::JournalEntry*>>;
AttemptsByCall AttemptsOfEachCall(const Trace& trace, report::Metrics& metrics) {
  AttemptsByCall attempts(static_cast<std::size_t>(std::max(trace.calls, 1)));
  for (const provider::JournalEntry& entry : trace.journal) {
    if (entry.attempt <= 0) continue;
    ++metrics.attempts;
    const int call = trace.calls <= 1 ? 0 : entry.call;
    if (call >= 0 && call < static_cast<int>(attempts.size())) {
      attempts[static_cast<std::size_t>(call)].push_back(&entry);
    } else {
      metrics.wasted_bytes += entry.bytes_sent;  // no call to credit it to
    }
  }
  return attempts;
}

// Every call's discarded attempts are wasted (a call's last attempt is not, when it committed);
// the forced minimum (the waits the provider asked for, and the scripted length of the answer)
// and the overhead beyond it are call 0's, like its terminal time.
void AddWasteAndForcedMinimum(const Trace& trace, const AttemptsByCall& attempts,
                              report::Metrics& metrics) {
  Duration forced{0};
  for (std::size_t call = 0; call < attempts.size(); ++call) {
    const ClientRecord* ending = Terminal(trace, static_cast<int>(call));
    const bool committed = ending && ending->event.kind == EventKind::kCommitted;
    for (std::size_t k = 0; k < attempts[call].size(); ++k) {
      const provider::JournalEntry& entry = *attempts[call][k];
      const bool last = k + 1 == attempts[call].size();
      if (call == 0 && !last)
        forced += RetryAfterHeaderFloor(ReadHints(entry)).value_or(std::chrono::milliseconds{0});
      if (!(last && committed)) {
        metrics.wasted_bytes += entry.bytes_sent;
      } else if (call == 0) {
        forced += ScriptedLength(entry);
      }
    }
  }
  const ClientRecord* terminal = Terminal(trace, 0);
  const bool committed = terminal && terminal->event.kind == EventKind::kCommitted;
  if (committed || !attempts[0].empty()) {
    metrics.forced_minimum_ms = Ms(forced);
    if (metrics.terminal_ms) {
      metrics.recovery_overhead_ms = std::max(0.0, *metrics.terminal_ms - Ms(forced));
    }
  }
}

// The subject's own count where its terminal events give one (every call's), else bytes / 4.
std::uint64_t WastedTokens(const Trace& trace, std::uint64_t wasted_bytes) {
  std::optional<std::uint64_t> reported;
  for (int call = 0; call < std::max(trace.calls, 1); ++call) {
    const ClientRecord* ending = Terminal(trace, call);
    if (!ending || !ending->event.wasted || ending->event.wasted->approx_tokens < 0) continue;
    reported =
        reported.value_or(0) + static_cast<std::uint64_t>(ending->event.wasted->approx_tokens);
  }
  return reported.value_or(wasted_bytes / 4);
}

}  // namespace

report::Metrics ComputeMetrics(const Trace& trace) {
  report::Metrics metrics;
  const AttemptsByCall attempts = AttemptsOfEachCall(trace, metrics);
  const ClientRecord* terminal = Terminal(trace, 0);
  // Time zero is the call's first request at the provider: an adapter's start-up never counts.
  const Duration zero = CallZero(trace, 0);
  if (terminal) metrics.terminal_ms = Ms(terminal->at - zero);
  if (const auto token = FirstToken(trace, terminal)) metrics.first_token_ms = Ms(*token - zero);
  metrics.calls = PerCall(trace);
  AddWasteAndForcedMinimum(trace, attempts, metrics);
  metrics.wasted_tokens = WastedTokens(trace, metrics.wasted_bytes);
  return metrics;
}

}  // namespace faultline::harness
