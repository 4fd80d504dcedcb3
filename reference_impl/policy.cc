#include "reference_impl/policy.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "fmt/format.h"

namespace faultline::ref {
namespace {

using std::chrono::milliseconds;

constexpr std::array<std::pair<GiveUpReason, std::string_view>, 8> kReasonNames{{
    {GiveUpReason::kCancelled, "cancelled"},
    {GiveUpReason::kCommitted, "committed"},
    {GiveUpReason::kNotRetryable, "not-retryable"},
    {GiveUpReason::kClassNotRetryable, "class-not-retryable"},
    {GiveUpReason::kAttemptsExhausted, "attempts-exhausted"},
    {GiveUpReason::kDeadline, "deadline"},
    {GiveUpReason::kRetryAfterOverCap, "retry-after-over-cap"},
    {GiveUpReason::kBudgetExhausted, "budget-exhausted"},
}};

Decision GiveUp(GiveUpReason reason,
                std::optional<PolicyClock::time_point> server_retry_at = std::nullopt) {
  Decision decision;
  decision.kind = Decision::Kind::kGiveUp;
  decision.reason = reason;
  decision.server_retry_at = server_retry_at;
  return decision;
}

// Rules 1-4: is a retry allowed at all?
std::optional<GiveUpReason> RefuseOutright(const RetryPolicy& policy, const DecisionInput& input) {
  const Failure& failure = input.failure;
  if (failure.code == FailureCode::kAborted) return GiveUpReason::kCancelled;
  if (failure.partial_output == PartialOutput::kCommitted) return GiveUpReason::kCommitted;
  if (!failure.retryable) return GiveUpReason::kNotRetryable;
  if (std::ranges::find(policy.retryable_classes, failure.failure_class) ==
      policy.retryable_classes.end()) {
    return GiveUpReason::kClassNotRetryable;
  }
  if (policy.max_attempts && input.attempt >= *policy.max_attempts) {
    return GiveUpReason::kAttemptsExhausted;
  }
  return std::nullopt;
}

std::optional<RetryHint> EffectiveHint(const DecisionInput& input) {
  if (input.hint) return input.hint;
  if (input.failure.retry_after) {
    return RetryHint{*input.failure.retry_after, DelaySource::kRetryAfter};
  }
  return std::nullopt;
}

// The hint plus a positive-only jitter, never above the cap (the hint itself is within it).
milliseconds JitteredHint(milliseconds hint, const RetryAfterConfig& config, RetryRng& rng) {
  const double extra =
      std::floor(Uniform01(rng) * config.jitter * static_cast<double>(hint.count()));
  return std::min(config.cap, hint + milliseconds(static_cast<milliseconds::rep>(extra)));
}

struct ChosenDelay {
  milliseconds delay{0};
  DelaySource source = DelaySource::kBackoff;
};

// Rule 5: local backoff, raised to the server's hint (or giving up when the hint is over the cap).
std::expected<ChosenDelay, Decision> ChooseDelay(const RetryPolicy& policy,
                                                 const DecisionInput& input, RetryRng& rng) {
  const int retry_index = std::max(input.attempt, 1) - 1;
  const ChosenDelay backoff{SampleBackoff(policy.backoff, retry_index, rng, input.previous_delay),
                            DelaySource::kBackoff};
  const std::optional<RetryHint> hint = EffectiveHint(input);
  if (!hint || !policy.retry_after.honor) return backoff;
  if (hint->delay > policy.retry_after.cap) {
    const bool weak = hint->source == DelaySource::kRatelimitReset;
    if (weak || policy.retry_after.over_cap == OverCapMode::kBackoff) return backoff;
    return std::unexpected(GiveUp(GiveUpReason::kRetryAfterOverCap, input.now + hint->delay));
  }
  const milliseconds floor = JitteredHint(hint->delay, policy.retry_after, rng);
  if (floor >= backoff.delay) return ChosenDelay{floor, hint->source};
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
  if (retry_after.cap.count() < 0) {
    return Bad("retry_after.cap_ms", fmt::format("must be >= 0, got {}", retry_after.cap.count()));
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
  if (!std::isfinite(budget->retry_cost) || budget->retry_cost <= 0 ||
      budget->retry_cost > budget->capacity) {
    return Bad("budget.retry_cost", fmt::format("must be > 0 and <= capacity ({}), got {}",
                                                budget->capacity, budget->retry_cost));
  }
  if (!std::isfinite(budget->success_refund) || budget->success_refund < 0) {
    return Bad("budget.success_refund",
               fmt::format("must be >= 0, got {}", budget->success_refund));
  }
  return std::nullopt;
}

std::optional<PolicyError> CheckClasses(const std::vector<FailureClass>& classes) {
  if (classes.empty()) {
    return Bad("retryable_classes",
               "must list at least one class (use max_attempts 1 to never retry)");
  }
  for (auto it = classes.begin(); it != classes.end(); ++it) {
    if (std::find(classes.begin(), it, *it) != it) {
      return Bad(fmt::format("retryable_classes[{}]", it - classes.begin()),
                 fmt::format("'{}' is listed twice", ToString(*it)));
    }
  }
  return std::nullopt;
}

}  // namespace

std::string_view ToString(OverCapMode mode) {
  return mode == OverCapMode::kGiveUp ? "give-up" : "backoff";
}

std::optional<OverCapMode> ParseOverCapMode(std::string_view text) {
  if (text == "give-up") return OverCapMode::kGiveUp;
  if (text == "backoff") return OverCapMode::kBackoff;
  return std::nullopt;
}

std::string_view ToString(GiveUpReason reason) {
  for (const auto& [value, name] : kReasonNames) {
    if (value == reason) return name;
  }
  return "not-retryable";
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
  for (auto error :
       {CheckClasses(policy.retryable_classes), CheckBackoff(policy.backoff),
        CheckRetryAfter(policy.retry_after),
        CheckTimeouts(policy.timeouts, policy.min_attempt_time), CheckBudget(policy.budget)}) {
    if (error) return std::unexpected(std::move(*error));
  }
  return {};
}

Decision Decide(const RetryPolicy& policy, const DecisionInput& input, RetryRng& rng,
                RetryBudget* budget) {
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

std::optional<PolicyClock::time_point> CallDeadline(const RetryPolicy& policy,
                                                    PolicyClock::time_point start) {
  if (!policy.timeouts.total) return std::nullopt;
  return start + *policy.timeouts.total;
}

}  // namespace faultline::ref
