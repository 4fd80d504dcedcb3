#include "harness/metrics.h"

#include <algorithm>

#include "harness/protocol.h"

namespace faultline::harness {
namespace {

const ClientRecord* Terminal(const Trace& trace, int call) {
  for (const ClientRecord& record : trace.client) {
    if (record.call == call && IsTerminal(record)) return &record;
  }
  return nullptr;
}

// The first chunk of the attempt that `terminal` committed, if it committed.
std::optional<Duration> FirstToken(const Trace& trace, const ClientRecord* terminal) {
  if (terminal == nullptr || EventType(*terminal) != protocol::kCommitted) return std::nullopt;
  const std::optional<int> attempt = Int(terminal->event, "attempt");
  for (const ClientRecord& record : trace.client) {
    if (record.call == terminal->call && EventType(record) == protocol::kChunk &&
        Int(record.event, "attempt") == attempt) {
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
    if (record.call == call && EventType(record) != protocol::kHello) return record.at;
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
      return r.call == call && EventType(r) == protocol::kStart;
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

}  // namespace

report::Metrics ComputeMetrics(const Trace& trace) {
  report::Metrics metrics;
  std::vector<const provider::JournalEntry*> attempts;
  for (const provider::JournalEntry& entry : trace.journal) {
    if (entry.attempt > 0) attempts.push_back(&entry);
  }
  metrics.attempts = static_cast<int>(attempts.size());
  const ClientRecord* terminal = Terminal(trace, 0);
  const bool committed = terminal && EventType(*terminal) == protocol::kCommitted;
  // Time zero is the call's first request at the provider: an adapter's start-up never counts.
  const Duration zero = CallZero(trace, 0);
  if (terminal) metrics.terminal_ms = Ms(terminal->at - zero);
  if (const auto token = FirstToken(trace, terminal)) metrics.first_token_ms = Ms(*token - zero);
  metrics.calls = PerCall(trace);
  Duration forced{0};
  for (std::size_t k = 0; k < attempts.size(); ++k) {
    const provider::JournalEntry& entry = *attempts[k];
    const bool last = k + 1 == attempts.size();
    if (!last && entry.truth.retry_after) forced += *entry.truth.retry_after;
    if (last && committed) {
      forced += ScriptedLength(entry);
    } else {
      metrics.wasted_bytes += entry.bytes_sent;
    }
  }
  if (committed || !attempts.empty()) {
    metrics.forced_minimum_ms = Ms(forced);
    if (metrics.terminal_ms) {
      metrics.recovery_overhead_ms = std::max(0.0, *metrics.terminal_ms - Ms(forced));
    }
  }
  metrics.wasted_tokens = metrics.wasted_bytes / 4;
  if (terminal) {
    const auto wasted = terminal->event.find("wasted");
    if (wasted != terminal->event.end() && wasted->is_object()) {
      metrics.wasted_tokens = wasted->value("approx_tokens", metrics.wasted_tokens);
    }
  }
  return metrics;
}

}  // namespace faultline::harness
