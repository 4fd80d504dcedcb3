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

TEST(PolicyJsonTest, NewKeysRoundTrip) {
  const char* text = R"({"mode": "standard", "max_retries": 6,
    "retry_phases": ["connect", "response-headers"], "stream_retries": "before-output",
    "statuses": {"retry": [408, "5xx"], "never": [400]}, "should_retry_header": false,
    "backoff": {"strategy": "exponential", "jitter": 1, "jitter_mode": "up"},
    "retry_after": {"mode": "replace", "cap_ms": null, "zero": "immediate",
                    "sources": ["retry-after-ms", "retry-after"], "statuses": [429]}})";
  auto policy = LoadPolicy(text);
  ASSERT_TRUE(policy.has_value()) << policy.error().ToString();
  EXPECT_EQ(policy->max_attempts, 7);
  EXPECT_TRUE(policy->statuses.retry.Contains(503));
  EXPECT_FALSE(policy->statuses.retry.Contains(429));
  EXPECT_FALSE(policy->retry_after.cap.has_value());
  EXPECT_EQ(policy->stream_retries, StreamRetries::kBeforeOutput);
  EXPECT_EQ(LoadPolicy(PolicyToJson(*policy).dump()), policy);
  EXPECT_EQ(LoadPolicy(PolicyToHelloJson(*policy).dump()), policy) << "max_retries agrees";
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

// ---- JSON ----

TEST(PolicyJsonTest, EmptyDocumentGivesTheDefaults) {
  auto policy = LoadPolicy("{}");
  ASSERT_TRUE(policy) << policy.error().ToString();
  EXPECT_EQ(*policy, RetryPolicy{});
  EXPECT_TRUE(Validate(RetryPolicy{}));
}

