// ADV-*: what the declared policy allows but harms the user or the provider. Each advisory needs
// evidence in the trace (a retry that happened, a silence that came); without it, n/a.
#include <fmt/ranges.h>

#include "harness/judge/judge_internal.h"
#include "harness/trace/response_hints.h"

namespace faultline::harness::judge_internal {
namespace {

constexpr double kUndiciBodyTimeoutMs = 300'000;
constexpr double kLongSilenceMs = 30'000;
constexpr double kShortHintMs = 60'000;

bool Transient(std::string_view failure_class) {
  return failure_class == "rate-limit" || failure_class == "provider-unavailable" ||
         failure_class == "provider-overloaded";
}

bool NeverSucceeds(std::string_view failure_class) {
  return failure_class == "quota" || failure_class == "auth" ||
         failure_class == "invalid-request" || failure_class == "context-overflow";
}

// Why the subject did not wait for a Retry-After of `hint_ms`, as far as its declaration tells.
std::string WhyHintNotWaited(const View& view, double hint_ms) {
  if (!view.has_policy() ||
      !Undeclared(view, {"retry_after.honor", "retry_after.cap_ms"}).empty()) {
    return "its declared policy does not wait for it";
  }
  const ref::RetryAfterConfig& config = view.policy().retry_after;
  if (!config.honor) return "its declared policy ignores Retry-After";
  if (config.cap && hint_ms > static_cast<double>(config.cap->count())) {
    return fmt::format(
        "it exceeds the declared cap of {} ms, over which the policy falls back "
        "to its own backoff",
        config.cap->count());
  }
  return "its declared policy does not wait for it";
}

// ADV-001 on the retry after attempt `k`: the evidence when it came before the Retry-After
// header asked, else "". `judged` is set when a header asked for a wait that a retry followed.
std::string RetryAfterPreempted(const View& view, std::size_t k, bool* judged) {
  const provider::JournalEntry& entry = *view.attempts[k];
  const auto floor = RetryAfterHeaderFloor(ReadHints(entry));
  if (!floor || floor->count() == 0) return {};
  // With routes the wait is the route's own: another route may take the next attempt at once.
  const provider::JournalEntry* next = NextOnRoute(view, k);
  if (next == nullptr) return {};
  *judged = true;
  const double hint = Ms(*floor);
  const double gap = ArrivedMs(*next) - EndedMs(entry);
  if (gap + view.tolerance.early_ms >= hint) return {};
  return fmt::format(
      "attempt {} ({}) asked to wait {:.0f} ms; attempt {} came {:.1f} "
      "ms later because {}: a server that is still unavailable sees "
      "the retry anyway",
      entry.attempt, entry.plan_summary, hint, next->attempt, gap, WhyHintNotWaited(view, hint));
}

// ADV-002 on one interruption: the evidence when its wait carries no jitter, else ""; when the
// keys that tell are not declared, `unstated` gets the n/a.
std::string WaitWithoutJitter(const View& view, const ClientRecord& record,
                              std::optional<Verdict>* unstated) {
  const ref::RetryPolicy& policy = view.policy();
  const std::string source = record.event.delay_source;
  // The wait for another route or for a breaker's probe, not a retry's delay.
  if (source == "failover" || source == "breaker") return {};
  const bool hinted = !source.empty() && source != "backoff";
  *unstated = hinted ? UnlessDeclared(view, {"retry_after.jitter"})
                     : UnlessDeclared(view, {"backoff.strategy", "backoff.jitter"});
  if (*unstated) return {};
  if (hinted && policy.retry_after.jitter == 0) {
    return fmt::format(
        "{} at {:.1f} ms waits exactly the server's hint ({}): "
        "retry_after.jitter is 0, so every client told the same "
        "time retries at once",
        record.event.kind, Ms(record.at), source);
  }
  const bool plain =
      policy.backoff.strategy == ref::BackoffStrategy::kExponential && policy.backoff.jitter == 0;
  if (hinted || !plain) return {};
  return fmt::format(
      "{} at {:.1f} ms waits a plain exponential backoff "
      "(backoff.jitter 0): clients that failed together retry "
      "together",
      record.event.kind, Ms(record.at));
}

}  // namespace

Verdict AdviseRetryAfterPreempted(const View& view) {
  if (!view.single_call()) return NotApplicable("several concurrent calls share the provider");
  bool judged = false;
  for (std::size_t k = 0; k + 1 < view.attempts.size(); ++k) {
    if (std::string early = RetryAfterPreempted(view, k, &judged); !early.empty()) {
      return Fail(std::move(early));
    }
  }
  if (!judged) return NotApplicable("no retry followed a Retry-After");
  return Pass();
}

Verdict AdviseJitter(const View& view) {
  if (!view.has_policy()) return NotApplicable(NoPolicy(view));
  for (const CallView& call : view.calls) {
    for (const ClientRecord* record : call.records) {
      if (record->event.kind != EventKind::kInterrupted) continue;
      std::optional<Verdict> unstated;
      std::string plain = WaitWithoutJitter(view, *record, &unstated);
      if (unstated) return *unstated;
      if (!plain.empty()) return Fail(std::move(plain));
    }
  }
  if (view.attempts.size() < 2) return NotApplicable("no retry was made");
  return Pass();
}

Verdict AdviseIdleTimeout(const View& view) {
  if (!view.has_policy()) return NotApplicable(NoPolicy(view));
  double longest = 0;
  for (const provider::JournalEntry* entry : view.attempts) {
    for (const provider::Silence& silence : entry->truth.silences) {
      if (silence.before_headers) continue;
      longest = std::max(longest, silence.to ? Ms(*silence.to - silence.from) : 1e300);
    }
  }
  if (longest < kLongSilenceMs) return NotApplicable("no long silence in the stream");
  if (auto unstated = UnlessDeclared(view, {"timeouts.idle_ms"})) return *unstated;
  const auto idle = view.declared.idle_ms();
  if (idle && *idle < kUndiciBodyTimeoutMs) return Pass();
  return Fail(
      fmt::format("the stream went silent for {} and the declared idle timeout is {}: "
                  "a stalled stream holds the caller for five minutes or more",
                  longest >= 1e299 ? std::string("good") : fmt::format("{:.0f} ms", longest),
                  idle ? fmt::format("{:.0f} ms", *idle) : std::string("none")));
}

Verdict AdviseTransientRetried(const View& view) {
  if (!view.single_call() || view.attempts.empty()) {
    return NotApplicable("no single call to judge");
  }
  const ClientRecord* terminal = view.calls[0].terminal;
  if (terminal == nullptr || terminal->event.kind != EventKind::kFailed || view.trace.cancel_at) {
    return NotApplicable("the call did not give up");
  }
  const provider::JournalEntry& last = *view.attempts.back();
  const std::string failure_class = ExpectedClass(view, last);
  if (!Transient(failure_class)) return NotApplicable("the last failure is not transient");
  if (last.truth.should_retry == false) {
    return NotApplicable("the server said x-should-retry: false, and not retrying obeys it");
  }
  const auto floor = RetryAfterHeaderFloor(ReadHints(last));
  if (floor && Ms(*floor) > kShortHintMs) {
    return NotApplicable("the server asked for a long wait");
  }
  if (view.attempts.size() > 1) return Pass();
  return Fail(fmt::format(
      "the call gave up after its only attempt, a transient {} ({}){}", failure_class,
      last.plan_summary,
      view.has_policy() && view.declared.States("max_attempts") && view.policy().max_attempts == 1
          ? ": the declared policy makes a single attempt"
          : ": the declared policy does not retry it"));
}

Verdict AdviseNonRetryable(const View& view) {
  if (!view.single_call()) return NotApplicable("several concurrent calls share the provider");
  bool judged = false;
  for (std::size_t k = 0; k < view.attempts.size(); ++k) {
    const provider::JournalEntry& entry = *view.attempts[k];
    const std::string failure_class = ExpectedClass(view, entry);
    if (!NeverSucceeds(failure_class) || entry.truth.retryable) continue;
    judged = true;
    const provider::JournalEntry* next = NextOnRoute(view, k);  // failing over is no retry
    if (next == nullptr) continue;
    return Fail(fmt::format(
        "attempt {} failed with {} ({}), which no retry can fix, and "
        "attempt {} followed at {:.1f} ms",
        entry.attempt, failure_class, entry.plan_summary, next->attempt, ArrivedMs(*next)));
  }
  if (!judged) return NotApplicable("no failure that a retry cannot fix");
  return Pass();
}

// Only where the declared policy ignores the header: one that honours it breaks its contract by
// retrying (RETRY-001).
Verdict AdviseShouldRetryFalseObeyed(const View& view) {
  if (!view.has_policy()) return NotApplicable(NoPolicy(view));
  if (view.policy().should_retry_header) {
    return NotApplicable("the declared policy honours x-should-retry (RETRY-001 judges it)");
  }
  bool judged = false;
  for (std::size_t k = 0; k < view.attempts.size(); ++k) {
    const provider::JournalEntry& entry = *view.attempts[k];
    if (entry.truth.should_retry != false) continue;
    judged = true;
    const provider::JournalEntry* next = NextOnRoute(view, k);  // failing over is no retry
    if (next == nullptr) continue;
    return Fail(fmt::format(
        "attempt {} ({}) said x-should-retry: false, and attempt {} followed at {:.1f} ms: "
        "the declared policy ignores the header (should_retry_header: false), so the server's "
        "\"do not retry\" goes unheard",
        entry.attempt, entry.plan_summary, next->attempt, ArrivedMs(*next)));
  }
  if (!judged) return NotApplicable("no response said x-should-retry: false");
  return Pass();
}

namespace {

// The longest stretch in which `call` showed its caller nothing, from its first response/start
// (`first`) to its end or the runner's stop.
struct QuietStretch {
  double longest = 0, from = 0;  // ms
};
QuietStretch LongestQuiet(const View& view, const CallView& call,
                          std::vector<const ClientRecord*>::const_iterator first) {
  QuietStretch quiet;
  double last = Ms((*first)->at);
  for (auto it = first; it != call.records.end(); ++it) {
    if (Ms((*it)->at) - last > quiet.longest)
      quiet.longest = Ms((*it)->at) - last, quiet.from = last;
    last = Ms((*it)->at);
  }
  if (call.terminal == nullptr) {
    const double end = Ms(view.trace.subject_stopped_at.value_or(view.trace.ended));
    if (end - last > quiet.longest) quiet.longest = end - last, quiet.from = last;
  }
  return quiet;
}

// A call the runner stopped while its declared policy (its twin) would have gone on waiting
// long: why, else "".
std::string StoppedWhileWaitingLong(const View& view, const CallView& call) {
  if (call.terminal != nullptr || view.twin == nullptr) return {};
  const std::string why = StoppedBeforeThePolicyEnds(view);
  const bool long_wait = view.twin->never_ends || view.twin->earliest_end_ms().value_or(
                                                      kUndiciBodyTimeoutMs) >= kUndiciBodyTimeoutMs;
  return long_wait ? why : std::string();
}

}  // namespace

// ADV-008 from the subject's own events: the longest stretch in which a call showed its caller
// nothing (no start, chunk, interruption or ending), up to its end or the runner's stop; and,
// for a call the runner stopped sooner, whether its declared policy would have gone on waiting.
Verdict AdviseBoundedWaits(const View& view) {
  if (!view.has_policy()) return NotApplicable(NoPolicy(view));
  if (view.black_box)
    return NotApplicable("black-box subject: what its caller was shown is unknown");
  bool judged = false;
  for (std::size_t i = 0; i < view.calls.size(); ++i) {
    const CallView& call = view.calls[i];
    const auto first = std::ranges::find_if(call.records, [](const ClientRecord* record) {
      return record->event.kind == EventKind::kStart;
    });
    if (first == call.records.end()) continue;
    judged = true;
    const QuietStretch quiet = LongestQuiet(view, call, first);
    if (quiet.longest >= kUndiciBodyTimeoutMs) {
      return Fail(fmt::format("call {} showed its caller nothing for {:.0f} s from {:.1f} ms{}", i,
                              quiet.longest / 1000, quiet.from,
                              call.terminal ? "" : ", until the runner stopped it"));
    }
    if (const std::string why = StoppedWhileWaitingLong(view, call); !why.empty()) {
      return Fail(fmt::format("call {} was still waiting for its answer: {}", i, why));
    }
  }
  if (!judged) return NotApplicable("no attempt was made");
  return Pass();
}

// ADV-012: whether the declared policy's twin stopped at the request bound (policy_twin.h): a
// policy that retries a lasting failure forever, with a backoff short enough to reach the bound
// within the twin's horizon.
Verdict AdviseTwinEnds(const View& view) {
  if (!view.has_policy()) return NotApplicable(NoPolicy(view));
  if (view.twin == nullptr || !view.twin->usable()) {
    return NotApplicable(
        "no twin of the declared policy was run (a partial declaration, or the "
        "scenario's own policy)");
  }
  if (view.twin->request_bound == 0) return Pass();
  return Fail(fmt::format(
      "the declared policy's twin was still sending requests after {} in a virtual run ({} run(s) "
      "made): nothing in it (max_attempts, a total deadline, a retry budget) ends a call on this "
      "scenario, and the checks against the twin judged the subject as far as the twin got. "
      "Bound the retries, or raise faultline run --max-virtual-requests",
      view.twin->request_bound, view.twin->seeds));
}

// ADV-011: the keys a partial declaration left out that some check or expectation of this run
// needed (view.unstated, noted by UnlessDeclared and TwinNeedsWholePolicy).
Verdict AdviseStateEveryKey(const View& view) {
  if (!view.has_policy()) return NotApplicable(NoPolicy(view));
  if (!view.declared.partial) {
    return NotApplicable("the declaration is whole: it extends a preset or states every key");
  }
  if (view.unstated == nullptr || view.unstated->empty()) return Pass();
  return Fail(fmt::format(
      "the declaration has no extends and leaves out {}, which this run's checks needed: they were "
      "not applicable. State them, or start from a preset (\"extends\": \"one-endpoint\", "
      "\"no-retry\", \"openai-node\", ...: docs/policy.md) and override what differs",
      fmt::join(*view.unstated, ", ")));
}

}  // namespace faultline::harness::judge_internal
