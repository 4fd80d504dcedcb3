#include "harness/judge/gateway_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>

#include "harness/judge/judge_internal.h"
#include "reference_impl/retry_after.h"

namespace faultline::harness {
namespace {

using judge_internal::Fail;
using judge_internal::Named;
using judge_internal::NotApplicable;
using judge_internal::Pass;
using judge_internal::Verdict;
using provider::JournalEntry;

// One attempt of the client at the gateway, and the upstream requests it caused: those that
// arrived from its start until the client's next attempt began.
struct ClientAttempt {
  const ClientRecord* start = nullptr;
  const ClientRecord* end = nullptr;  // its terminal or interrupted event; null: none came
  std::vector<const JournalEntry*> upstream;
};

std::vector<ClientAttempt> AttemptsOf(const Trace& trace) {
  std::vector<ClientAttempt> attempts;
  for (const ClientRecord& record : trace.client) {
    const EventKind kind = record.event.kind;
    if (kind == EventKind::kStart) attempts.push_back({&record, nullptr, {}});
    const bool ends = kind == EventKind::kInterrupted || record.event.terminal();
    if (ends && !attempts.empty() && attempts.back().end == nullptr) attempts.back().end = &record;
  }
  for (const JournalEntry& entry : trace.journal) {
    if (entry.attempt <= 0) continue;
    // The last client attempt that began by this arrival (the first, for an arrival before any
    // start the runner saw: a start line is read after the request it announces may arrive).
    auto owner = std::ranges::find_if(attempts.rbegin(), attempts.rend(),
                                      [&](const auto& a) { return a.start->at <= entry.arrived; });
    if (owner != attempts.rend()) {
      owner->upstream.push_back(&entry);
    } else if (!attempts.empty()) {
      attempts.front().upstream.push_back(&entry);
    }
  }
  return attempts;
}

std::string Routes(const std::vector<const JournalEntry*>& entries) {
  std::string out;
  for (const JournalEntry* entry : entries) {
    out += fmt::format("{}{} {} at {:.1f} ms", out.empty() ? "" : ", ", entry->route, entry->status,
                       Ms(entry->arrived));
  }
  return out;
}

// The Retry-After an upstream's answer carried, as a delay (delay-seconds, or an HTTP-date read
// against the wall clock of the trace); nullopt: none.
std::optional<Duration> RetryAfterOf(const Trace& trace, const JournalEntry& entry) {
  for (const provider::HintField& field : entry.truth.hint_fields) {
    if (field.name != "retry-after") continue;
    if (auto delay = ref::ParseDelaySeconds(field.value)) return *delay;
    const auto now =
        std::chrono::time_point_cast<std::chrono::seconds>(trace.wall_start + entry.ended);
    if (auto date = ref::ParseHttpDate(field.value, now)) {
      return std::max(Duration{0}, std::chrono::duration_cast<Duration>(*date - now));
    }
  }
  return std::nullopt;
}

// Whether the upstream's answer began to stream output to the gateway: once a gateway forwards
// it unbuffered, the client has it, and nothing but that stream may follow.
bool BeganStreaming(const JournalEntry& entry) {
  return entry.status >= 200 && entry.status < 300 && entry.truth.streamed &&
         (entry.truth.answer.has_value() || entry.truth.events_before_failure ||
          entry.truth.output_before_failure);
}

// A 4xx other than 408, 409 and 429: the same request cannot succeed elsewhere either.
bool NeverRetryable(const JournalEntry& entry) {
  return entry.status >= 400 && entry.status < 500 && entry.status != 408 && entry.status != 409 &&
         entry.status != 429;
}

Verdict AmplificationBounded(const Trace& trace, const std::vector<ClientAttempt>& attempts) {
  const int bound = trace.gateway->max_upstream_attempts;
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    const auto& upstream = attempts[i].upstream;
    if (static_cast<int>(upstream.size()) > bound) {
      return Fail(
          fmt::format("client attempt {} caused {} upstream requests ({}); {} declares at most {}",
                      i + 1, upstream.size(), Routes(upstream), trace.gateway->name, bound));
    }
  }
  return Pass();
}

Verdict RetryAfterHonoured(const Trace& trace, const Tolerance& tolerance) {
  bool any = false;
  for (const JournalEntry& hinted : trace.journal) {
    const auto delay = RetryAfterOf(trace, hinted);
    if (!delay) continue;
    any = true;
    const double allowed_ms = Ms(hinted.ended + *delay) - tolerance.early_ms;
    for (const JournalEntry& later : trace.journal) {
      if (later.index <= hinted.index || later.route != hinted.route) continue;
      if (Ms(later.arrived) < allowed_ms) {
        return Fail(fmt::format(
            "upstream {} answered {} with Retry-After {:.0f} ms at {:.1f} ms, and got another "
            "request at {:.1f} ms, {:.1f} ms too soon ({})",
            hinted.route, hinted.status, Ms(*delay), Ms(hinted.ended), Ms(later.arrived),
            allowed_ms + tolerance.early_ms - Ms(later.arrived), EarlyRoom(tolerance)));
      }
    }
  }
  if (!any) return NotApplicable("no upstream answered with a Retry-After");
  return Pass();
}

Verdict RetryAfterReachesClient(const Trace& trace, const std::vector<ClientAttempt>& attempts) {
  bool any = false;
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    const ClientAttempt& attempt = attempts[i];
    if (attempt.upstream.empty() || attempt.end == nullptr) continue;
    const JournalEntry& last = *attempt.upstream.back();
    if ((last.status != 429 && last.status != 503) || !RetryAfterOf(trace, last)) continue;
    any = true;
    const ReportedFailure& failure = judge_internal::FailureOf(attempt.end->event);
    if (attempt.end->event.kind == EventKind::kCommitted) continue;  // answered after all
    if (!failure.status || *failure.status != last.status || !failure.retry_after_ms) {
      return Fail(fmt::format(
          "client attempt {}: the last upstream answer was {} with Retry-After (upstream {} at "
          "{:.1f} ms), and the client got {} {}",
          i + 1, last.status, last.route, Ms(last.arrived),
          failure.status ? fmt::format("status {}", *failure.status) : "no status",
          failure.retry_after_ms ? "with a retry hint" : "without any retry hint"));
    }
  }
  if (!any) return NotApplicable("no client attempt ended on an upstream's 429 or 503 with a hint");
  return Pass();
}

