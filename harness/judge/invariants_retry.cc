// RETRY-*: which failures are retried, how many times, how long after, with what body; judged
// against the subject's declared policy with the reference client's own rules (policy.h).
#include "harness/judge/judge_internal.h"
#include "harness/trace/response_hints.h"
#include "reference_impl/budget.h"

namespace faultline::harness::judge_internal {

namespace {

bool StatusRead(const ref::RetryPolicy& policy, int status) {
  const auto& statuses = policy.retry_after.statuses;
  return !statuses || std::ranges::find(*statuses, status) != statuses->end();
}

// What RETRY-004 reads of a hint, and what RETRY-006 reads to know when a retry was due.
constexpr std::array<std::string_view, 6> kHintReadingKeys{
    "retry_after.honor",    "retry_after.parse",  "retry_after.sources",
    "retry_after.statuses", "retry_after.cap_ms", "retry_after.over_cap"};
constexpr std::array<std::string_view, 13> kRetryWhileAllowedKeys{
    "mode",        "retryable_classes",   "retry_phases",     "stream_retries", "stream_retry_on",
    "statuses",    "should_retry_header", "max_attempts",     "budget",         "backoff",
    "retry_after", "min_attempt_ms",      "timeouts.total_ms"};

}  // namespace

double GapMs(const View& view, std::size_t k) {
  return ArrivedMs(*view.attempts[k + 1]) - EndedMs(*view.attempts[k]);
}

HintsRead ReadHintsOf(const provider::JournalEntry& entry, const ref::RetryPolicy* policy,
                      std::chrono::system_clock::time_point wall_start) {
  HintsRead read;
  if (policy != nullptr && (!policy->retry_after.honor || !StatusRead(*policy, entry.status))) {
    return read;
  }
  HintReading reading;
  if (policy != nullptr) {
    reading.parse = policy->retry_after.parse;
    // The client's clock when the head reached it: the provider's first write of the response.
    reading.client_wall = wall_start + (entry.writes.empty() ? entry.arrived : entry.writes[0].at);
  }
  const ResponseHints hints = ReadHints(entry, reading);
  const auto reads = [&](ref::DelaySource source) {
    return policy == nullptr ? std::ranges::find(kRetryAfterHeaderSources, source) !=
                                   kRetryAfterHeaderSources.end()
                             : std::ranges::find(policy->retry_after.sources, source) !=
                                   policy->retry_after.sources.end();
  };
  for (const ref::RetryHint& hint : hints.values) {
    if (reads(hint.source)) read.values.push_back(hint);
  }
  read.unreadable = std::ranges::any_of(hints.unreadable, reads);
  return read;
}

HintsRead ReadHintsOf(const View& view, const provider::JournalEntry& entry) {
  return ReadHintsOf(entry, view.has_policy() ? &view.policy() : nullptr, view.trace.wall_start);
}

HintDemand DemandOf(const View& view, const provider::JournalEntry& entry) {
  HintDemand demand;
  const auto cap = view.has_policy() ? view.declared.retry_after_cap_ms() : std::nullopt;
  for (const ref::RetryHint& hint : ReadHintsOf(view, entry).values) {
    const double ms = Ms(hint.delay);
    if (cap && ms > *cap) {
      // The weak ratelimit-reset is ignored over the cap; another hint is, or makes it give up.
      if (hint.source == ref::DelaySource::kRatelimitReset ||
          view.policy().retry_after.over_cap == ref::OverCapMode::kBackoff) {
        demand.backoff_allowed = true;
      } else if (!demand.over_cap_ms || ms < *demand.over_cap_ms) {
        demand.over_cap_ms = ms;
      }
      continue;
    }
    const double owed = hint.source == ref::DelaySource::kRetryAfterDate
                            ? std::max(0.0, ms - Ms(kHttpDateLenience))
                            : ms;
    if (!demand.floor_ms || owed < *demand.floor_ms) {
      demand.floor_ms = owed;
      demand.floor_source = ref::ToString(hint.source);
    }
    demand.longest_ms = std::max(demand.longest_ms.value_or(0), ms);
  }
  if (demand.backoff_allowed) demand.floor_ms = 0.0;
  return demand;
}

std::vector<Window> AllowedGaps(const View& view, std::size_t k) {
  const ref::RetryPolicy& policy = view.policy();
  const provider::JournalEntry& entry = *view.attempts[k];
  const DelayBounds bounds = BackoffBounds(policy.backoff, static_cast<int>(k));
  const HintsRead hints = ReadHintsOf(view, entry);
  // A hint field that holds nothing the runner can value (garbage) may be waited out for longer.
  std::vector<Window> windows{{bounds.lower_ms, hints.unreadable ? 1e300 : bounds.upper_ms}};
  const double jitter = policy.retry_after.jitter;
  const auto cap = view.declared.retry_after_cap_ms();
  for (const ref::RetryHint& hint : hints.values) {
    const double h = Ms(hint.delay);
    const double lenience =
        hint.source == ref::DelaySource::kRetryAfterDate ? Ms(kHttpDateLenience) : 0.0;
    if (h == 0) {
      windows.push_back({0, bounds.upper_ms});
    } else if (!cap || h <= *cap) {
      windows.push_back({std::max(0.0, h - lenience), std::max(bounds.upper_ms, h * (1 + jitter))});
    }
  }
  return windows;
}

namespace {

std::string AllowedText(const std::vector<Window>& windows) {
  std::string out;
  for (const Window& window : windows) {
    out += fmt::format(
        "{}[{:.1f}, {}]", out.empty() ? "" : " or ", window.lower_ms,
        window.upper_ms >= 1e299 ? std::string("any") : fmt::format("{:.1f}", window.upper_ms));
  }
  return out;
}

std::string ForbiddenText(ref::GiveUpReason reason) {
  switch (reason) {
    case ref::GiveUpReason::kPhaseNotRetried:
      return "in a phase the declared retry_phases exclude";
    case ref::GiveUpReason::kStatusNotRetried:
      return "a status in the declared statuses.never";
    case ref::GiveUpReason::kClassNotRetryable:
      return "not in the declared retryable_classes";
    case ref::GiveUpReason::kStreamNotRetried:
      return "a stream failure the declared stream_retries does not retry";
    default:
      return "not retryable";
  }
}

}  // namespace

// With routes, a failure the policy does not retry may still fail over: only the next attempt on
// the same route is a retry.
Verdict RetryNotRetryable(const View& view) {
  if (!view.single_call()) return NotApplicable("several concurrent calls share the provider");
  for (std::size_t k = 0; k + 1 < view.attempts.size(); ++k) {
    const provider::JournalEntry& entry = *view.attempts[k];
    const provider::JournalEntry* following = NextOnRoute(view, k);
    if (following == nullptr) continue;
    const std::optional<ref::Failure> failure = TruthFailure(view, entry);
    if (!failure) continue;
    std::optional<std::string> why;
    if (view.has_policy()) {
      if (auto unstated = UnlessDeclared(view, kRetryRuleKeys)) return *unstated;
      if (const auto reason = PolicyForbids(view, entry)) why = ForbiddenText(*reason);
    } else if (!failure->retryable) {
      why = "not retryable";
    }
    if (!why) continue;
    const provider::JournalEntry& next = *following;
    return Fail(
        fmt::format("attempt {}{} failed with {} ({}), which is {}, yet attempt {} "
                    "reached the provider at {:.1f} ms",
                    entry.attempt, entry.route.empty() ? "" : " on route " + entry.route,
                    ref::ToString(failure->failure_class), entry.plan_summary, *why, next.attempt,
                    ArrivedMs(next)));
  }
  return Pass();
}

Verdict RetryWithinBudget(const View& view) {
  if (!view.has_policy()) return NotApplicable(NoPolicy(view));
  if (auto unstated = UnlessDeclared(view, {"max_attempts"})) return *unstated;
  if (!view.policy().max_attempts) return Pass();
  const int max = *view.policy().max_attempts;
  const int allowed = max * std::max(view.trace.calls, 1);
  if (static_cast<int>(view.attempts.size()) > allowed) {
    return Fail(
        fmt::format("{} requests reached the provider; the declared budget is {} "
                    "attempt(s) per call x {} call(s)",
                    view.attempts.size(), max, view.trace.calls));
  }
  for (std::size_t i = 0; i < view.calls.size(); ++i) {
    for (const ClientRecord* record : view.calls[i].records) {
      const auto attempt = record->event.attempt;
      if (record->event.kind == EventKind::kStart && attempt && *attempt > max) {
        return Fail(
            fmt::format("call {} started attempt {} at {:.1f} ms; declared "
                        "max_attempts {}",
                        i, *attempt, Ms(record->at), max));
      }
    }
  }
  return Pass();
}

namespace {

// The evidence when the gap before retry `k + 1` lies outside every window the declared backoff
// and the response's hints allow, else "".
std::string GapOutsideBackoff(const View& view, std::size_t k) {
  const Tolerance& tolerance = view.tolerance;
  const double gap = GapMs(view, k);
  const std::vector<Window> windows = AllowedGaps(view, k);
  const bool inside = std::ranges::any_of(windows, [&](const Window& window) {
    return gap >= window.lower_ms - tolerance.early_ms &&
           gap <= window.upper_ms + tolerance.late_ms;
  });
  if (inside) return {};
  return fmt::format(
      "attempt {} ended at {:.1f} ms and attempt {} arrived at {:.1f} "
      "ms: a gap of {:.1f} ms, outside what the declared {} backoff "
      "and the response's hints allow for retry {}: {} ms "
      "(tolerance {} / {})",
      view.attempts[k]->attempt, EndedMs(*view.attempts[k]), view.attempts[k + 1]->attempt,
      ArrivedMs(*view.attempts[k + 1]), gap, ref::ToString(view.policy().backoff.strategy), k + 1,
      AllowedText(windows), EarlyRoom(tolerance), LateRoom(tolerance));
}

}  // namespace

Verdict RetryBackoffBounds(const View& view) {
  if (view.has_routes()) return JudgedPerRoute("ROUTE-004 (holds) and ROUTE-005 (breakers)");
  if (!view.has_policy()) return NotApplicable(NoPolicy(view));
  if (!view.single_call()) return NotApplicable("several concurrent calls share the provider");
  if (view.refusals()) {
    return NotApplicable("refused connections never reach the journal, so gaps are unknown");
  }
  if (view.attempts.size() < 2) return NotApplicable("no retry reached the provider");
  if (auto unstated =
          UnlessDeclared(view, {"backoff", "retry_after.cap_ms", "retry_after.jitter"})) {
    return *unstated;
  }
  for (std::size_t k = 0; k + 1 < view.attempts.size(); ++k) {
    if (std::string outside = GapOutsideBackoff(view, k); !outside.empty()) {
      return Fail(std::move(outside));
    }
  }
  return Pass();
}

namespace {

// The hints are judged on how the subject reads them: n/a (nullopt when judged) while a hint
// that a retry followed meets a reading the subject does not state.
std::optional<Verdict> HintReadingUnstated(const View& view) {
  for (std::size_t k = 0; k + 1 < view.attempts.size(); ++k) {  // a hint to judge: its reading
    if (ReadHints(*view.attempts[k]).values.empty() || NextOnRoute(view, k) == nullptr) continue;
    return UnlessDeclared(view, kHintReadingKeys);
  }
  return std::nullopt;
}

// Attempt `entry` and the next attempt on its route, `next`: the evidence when that came before
// the hint allowed, or after a hint over the cap that the policy gives up on; else "". `judged`
// is set for a hint that demands a wait.
std::string HintBroken(const View& view, const provider::JournalEntry& entry,
                       const provider::JournalEntry& next, bool* judged) {
  const HintDemand demand = DemandOf(view, entry);
  if (demand.backoff_allowed) {  // a hint over the cap it may answer with its backoff
    *judged = true;
    return {};
  }
  if (!demand.floor_ms && demand.over_cap_ms) {  // every hint it reads makes it give up
    return fmt::format(
        "attempt {} asked for {:.0f} ms, over the declared cap {:.0f} "
        "ms with over_cap \"give-up\", yet attempt {} arrived at {:.1f} "
        "ms",
        entry.attempt, *demand.over_cap_ms, *view.declared.retry_after_cap_ms(), next.attempt,
        ArrivedMs(next));
  }
  if (!demand.floor_ms || *demand.floor_ms == 0) return {};
  *judged = true;
  const double gap = ArrivedMs(next) - EndedMs(entry);
  if (gap + view.tolerance.early_ms >= *demand.floor_ms) return {};
  return fmt::format(
      "attempt {}{} ({}) asked to wait {:.0f} ms ({}); attempt {} arrived "
      "{:.1f} ms after it ended (at {:.1f} ms; tolerance {})",
      entry.attempt, entry.route.empty() ? "" : " on route " + entry.route, entry.plan_summary,
      *demand.floor_ms, demand.floor_source, next.attempt, gap, ArrivedMs(next),
      EarlyRoom(view.tolerance));
}

// Judged per route: the next attempt on the route that asked for the wait (every attempt is on
// the one route without routes).
Verdict RetryAfterPerRoute(const View& view) {
  if (!view.single_call()) return NotApplicable("several concurrent calls share the provider");
  if (auto unstated = HintReadingUnstated(view)) return *unstated;
  if (view.has_policy() && !view.policy().retry_after.honor) {
    return NotApplicable("the subject declares that it ignores Retry-After (see ADV-001)");
  }
  bool judged = false;
  for (std::size_t k = 0; k + 1 < view.attempts.size(); ++k) {
    const provider::JournalEntry* next = NextOnRoute(view, k);
    if (next == nullptr) continue;
    if (std::string broken = HintBroken(view, *view.attempts[k], *next, &judged); !broken.empty()) {
      return Fail(std::move(broken));
    }
  }
  if (!judged) return NotApplicable("no retry followed a Retry-After the subject reads");
  return Pass();
}

}  // namespace

Verdict RetryAfterHonoured(const View& view) {
  if (view.has_routes()) return JudgedPerRoute("ROUTE-004");
  return RetryAfterPerRoute(view);
}

Verdict RouteRetryAfterHonoured(const View& view) {
  if (!view.has_routes()) return NotApplicable("the scenario has no routes (see RETRY-004)");
  return RetryAfterPerRoute(view);
}

Verdict RetrySameBody(const View& view) {
  if (view.has_routes()) return JudgedPerRoute("ROUTE-008");
  if (view.attempts.size() < 2) return NotApplicable("only one request reached the provider");
  const std::string& first = view.attempts.front()->body;
  for (const provider::JournalEntry* entry : view.attempts) {
    if (entry->body == first) continue;
    std::size_t at = 0;
    while (at < first.size() && at < entry->body.size() && first[at] == entry->body[at]) ++at;
    return Fail(
        fmt::format("attempt {} sent a {} B body that differs from attempt {}'s {} B "
                    "body from byte {}: {} vs {}",
                    entry->attempt, entry->body.size(), view.attempts.front()->attempt,
                    first.size(), at, Quote(std::string_view(entry->body).substr(at)),
                    Quote(std::string_view(first).substr(at))));
  }
  return Pass();
}

namespace {

// Whether a fresh retry budget (the call's own: nothing else spent it) still grants a retry
// after `failures` failed attempts, each charged as Decide charges it and every earlier one
// retried.
bool BudgetRetriesAfter(const ref::BudgetConfig& config, int failures) {
  ref::RetryBudget budget(config);
  bool granted = true;
  for (int i = 0; i < failures; ++i) {
    budget.RecordFailure();
    granted = budget.TryWithdraw();
  }
  return granted;
}

// Why RETRY-006 does not judge the call, or nullopt: it judges one failed, uncancelled call on
// one provider whose journal holds every attempt, under a policy that states what it reads.
std::optional<Verdict> RetryWhileAllowedUnjudged(const View& view) {
  if (view.has_routes()) return JudgedPerRoute("ROUTE-006 and ROUTE-007");
  if (!view.has_policy()) return NotApplicable(NoPolicy(view));
  if (!view.single_call()) return NotApplicable("several concurrent calls share the provider");
  if (view.trace.one_client && view.scenario.request.calls > 1 && view.policy().budget) {
    return NotApplicable("the calls share one retry budget, which another call may have spent");
  }
  const ClientRecord* terminal = view.calls[0].terminal;
  if (terminal == nullptr || terminal->event.kind != EventKind::kFailed) {
    return NotApplicable("the call did not fail");
  }
  if (view.trace.cancel_at || FailureOf(terminal->event).code == "ABORTED") {
    return NotApplicable("the call was cancelled");
  }
  if (view.refusals() || view.attempts.empty()) {
    return NotApplicable("the journal does not hold every attempt");
  }
  return UnlessDeclared(view, kRetryWhileAllowedKeys);
}

// Whether the declared policy gives up after `last` whatever the timing: it never retries that
// failure, its attempts or budget are spent, or a hint it reads is missing or over its cap and it
// gives up on that.
bool PolicyGivesUpAfter(const View& view, const provider::JournalEntry& last) {
  if (PolicyForbids(view, last)) return true;
  const ref::RetryPolicy& policy = view.policy();
  const int made = static_cast<int>(view.attempts.size());
  if (policy.max_attempts && made >= *policy.max_attempts) return true;
  if (policy.budget && !BudgetRetriesAfter(*policy.budget, made)) return true;
  // A policy that gives up when a failure it reads hints for carries none (retry_after.missing).
  if (ReadHintsOf(view, last).values.empty() &&
      policy.retry_after.missing == ref::OverCapMode::kGiveUp && policy.retry_after.honor &&
      StatusRead(policy, last.status)) {
    return true;
  }
  // It may have read the hint over its cap, and gives up on it as declared.
  const HintDemand demand = DemandOf(view, last);
  return demand.over_cap_ms && policy.retry_after.over_cap == ref::OverCapMode::kGiveUp;
}

// When the policy could have retried after `last`: within its backoff window, or after the
// server's hint.
DelayBounds NextRetryWindow(const View& view, const provider::JournalEntry& last) {
  const ref::RetryPolicy& policy = view.policy();
  const int made = static_cast<int>(view.attempts.size());
  const HintDemand demand = DemandOf(view, last);
  const DelayBounds bounds = BackoffBounds(policy.backoff, made - 1);
  double earliest = bounds.lower_ms;
  double latest = bounds.upper_ms;
  if (demand.floor_ms) {
    earliest = std::max(earliest, *demand.floor_ms);
    latest = std::max(latest, *demand.longest_ms * (1 + policy.retry_after.jitter));
  }
  return {earliest, latest};
}

// A client may give up for the deadline when its LATEST allowed retry would not fit (it drew a
// long delay); it must retry when even that would.
bool DeadlineExcuses(const View& view, const provider::JournalEntry& last, double latest_ms) {
  const auto total = view.declared.total_ms();
  if (!total) return false;
  const double deadline = ArrivedMs(*view.attempts.front()) + *total;
  const double min_attempt = static_cast<double>(view.policy().min_attempt_time.count());
  return EndedMs(last) + latest_ms + min_attempt > deadline - view.tolerance.late_ms;
}

}  // namespace

Verdict RetryWhileAllowed(const View& view) {
  if (auto unjudged = RetryWhileAllowedUnjudged(view)) return *unjudged;
  const provider::JournalEntry& last = *view.attempts.back();
  const std::optional<ref::Failure> failure = TruthFailure(view, last);
  if (!failure || PolicyGivesUpAfter(view, last)) return Pass();
  const DelayBounds window = NextRetryWindow(view, last);
  if (DeadlineExcuses(view, last, window.upper_ms)) return Pass();
  const ref::RetryPolicy& policy = view.policy();
  return Fail(fmt::format(
      "the call failed at {:.1f} ms after attempt {} ({}: {}), which the "
      "declared policy retries; with max_attempts {} and {} it could have "
      "retried at {:.1f} ms",
      Ms(view.calls[0].terminal->at), last.attempt, ref::ToString(failure->failure_class),
      last.plan_summary,
      policy.max_attempts ? fmt::format("{}", *policy.max_attempts) : std::string("unbounded"),
      view.declared.total_ms()
          ? fmt::format("a total deadline of {:.0f} ms", *view.declared.total_ms())
          : std::string("no total deadline"),
      EndedMs(last) + window.lower_ms));
}

}  // namespace faultline::harness::judge_internal
