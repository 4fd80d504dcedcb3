// Decide(): the reference client's retry rules in virtual time (the policy file format is
// policy_json_test.cc).
#include "reference_impl/policy.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "reference_impl/policy_json.h"

namespace faultline::ref {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const PolicyClock::time_point kNow = PolicyClock::time_point(std::chrono::hours(1));

Failure Retryable(FailureClass failure_class = FailureClass::kRateLimit,
                  FailureCode code = FailureCode::kRateLimit) {
  Failure failure;
  failure.code = code;
  failure.failure_class = failure_class;
  failure.retryable = true;
  return failure;
}

DecisionInput Input(Failure failure, int attempt = 1, std::optional<RetryHint> hint = {}) {
  DecisionInput input{.failure = std::move(failure), .attempt = attempt};
  if (hint) input.hints.push_back(*hint);
  input.now = kNow;
  return input;
}

RetryHint Hint(long ms, DelaySource source = DelaySource::kRetryAfter) {
  return {milliseconds(ms), source};
}

Decision DecideWithSeed(const RetryPolicy& policy, const DecisionInput& input,
                        std::uint64_t seed = 1, RetryBudget* budget = nullptr) {
  RetryRng rng(seed);
  return Decide(policy, input, rng, budget);
}

// ---- Rules 3-4 of the declared-policy format: phases, statuses, mode always ----

TEST(DecideTest, RetryPhasesExcludeFailuresAfterTheHeaders) {
  RetryPolicy policy;
  policy.retry_phases = {Phase::kConnect, Phase::kResponseHeaders};
  Failure cut = Retryable(FailureClass::kTransport, FailureCode::kTransport);
  cut.phase = Phase::kStream;
  EXPECT_EQ(DecideWithSeed(policy, Input(cut)).reason, GiveUpReason::kPhaseNotRetried);
  cut.phase = Phase::kResponseHeaders;
  EXPECT_TRUE(DecideWithSeed(policy, Input(cut)).retry());
}

TEST(DecideTest, StreamRetriesBoundAStreamedResponsesFailures) {
  RetryPolicy policy;
  Failure cut = Retryable(FailureClass::kTransport, FailureCode::kTransport);
  cut.phase = Phase::kStream;
  cut.streamed = true;
  cut.partial_output = PartialOutput::kUncommitted;
  EXPECT_TRUE(DecideWithSeed(policy, Input(cut)).retry());  // until-commit
  policy.stream_retries = StreamRetries::kBeforeOutput;
  EXPECT_EQ(DecideWithSeed(policy, Input(cut)).reason, GiveUpReason::kStreamNotRetried);
  cut.partial_output = PartialOutput::kNone;
  EXPECT_TRUE(DecideWithSeed(policy, Input(cut)).retry());
  policy.stream_retries = StreamRetries::kNever;
  EXPECT_EQ(DecideWithSeed(policy, Input(cut)).reason, GiveUpReason::kStreamNotRetried);
  cut.streamed = false;  // the same failure of a non-streamed body: retry_phases alone decide
  EXPECT_TRUE(DecideWithSeed(policy, Input(cut)).retry());
}

TEST(DecideTest, StatusRulesComeBeforeTheClassRules) {
  RetryPolicy policy;
  policy.statuses.retry = StatusSet{{}, {4}};  // every 4xx, as LangChain does
  policy.statuses.never = StatusSet{{401}, {}};
  Failure quota;
  quota.code = FailureCode::kQuota;
  quota.failure_class = FailureClass::kQuota;
  quota.retryable = false;
  quota.phase = Phase::kResponseHeaders;
  quota.status = 429;
  EXPECT_TRUE(DecideWithSeed(policy, Input(quota)).retry()) << "429 is in statuses.retry";
  quota.status = 401;
  EXPECT_EQ(DecideWithSeed(policy, Input(quota)).reason, GiveUpReason::kStatusNotRetried);
  quota.status = 500;  // no status rule: the class rules say quota is not retryable
  EXPECT_EQ(DecideWithSeed(policy, Input(quota)).reason, GiveUpReason::kNotRetryable);
}

TEST(DecideTest, AlwaysModeRetriesEveryClassButACancel) {
  auto policy = PolicyFromJson(nlohmann::json{{"mode", "always"}});
  ASSERT_TRUE(policy.has_value());
  EXPECT_FALSE(policy->max_attempts.has_value()) << "always: unbounded unless given";
  Failure auth;
  auth.code = FailureCode::kAuth;
  auth.failure_class = FailureClass::kAuth;
  EXPECT_TRUE(DecideWithSeed(*policy, Input(auth, 50)).retry());
  Failure aborted = auth;
  aborted.code = FailureCode::kAborted;
  EXPECT_EQ(DecideWithSeed(*policy, Input(aborted)).reason, GiveUpReason::kCancelled);
}

TEST(DecideTest, ReplaceModeWaitsTheHintEvenBelowTheBackoff) {
  RetryPolicy policy;
  policy.backoff = {BackoffStrategy::kExponential, milliseconds(2000), milliseconds(8000), 2, 0};
  policy.retry_after.jitter = 0;
  EXPECT_EQ(DecideWithSeed(policy, Input(Retryable(), 1, Hint(1500))).delay, milliseconds(2000))
      << "floor: the backoff wins over a shorter hint";
  policy.retry_after.mode = HintMode::kReplace;
  EXPECT_EQ(DecideWithSeed(policy, Input(Retryable(), 1, Hint(1500))).delay, milliseconds(1500));
}

TEST(DecideTest, ZeroHintMeansBackoffOrAtOnce) {
  RetryPolicy policy;
  policy.backoff = {BackoffStrategy::kExponential, milliseconds(700), milliseconds(700), 2, 0};
  EXPECT_EQ(DecideWithSeed(policy, Input(Retryable(), 1, Hint(0))).delay, milliseconds(700));
  policy.retry_after.zero = ZeroHint::kImmediate;
  EXPECT_EQ(DecideWithSeed(policy, Input(Retryable(), 1, Hint(0))).delay, milliseconds(0));
}

TEST(DecideTest, OnlyTheDeclaredHintSourcesAreRead) {
  RetryPolicy policy;
  policy.backoff = {BackoffStrategy::kExponential, milliseconds(100), milliseconds(100), 2, 0};
  policy.retry_after.jitter = 0;
  policy.retry_after.sources = {DelaySource::kRetryAfterMs, DelaySource::kRetryAfter};
  DecisionInput input = Input(Retryable());
  input.hints = {Hint(5000, DelaySource::kBody)};
  EXPECT_EQ(DecideWithSeed(policy, input).delay, milliseconds(100)) << "a body hint is not read";
  input.hints = {Hint(5000, DelaySource::kBody), Hint(900, DelaySource::kRetryAfter)};
  EXPECT_EQ(DecideWithSeed(policy, input).delay, milliseconds(900));
  policy.retry_after.statuses = std::vector<int>{503};
  input.failure.status = 429;
  EXPECT_EQ(DecideWithSeed(policy, input).delay, milliseconds(100)) << "429 hints not read";
}

TEST(DecideTest, NoCapWaitsAnyValidHint) {
  RetryPolicy policy;
  policy.retry_after.cap.reset();
  policy.timeouts.total.reset();
  policy.retry_after.jitter = 0;
  EXPECT_EQ(DecideWithSeed(policy, Input(Retryable(), 1, Hint(3'600'000))).delay,
            milliseconds(3'600'000));
}

TEST(BackoffTest, JitterModesBoundTheExponential) {
  BackoffConfig config{BackoffStrategy::kExponential,
                       milliseconds(500),
                       milliseconds(8000),
                       2,
                       0.25,
                       JitterMode::kDown};
  EXPECT_EQ(Bounds(config, 1).lower, milliseconds(750));  // the SDKs' (0.75 d, d]
  EXPECT_EQ(Bounds(config, 1).upper, milliseconds(1000));
  config.jitter_mode = JitterMode::kUp;
  config.jitter = 1;
  EXPECT_EQ(Bounds(config, 1).lower, milliseconds(1000));  // p-retry's [d, 2d]
  EXPECT_EQ(Bounds(config, 1).upper, milliseconds(2000));
  EXPECT_EQ(Bounds(config, 4).upper, milliseconds(8000)) << "capped";
}

// ---- Rules 1-4: whether to retry at all ----

TEST(DecideTest, NonRetryableFailuresGiveUp) {
  Failure auth;
  auth.code = FailureCode::kAuth;
  auth.failure_class = FailureClass::kAuth;
  const Decision decision = DecideWithSeed(RetryPolicy{}, Input(auth));
  EXPECT_FALSE(decision.retry());
  EXPECT_EQ(decision.reason, GiveUpReason::kNotRetryable);
}

TEST(DecideTest, ClassMustBeInThePolicy) {
  RetryPolicy policy;
  policy.retryable_classes = {FailureClass::kRateLimit};
  EXPECT_TRUE(DecideWithSeed(policy, Input(Retryable())).retry());
  const Decision timeout =
      DecideWithSeed(policy, Input(Retryable(FailureClass::kTimeout, FailureCode::kTimeout)));
  EXPECT_EQ(timeout.kind, Decision::Kind::kGiveUp);
  EXPECT_EQ(timeout.reason, GiveUpReason::kClassNotRetryable);
}

TEST(DecideTest, ServerSaidRetryOnAn400IsRetriedOnlyWhenThePolicyAllowsTheClass) {
  // The classifier turned `x-should-retry: true` on a 400 into retryable = true.
  const Failure forced = Retryable(FailureClass::kInvalidRequest, FailureCode::kInvalidRequest);
  EXPECT_TRUE(DecideWithSeed(RetryPolicy{}, Input(forced)).retry());  // default classes allow it
  RetryPolicy strict;
  strict.retryable_classes = {FailureClass::kRateLimit, FailureClass::kTimeout};
  EXPECT_EQ(DecideWithSeed(strict, Input(forced)).reason, GiveUpReason::kClassNotRetryable);
}

TEST(DecideTest, CancelAndCommitAreFinal) {
  Failure aborted = Retryable(FailureClass::kAborted, FailureCode::kAborted);
  EXPECT_EQ(DecideWithSeed(RetryPolicy{}, Input(aborted)).reason, GiveUpReason::kCancelled);
  Failure committed = Retryable(FailureClass::kTransport, FailureCode::kTransport);
  committed.partial_output = PartialOutput::kCommitted;
  EXPECT_EQ(DecideWithSeed(RetryPolicy{}, Input(committed)).reason, GiveUpReason::kCommitted);
  committed.partial_output = PartialOutput::kUncommitted;  // a discarded attempt may be retried
  EXPECT_TRUE(DecideWithSeed(RetryPolicy{}, Input(committed)).retry());
}

TEST(DecideTest, BoundedModeCountsAttemptsInAll) {
  RetryPolicy policy;
  policy.max_attempts = 3;
  EXPECT_TRUE(DecideWithSeed(policy, Input(Retryable(), 1)).retry());
  EXPECT_TRUE(DecideWithSeed(policy, Input(Retryable(), 2)).retry());
  EXPECT_EQ(DecideWithSeed(policy, Input(Retryable(), 3)).reason, GiveUpReason::kAttemptsExhausted);
  policy.max_attempts = 1;
  EXPECT_EQ(DecideWithSeed(policy, Input(Retryable(), 1)).reason, GiveUpReason::kAttemptsExhausted);
}

TEST(DecideTest, UnboundedModeRetriesUntilTheDeadline) {
  RetryPolicy policy;
  policy.max_attempts.reset();
  const Decision late = DecideWithSeed(policy, Input(Retryable(), 900));
  EXPECT_TRUE(late.retry());
  EXPECT_LE(late.delay, policy.backoff.cap);
  DecisionInput input = Input(Retryable(), 900);
  input.deadline = kNow + seconds(5);
  policy.backoff.base = milliseconds(6000);
  policy.backoff.cap = milliseconds(6000);
  policy.backoff.strategy = BackoffStrategy::kEqualJitter;  // at least 3 s
  policy.min_attempt_time = seconds(3);
  EXPECT_EQ(DecideWithSeed(policy, input).reason, GiveUpReason::kDeadline);
}

// ---- Rule 5: the delay ----

TEST(DecideTest, WithoutAHintTheDelayIsTheLocalBackoff) {
  const RetryPolicy policy;
  for (int attempt = 1; attempt <= 2; ++attempt) {
    for (std::uint64_t seed = 1; seed <= 200; ++seed) {
      const Decision decision = DecideWithSeed(policy, Input(Retryable(), attempt), seed);
      ASSERT_TRUE(decision.retry());
      const BackoffBounds bounds = Bounds(policy.backoff, attempt - 1);
      EXPECT_GE(decision.delay, bounds.lower);
      EXPECT_LE(decision.delay, bounds.upper);
      EXPECT_EQ(decision.delay_source, DelaySource::kBackoff);
      EXPECT_EQ(decision.retry_at, kNow + decision.delay);
    }
  }
}

TEST(DecideTest, RetryAfterIsAFloorWithPositiveJitter) {
  RetryPolicy policy;  // full jitter 500 ms .. 8 s, Retry-After jitter 0.1
  policy.max_attempts = 10;
  std::set<long> distinct;
  for (std::uint64_t seed = 1; seed <= 500; ++seed) {
    const Decision decision =
        DecideWithSeed(policy, Input(Retryable(), 4, Hint(5000)), seed);  // backoff up to 4 s
    ASSERT_TRUE(decision.retry());
    EXPECT_GE(decision.delay, milliseconds(5000)) << "seed " << seed;  // never earlier
    EXPECT_LE(decision.delay, milliseconds(5500)) << "seed " << seed;
    EXPECT_EQ(decision.delay_source, DelaySource::kRetryAfter);
    distinct.insert(decision.delay.count());
  }
  EXPECT_GT(distinct.size(), 100u);  // spread out, not in lockstep
}

TEST(DecideTest, LongerLocalBackoffWinsOverAShortHint) {
  RetryPolicy policy;
  policy.max_attempts = 10;
  policy.backoff.strategy = BackoffStrategy::kEqualJitter;  // attempt 4: 2 s .. 4 s
  const Decision decision = DecideWithSeed(policy, Input(Retryable(), 4, Hint(1000)));
  ASSERT_TRUE(decision.retry());
  EXPECT_GE(decision.delay, milliseconds(2000));
  EXPECT_EQ(decision.delay_source, DelaySource::kBackoff);
}

TEST(DecideTest, TheHintKeepsItsSource) {
  const RetryPolicy policy;
  for (DelaySource source : {DelaySource::kRetryAfterMs, DelaySource::kRetryAfterDate,
                             DelaySource::kBody, DelaySource::kRatelimitReset}) {
    const Decision decision = DecideWithSeed(policy, Input(Retryable(), 1, Hint(9000, source)));
    EXPECT_EQ(decision.delay_source, source) << ToString(source);
  }
}

TEST(DecideTest, FailureRetryAfterIsUsedWhenNoHintIsGiven) {
  Failure failure = Retryable();
  failure.retry_after = milliseconds(3000);
  const Decision decision = DecideWithSeed(RetryPolicy{}, Input(failure));
  EXPECT_GE(decision.delay, milliseconds(3000));
  EXPECT_EQ(decision.delay_source, DelaySource::kRetryAfter);
}

TEST(DecideTest, JitteredHintNeverExceedsTheCap) {
  RetryPolicy policy;
  policy.retry_after.jitter = 1.0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const Decision decision = DecideWithSeed(policy, Input(Retryable(), 1, Hint(59'000)), seed);
    ASSERT_TRUE(decision.retry());
    EXPECT_GE(decision.delay, milliseconds(59'000));
    EXPECT_LE(decision.delay, milliseconds(60'000));
  }
  EXPECT_EQ(DecideWithSeed(policy, Input(Retryable(), 1, Hint(60'000))).delay,
            milliseconds(60'000));  // a hint exactly at the cap is honoured as is
}

TEST(DecideTest, OverTheCapGiveUpReportsWhenTheServerWouldBeReady) {
  RetryPolicy policy;
  policy.retry_after.over_cap = OverCapMode::kGiveUp;
  const Decision decision = DecideWithSeed(policy, Input(Retryable(), 1, Hint(120'000)));
  EXPECT_EQ(decision.kind, Decision::Kind::kGiveUp);
  EXPECT_EQ(decision.reason, GiveUpReason::kRetryAfterOverCap);
  EXPECT_EQ(decision.server_retry_at, kNow + seconds(120));
}

TEST(DecideTest, OverTheCapBackoffModeFallsBackToLocalBackoff) {
  RetryPolicy policy;
  policy.retry_after.over_cap = OverCapMode::kBackoff;
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    const Decision decision = DecideWithSeed(policy, Input(Retryable(), 2, Hint(120'000)), seed);
    ASSERT_TRUE(decision.retry());
    EXPECT_EQ(decision.delay_source, DelaySource::kBackoff);
    EXPECT_LE(decision.delay, Bounds(policy.backoff, 1).upper);
  }
}

TEST(DecideTest, MissingGiveUpEndsAFailureWhoseHintsAreReadButAbsent) {
  RetryPolicy policy;
  policy.retry_after.missing = OverCapMode::kGiveUp;
  policy.retry_after.statuses = std::vector<int>{429};
  Failure limited = Retryable();
  limited.status = 429;
  const Decision none = DecideWithSeed(policy, Input(limited));
  EXPECT_EQ(none.kind, Decision::Kind::kGiveUp);
  EXPECT_EQ(none.reason, GiveUpReason::kNoRetryAfter);
  EXPECT_TRUE(DecideWithSeed(policy, Input(limited, 1, Hint(2'000))).retry());  // with a hint
  Failure unavailable = Retryable();
  unavailable.status = 503;  // its hints are not read, so their absence means nothing
  EXPECT_TRUE(DecideWithSeed(policy, Input(unavailable)).retry());
  policy.retry_after.missing = OverCapMode::kBackoff;
  EXPECT_TRUE(DecideWithSeed(policy, Input(limited)).retry());
  EXPECT_EQ(ToString(GiveUpReason::kNoRetryAfter), "no-retry-after");
}

TEST(DecideTest, WeakRatelimitResetOverTheCapIsIgnoredNotFatal) {
  RetryPolicy policy;
  policy.retry_after.over_cap = OverCapMode::kGiveUp;
  const Decision decision =
      DecideWithSeed(policy, Input(Retryable(), 1, Hint(360'000, DelaySource::kRatelimitReset)));
  ASSERT_TRUE(decision.retry());
  EXPECT_EQ(decision.delay_source, DelaySource::kBackoff);
}

TEST(DecideTest, HonorFalseIgnoresHints) {
  RetryPolicy policy;
  policy.retry_after.honor = false;
  const Decision decision = DecideWithSeed(policy, Input(Retryable(), 1, Hint(120'000)));
  ASSERT_TRUE(decision.retry());
  EXPECT_LE(decision.delay, milliseconds(500));
  EXPECT_EQ(decision.delay_source, DelaySource::kBackoff);
}

TEST(DecideTest, DecorrelatedJitterGrowsFromThePreviousDelay) {
  RetryPolicy policy;
  policy.backoff.strategy = BackoffStrategy::kDecorrelatedJitter;
  milliseconds longest(0);
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    DecisionInput input = Input(Retryable(), 2);
    input.previous_delay = milliseconds(2000);
    const Decision decision = DecideWithSeed(policy, input, seed);
    EXPECT_GE(decision.delay, milliseconds(500));
    EXPECT_LE(decision.delay, milliseconds(6000));
    longest = std::max(longest, decision.delay);
  }
  EXPECT_GT(longest, milliseconds(1500));  // beyond what a first retry could reach
}

// ---- Rule 6: the deadline ----

TEST(DecideTest, NeverScheduleAnAttemptThatCannotFinish) {
  RetryPolicy policy;
  policy.min_attempt_time = seconds(1);
  DecisionInput input = Input(Retryable(), 1, Hint(2500));
  input.deadline = kNow + seconds(3);
  const Decision decision = DecideWithSeed(policy, input);
  EXPECT_EQ(decision.reason, GiveUpReason::kDeadline);
  ASSERT_TRUE(decision.server_retry_at);
  EXPECT_GE(*decision.server_retry_at, kNow + milliseconds(2500));

  input.hints = {Hint(1500)};  // 1.5 s .. 1.65 s + 1 s of attempt: fits
  EXPECT_TRUE(DecideWithSeed(policy, input).retry());

  input.now = kNow + seconds(4);  // already past the deadline
  input.hints.clear();
  EXPECT_EQ(DecideWithSeed(policy, input).reason, GiveUpReason::kDeadline);
}

TEST(DecideTest, DeadlinePropertyOverManySeeds) {
  RetryPolicy policy;
  policy.max_attempts.reset();
  policy.min_attempt_time = milliseconds(700);
  for (std::uint64_t seed = 1; seed <= 400; ++seed) {
    RetryRng pick(seed * 7919);
    DecisionInput input = Input(Retryable(), 1 + static_cast<int>(pick() % 6));
    if (pick() % 2 == 0) input.hints = {Hint(static_cast<long>(pick() % 9000))};
    input.deadline = kNow + milliseconds(static_cast<long>(pick() % 10'000));
    const Decision decision = DecideWithSeed(policy, input, seed);
    if (decision.retry()) {
      EXPECT_LE(decision.retry_at + policy.min_attempt_time, *input.deadline) << "seed " << seed;
    } else {
      EXPECT_EQ(decision.reason, GiveUpReason::kDeadline) << "seed " << seed;
    }
  }
}

TEST(DecideTest, CallDeadlineComesFromTheTotalTimeout) {
  RetryPolicy policy;
  policy.timeouts.total = seconds(30);
  EXPECT_EQ(CallDeadline(policy, kNow), kNow + seconds(30));
  policy.timeouts.total.reset();
  EXPECT_EQ(CallDeadline(policy, kNow), std::nullopt);
}

// ---- Rule 7: the shared budget ----

TEST(DecideTest, SharedBudgetStopsRetriesAndIsOnlySpentOnRetries) {
  RetryPolicy policy;
  policy.max_attempts.reset();
  RetryBudget budget({.capacity = 2, .retry_cost = 1, .success_refund = 0.5});
  Failure auth;
  auth.code = FailureCode::kAuth;
  auth.failure_class = FailureClass::kAuth;
  EXPECT_FALSE(DecideWithSeed(policy, Input(auth), 1, &budget).retry());
  EXPECT_DOUBLE_EQ(budget.tokens(), 2.0);  // a refusal for another reason costs nothing

  EXPECT_TRUE(DecideWithSeed(policy, Input(Retryable(), 1), 1, &budget).retry());
  EXPECT_TRUE(DecideWithSeed(policy, Input(Retryable(), 1), 2, &budget).retry());
  EXPECT_EQ(DecideWithSeed(policy, Input(Retryable(), 1), 3, &budget).reason,
            GiveUpReason::kBudgetExhausted);
  budget.RecordSuccess();
  budget.RecordSuccess();
  EXPECT_TRUE(DecideWithSeed(policy, Input(Retryable(), 1), 4, &budget).retry());
}

TEST(DecideTest, SameSeedSameDecision) {
  const RetryPolicy policy;
  const DecisionInput input = Input(Retryable(), 3, Hint(700));
  EXPECT_EQ(DecideWithSeed(policy, input, 77).delay, DecideWithSeed(policy, input, 77).delay);
}

TEST(DecideTest, NamesOfReasonsAndModes) {
  EXPECT_EQ(ToString(GiveUpReason::kRetryAfterOverCap), "retry-after-over-cap");
  EXPECT_EQ(ToString(GiveUpReason::kBudgetExhausted), "budget-exhausted");
  EXPECT_EQ(ParseOverCapMode(ToString(OverCapMode::kBackoff)), OverCapMode::kBackoff);
  EXPECT_EQ(ParseOverCapMode("give-up"), OverCapMode::kGiveUp);
  EXPECT_EQ(ParseOverCapMode("giveup"), std::nullopt);
}

}  // namespace
}  // namespace faultline::ref
