#include "harness/trace/trace.h"

#include <fmt/format.h>

#include <cstdint>

#include "harness/trace/json_out.h"
#include "harness/trace/protocol.h"
#include "harness/trace/response_hints.h"
#include "hashing/fnv1a.h"

namespace faultline::harness {
namespace {

using nlohmann::json;

// Every writer below gives its keys in increasing byte order (json_out.h). `whole`: with the
// fields that differ between runs of one seed (connection numbers, subject output, scheduling:
// the same seed gives other values over sockets), which the fingerprint leaves out.

// The response's retry hints as the runner reads them (its fields themselves hold wall-clock
// dates, which would make a real run's fingerprint differ from run to run).
void WriteHints(const ResponseHints& hints, JsonOut& out) {
  if (hints.values.empty()) return;
  out.Key("hints");
  out.BeginArray();
  for (const ref::RetryHint& hint : hints.values) {
    out.BeginObject();
    out.Field("ms", static_cast<std::int64_t>(hint.delay.count()));
    out.Field("source", ref::ToString(hint.source));
    out.EndObject();
  }
  out.EndArray();
}

void WriteSilences(const std::vector<provider::Silence>& silences, JsonOut& out) {
  out.Key("silences");
  out.BeginArray();
  for (const provider::Silence& silence : silences) {
    out.BeginObject();
    out.Field("before_headers", silence.before_headers);
    out.Field("from_ms", Ms(silence.from));
    out.Field("heartbeat", silence.heartbeat);
    out.Key("to_ms");
    silence.to ? out.Double(Ms(*silence.to)) : out.Null();
    out.EndObject();
  }
  out.EndArray();
}

void WriteTruth(const provider::JournalEntry& entry, JsonOut& out) {
  const provider::PlanTruth& truth = entry.truth;
  const ResponseHints hints = ReadHints(entry);
  out.BeginObject();
  if (truth.answer) out.Field("answer", *truth.answer);
  if (!truth.failure_class.empty()) out.Field("failure_class", truth.failure_class);
  if (truth.failure_in_head) out.Field("failure_in_head", true);
  WriteHints(hints, out);
  out.Field("retryable", truth.retryable);
  WriteSilences(truth.silences, out);
  if (!hints.unreadable.empty()) {
    out.Key("unreadable_hints");
    out.BeginArray();
    for (const ref::DelaySource source : hints.unreadable) out.String(ref::ToString(source));
    out.EndArray();
  }
  out.EndObject();
}

void WriteWrites(const std::vector<provider::WriteRecord>& writes, JsonOut& out) {
  out.Key("writes");
  out.BeginArray();
  for (const provider::WriteRecord& write : writes) {
    out.BeginObject();
    out.Field("bytes", static_cast<std::uint64_t>(write.size));
    out.Field("t_ms", Ms(write.at));
    out.EndObject();
  }
  out.EndArray();
}

void WriteEntry(const provider::JournalEntry& entry, bool whole, JsonOut& out) {
  out.BeginObject();
  out.Field("arrived_ms", Ms(entry.arrived));
  out.Field("attempt", entry.attempt);
  out.Field("body_bytes", static_cast<std::uint64_t>(entry.body.size()));
  out.Field("bytes_sent", static_cast<std::uint64_t>(entry.bytes_sent));
  // Only with several calls, so that the fingerprints of one call stay what they were.
  if (entry.call >= 0) out.Field("call", entry.call);
  if (whole) out.Field("connection", entry.connection);
  if (whole && !entry.detail.empty()) out.Field("detail", entry.detail);
  out.Field("end", provider::ToString(entry.end));
  out.Field("ended_ms", Ms(entry.ended));
  out.Field("index", entry.index);
  out.Field("plan", entry.plan_summary);
  if (!entry.route.empty()) out.Field("route", entry.route);  // only with routes, likewise
  out.Field("status", entry.status);
  out.Key("truth");
  WriteTruth(entry, out);
  WriteWrites(entry.writes, out);
  out.EndObject();
}

void WriteStrings(std::string_view key, const std::vector<std::string>& strings, JsonOut& out) {
  out.Key(key);
  out.BeginArray();
  for (const std::string& each : strings) out.String(each);
  out.EndArray();
}

// The gateway between the client and the routes, if the subject is one.
void WriteGateway(const GatewayRun& gateway, JsonOut& out) {
  out.Key("gateway");
  out.BeginObject();
  out.Field("max_upstream_attempts", gateway.max_upstream_attempts);
  out.Field("name", gateway.name);
  out.EndObject();
}

void WriteClient(const std::vector<ClientRecord>& client, JsonOut& out) {
  out.Key("client");
  out.BeginArray();
  for (const ClientRecord& record : client) {
    out.BeginObject();
    out.Field("call", record.call);
    out.Key("event");
    WriteEvent(record.event, out);
    out.Field("t_ms", Ms(record.at));
    out.EndObject();
  }
  out.EndArray();
}

void WriteJournal(const std::vector<provider::JournalEntry>& journal, bool whole, JsonOut& out) {
  out.Key("journal");
  out.BeginArray();
  for (const provider::JournalEntry& entry : journal) WriteEntry(entry, whole, out);
  out.EndArray();
}

// The fields after "journal" that only the whole trace has.
void WriteScheduling(const Trace& trace, JsonOut& out) {
  if (trace.scheduling_lateness) {
    out.Field("scheduling_lateness_ms", Ms(*trace.scheduling_lateness));
  }
  if (trace.scripted_from && trace.scripted_by_fallback) out.Field("scripted_by_fallback", true);
  if (trace.scripted_from) out.Field("scripted_from_ms", Ms(*trace.scripted_from));
  if (!trace.subject_stderr.empty()) out.Field("stderr", trace.subject_stderr);
  if (!trace.subject_stdout.empty()) out.Field("stdout", trace.subject_stdout);
}

void WriteTrace(const Trace& trace, bool whole, JsonOut& out) {
  out.BeginObject();
  out.Field("calls", trace.calls);
  if (trace.cancel_at) out.Field("cancel_ms", Ms(*trace.cancel_at));
  WriteClient(trace.client, out);
  out.Field("ended_ms", Ms(trace.ended));
  if (whole && !trace.subject_endings.empty()) WriteStrings("endings", trace.subject_endings, out);
  if (whole && trace.gateway) WriteGateway(*trace.gateway, out);
  WriteJournal(trace.journal, whole, out);
  if (trace.calls > 1 && trace.one_client) out.Field("one_client", true);
  if (trace.outcome_unknown) out.Field("outcome_unknown", true);
  if (trace.own_request) out.Field("own_request", true);
  if (!trace.protocol_errors.empty()) WriteStrings("protocol_errors", trace.protocol_errors, out);
  if (whole) WriteScheduling(trace, out);
  if (trace.subject_stopped_at) out.Field("subject_stopped_ms", Ms(*trace.subject_stopped_at));
  if (trace.subject_timed_out) out.Field("subject_timed_out", true);
  out.EndObject();
}

// Stable across platforms and standard libraries (std::hash is not).
std::string Digest(std::uint64_t hash) { return fmt::format("{:016x}", hash); }

}  // namespace

double Ms(Duration duration) { return static_cast<double>(duration.count()) / 1000.0; }

json TraceToJson(const Trace& trace) {
  JsonTree tree;
  WriteTrace(trace, true, tree);
  return tree.Take();
}

std::string Fingerprint(const Trace& trace) {
  // The hash of the compact text of the trace's stable fields, as its JSON tree would dump it.
  JsonText text(hashing::kFnv1aOffsetBasis);
  WriteTrace(trace, false, text);
  return Digest(text.Hash());
}

std::pair<json, std::string> TraceJsonAndFingerprint(const Trace& trace) {
  return {TraceToJson(trace), Fingerprint(trace)};
}

std::string SeededFingerprint(const Trace& trace, std::string_view verdicts) {
  JsonText text(hashing::kFnv1aOffsetBasis);
  text.BeginArray();
  for (const provider::JournalEntry& entry : trace.journal) {
    text.BeginArray();
    text.Int(entry.attempt);
    text.Int(entry.status);
    text.String(entry.plan_summary);
    WriteTruth(entry, text);
    text.EndArray();
  }
  text.EndArray();
  return Digest(hashing::Fnv1a64(verdicts, hashing::Fnv1a64("|", text.Hash())));
}

Duration FirstRequestAt(const Trace& trace) {
  const auto starts = std::ranges::count_if(trace.client, [](const ClientRecord& record) {
    return record.event.kind == EventKind::kStart;
  });
  std::optional<Duration> first_arrival;
  std::ptrdiff_t arrivals = 0;
  for (const provider::JournalEntry& entry : trace.journal) {
    if (entry.attempt <= 0) continue;
    ++arrivals;
    if (!first_arrival || entry.arrived < *first_arrival) first_arrival = entry.arrived;
  }
  if (first_arrival && (starts == 0 || starts == arrivals)) return *first_arrival;
  const auto first_start = std::ranges::find_if(trace.client, [](const ClientRecord& record) {
    return record.event.kind == EventKind::kStart;
  });
  if (first_start != trace.client.end()) return first_start->at;
  return first_arrival.value_or(Duration{0});
}

Duration ProviderWriteLateness(const Trace& trace) {
  Duration worst{0};
  for (const provider::JournalEntry& entry : trace.journal) {
    for (const provider::WriteRecord& write : entry.writes) {
      worst = std::max(worst, write.at - write.planned);
    }
  }
  return worst;
}

void ShiftTimes(Trace& trace, Duration zero) {
  for (ClientRecord& record : trace.client) record.at -= zero;
  for (provider::JournalEntry& entry : trace.journal) {
    entry.arrived -= zero;
    entry.ended -= zero;
    for (provider::WriteRecord& write : entry.writes) {
      write.at -= zero;
      write.planned -= zero;
    }
  }
  if (trace.cancel_at) *trace.cancel_at -= zero;
  if (trace.subject_stopped_at) *trace.subject_stopped_at -= zero;
  if (trace.scripted_from) *trace.scripted_from -= zero;
  trace.ended -= zero;
  trace.wall_start += zero;
}

namespace {

const ClientRecord* FirstHello(const Trace& trace) {
  for (const ClientRecord& record : trace.client) {
    if (record.event.kind == EventKind::kHello) return &record;
  }
  return nullptr;
}

// A one-call trace with what every call of `trace` shares, and none of its events.
Trace SharedFacts(const Trace& trace) {
  Trace call;
  call.calls = 1;
  call.one_client = trace.one_client;
  call.wall_start = trace.wall_start;
  call.cancel_at = trace.cancel_at;
  call.ended = trace.ended;
  call.subject_timed_out = trace.subject_timed_out;
  call.subject_stopped_at = trace.subject_stopped_at;
  call.subject_fault = trace.subject_fault;
  call.interrupted = trace.interrupted;
  call.outcome_unknown = trace.outcome_unknown;
  call.own_request = trace.own_request;
  return call;
}

// Call `i` of `trace` alone, as call 0 of a one-call trace.
Trace OneCall(const Trace& trace, int i, const ClientRecord* first_hello) {
  Trace call = SharedFacts(trace);
  bool hello = false;
  for (const ClientRecord& record : trace.client) {
    if (record.call != i) continue;
    hello = hello || record.event.kind == EventKind::kHello;
    call.client.push_back({record.at, 0, record.event});
  }
  // An in-process subject says hello once, for all its calls.
  if (!hello && first_hello != nullptr) {
    call.client.insert(call.client.begin(), {first_hello->at, 0, first_hello->event});
  }
  for (const provider::JournalEntry& entry : trace.journal) {
    if (entry.call == i) call.journal.push_back(entry);
  }
  return call;
}

}  // namespace

std::optional<std::vector<Trace>> SplitByCall(const Trace& trace) {
  if (trace.calls <= 1) return std::nullopt;
  for (const provider::JournalEntry& entry : trace.journal) {
    if (entry.attempt > 0 && (entry.call < 0 || entry.call >= trace.calls)) return std::nullopt;
  }
  const ClientRecord* first_hello = FirstHello(trace);
  std::vector<Trace> out;
  for (int i = 0; i < trace.calls; ++i) out.push_back(OneCall(trace, i, first_hello));
  return out;
}

}  // namespace faultline::harness
