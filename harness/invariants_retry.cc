// RETRY-*: which failures are retried, how many times, how long after, with what body.
#include "harness/judge_internal.h"

namespace faultline::harness::judge_internal {
namespace {

bool DeclaredRetryable(const View& view, const std::string& failure_class) {
  const auto& classes = view.policy.retryable_classes;
  return !classes || classes->contains(failure_class);
}

// The gap the client waited between the end of attempt k and the arrival of attempt k+1.
double GapMs(const View& view, std::size_t k) {
  return ArrivedMs(*view.attempts[k + 1]) - EndedMs(*view.attempts[k]);
}

// Whether the provider's hint on attempt k governs the delay before attempt k+1.
bool HintGoverns(const View& view, const provider::JournalEntry& entry) {
  const auto& hint = entry.truth.retry_after;
  if (!hint || !view.policy.retry_after_honored || hint->count() == 0) return false;
  const auto cap = view.policy.retry_after_cap_ms;
  return !cap || Ms(*hint) <= *cap;
}

}  // namespace

CheckResult RetryNotRetryable(const View& view) {
  if (!view.single_call()) return NotApplicable("", "several concurrent calls share the provider");
  for (std::size_t k = 0; k + 1 < view.attempts.size(); ++k) {
    const provider::JournalEntry& entry = *view.attempts[k];
    const std::string failure_class = ExpectedClass(view, entry);
    if (failure_class.empty()) continue;
    const bool retryable = failure_class == "timeout" || entry.truth.retryable;
    if (retryable && DeclaredRetryable(view, failure_class)) continue;
    const provider::JournalEntry& next = *view.attempts[k + 1];
    return Fail("",
                fmt::format("attempt {} failed with {} ({}), which is {}, yet attempt {} "
                            "reached the provider at {:.1f} ms",
                            entry.attempt, failure_class, entry.plan_summary,
                            retryable ? "not in the declared retryable_classes" : "not retryable",
                            next.attempt, ArrivedMs(next)));
  }
  return Pass("");
}

CheckResult RetryWithinBudget(const View& view) {
  if (view.policy.unbounded) return Pass("");
  if (!view.policy.max_attempts) return NotApplicable("", "the subject declares no max_attempts");
  const int max = *view.policy.max_attempts;
  const int allowed = max * std::max(view.trace.calls, 1);
  if (static_cast<int>(view.attempts.size()) > allowed) {
    return Fail("", fmt::format("{} requests reached the provider; the declared budget is {} "
                                "attempt(s) per call x {} call(s)",
                                view.attempts.size(), max, view.trace.calls));
  }
  for (std::size_t i = 0; i < view.calls.size(); ++i) {
    for (const ClientRecord* record : view.calls[i].records) {
      const auto attempt = Int(record->event, "attempt");
      if (EventType(*record) == "response/start" && attempt && *attempt > max) {
        return Fail("", fmt::format("call {} started attempt {} at {:.1f} ms; declared "
                                    "max_attempts {}",
                                    i, *attempt, Ms(record->at), max));
      }
    }
  }
  return Pass("");
}

CheckResult RetryBackoffBounds(const View& view) {
  if (!view.policy.backoff) return NotApplicable("", "the subject declares no backoff");
  if (!view.single_call()) return NotApplicable("", "several concurrent calls share the provider");
  if (!view.scenario.listener_outages.empty()) {
    return NotApplicable("", "refused connections never reach the journal, so gaps are unknown");
  }
  const Tolerance& tolerance = view.tolerance;
  for (std::size_t k = 0; k + 1 < view.attempts.size(); ++k) {
    if (HintGoverns(view, *view.attempts[k])) continue;
    const DelayBounds bounds = BackoffBounds(*view.policy.backoff, static_cast<int>(k));
    const double gap = GapMs(view, k);
    // A response with some (weaker or invalid) hint may be waited out longer than the backoff.
    const double upper = view.attempts[k]->truth.hinted ? 1e300 : bounds.upper_ms;
    if (gap >= bounds.lower_ms - tolerance.early_ms && gap <= upper + tolerance.late_ms) {
      continue;
    }
    return Fail("", fmt::format("attempt {} ended at {:.1f} ms and attempt {} arrived at {:.1f} "
                                "ms: a gap of {:.1f} ms, outside the declared {} backoff bounds "
                                "[{:.1f}, {:.1f}] ms for retry {} (tolerance -{:.0f}/+{:.0f} ms)",
                                view.attempts[k]->attempt, EndedMs(*view.attempts[k]),
                                view.attempts[k + 1]->attempt, ArrivedMs(*view.attempts[k + 1]),
                                gap, view.policy.backoff->strategy, bounds.lower_ms,
                                bounds.upper_ms, k + 1, tolerance.early_ms, tolerance.late_ms));
  }
  return Pass("");
}

CheckResult RetryAfterHonoured(const View& view) {
  if (!view.single_call()) return NotApplicable("", "several concurrent calls share the provider");
  if (!view.policy.retry_after_honored) {
    return NotApplicable("", "the subject declares that it ignores Retry-After");
  }
  for (std::size_t k = 0; k + 1 < view.attempts.size(); ++k) {
    const provider::JournalEntry& entry = *view.attempts[k];
    if (!entry.truth.retry_after) continue;
    const double hint = Ms(*entry.truth.retry_after);
    const provider::JournalEntry& next = *view.attempts[k + 1];
    const auto cap = view.policy.retry_after_cap_ms;
    if (cap && hint > *cap) {
      if (view.policy.over_cap == "backoff") continue;
      return Fail("", fmt::format("attempt {} asked for {:.0f} ms, over the declared cap {:.0f} "
                                  "ms with over_cap \"{}\", yet attempt {} arrived at {:.1f} ms",
                                  entry.attempt, hint, *cap, view.policy.over_cap, next.attempt,
                                  ArrivedMs(next)));
    }
    const double gap = GapMs(view, k);
    if (gap + view.tolerance.early_ms < hint) {
      return Fail("", fmt::format("attempt {} ({}) asked to wait {:.0f} ms; attempt {} arrived "
                                  "{:.1f} ms after it ended (at {:.1f} ms)",
                                  entry.attempt, entry.plan_summary, hint, next.attempt, gap,
                                  ArrivedMs(next)));
    }
  }
  return Pass("");
}

CheckResult RetrySameBody(const View& view) {
  if (view.attempts.size() < 2) return Pass("");
  const std::string& first = view.attempts.front()->body;
  for (const provider::JournalEntry* entry : view.attempts) {
    if (entry->body == first) continue;
    std::size_t at = 0;
    while (at < first.size() && at < entry->body.size() && first[at] == entry->body[at]) ++at;
    return Fail("", fmt::format("attempt {} sent a {} B body that differs from attempt {}'s {} B "
                                "body from byte {}: {} vs {}",
                                entry->attempt, entry->body.size(), view.attempts.front()->attempt,
                                first.size(), at, Quote(std::string_view(entry->body).substr(at)),
                                Quote(std::string_view(first).substr(at))));
  }
  return Pass("");
}

}  // namespace faultline::harness::judge_internal
