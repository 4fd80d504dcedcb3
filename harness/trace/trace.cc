#include "harness/trace/trace.h"

#include <fmt/format.h>

#include <cstdint>

#include "harness/trace/protocol.h"
#include "harness/trace/response_hints.h"
#include "hashing/fnv1a.h"

namespace faultline::harness {
namespace {

using nlohmann::json;

// The response's retry hints as the runner reads them (its fields themselves hold wall-clock
// dates, which would make a real run's fingerprint differ from run to run).
void HintsToJson(const provider::JournalEntry& entry, json& out) {
  const ResponseHints hints = ReadHints(entry);
  if (!hints.values.empty()) {
    json values = json::array();
    for (const ref::RetryHint& hint : hints.values) {
      values.push_back({{"source", ref::ToString(hint.source)}, {"ms", hint.delay.count()}});
    }
    out["hints"] = std::move(values);
  }
  if (!hints.unreadable.empty()) {
    json sources = json::array();
    for (const ref::DelaySource source : hints.unreadable) sources.push_back(ref::ToString(source));
    out["unreadable_hints"] = std::move(sources);
  }
}

json TruthToJson(const provider::JournalEntry& entry) {
  const provider::PlanTruth& truth = entry.truth;
  json out = json::object();
  if (truth.answer) out["answer"] = *truth.answer;
  if (!truth.failure_class.empty()) out["failure_class"] = truth.failure_class;
  out["retryable"] = truth.retryable;
  if (truth.failure_in_head) out["failure_in_head"] = true;
  HintsToJson(entry, out);
  json silences = json::array();
  for (const provider::Silence& silence : truth.silences) {
    json item = {{"from_ms", Ms(silence.from)},
                 {"before_headers", silence.before_headers},
                 {"heartbeat", silence.heartbeat}};
    item["to_ms"] = silence.to ? json(Ms(*silence.to)) : json(nullptr);
    silences.push_back(std::move(item));
  }
  out["silences"] = std::move(silences);
  return out;
}

// The stable fields of a journal entry (AddVolatile adds the others).
json EntryToJson(const provider::JournalEntry& entry) {
  json writes = json::array();
  for (const provider::WriteRecord& write : entry.writes) {
    writes.push_back({{"t_ms", Ms(write.at)}, {"bytes", write.size}});
  }
  json out = {{"index", entry.index},
              {"attempt", entry.attempt},
              {"arrived_ms", Ms(entry.arrived)},
              {"status", entry.status},
              {"plan", entry.plan_summary},
              {"bytes_sent", entry.bytes_sent},
              {"end", std::string(provider::ToString(entry.end))},
              {"ended_ms", Ms(entry.ended)},
              {"writes", std::move(writes)},
              {"body_bytes", entry.body.size()},
              {"truth", TruthToJson(entry)}};
  // Only with routes, so that the fingerprints of scenarios without them stay what they were.
  if (!entry.route.empty()) out["route"] = entry.route;
  if (entry.call >= 0) out["call"] = entry.call;  // only with several calls, likewise
  return out;
}

// What the fingerprint covers: everything but what differs between runs of one seed.
json StableJson(const Trace& trace) {
  json client = json::array();
  for (const ClientRecord& record : trace.client) {
    client.push_back(
        {{"t_ms", Ms(record.at)}, {"call", record.call}, {"event", EventToJson(record.event)}});
  }
  json journal = json::array();
  for (const provider::JournalEntry& entry : trace.journal) {
    journal.push_back(EntryToJson(entry));
  }
  json out = {{"calls", trace.calls},
              {"client", std::move(client)},
              {"journal", std::move(journal)},
              {"ended_ms", Ms(trace.ended)}};
  if (trace.calls > 1 && trace.one_client) out["one_client"] = true;
  if (trace.cancel_at) out["cancel_ms"] = Ms(*trace.cancel_at);
  if (trace.subject_timed_out) out["subject_timed_out"] = true;
  if (trace.outcome_unknown) out["outcome_unknown"] = true;
  if (trace.own_request) out["own_request"] = true;
  if (trace.subject_stopped_at) out["subject_stopped_ms"] = Ms(*trace.subject_stopped_at);
  if (!trace.protocol_errors.empty()) out["protocol_errors"] = trace.protocol_errors;
  return out;
}

// The fields StableJson leaves out, added to its `out`: connection numbers, subject output,
// scheduling (the same seed gives other values over sockets).
void AddVolatile(const Trace& trace, json& out) {
  json& journal = out["journal"];
  for (std::size_t i = 0; i < trace.journal.size(); ++i) {
    const provider::JournalEntry& entry = trace.journal[i];
    journal[i]["connection"] = entry.connection;
    if (!entry.detail.empty()) journal[i]["detail"] = entry.detail;
  }
  if (trace.scripted_from) {
    out["scripted_from_ms"] = Ms(*trace.scripted_from);
    if (trace.scripted_by_fallback) out["scripted_by_fallback"] = true;
  }
  if (!trace.subject_stderr.empty()) out["stderr"] = trace.subject_stderr;
  if (!trace.subject_stdout.empty()) out["stdout"] = trace.subject_stdout;
  if (!trace.subject_endings.empty()) out["endings"] = trace.subject_endings;
  if (trace.scheduling_lateness) out["scheduling_lateness_ms"] = Ms(*trace.scheduling_lateness);
  if (trace.gateway) {
    out["gateway"] = {{"name", trace.gateway->name},
                      {"max_upstream_attempts", trace.gateway->max_upstream_attempts}};
  }
}

}  // namespace

double Ms(Duration duration) { return static_cast<double>(duration.count()) / 1000.0; }

json TraceToJson(const Trace& trace) {
  json out = StableJson(trace);
  AddVolatile(trace, out);
  return out;
}

namespace {

// Stable across platforms and standard libraries (std::hash is not).
std::string Digest(std::string_view text) { return fmt::format("{:016x}", hashing::Fnv1a64(text)); }

}  // namespace

std::string Fingerprint(const Trace& trace) {
  return Digest(StableJson(trace).dump(-1, ' ', false, json::error_handler_t::replace));
}

std::pair<json, std::string> TraceJsonAndFingerprint(const Trace& trace) {
  json out = StableJson(trace);
  std::string fingerprint = Digest(out.dump(-1, ' ', false, json::error_handler_t::replace));
  AddVolatile(trace, out);
  return {std::move(out), std::move(fingerprint)};
}

std::string SeededFingerprint(const Trace& trace, std::string_view verdicts) {
  json plans = json::array();
  for (const provider::JournalEntry& entry : trace.journal) {
    plans.push_back({entry.attempt, entry.status, entry.plan_summary, TruthToJson(entry)});
  }
  return Digest(plans.dump(-1, ' ', false, json::error_handler_t::replace) + "|" +
                std::string(verdicts));
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
