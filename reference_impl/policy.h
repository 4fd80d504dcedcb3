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
//   3. The failure's phase must be in `retry_phases` (the official SDKs, for one, never retry once
//      the response headers are in): kPhaseNotRetried otherwise. A failure after the headers of
//      a streamed response is further bound by `stream_retries` (kStreamNotRetried): retried
//      until commit, only while the caller has seen no output, only while no event had come
//      (the failure shows in the first one), or never; and by `stream_retry_on`: whether an
//      error event of the provider's, and a broken stream, are retried at all.
//   4. An `x-should-retry` header the policy honours decides first (as the official SDKs read
//      it). Then status rules come before class rules: a status in `statuses.never` is not retried
//      (kStatusNotRetried); a status in `statuses.retry` is retried whatever its class. Otherwise
//      the failure must be retryable (the classifier's verdict, after `x-should-retry` when the
//      policy honours that header), AND its class must be in `retryable_classes` (the policy has
//      the last word, so `x-should-retry: true` cannot force a retry of a class it never
//      retries). In mode "always" every failure but ABORTED passes this rule.
//   5. Bounded mode: at most `max_attempts` attempts in all. Unbounded mode (max_attempts unset)
//      retries until the deadline, the budget or a cancel stops it.
//   6. The delay: a local backoff sample (backoff.h), combined with the server's hint as
//      `retry_after.mode` says: "floor" raises the backoff to the hint when the hint is longer
//      (Retry-After is a FLOOR, never shortened by our own backoff: the reference default);
//      "replace" waits the hint instead of the backoff (the official SDKs). Only hints from
//      `retry_after.sources` and, when set, `retry_after.statuses` count. A zero hint is either
//      no floor at all ("backoff") or a retry at once ("immediate"). The hint gets a
//      positive-only jitter of up to `retry_after.jitter` x hint (so a fleet told "retry at
//      12:00:01" does not arrive in lockstep) without exceeding `retry_after.cap`. A hint above
//      the cap either gives up, reporting when the server would be ready (kRetryAfterOverCap,
//      `server_retry_at`), or is ignored in favour of the local backoff (`over_cap` mode). The
//      weak `ratelimit-reset` hint above the cap is always ignored, never a reason to give up.
//      A failure whose hints are read (its status is in `retry_after.statuses`) but that carries
//      none either takes the backoff or gives up (kNoRetryAfter), as `retry_after.missing` says
//      (LangChain retries a 429 only with a hint).
//   7. The end-to-end deadline includes the sleeps: an attempt is only started if it would still
//      have `min_attempt_time` before the deadline (kDeadline otherwise). The delay is never
//      shortened to fit, since that would break the backoff bounds or the Retry-After floor.
//   8. The shared budget must grant a token (kBudgetExhausted otherwise). Before rule 1, the
//      failed attempt is charged to the budget's `failure_cost` (gRPC retry throttling).
//
// With several routes (route_registry.h) Decide judges a retry on the route that failed, and
// DecideFailover an attempt on another one; both count against the same attempt budget,
// deadline and shared budget: one call, one budget, whatever the routes.
//
// Policies are plain values; Validate() checks the bounds. Loading from JSON (with strict errors
// naming the JSON path) and serialising to the `policy` object of `adapter/hello`
// (docs/adapter-protocol.md) are in policy_json.h. Thread-safety: values; Decide is reentrant (the
// RNG is per caller, the budget is internally synchronised).
#pragma once

#include <chrono>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reference_impl/backoff.h"
#include "reference_impl/budget.h"
#include "reference_impl/failover.h"
#include "reference_impl/failure.h"
#include "reference_impl/name_table.h"
#include "reference_impl/retry_after.h"

