// Hand-built traces for the judge's tests: a builder for client events and journal entries.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "harness/judge/judge.h"
#include "harness/trace/trace.h"

namespace faultline::harness::testing {

using nlohmann::json;
using std::chrono::milliseconds;

inline Duration Ms(double ms) { return Duration{static_cast<long long>(ms * 1000)}; }

// The policy the tests declare: 3 attempts, full jitter 100 ms .. 1 s, Retry-After cap 10 s,
// idle 1 s, headers 2 s, total 20 s.
inline json TestPolicy() {
  return {{"max_attempts", 3},
          {"retryable_classes",
           {"rate-limit", "timeout", "transport", "provider-overloaded", "provider-unavailable",
            "protocol", "truncated", "empty"}},
          {"backoff",
           {{"strategy", "full-jitter"}, {"base_ms", 100}, {"cap_ms", 1000}, {"multiplier", 2}}},
          {"retry_after", {{"honor", true}, {"cap_ms", 10000}, {"over_cap", "give-up"}}},
          {"timeouts", {{"idle_ms", 1000}, {"response_headers_ms", 2000}, {"total_ms", 20000}}}};
}

class TraceBuilder {
 public:
  TraceBuilder() : TraceBuilder(TestPolicy()) {}
  // A subject declaring `policy` (null: no policy at all), whole: the keys it leaves out are the
  // reference client's defaults ("extends": "reference" unless it extends another preset).
  explicit TraceBuilder(json policy) {
    if (policy.is_object() && !policy.contains("extends")) policy["extends"] = "reference";
    Hello(std::move(policy));
  }
  // A subject declaring `policy` as written: without extends, a partial declaration, judged only
  // on the keys it states (declared_policy.h).
  static TraceBuilder Declaring(json policy) {
    TraceBuilder builder(Unwritten{});
    builder.Hello(std::move(policy));
    return builder;
  }

  TraceBuilder& Event(double at, json event, int call = 0) {
    trace_.client.push_back({Ms(at), call, EventFromJson(event)});
    return *this;
  }
  TraceBuilder& Start(double at, int attempt) {
    return Event(at,
                 {{"type", "response/start"}, {"attempt", attempt}, {"response_id", Id(attempt)}});
  }
  TraceBuilder& Chunk(double at, int attempt, std::string text) {
    return Event(at, {{"type", "assistant/chunk"},
                      {"attempt", attempt},
                      {"response_id", Id(attempt)},
                      {"text", std::move(text)}});
  }
  TraceBuilder& Interrupted(double at, int attempt, std::string failure_class,
                            std::string code = "X") {
    return Event(at,
                 {{"type", "response/interrupted"},
                  {"attempt", attempt},
                  {"response_id", Id(attempt)},
                  {"failure", {{"class", std::move(failure_class)}, {"code", std::move(code)}}}});
  }
  TraceBuilder& Committed(double at, int attempt, std::string text) {
    return Event(at, {{"type", "response/committed"},
                      {"attempt", attempt},
                      {"response_id", Id(attempt)},
                      {"text", std::move(text)},
                      {"tool_calls", json::array()}});
  }
  TraceBuilder& Failed(double at, int attempt, std::string failure_class, std::string code) {
    return Event(at,
                 {{"type", "response/failed"},
                  {"attempt", attempt},
                  {"failure", {{"class", std::move(failure_class)}, {"code", std::move(code)}}}});
  }
  // A journal entry; `truth` is edited by the caller through the returned reference.
  provider::JournalEntry& Entry(double arrived, double ended, provider::EndKind end,
                                std::string body = R"({"stream":true})") {
    provider::JournalEntry entry;
    entry.index = trace_.journal.size();
    entry.attempt = static_cast<int>(trace_.journal.size()) + 1;
    entry.arrived = Ms(arrived);
    entry.ended = Ms(ended);
    entry.end = end;
    entry.body = std::move(body);
    entry.plan_summary = "test plan";
    trace_.journal.push_back(std::move(entry));
    return trace_.journal.back();
  }
  provider::JournalEntry& Answer(double arrived, double ended, std::string text) {
    provider::JournalEntry& entry = Entry(arrived, ended, provider::EndKind::kCompleted);
    entry.truth.answer = std::move(text);
    return entry;
  }
  provider::JournalEntry& Error(double arrived, double ended, std::string failure_class,
                                bool retryable) {
    provider::JournalEntry& entry = Entry(arrived, ended, provider::EndKind::kCompleted);
    entry.truth.failure_class = std::move(failure_class);
    entry.truth.retryable = retryable;
    return entry;
  }
  TraceBuilder& Calls(int calls) {
    trace_.calls = calls;
    return *this;
  }
  // The calls are one client's, sharing its breakers (Trace::one_client).
  TraceBuilder& OneClient() {
    trace_.one_client = true;
    return *this;
  }
  TraceBuilder& Cancel(double at) {
    trace_.cancel_at = Ms(at);
    return *this;
  }
  Trace Build(double ended = 60'000) {
    trace_.ended = Ms(ended);
    return trace_;
  }

 private:
  struct Unwritten {};
  explicit TraceBuilder(Unwritten) {}
  void Hello(json policy) {
    // The wall clock a client reads dates against: 2026-01-01, as in the virtual world.
    trace_.wall_start = std::chrono::sys_days(std::chrono::year(2026) / 1 / 1);
    json hello = {{"type", "adapter/hello"}, {"name", "t"}};
    if (!policy.is_null()) hello["policy"] = std::move(policy);
    Event(0, std::move(hello));
  }

  static std::string Id(int attempt) { return "resp-" + std::to_string(attempt); }
  Trace trace_;
};

// Gives `entry` a field a client may read a retry hint from, as the provider records it as sent
// ("retry-after", "2"; "body" for an error body). The judge reads it with the reference
// client's parsers.
inline provider::JournalEntry& WithHint(provider::JournalEntry& entry, std::string name,
                                        std::string value) {
  entry.truth.hint_fields.push_back({std::move(name), std::move(value)});
  return entry;
}

// The status of check `id` when `trace` is judged against `scenario` in virtual tolerance.
inline report::CheckResult CheckOf(const Trace& trace, std::string_view id,
                                   const scenario::Scenario& scenario = {}) {
  for (report::CheckResult& check : Judge(scenario, trace, VirtualTolerance())) {
    if (check.id == id) return check;
  }
  ADD_FAILURE() << "no check " << id;
  return {};
}

// Expects check `id` of `trace` (judged against `scenario`) to have `status`, showing its evidence.
inline void ExpectStatus(const Trace& trace, std::string_view id, report::CheckStatus status,
                         const scenario::Scenario& scenario = {}) {
  const report::CheckResult check = CheckOf(trace, id, scenario);
  EXPECT_EQ(check.status, status) << id << ": " << check.evidence;
}

}  // namespace faultline::harness::testing