TEST(PolicyJsonTest, FullDocument) {
  auto policy = LoadPolicy(R"({
    "max_attempts": "unbounded",
    "retryable_classes": ["rate-limit", "provider-overloaded"],
    "backoff": {"strategy": "decorrelated-jitter", "base_ms": 100, "cap_ms": 20000,
                "multiplier": 3, "jitter": 0},
    "retry_after": {"honor": true, "cap_ms": 120000, "jitter": 0.2, "over_cap": "backoff"},
    "min_attempt_ms": 250,
    "timeouts": {"connect_ms": 2000, "response_headers_ms": null, "idle_ms": 15000,
                 "heartbeats_reset_idle": true, "total_ms": 300000},
    "budget": {"capacity": 50, "retry_cost": 2, "success_refund": 0.5}
  })");
  ASSERT_TRUE(policy) << policy.error().ToString();
  EXPECT_EQ(policy->max_attempts, std::nullopt);
  EXPECT_EQ(policy->retryable_classes,
            (std::vector{FailureClass::kRateLimit, FailureClass::kProviderOverloaded}));
  EXPECT_EQ(policy->backoff.strategy, BackoffStrategy::kDecorrelatedJitter);
  EXPECT_EQ(policy->backoff.base, milliseconds(100));
  EXPECT_EQ(policy->backoff.cap, milliseconds(20'000));
  EXPECT_EQ(policy->backoff.multiplier, 3.0);
  EXPECT_EQ(policy->retry_after.cap, milliseconds(120'000));
  EXPECT_EQ(policy->retry_after.over_cap, OverCapMode::kBackoff);
  EXPECT_EQ(policy->min_attempt_time, milliseconds(250));
  EXPECT_EQ(policy->timeouts.response_headers, std::nullopt);
  EXPECT_TRUE(policy->timeouts.heartbeats_reset_idle);
  EXPECT_EQ(policy->timeouts.total, milliseconds(300'000));
  ASSERT_TRUE(policy->budget);
  EXPECT_EQ(policy->budget->retry_cost, 2.0);
}

TEST(PolicyJsonTest, RoundTrip) {
  RetryPolicy policy;
  policy.max_attempts.reset();
  policy.retryable_classes = {FailureClass::kTimeout, FailureClass::kTransport};
  policy.backoff = {BackoffStrategy::kEqualJitter, milliseconds(250), milliseconds(4000), 1.5, 0};
  policy.retry_after.honor = false;
  policy.retry_after.cap = milliseconds(30'000);
  policy.retry_after.jitter = 0.3;
  policy.retry_after.over_cap = OverCapMode::kBackoff;
  policy.timeouts.idle.reset();
  policy.timeouts.total.reset();
  policy.budget = BudgetConfig{20, 1, 0.2};
  auto loaded = LoadPolicy(PolicyToJson(policy).dump());
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  EXPECT_EQ(*loaded, policy);
  auto defaults = LoadPolicy(PolicyToJson(RetryPolicy{}).dump());
  ASSERT_TRUE(defaults);
  EXPECT_EQ(*defaults, RetryPolicy{});
}

TEST(PolicyJsonTest, HelloPolicyDeclaresWhatTheRunnerJudges) {
  const nlohmann::json hello = PolicyToHelloJson(RetryPolicy{});
  EXPECT_EQ(hello["max_retries"], 2);
  EXPECT_EQ(hello["max_attempts"], 3);
  EXPECT_EQ(hello["retryable_classes"][0], "rate-limit");
  EXPECT_EQ(hello["backoff"]["strategy"], "full-jitter");
  EXPECT_EQ(hello["backoff"]["base_ms"], 500);
  EXPECT_EQ(hello["backoff"]["cap_ms"], 8000);
  EXPECT_EQ(hello["backoff"]["jitter"], 0.25);
  EXPECT_EQ(hello["retry_after"]["honor"], true);
  EXPECT_EQ(hello["retry_after"]["cap_ms"], 60'000);
  EXPECT_EQ(hello["retry_after"]["over_cap"], "give-up");
  EXPECT_EQ(hello["timeouts"]["idle_ms"], 30'000);
  EXPECT_EQ(hello["timeouts"]["response_headers_ms"], 60'000);
  EXPECT_EQ(hello["timeouts"]["total_ms"], 600'000);
  EXPECT_EQ(hello["timeouts"]["heartbeats_reset_idle"], false);
  EXPECT_TRUE(hello["budget"].is_null());
  RetryPolicy unbounded;
  unbounded.max_attempts.reset();
  EXPECT_TRUE(PolicyToHelloJson(unbounded)["max_retries"].is_null());
  EXPECT_EQ(PolicyToHelloJson(unbounded)["max_attempts"], "unbounded");
}

struct BadPolicy {
  std::string json;
  std::string path;
  std::string message;  // a substring of the error message
  friend void PrintTo(const BadPolicy& bad, std::ostream* out) { *out << bad.json; }
};

class PolicyJsonErrorTest : public testing::TestWithParam<BadPolicy> {};

TEST_P(PolicyJsonErrorTest, NamesThePathAndTheProblem) {
  const BadPolicy& bad = GetParam();
  auto policy = LoadPolicy(bad.json);
  ASSERT_FALSE(policy) << bad.json;
  EXPECT_EQ(policy.error().path, bad.path) << policy.error().ToString();
  EXPECT_NE(policy.error().message.find(bad.message), std::string::npos)
      << policy.error().ToString();
}

INSTANTIATE_TEST_SUITE_P(
    PolicyJsonErrors, PolicyJsonErrorTest,
    testing::Values(
        BadPolicy{"{", "", "not valid JSON"}, BadPolicy{"[]", "", "expected an object, got array"},
        BadPolicy{R"({"max_atempts": 3})", "max_atempts",
                  "unknown key 'max_atempts'; did you mean 'max_attempts'?"},
        BadPolicy{R"({"zzz": 3})", "zzz", "unknown key 'zzz'"},
        BadPolicy{R"({"max_attempts": 0})", "max_attempts", "must be from 1 to 1000, got 0"},
        BadPolicy{R"({"max_attempts": 1001})", "max_attempts", "must be from 1 to 1000"},
        BadPolicy{R"({"max_attempts": "forever"})", "max_attempts",
                  "expected an integer from 1 to 1000 or \"unbounded\""},
        BadPolicy{R"({"max_attempts": 2.5})", "max_attempts", "expected an integer"},
        BadPolicy{R"({"mode": "sometimes"})", "mode", "expected one of 'standard', 'always'"},
        BadPolicy{R"({"max_attempts": 3, "max_retries": 3})", "max_retries",
                  "disagrees with max_attempts 3"},
        BadPolicy{R"({"max_retries": -1})", "max_retries", "expected an integer from 0"},
        BadPolicy{R"({"retry_phases": ["headers"]})", "retry_phases[0]", "unknown value 'headers'"},
        BadPolicy{R"({"stream_retries": "before_output"})", "stream_retries",
                  "did you mean 'before-output'?"},
        BadPolicy{R"({"statuses": {"retry": [429, "5x"]}})", "statuses.retry[1]",
                  "expected an HTTP status from 100 to 599"},
        BadPolicy{R"({"statuses": {"retry": [99]}})", "statuses.retry[0]", "HTTP status"},
        BadPolicy{R"({"statuses": {"always": [429]}})", "statuses.always", "unknown key 'always'"},
        BadPolicy{R"({"should_retry_header": "no"})", "should_retry_header",
                  "expected true or false"},
        BadPolicy{R"({"backoff": {"jitter_mode": "downward"}})", "backoff.jitter_mode",
                  "did you mean 'down'?"},
        BadPolicy{R"({"retry_after": {"mode": "max"}})", "retry_after.mode",
                  "expected one of 'floor', 'replace'"},
        BadPolicy{R"({"retry_after": {"zero": "now"}})", "retry_after.zero", "expected one of"},
        BadPolicy{R"({"retry_after": {"sources": ["retry_after"]}})", "retry_after.sources[0]",
                  "did you mean 'retry-after'?"},
        BadPolicy{R"({"retry_after": {"statuses": ["5xx"]}})", "retry_after.statuses",
                  "single statuses only"},
        BadPolicy{R"({"retryable_classes": "rate-limit"})", "retryable_classes",
                  "expected an array"},
        BadPolicy{R"({"retryable_classes": ["rate_limit"]})", "retryable_classes[0]",
                  "unknown value 'rate_limit'; did you mean 'rate-limit'?"},
        BadPolicy{R"({"retryable_classes": ["timeout", 5]})", "retryable_classes[1]",
                  "expected one of"},
        BadPolicy{R"({"retryable_classes": ["timeout", "timeout"]})", "retryable_classes[1]",
                  "listed twice"},
        BadPolicy{R"({"backoff": 5})", "backoff", "expected an object, got number"},
        BadPolicy{R"({"backoff": {"cap": 100}})", "backoff.cap",
                  "unknown key 'cap'; did you mean 'cap_ms'?"},
        BadPolicy{R"({"backoff": {"base_ms": "500"}})", "backoff.base_ms",
                  "expected an integer, got string \"500\""},
        BadPolicy{R"({"backoff": {"base_ms": 1.5}})", "backoff.base_ms", "expected an integer"},
        BadPolicy{R"({"backoff": {"base_ms": 1e30}})", "backoff.base_ms", "expected an integer"},
        BadPolicy{R"({"backoff": {"base_ms": 0}})", "backoff.base_ms", "must be > 0"},
        BadPolicy{R"({"backoff": {"base_ms": 1000, "cap_ms": 500}})", "backoff.cap_ms",
                  "must be >= base_ms (1000), got 500"},
        BadPolicy{R"({"backoff": {"jitter": 1.5}})", "backoff.jitter", "must be from 0 to 1"},
        BadPolicy{R"({"backoff": {"jitter": -0.1}})", "backoff.jitter", "must be from 0 to 1"},
        BadPolicy{R"({"backoff": {"multiplier": 0.5}})", "backoff.multiplier", "must be >= 1"},
        BadPolicy{R"({"backoff": {"strategy": "full_jitter"}})", "backoff.strategy",
                  "did you mean 'full-jitter'?"},
        BadPolicy{R"({"backoff": {"strategy": 1}})", "backoff.strategy", "expected one of"},
        BadPolicy{R"({"retry_after": {"over_cap": "giveup"}})", "retry_after.over_cap",
                  "did you mean 'give-up'?"},
        BadPolicy{R"({"retry_after": {"honor": "yes"}})", "retry_after.honor",
                  "expected true or false"},
        BadPolicy{R"({"retry_after": {"cap_ms": -1}})", "retry_after.cap_ms", "must be >= 0"},
        BadPolicy{R"({"retry_after": {"jitter": 2}})", "retry_after.jitter", "from 0 to 1"},
        BadPolicy{R"({"timeouts": {"idle_ms": 0}})", "timeouts.idle_ms", "must be > 0"},
        BadPolicy{R"({"timeouts": {"heartbeat_reset_idle": true}})",
                  "timeouts.heartbeat_reset_idle", "did you mean 'heartbeats_reset_idle'?"},
        BadPolicy{R"({"timeouts": {"total_ms": 500}})", "min_attempt_ms",
                  "must be <= timeouts.total_ms (500)"},
        BadPolicy{R"({"min_attempt_ms": -5})", "min_attempt_ms", "must be >= 0"},
        BadPolicy{R"({"budget": {"capacity": 0}})", "budget.capacity", "must be > 0"},
        BadPolicy{R"({"budget": {"retry_cost": 20}})", "budget.retry_cost",
                  "must be >= 0 and <= capacity (10)"},
        BadPolicy{R"({"budget": {"retry_cost": 0}})", "budget.retry_cost",
                  "must be > 0 when failure_cost is 0"},
        BadPolicy{R"({"budget": {"retry_threshold": 10}})", "budget.retry_threshold",
                  "must be >= 0 and < capacity (10)"},
        BadPolicy{R"({"budget": {"failure_cost": -1}})", "budget.failure_cost",
                  "must be >= 0 and <= capacity (10)"},
        BadPolicy{R"({"budget": {"refund": 1}})", "budget.refund",
                  "did you mean 'success_refund'?"},
        BadPolicy{R"({"budget": {"success_refund": -1}})", "budget.success_refund", "must be >= 0"},
        BadPolicy{R"({"routing": {"breaker": {"treshold": 2}}})", "routing.breaker.treshold",
                  "did you mean 'threshold'?"},
        BadPolicy{R"({"routing": {"failver": false}})", "routing.failver",
                  "did you mean 'failover'?"},
        BadPolicy{R"({"routing": {"breaker": {"threshold": 0}}})", "routing.breaker.threshold",
                  "must be from 1 to 1000, got 0"},
        BadPolicy{R"({"routing": {"breaker": {"cooldown_ms": -1}}})", "routing.breaker.cooldown_ms",
                  "must be from 0 to 86400000"},
        BadPolicy{R"({"routing": {"breaker": {"half_open_probes": 0}}})",
                  "routing.breaker.half_open_probes", "must be from 1 to 100"},
        BadPolicy{R"({"routing": {"failover": 1}})", "routing.failover", "expected true or false"},
        BadPolicy{R"({"routing": {"route_attempts": 0}})", "routing.route_attempts",
                  "must be from 1 to 1000, got 0"},
        BadPolicy{R"({"routing": {"route_attempts": "all"}})", "routing.route_attempts",
                  "expected an integer"},
        BadPolicy{R"({"routing": {"breaker": false}})", "routing.breaker", "expected an object"}));

TEST(PolicyJsonTest, RoutingRoundTripsAndReachesTheHello) {
  auto policy = LoadPolicy(
      R"({"routing": {"failover": false, "breaker": {"threshold": 2, "cooldown_ms": 1500,
                                                     "half_open_probes": 3}}})");
  ASSERT_TRUE(policy) << policy.error().ToString();
  EXPECT_FALSE(policy->routing.failover);
  EXPECT_EQ(policy->routing.breaker,
            (BreakerConfig{.threshold = 2, .cooldown = milliseconds(1500), .half_open_probes = 3}));
  EXPECT_EQ(LoadPolicy(PolicyToJson(*policy).dump()), *policy);
  EXPECT_EQ(PolicyToHelloJson(*policy)["routing"]["breaker"]["cooldown_ms"], 1500);
}

TEST(PolicyJsonTest, NoBreakerAndAFallbackChainRoundTrip) {
  auto policy = LoadPolicy(R"({"routing": {"breaker": null, "route_attempts": 7}})");
  ASSERT_TRUE(policy) << policy.error().ToString();
  EXPECT_FALSE(policy->routing.breaker.has_value());
  EXPECT_EQ(policy->routing.route_attempts, 7);
  EXPECT_TRUE(PolicyToJson(*policy)["routing"]["breaker"].is_null());
  EXPECT_EQ(LoadPolicy(PolicyToJson(*policy).dump()), *policy);
  EXPECT_EQ(LoadPolicy("{}")->routing.breaker, BreakerConfig{}) << "the default has a breaker";
  EXPECT_FALSE(LoadPolicy("{}")->routing.route_attempts.has_value());
}

TEST(PolicyJsonTest, ErrorToStringNamesThePath) {
  auto policy = LoadPolicy(R"({"backoff": {"base_ms": 0}})");
  ASSERT_FALSE(policy);
  EXPECT_EQ(policy.error().ToString(), "at backoff.base_ms: must be > 0, got 0");
}

TEST(PolicyJsonTest, NullDisablesOptionalParts) {
  auto policy = LoadPolicy(R"({"budget": null, "timeouts": {"total_ms": null}})");
  ASSERT_TRUE(policy) << policy.error().ToString();
  EXPECT_FALSE(policy->budget);
  EXPECT_FALSE(policy->timeouts.total);
  EXPECT_FALSE(LoadPolicy(R"({"backoff": {"base_ms": null}})"));  // not optional
}

}  // namespace
}  // namespace faultline::ref
