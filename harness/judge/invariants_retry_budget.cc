// RETRY-007: a declared retry budget (policy `budget`, reference_impl/budget.h) is never
// overdrawn. The bucket is replayed over the journal's attempts in time order, charged as the
// reference client charges it: every failed attempt takes `failure_cost` when it ends, every
// retry (an attempt of a call after its first) takes `retry_cost` when it arrives and needs that
// many tokens, and more than `retry_threshold`; a call that got a whole answer refunds
// `success_refund`. For one client whose calls share the budget (the in-process reference
// client, a session-mode adapter) the whole run is replayed at once (judge.cc), else each call
// on its own budget.
//
// Over sockets the order of two calls' events is known only within the tolerance: another call's
// refund counts as early as it may have come, its failure's cost as late, so a retry fails the
// check only when every order the timing allows leaves too few tokens.
#include <algorithm>

#include "harness/judge/judge_internal.h"
#include "reference_impl/budget.h"

namespace faultline::harness::judge_internal {
namespace {

// One change to the bucket, at `at_ms`: a retry's withdrawal (`retry`), a failed attempt's cost,
// or a refund.
struct BudgetEvent {
  enum Kind { kRefund, kFailure, kRetry } kind;
  double at_ms;
  int call;
  const provider::JournalEntry* entry;
};

// The bucket's events over the attempts of `view`, in the order most favourable to the subject.
std::vector<BudgetEvent> BudgetEvents(const View& view) {
  std::vector<BudgetEvent> events;
  std::set<int> started;
  for (const provider::JournalEntry* entry : view.attempts) {
    const int call = std::max(entry->call, 0);
    if (!started.insert(call).second) {
      events.push_back({BudgetEvent::kRetry, ArrivedMs(*entry), call, entry});
    }
    const bool whole = entry->truth.answer.has_value();
    const double slack = view.tolerance.late_ms;
    events.push_back({whole ? BudgetEvent::kRefund : BudgetEvent::kFailure,
                      EndedMs(*entry) + (whole ? -slack : slack), call, entry});
  }
  // At one instant a refund comes first and a retry last (the most tokens for it).
  std::ranges::stable_sort(events, [](const BudgetEvent& a, const BudgetEvent& b) {
    return a.at_ms != b.at_ms ? a.at_ms < b.at_ms : a.kind < b.kind;
  });
  return events;
}

}  // namespace

Verdict RetryBudgetKept(const View& view) {
  if (!view.has_policy()) return NotApplicable(NoPolicy(view));
  if (auto unstated = UnlessDeclared(view, {"budget"})) return *unstated;
  if (!view.policy().budget) return NotApplicable("the subject declares no retry budget");
  if (view.refusals()) {
    return NotApplicable("refused connections never reach the journal, so retries are unknown");
  }
  const ref::BudgetConfig& config = *view.policy().budget;
  double tokens = config.capacity;
  bool judged = false;
  for (const BudgetEvent& event : BudgetEvents(view)) {
    switch (event.kind) {
      case BudgetEvent::kRefund:
        tokens = std::min(config.capacity, tokens + config.success_refund);
        break;
      case BudgetEvent::kFailure:
        tokens = std::max(0.0, tokens - config.failure_cost);
        break;
      case BudgetEvent::kRetry:
        judged = true;
        if (tokens + 1e-9 < config.retry_cost ||
            (config.retry_threshold > 0 && tokens <= config.retry_threshold + 1e-9)) {
          return Fail(fmt::format(
              "call {} retried at {:.1f} ms (the provider's attempt {}), which the declared "
              "budget (capacity {:g}, retry_cost {:g}, retry_threshold {:g}) refuses: it held "
              "{:.2f} token(s) then, replayed over {} attempt(s) of {}",
              event.call, event.at_ms, event.entry->attempt, config.capacity, config.retry_cost,
              config.retry_threshold, tokens, view.attempts.size(),
              view.trace.one_client && view.trace.calls > 1 ? "all the client's calls"
                                                            : "the call"));
        }
        tokens -= config.retry_cost;
        break;
    }
  }
  if (!judged) return NotApplicable("no retry reached the provider");
  return Pass();
}

}  // namespace faultline::harness::judge_internal
