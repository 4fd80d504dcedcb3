#include "reference_impl/policy.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <utility>

#include "fmt/format.h"
#include "reference_impl/name_table.h"

namespace faultline::ref {
namespace {

using std::chrono::milliseconds;

constexpr NameTable<GiveUpReason, 13> kReasonNames{{
    {GiveUpReason::kCancelled, "cancelled"},
    {GiveUpReason::kCommitted, "committed"},
    {GiveUpReason::kPhaseNotRetried, "phase-not-retried"},
    {GiveUpReason::kStatusNotRetried, "status-not-retried"},
    {GiveUpReason::kNotRetryable, "not-retryable"},
    {GiveUpReason::kClassNotRetryable, "class-not-retryable"},
    {GiveUpReason::kAttemptsExhausted, "attempts-exhausted"},
    {GiveUpReason::kDeadline, "deadline"},
    {GiveUpReason::kRetryAfterOverCap, "retry-after-over-cap"},
    {GiveUpReason::kBudgetExhausted, "budget-exhausted"},
    {GiveUpReason::kNoRetryAfter, "no-retry-after"},
    {GiveUpReason::kAllRoutesDown, "all-routes-down"},
    {GiveUpReason::kStreamNotRetried, "stream-not-retried"},
}};

Decision GiveUp(GiveUpReason reason,
                std::optional<PolicyClock::time_point> server_retry_at = std::nullopt) {
  Decision decision;
  decision.kind = Decision::Kind::kGiveUp;
  decision.reason = reason;
  decision.server_retry_at = server_retry_at;
  return decision;
}

// Rules 1-5: is a retry allowed at all?
std::optional<GiveUpReason> RefuseOutright(const RetryPolicy& policy, const DecisionInput& input) {
  if (auto reason = RetryForbidden(policy, input.failure)) return reason;
  if (policy.max_attempts && input.attempt >= *policy.max_attempts) {
    return GiveUpReason::kAttemptsExhausted;
  }
  return std::nullopt;
}

bool StatusReadable(const RetryAfterConfig& config, const Failure& failure) {
  if (!config.statuses) return true;
  return failure.status &&
         std::ranges::find(*config.statuses, *failure.status) != config.statuses->end();
}

// The hint plus a positive-only jitter, never above the cap (the hint itself is within it).
milliseconds JitteredHint(milliseconds hint, const RetryAfterConfig& config, RetryRng& rng) {
  const double extra =
      std::floor(Uniform01(rng) * config.jitter * static_cast<double>(hint.count()));
  const milliseconds jittered = hint + milliseconds(static_cast<milliseconds::rep>(extra));
  return config.cap ? std::min(*config.cap, jittered) : jittered;
}

// UsableHint over a span (ChooseDelay passes one bare Retry-After without building a vector).
std::optional<RetryHint> FirstUsableHint(const RetryPolicy& policy, const Failure& failure,
                                         std::span<const RetryHint> hints) {
  const RetryAfterConfig& config = policy.retry_after;
  if (!config.honor || !StatusReadable(config, failure)) return std::nullopt;
  for (const RetryHint& hint : hints) {
    if (std::ranges::find(config.sources, hint.source) != config.sources.end()) return hint;
  }
  return std::nullopt;
}

struct ChosenDelay {
  milliseconds delay{0};
  DelaySource source = DelaySource::kBackoff;
};

// Rule 6: local backoff, combined with the server's hint (or giving up when the hint is over
// the cap).
std::expected<ChosenDelay, Decision> ChooseDelay(const RetryPolicy& policy,
                                                 const DecisionInput& input, RetryRng& rng) {
  const int retry_index = std::max(input.attempt, 1) - 1;
  const ChosenDelay backoff{SampleBackoff(policy.backoff, retry_index, rng, input.previous_delay),
                            DelaySource::kBackoff};
  // A bare failure.retry_after stands for one hint, without copying the list (a fleet run decides
  // millions of times).
  std::span<const RetryHint> hints = input.hints;
  RetryHint bare;
  if (hints.empty() && input.failure.retry_after) {
    bare = {*input.failure.retry_after, DelaySource::kRetryAfter};
    hints = std::span<const RetryHint>(&bare, 1);
  }
  const RetryAfterConfig& config = policy.retry_after;
  const std::optional<RetryHint> hint = FirstUsableHint(policy, input.failure, hints);
  if (!hint && config.missing == OverCapMode::kGiveUp && config.honor &&
      StatusReadable(config, input.failure)) {
    return std::unexpected(GiveUp(GiveUpReason::kNoRetryAfter));
  }
  if (!hint) return backoff;
  if (hint->delay.count() == 0) {
    if (config.zero == ZeroHint::kImmediate) return ChosenDelay{milliseconds(0), hint->source};
    return backoff;
  }
  if (config.cap && hint->delay > *config.cap) {
    const bool weak = hint->source == DelaySource::kRatelimitReset;
    if (weak || config.over_cap == OverCapMode::kBackoff) return backoff;
    return std::unexpected(GiveUp(GiveUpReason::kRetryAfterOverCap, input.now + hint->delay));
  }
  const milliseconds waited = JitteredHint(hint->delay, config, rng);
  if (config.mode == HintMode::kReplace || waited >= backoff.delay) {
    return ChosenDelay{waited, hint->source};
  }
  return backoff;
}

bool Positive(std::optional<milliseconds> value) { return !value || value->count() > 0; }

bool InUnitRange(double value) { return std::isfinite(value) && value >= 0.0 && value <= 1.0; }

PolicyError Bad(std::string path, std::string message) {
  return PolicyError{std::move(path), std::move(message)};
}

std::optional<PolicyError> CheckBackoff(const BackoffConfig& backoff) {
  if (backoff.base.count() <= 0) {
    return Bad("backoff.base_ms", fmt::format("must be > 0, got {}", backoff.base.count()));
  }
  if (backoff.cap < backoff.base) {
    return Bad("backoff.cap_ms", fmt::format("must be >= base_ms ({}), got {}",
                                             backoff.base.count(), backoff.cap.count()));
  }
  if (!std::isfinite(backoff.multiplier) || backoff.multiplier < 1.0) {
    return Bad("backoff.multiplier", fmt::format("must be >= 1, got {}", backoff.multiplier));
  }
  if (!InUnitRange(backoff.jitter)) {
    return Bad("backoff.jitter", fmt::format("must be from 0 to 1, got {}", backoff.jitter));
  }
  return std::nullopt;
}

std::optional<PolicyError> CheckRetryAfter(const RetryAfterConfig& retry_after) {
  if (retry_after.cap && retry_after.cap->count() < 0) {
    return Bad("retry_after.cap_ms",
               fmt::format("must be >= 0 (or null for no cap), got {}", retry_after.cap->count()));
  }
  if (retry_after.statuses) {
    for (std::size_t i = 0; i < retry_after.statuses->size(); ++i) {
      const int status = (*retry_after.statuses)[i];
      if (status < 100 || status > 599) {
        return Bad(fmt::format("retry_after.statuses[{}]", i),
                   fmt::format("must be an HTTP status from 100 to 599, got {}", status));
      }
    }
  }
  if (!InUnitRange(retry_after.jitter)) {
    return Bad("retry_after.jitter",
               fmt::format("must be from 0 to 1, got {}", retry_after.jitter));
  }
  return std::nullopt;
}

std::optional<PolicyError> CheckTimeouts(const TimeoutConfig& timeouts, milliseconds min_attempt) {
  const std::array<std::pair<std::string_view, std::optional<milliseconds>>, 4> all{{
      {"connect_ms", timeouts.connect},
      {"response_headers_ms", timeouts.response_headers},
      {"idle_ms", timeouts.idle},
      {"total_ms", timeouts.total},
  }};
  for (const auto& [name, value] : all) {
    if (!Positive(value)) {
      return Bad(fmt::format("timeouts.{}", name),
                 fmt::format("must be > 0 (or null to disable), got {}", value->count()));
    }
  }
  if (min_attempt.count() < 0) {
    return Bad("min_attempt_ms", fmt::format("must be >= 0, got {}", min_attempt.count()));
  }
  if (timeouts.total && min_attempt > *timeouts.total) {
    return Bad("min_attempt_ms", fmt::format("must be <= timeouts.total_ms ({}), got {}",
                                             timeouts.total->count(), min_attempt.count()));
  }
  return std::nullopt;
}

std::optional<PolicyError> CheckBudget(const std::optional<BudgetConfig>& budget) {
  if (!budget) return std::nullopt;
  if (!std::isfinite(budget->capacity) || budget->capacity <= 0) {
    return Bad("budget.capacity", fmt::format("must be > 0, got {}", budget->capacity));
  }
  if (!std::isfinite(budget->retry_cost) || budget->retry_cost < 0 ||
      budget->retry_cost > budget->capacity) {
    return Bad("budget.retry_cost", fmt::format("must be >= 0 and <= capacity ({}), got {}",
                                                budget->capacity, budget->retry_cost));
  }
  if (!std::isfinite(budget->failure_cost) || budget->failure_cost < 0 ||
      budget->failure_cost > budget->capacity) {
    return Bad("budget.failure_cost", fmt::format("must be >= 0 and <= capacity ({}), got {}",
                                                  budget->capacity, budget->failure_cost));
  }
  if (budget->retry_cost == 0 && budget->failure_cost == 0) {
    return Bad("budget.retry_cost",
               "must be > 0 when failure_cost is 0 (otherwise the budget never runs out)");
  }
  if (!std::isfinite(budget->retry_threshold) || budget->retry_threshold < 0 ||
      budget->retry_threshold >= budget->capacity) {
    return Bad("budget.retry_threshold", fmt::format("must be >= 0 and < capacity ({}), got {}",
                                                     budget->capacity, budget->retry_threshold));
  }
  if (!std::isfinite(budget->success_refund) || budget->success_refund < 0) {
    return Bad("budget.success_refund",
               fmt::format("must be >= 0, got {}", budget->success_refund));
  }
  return std::nullopt;
}

std::optional<PolicyError> CheckRouting(const RoutingConfig& routing) {
  if (routing.route_attempts &&
      (*routing.route_attempts < 1 || *routing.route_attempts > kMaxAttemptsLimit)) {
    return Bad("routing.route_attempts", fmt::format("must be from 1 to {}, got {}",
                                                     kMaxAttemptsLimit, *routing.route_attempts));
  }
  if (routing.sticky &&
      (routing.sticky->reset < milliseconds(1) || routing.sticky->reset > std::chrono::hours(24))) {
    return Bad("routing.sticky.reset_ms", fmt::format("must be from 1 to 86400000 (24 h), got {}",
                                                      routing.sticky->reset.count()));
  }
  if (!routing.breaker) return std::nullopt;
  const BreakerConfig& breaker = *routing.breaker;
  if (breaker.threshold < 1 || breaker.threshold > kMaxAttemptsLimit) {
    return Bad("routing.breaker.threshold",
               fmt::format("must be from 1 to {}, got {}", kMaxAttemptsLimit, breaker.threshold));
  }
  if (breaker.cooldown < milliseconds(0) || breaker.cooldown > std::chrono::hours(24)) {
    return Bad("routing.breaker.cooldown_ms",
               fmt::format("must be from 0 to 86400000 (24 h), got {}", breaker.cooldown.count()));
  }
  if (breaker.half_open_probes < 1 || breaker.half_open_probes > 100) {
    return Bad("routing.breaker.half_open_probes",
               fmt::format("must be from 1 to 100, got {}", breaker.half_open_probes));
  }
  return std::nullopt;
}

std::optional<PolicyError> CheckClasses(const std::vector<FailureClass>& classes) {
  for (auto it = classes.begin(); it != classes.end(); ++it) {
    if (std::find(classes.begin(), it, *it) != it) {
      return Bad(fmt::format("retryable_classes[{}]", it - classes.begin()),
                 fmt::format("'{}' is listed twice", ToString(*it)));
    }
  }
  return std::nullopt;
}

// Rule 3's stream part: whether `stream_retries` and `stream_retry_on` rule out retrying a
// failure of a streamed response after its headers.
bool StreamNotRetried(const RetryPolicy& policy, const Failure& failure) {
  switch (policy.stream_retries) {
    case StreamRetries::kNever:
      return true;
    case StreamRetries::kBeforeOutput:
      if (failure.partial_output != PartialOutput::kNone) return true;
      break;
    case StreamRetries::kFirstEvent:
      if (failure.stream_events > 0) return true;
      break;
    case StreamRetries::kUntilCommit:
      break;
  }
  const StreamFailure kind =
      failure.error_event ? StreamFailure::kErrorEvent : StreamFailure::kTransport;
  return std::ranges::find(policy.stream_retry_on, kind) == policy.stream_retry_on.end();
}

}  // namespace

std::string_view ToString(OverCapMode mode) { return NameOf(kOverCapModeNames, mode, "give-up"); }

std::optional<OverCapMode> ParseOverCapMode(std::string_view text) {
  return ValueOf(kOverCapModeNames, text);
}

std::string_view ToString(HintMode mode) { return NameOf(kHintModeNames, mode, "floor"); }
std::optional<HintMode> ParseHintMode(std::string_view text) {
  return ValueOf(kHintModeNames, text);
}
std::string_view ToString(ZeroHint mode) { return NameOf(kZeroHintNames, mode, "backoff"); }
std::optional<ZeroHint> ParseZeroHint(std::string_view text) {
  return ValueOf(kZeroHintNames, text);
}
std::string_view ToString(RetryMode mode) { return NameOf(kRetryModeNames, mode, "standard"); }
std::optional<RetryMode> ParseRetryMode(std::string_view text) {
  return ValueOf(kRetryModeNames, text);
}
std::string_view ToString(StreamRetries value) {
  return NameOf(kStreamRetriesNames, value, "until-commit");
}
std::optional<StreamRetries> ParseStreamRetries(std::string_view text) {
  return ValueOf(kStreamRetriesNames, text);
}

std::string_view ToString(StreamFailure value) {
  return NameOf(kStreamFailureNames, value, "transport");
}
std::optional<StreamFailure> ParseStreamFailure(std::string_view text) {
  return ValueOf(kStreamFailureNames, text);
}
std::vector<StreamFailure> AllStreamFailures() {
  return {StreamFailure::kErrorEvent, StreamFailure::kTransport};
}

std::vector<DelaySource> AllHintSources() {
  return {DelaySource::kRetryAfterMs, DelaySource::kRetryAfter, DelaySource::kRetryAfterDate,
          DelaySource::kBody, DelaySource::kRatelimitReset};
}

std::vector<Phase> AllPhases() {
  return {Phase::kConnect, Phase::kResponseHeaders, Phase::kStream, Phase::kFinish};
}

bool StatusSet::Contains(int status) const {
  return std::ranges::find(codes, status) != codes.end() ||
         std::ranges::find(classes, status / 100) != classes.end();
}

std::optional<GiveUpReason> RetryForbidden(const RetryPolicy& policy, const Failure& failure) {
  if (failure.code == FailureCode::kAborted) return GiveUpReason::kCancelled;
  if (failure.partial_output == PartialOutput::kCommitted) return GiveUpReason::kCommitted;
  if (std::ranges::find(policy.retry_phases, failure.phase) == policy.retry_phases.end()) {
    return GiveUpReason::kPhaseNotRetried;
  }
  if (failure.streamed && StreamNotRetried(policy, failure)) {
    return GiveUpReason::kStreamNotRetried;
  }
  // The server's own instruction first, as the official SDKs read it.
  if (failure.should_retry) {
    return *failure.should_retry ? std::nullopt : std::optional(GiveUpReason::kNotRetryable);
  }
  if (failure.status && policy.statuses.never.Contains(*failure.status)) {
    return GiveUpReason::kStatusNotRetried;
  }
  if (failure.status && policy.statuses.retry.Contains(*failure.status)) return std::nullopt;
  if (policy.mode == RetryMode::kAlways) return std::nullopt;
  if (!failure.retryable) return GiveUpReason::kNotRetryable;
  if (std::ranges::find(policy.retryable_classes, failure.failure_class) ==
      policy.retryable_classes.end()) {
    return GiveUpReason::kClassNotRetryable;
  }
  return std::nullopt;
}

std::optional<RetryHint> UsableHint(const RetryPolicy& policy, const Failure& failure,
                                    const std::vector<RetryHint>& hints) {
  return FirstUsableHint(policy, failure, hints);
}

std::string_view ToString(GiveUpReason reason) {
  return NameOf(kReasonNames, reason, "not-retryable");
}

std::vector<FailureClass> DefaultRetryableClasses() {
  return {FailureClass::kRateLimit,           FailureClass::kTimeout,
          FailureClass::kTransport,           FailureClass::kProviderOverloaded,
          FailureClass::kProviderUnavailable, FailureClass::kProtocol,
          FailureClass::kTruncated,           FailureClass::kEmpty,
          FailureClass::kInvalidRequest};
}

std::string PolicyError::ToString() const {
  if (path.empty()) return message;
  return fmt::format("at {}: {}", path, message);
}

std::expected<void, PolicyError> Validate(const RetryPolicy& policy) {
  if (policy.max_attempts &&
      (*policy.max_attempts < 1 || *policy.max_attempts > kMaxAttemptsLimit)) {
    return std::unexpected(
        Bad("max_attempts",
            fmt::format("must be from 1 to {}, got {}", kMaxAttemptsLimit, *policy.max_attempts)));
  }
  for (auto error : {CheckClasses(policy.retryable_classes), CheckBackoff(policy.backoff),
                     CheckRetryAfter(policy.retry_after),
                     CheckTimeouts(policy.timeouts, policy.min_attempt_time),
                     CheckBudget(policy.budget), CheckRouting(policy.routing)}) {
    if (error) return std::unexpected(std::move(*error));
  }
  return {};
}

Decision Decide(const RetryPolicy& policy, const DecisionInput& input, RetryRng& rng,
                RetryBudget* budget) {
  // Every failed attempt reaches Decide exactly once: the place to charge gRPC-style budgets.
  if (budget != nullptr) budget->RecordFailure();
  if (auto reason = RefuseOutright(policy, input)) return GiveUp(*reason);
  auto chosen = ChooseDelay(policy, input, rng);
  if (!chosen) return chosen.error();
  const PolicyClock::time_point retry_at = input.now + chosen->delay;
  if (input.deadline && retry_at + policy.min_attempt_time > *input.deadline) {
    return GiveUp(GiveUpReason::kDeadline, retry_at);
  }
  if (budget != nullptr && !budget->TryWithdraw()) return GiveUp(GiveUpReason::kBudgetExhausted);
  Decision decision;
  decision.kind = Decision::Kind::kRetry;
  decision.retry_at = retry_at;
  decision.delay = chosen->delay;
  decision.delay_source = chosen->source;
  return decision;
}

Decision DecideFailover(const RetryPolicy& policy, const DecisionInput& input,
                        PolicyClock::time_point at, RetryBudget* budget, bool token_taken) {
  if (input.failure.code == FailureCode::kAborted) return GiveUp(GiveUpReason::kCancelled);
  if (input.failure.partial_output == PartialOutput::kCommitted) {
    return GiveUp(GiveUpReason::kCommitted);
  }
  if (policy.max_attempts && input.attempt >= *policy.max_attempts) {
    return GiveUp(GiveUpReason::kAttemptsExhausted);
  }
  if (input.deadline && at + policy.min_attempt_time > *input.deadline) {
    return GiveUp(GiveUpReason::kDeadline, at);
  }
  if (!token_taken && budget != nullptr && !budget->TryWithdraw()) {
    return GiveUp(GiveUpReason::kBudgetExhausted);
  }
  Decision decision;
  decision.kind = Decision::Kind::kFailOver;
  decision.retry_at = std::max(at, input.now);
  decision.delay = std::chrono::ceil<milliseconds>(decision.retry_at - input.now);
  decision.delay_source = DelaySource::kFailover;
  return decision;
}

std::optional<PolicyClock::time_point> CallDeadline(const RetryPolicy& policy,
                                                    PolicyClock::time_point start) {
  if (!policy.timeouts.total) return std::nullopt;
  return start + *policy.timeouts.total;
}

}  // namespace faultline::ref