Verdict NoSplice(const Trace& trace) {
  bool any = false;
  for (const ClientRecord& record : trace.client) {
    if (record.event.kind != EventKind::kCommitted || !record.event.text) continue;
    any = true;
    const std::string& text = *record.event.text;
    const bool whole = std::ranges::any_of(trace.journal, [&](const JournalEntry& entry) {
      return entry.truth.answer == text && entry.end == provider::EndKind::kCompleted;
    });
    if (!whole) {
      return Fail(fmt::format("the client committed {}, which no upstream sent whole",
                              judge_internal::Quote(text)));
    }
  }
  if (!any) return NotApplicable("the client committed nothing");
  return Pass();
}

Verdict NoRetryAfterStreamBegan(const std::vector<ClientAttempt>& attempts) {
  bool any = false;
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    const auto& upstream = attempts[i].upstream;
    const auto began = std::ranges::find_if(
        upstream, [](const JournalEntry* entry) { return BeganStreaming(*entry); });
    any = any || began != upstream.end();
    if (began != upstream.end() && began + 1 != upstream.end()) {
      const JournalEntry& next = **(began + 1);
      return Fail(fmt::format(
          "client attempt {}: upstream {} began streaming at {:.1f} ms, and the gateway then "
          "sent a request to {} at {:.1f} ms: two upstreams' output for one response",
          i + 1, (*began)->route, Ms((*began)->arrived), next.route, Ms(next.arrived)));
    }
  }
  if (!any) return NotApplicable("no upstream began to stream");
  return Pass();
}

Verdict NoRetryOfTheUnretryable(const std::vector<ClientAttempt>& attempts) {
  bool any = false;
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    const auto& upstream = attempts[i].upstream;
    any = any || std::ranges::any_of(upstream, [](const auto* e) { return NeverRetryable(*e); });
    for (std::size_t j = 0; j + 1 < upstream.size(); ++j) {
      if (!NeverRetryable(*upstream[j])) continue;
      return Fail(fmt::format(
          "client attempt {}: upstream {} answered {} ({}), which no upstream can answer "
          "otherwise, and the gateway sent the request again to {}",
          i + 1, upstream[j]->route, upstream[j]->status, upstream[j]->truth.failure_class,
          upstream[j + 1]->route));
    }
  }
  if (!any) return NotApplicable("no upstream answered a 4xx that cannot succeed elsewhere");
  return Pass();
}

