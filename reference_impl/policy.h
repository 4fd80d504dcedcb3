// The retry policy and its one decision: after a failed attempt, retry at T, or give up.
//
// Decide() is a pure function of the policy, the classified failure, the server's hint, the time,
// the deadline and an injected RNG (plus the shared retry budget, when one is given: a granted
// retry takes a token from it). It never reads a clock and never sleeps; the driver sleeps until
// `retry_at` and honours the timeouts.
//
// The rules, in the order they are checked:
//   1. An ABORTED failure (the caller cancelled) ends the call: reason kCancelled.
//   2. Output already committed is final: no retry after commit (kCommitted).
//   3. The failure must be retryable (the classifier's verdict, after `x-should-retry`), AND its
//      class must be in `retryable_classes` (the policy's permission list; the policy has the
//      last word, so `x-should-retry: true` cannot force a retry of a class it never retries).
//   4. Bounded mode: at most `max_attempts` attempts in all. Unbounded mode (max_attempts unset)
//      retries until the deadline, the budget or a cancel stops it.
//   5. The delay: a local backoff sample (backoff.h), raised to the server's hint when the hint is
//      longer — Retry-After is a FLOOR, never shortened by our own backoff. The hint gets a
//      positive-only jitter of up to `retry_after.jitter` × hint (so a fleet told "retry at
//      12:00:01" does not arrive in lockstep) without exceeding `retry_after.cap`. A hint above the
//      cap either gives up, reporting when the server would be ready (kRetryAfterOverCap,
//      `server_retry_at`), or is ignored in favour of the local backoff (`over_cap` mode). The
//      weak `ratelimit-reset` hint above the cap is always ignored, never a reason to give up.
//   6. The end-to-end deadline includes the sleeps: an attempt is only started if it would still
//      have `min_attempt_time` before the deadline (kDeadline otherwise). The delay is never
//      shortened to fit, since that would break the backoff bounds or the Retry-After floor.
//   7. The shared budget must grant a token (kBudgetExhausted otherwise).
//
// Policies are plain values; Validate() checks the bounds. Loading from JSON (with strict errors
// naming the JSON path) and serialising to the `policy` object of `adapter/hello` (DESIGN §5) are
// in policy_json.h. Thread-safety: values; Decide is reentrant (the RNG is per caller, the budget
// is internally synchronised).
#pragma once

#include <chrono>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reference_impl/backoff.h"
#include "reference_impl/budget.h"
#include "reference_impl/failure.h"
#include "reference_impl/retry_after.h"

namespace faultline::ref {

// The policy's clock: monotonic time as the driver measures it (a virtual world makes its own).
using PolicyClock = std::chrono::steady_clock;

enum class OverCapMode {
  kGiveUp,   // "give-up": fail now, reporting the server's retry time
  kBackoff,  // "backoff": ignore the hint, use the local backoff
};
std::string_view ToString(OverCapMode mode);
std::optional<OverCapMode> ParseOverCapMode(std::string_view text);

struct RetryAfterConfig {
  bool honor = true;                      // false: ignore every server hint (a baseline to compare)
  std::chrono::milliseconds cap{60'000};  // longest hint we will wait for
  double jitter = 0.1;                    // positive-only ratio added on top of the hint, 0..1
  OverCapMode over_cap = OverCapMode::kGiveUp;
  friend bool operator==(const RetryAfterConfig&, const RetryAfterConfig&) = default;
};

// Timeouts the driver enforces; nullopt disables one.
struct TimeoutConfig {
  std::optional<std::chrono::milliseconds> connect = std::chrono::seconds(10);
  std::optional<std::chrono::milliseconds> response_headers = std::chrono::seconds(60);
  // Longest silence between meaningful stream events, armed only while waiting for data.
  std::optional<std::chrono::milliseconds> idle = std::chrono::seconds(30);
  // Whether keep-alive comments and `ping` events re-arm the idle watchdog (normally not: a
  // heartbeat-only stream is a stall).
  bool heartbeats_reset_idle = false;
  // End-to-end deadline for the whole call, sleeps included.
  std::optional<std::chrono::milliseconds> total = std::chrono::minutes(10);
  friend bool operator==(const TimeoutConfig&, const TimeoutConfig&) = default;
};

// Classes retried by default: everything transient. invalid-request is listed so that the
// failures the classifier marks retryable (409 Conflict, `x-should-retry: true`) are retried; a
// plain 400 is not retryable and so is not retried.
std::vector<FailureClass> DefaultRetryableClasses();

inline constexpr int kMaxAttemptsLimit = 1000;

struct RetryPolicy {
  std::optional<int> max_attempts = 3;  // attempts in all, 1..kMaxAttemptsLimit; nullopt: unbounded
  std::vector<FailureClass> retryable_classes = DefaultRetryableClasses();
  BackoffConfig backoff;
  RetryAfterConfig retry_after;
  // An attempt is only started when at least this much time is left before the deadline.
  std::chrono::milliseconds min_attempt_time{1000};
  TimeoutConfig timeouts;
  std::optional<BudgetConfig> budget;  // nullopt: no shared budget
  friend bool operator==(const RetryPolicy&, const RetryPolicy&) = default;
};

// A bound violation, naming the field by its JSON path ("backoff.cap_ms").
struct PolicyError {
  std::string path;
  std::string message;
  std::string ToString() const;  // "at backoff.cap_ms: must be >= base_ms (500), got 100"
  friend bool operator==(const PolicyError&, const PolicyError&) = default;
};

std::expected<void, PolicyError> Validate(const RetryPolicy& policy);

// ---- The decision ----

enum class GiveUpReason {
  kCancelled,
  kCommitted,
  kNotRetryable,
  kClassNotRetryable,
  kAttemptsExhausted,
  kDeadline,
  kRetryAfterOverCap,
  kBudgetExhausted,
};
std::string_view ToString(GiveUpReason reason);  // "cancelled", "retry-after-over-cap", ...

struct DecisionInput {
  Failure failure{};
  // The server's hint with its source. When absent but failure.retry_after is set, that value
  // is used with source "retry-after".
  std::optional<RetryHint> hint{};
  int attempt = 1;  // 1-based number of the attempt that just failed
  PolicyClock::time_point now{};
  std::optional<PolicyClock::time_point> deadline{};  // end-to-end; nullopt: none
  // The delay slept before the failed attempt (decorrelated jitter); nullopt for attempt 1.
  std::optional<std::chrono::milliseconds> previous_delay{};
};

struct Decision {
  enum class Kind {
    kRetry,
    kGiveUp,
    kFailOver,  // reserved for a later multi-endpoint policy; Decide never returns it yet
  };
  Kind kind = Kind::kGiveUp;
  // kRetry: when the next attempt starts, the wait, and what set it.
  PolicyClock::time_point retry_at;
  std::chrono::milliseconds delay{0};
  DelaySource delay_source = DelaySource::kBackoff;
  // kGiveUp: why. For kRetryAfterOverCap, when the server said it would be ready; for kDeadline,
  // when the retry would have started.
  GiveUpReason reason = GiveUpReason::kNotRetryable;
  std::optional<PolicyClock::time_point> server_retry_at;

  bool retry() const { return kind == Kind::kRetry; }
};

Decision Decide(const RetryPolicy& policy, const DecisionInput& input, RetryRng& rng,
                RetryBudget* budget = nullptr);

// The call's deadline when it starts at `start` (nullopt without a total timeout).
std::optional<PolicyClock::time_point> CallDeadline(const RetryPolicy& policy,
                                                    PolicyClock::time_point start);

}  // namespace faultline::ref