namespace faultline::ref {

// The policy's clock: monotonic time as the driver measures it (a virtual world makes its own).
using PolicyClock = std::chrono::steady_clock;

enum class OverCapMode {
  kGiveUp,   // "give-up": fail now, reporting the server's retry time
  kBackoff,  // "backoff": ignore the hint, use the local backoff
};
inline constexpr NameTable<OverCapMode, 2> kOverCapModeNames{{
    {OverCapMode::kGiveUp, "give-up"},
    {OverCapMode::kBackoff, "backoff"},
}};
std::string_view ToString(OverCapMode mode);
std::optional<OverCapMode> ParseOverCapMode(std::string_view text);

// How a usable hint combines with the local backoff.
enum class HintMode {
  kFloor,    // "floor": max(backoff sample, hint)
  kReplace,  // "replace": the hint instead of the backoff
};
inline constexpr NameTable<HintMode, 2> kHintModeNames{{
    {HintMode::kFloor, "floor"},
    {HintMode::kReplace, "replace"},
}};
std::string_view ToString(HintMode mode);
std::optional<HintMode> ParseHintMode(std::string_view text);

// What a hint of zero means.
enum class ZeroHint {
  kBackoff,    // "backoff": no floor; the local backoff decides
  kImmediate,  // "immediate": retry at once
};
inline constexpr NameTable<ZeroHint, 2> kZeroHintNames{{
    {ZeroHint::kBackoff, "backoff"},
    {ZeroHint::kImmediate, "immediate"},
}};
std::string_view ToString(ZeroHint mode);
std::optional<ZeroHint> ParseZeroHint(std::string_view text);

// Every hint source the parser knows (retry_after.h), strongest first.
std::vector<DelaySource> AllHintSources();

struct RetryAfterConfig {
  bool honor = true;  // false: ignore every server hint (a baseline to compare)
  HintMode mode = HintMode::kFloor;
  // How a `retry-after` value is read: as RFC 9110 says, or as JavaScript's Date.parse reads
  // it (retry_after.h).
  RetryAfterParse parse = RetryAfterParse::kRfc9110;
  // Longest hint we will wait for; nullopt: no cap (any valid hint is waited out).
  std::optional<std::chrono::milliseconds> cap = std::chrono::milliseconds(60'000);
  double jitter = 0.1;  // positive-only ratio added on top of the hint, 0..1
  OverCapMode over_cap = OverCapMode::kGiveUp;
  // No usable hint on a failure whose hints are read: the backoff, or give up (same two modes).
  OverCapMode missing = OverCapMode::kBackoff;
  ZeroHint zero = ZeroHint::kBackoff;
  std::vector<DelaySource> sources = AllHintSources();  // which hints are read
  std::optional<std::vector<int>> statuses;             // whose hints are read; nullopt: all
  friend bool operator==(const RetryAfterConfig&, const RetryAfterConfig&) = default;
};

// A set of HTTP statuses: single codes and whole classes ("4xx" is stored as 4).
struct StatusSet {
  std::vector<int> codes;    // 100..599
  std::vector<int> classes;  // 1..5
  bool Contains(int status) const;
  bool empty() const { return codes.empty() && classes.empty(); }
  friend bool operator==(const StatusSet&, const StatusSet&) = default;
};

// Status rules that come before the class rules (rule 4).
struct StatusRules {
  StatusSet retry;  // retried whatever their class
  StatusSet never;  // never retried (wins over `retry`)
  friend bool operator==(const StatusRules&, const StatusRules&) = default;
};

enum class RetryMode {
  kStandard,  // "standard": rules 3-4 as written
  kAlways,    // "always": every failure class but ABORTED retried (attempts default: unbounded)
};
inline constexpr NameTable<RetryMode, 2> kRetryModeNames{{
    {RetryMode::kStandard, "standard"},
    {RetryMode::kAlways, "always"},
}};
std::string_view ToString(RetryMode mode);
std::optional<RetryMode> ParseRetryMode(std::string_view text);

// Which failures of a streamed response, after its headers, may be retried. Libraries differ in
// where their retried operation returns: the reference client retries until commit (it discards
// the uncommitted output); the Vercel AI SDK's providers read ahead to the first output and
// retry what fails before it; LangChain JS returns the stream at its headers and never retries.
enum class StreamRetries {
  kUntilCommit,   // "until-commit"
  kBeforeOutput,  // "before-output": no text delta or tool call had reached the caller
  kFirstEvent,    // "first-event": the stream had delivered no event (a library that reads the
                  // first one before it returns the stream, and retries only what fails there)
  kNever,         // "never"
};
inline constexpr NameTable<StreamRetries, 4> kStreamRetriesNames{{
    {StreamRetries::kUntilCommit, "until-commit"},
    {StreamRetries::kBeforeOutput, "before-output"},
    {StreamRetries::kFirstEvent, "first-event"},
    {StreamRetries::kNever, "never"},
}};
std::string_view ToString(StreamRetries value);
std::optional<StreamRetries> ParseStreamRetries(std::string_view text);

// What failed a streamed response after its headers, for `stream_retry_on`: the provider's own
// error event in the stream (an error frame, Failure::error_event), or the stream itself (the
// connection reset or closed, a stall a timeout cut, a body cut short or unreadable).
enum class StreamFailure {
  kErrorEvent,  // "error-event"
  kTransport,   // "transport"
};
inline constexpr NameTable<StreamFailure, 2> kStreamFailureNames{{
    {StreamFailure::kErrorEvent, "error-event"},
    {StreamFailure::kTransport, "transport"},
}};
std::string_view ToString(StreamFailure value);
std::optional<StreamFailure> ParseStreamFailure(std::string_view text);
std::vector<StreamFailure> AllStreamFailures();

std::vector<Phase> AllPhases();

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

// A per-route circuit breaker's parameters (circuit_breaker.h).
struct BreakerConfig {
  int threshold = 5;                           // consecutive failures that open it, 1..1000
  std::chrono::milliseconds cooldown{30'000};  // open this long before probing, 0..24 h
  int half_open_probes = 1;                    // attempts allowed while half-open, 1..100
  friend bool operator==(const BreakerConfig&, const BreakerConfig&) = default;
};

// A sticky client (ai-fallback's FallbackModel keeps one model index for all its calls): after a
// call fails over, the client's later calls start on the route that failover moved to, until
// `reset` after it; from then on they start on the primary again. The route a call starts on is
// the client's (sticky_route.h), shared by its calls like its breakers.
struct StickyConfig {
  std::chrono::milliseconds reset{180'000};  // 1 ms..24 h
  friend bool operator==(const StickyConfig&, const StickyConfig&) = default;
};

// How a call whose logical model has several routes moves between them (route_registry.h).
struct RoutingConfig {
  bool failover = true;  // false: one endpoint, the primary route: every attempt goes there
  // nullopt: no breaker at all (a client that never stops sending to a failing route).
  std::optional<BreakerConfig> breaker = BreakerConfig{};
  // Attempts one route gets before the call moves on, 1..kMaxAttemptsLimit: a fallback chain
  // (LangChain's withFallbacks: each model spends its own retries first). nullopt: any failed
  // attempt may move to another route.
  std::optional<int> route_attempts;
  // After a failed attempt, among the routes ready as soon, one outside the failed route's
  // shared-fate group goes first (whatever took the route down may have taken its group down).
  // false: groups play no part in the choice (a router that only knows its route order).
  bool avoid_failed_group = true;
  // Which failures move to another route: the failure taxonomy's failover table, or any failure
  // before commit (a router that falls back on every error, an invalid request included).
  FailoverRule failover_on = FailoverRule::kTaxonomy;
  // nullopt: every call starts on the primary whatever the calls before it did (the default).
  std::optional<StickyConfig> sticky;
  friend bool operator==(const RoutingConfig&, const RoutingConfig&) = default;
};

struct RetryPolicy {
  RetryMode mode = RetryMode::kStandard;
  std::optional<int> max_attempts = 3;  // attempts in all, 1..kMaxAttemptsLimit; nullopt: unbounded
  std::vector<FailureClass> retryable_classes = DefaultRetryableClasses();
  std::vector<Phase> retry_phases = AllPhases();  // phases whose failures may be retried
  StreamRetries stream_retries = StreamRetries::kUntilCommit;
  std::vector<StreamFailure> stream_retry_on = AllStreamFailures();  // which stream failures
  StatusRules statuses;
  bool should_retry_header = true;  // honour `x-should-retry` (applied by the classifier)
  BackoffConfig backoff;
  RetryAfterConfig retry_after;
  // An attempt is only started when at least this much time is left before the deadline.
  std::chrono::milliseconds min_attempt_time{1000};
  TimeoutConfig timeouts;
  std::optional<BudgetConfig> budget;  // nullopt: no shared budget
  RoutingConfig routing;
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
  kPhaseNotRetried,
  kStatusNotRetried,
  kNotRetryable,
  kClassNotRetryable,
  kAttemptsExhausted,
  kDeadline,
  kRetryAfterOverCap,
  kBudgetExhausted,
  kNoRetryAfter,
  kAllRoutesDown,     // every route of the logical model is unusable for the rest of the call
  kStreamNotRetried,  // a streamed response failed where `stream_retries` allows no retry
};
std::string_view ToString(GiveUpReason reason);  // "cancelled", "retry-after-over-cap", ...

struct DecisionInput {
  Failure failure{};
  // The server's hints with their sources, strongest first (FindRetryHints); the first one the
  // policy reads is used. When empty but failure.retry_after is set, that value is used with
  // source "retry-after".
  std::vector<RetryHint> hints{};
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
    kFailOver,  // DecideFailover: the next attempt goes to another route at `retry_at`
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

// The bounds of the whole call (rules 5, 7 and 8) for an attempt on ANOTHER route ready at `at`
// after `input.failure`: the attempt budget, the deadline and the shared budget bound failovers
// exactly as they bound retries, across all routes; the class, status and hint rules are the
// failed route's own (the next route has not failed). `token_taken`: Decide already took this
// attempt's budget token (it granted a retry on the failed route that the failover replaces).
// kFailOver (retry_at = at, delay_source kFailover) or kGiveUp with the reason.
Decision DecideFailover(const RetryPolicy& policy, const DecisionInput& input,
                        PolicyClock::time_point at, RetryBudget* budget, bool token_taken);

// Rules 1-4 alone: why `failure` may never be retried under `policy` (whatever the attempt count,
// time or budget), or nullopt when it may be. The runner judges subjects with this same rule.
std::optional<GiveUpReason> RetryForbidden(const RetryPolicy& policy, const Failure& failure);

// The hint rule 6 uses for `failure` among `hints` (strongest first), or nullopt when the policy
// reads none of them (or ignores hints).
std::optional<RetryHint> UsableHint(const RetryPolicy& policy, const Failure& failure,
                                    const std::vector<RetryHint>& hints);

// The call's deadline when it starts at `start` (nullopt without a total timeout).
std::optional<PolicyClock::time_point> CallDeadline(const RetryPolicy& policy,
                                                    PolicyClock::time_point start);

}  // namespace faultline::ref