Verdict FailuresSurface(const std::vector<ClientAttempt>& attempts) {
  bool any = false;
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    const ClientAttempt& attempt = attempts[i];
    if (attempt.upstream.empty() || attempt.end == nullptr) continue;
    const JournalEntry& last = *attempt.upstream.back();
    if (last.truth.answer || last.truth.failure_class.empty() || !last.truth.streamed) continue;
    any = true;
    if (attempt.end->event.kind != EventKind::kCommitted) continue;
    return Fail(fmt::format(
        "client attempt {} committed, but the last upstream answer it got through the gateway "
        "(upstream {} at {:.1f} ms) failed as {}: the gateway hid the failure",
        i + 1, last.route, Ms(last.arrived), last.truth.failure_class));
  }
  if (!any) return NotApplicable("no client attempt ended on a failed upstream stream");
  return Pass();
}

// The gateway must not break what an upstream sent whole: the client commits that answer.
Verdict AnswersPassWhole(const std::vector<ClientAttempt>& attempts) {
  bool any = false;
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    const ClientAttempt& attempt = attempts[i];
    if (attempt.upstream.empty() || attempt.end == nullptr) continue;
    const JournalEntry& last = *attempt.upstream.back();
    if (!last.truth.answer || last.end != provider::EndKind::kCompleted) continue;
    any = true;
    const ClientEvent& end = attempt.end->event;
    if (end.kind == EventKind::kCommitted && end.text == last.truth.answer) continue;
    const ReportedFailure& failure = judge_internal::FailureOf(end);
    return Fail(fmt::format(
        "client attempt {}: upstream {} sent its whole answer {} ({} at {:.1f} ms), and the client "
        "got {}",
        i + 1, last.route, judge_internal::Quote(*last.truth.answer), last.status, Ms(last.arrived),
        end.kind == EventKind::kCommitted
            ? fmt::format("{} instead", judge_internal::Quote(end.text.value_or("")))
            : fmt::format("a failure ({}{})", failure.code,
                          failure.status ? fmt::format(", status {}", *failure.status) : "")));
  }
  if (!any) return NotApplicable("no client attempt ended on an upstream's whole answer");
  return Pass();
}

constexpr InvariantInfo kGatewayCatalog[] = {
    {"GW-001", "Each client request causes at most the upstream requests the gateway declares."},
    {"GW-002", "No upstream gets a request before the Retry-After of its own last answer."},
    {"GW-003",
     "A rate limit the gateway passes on keeps its status and its retry hint (Retry-After)."},
    {"GW-004", "A committed answer is one upstream's whole answer (no splice)."},
    {"GW-005", "No upstream is called once another's stream has begun to reach the client."},
    {"GW-006", "An answer that cannot succeed anywhere (a 4xx but 408, 409, 429) is not retried."},
    {"GW-007", "A failed upstream stream reaches the client as a failure, never as an answer."},
    {"GW-008",
     "An upstream's whole answer reaches the client whole: the gateway breaks no answer."},
};

}  // namespace

const std::vector<InvariantInfo>& GatewayCheckCatalog() {
  static const std::vector<InvariantInfo> catalog(std::begin(kGatewayCatalog),
                                                  std::end(kGatewayCatalog));
  return catalog;
}

std::vector<report::CheckResult> JudgeGateway(const Trace& trace, const Tolerance& tolerance) {
  std::vector<report::CheckResult> out;
  if (!trace.gateway) return out;
  const std::vector<ClientAttempt> attempts = AttemptsOf(trace);
  const Verdict verdicts[] = {AmplificationBounded(trace, attempts),
                              RetryAfterHonoured(trace, tolerance),
                              RetryAfterReachesClient(trace, attempts),
                              NoSplice(trace),
                              NoRetryAfterStreamBegan(attempts),
                              NoRetryOfTheUnretryable(attempts),
                              FailuresSurface(attempts),
                              AnswersPassWhole(attempts)};
  for (std::size_t i = 0; i < std::size(kGatewayCatalog); ++i) {
    out.push_back(Named(std::string(kGatewayCatalog[i].id),
                        std::string(kGatewayCatalog[i].statement), verdicts[i]));
  }
  return out;
}

}  // namespace faultline::harness
