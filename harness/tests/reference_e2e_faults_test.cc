// End-to-end: the reference client against the real fake provider — one test group per fault
// family (overload, in-stream errors, non-retryable errors, truncation, stalls, malformed
// streams, connection faults, cancellation). Every test checks the client's lifecycle events AND
// the server's journal (what reached the provider, when, and how each exchange ended).
#include "harness/tests/reference_e2e_support.h"

namespace faultline::ref::e2e {
namespace {

// ---------------------------------------------------------------------------------------------
// Overloaded and in-stream errors: classified like their HTTP twins and retried.

TEST_F(ReferenceE2E, Http529IsOverloadedAndRetried) {
  const Outcome outcome = RunCall(Scenario(
      Dialect::kAnthropicMessages, "  - {status: 529, error: overloaded}\n" + kSecondResponse));
  ExpectRecoveredOnce(outcome, FailureCode::kOverloaded);
  const auto interrupted = outcome.Of(EventType::kInterrupted);
  ASSERT_EQ(interrupted.size(), 1u);
  EXPECT_EQ(interrupted[0]->failure->failure_class, FailureClass::kProviderOverloaded);
  EXPECT_EQ(interrupted[0]->failure->status, 529);
  ASSERT_EQ(outcome.journal.size(), 2u);
  EXPECT_EQ(outcome.journal[0].status, 529);
}

TEST_F(ReferenceE2E, InStreamOverloadedErrorIsOverloadedAndRetried) {
  const Outcome outcome = RunCall(
      Scenario(Dialect::kAnthropicMessages,
               "  - content:\n      text: \"first attempt text\"\n      chunk_size: 4\n"
               "      faults: [{after_event: 3, inject: provider_error, error: overloaded}]\n" +
                   kSecondResponse));
  ExpectRecoveredOnce(outcome, FailureCode::kOverloaded);
  const auto interrupted = outcome.Of(EventType::kInterrupted);
  ASSERT_EQ(interrupted.size(), 1u);
  EXPECT_EQ(interrupted[0]->failure->failure_class, FailureClass::kProviderOverloaded);
  EXPECT_EQ(interrupted[0]->failure->phase, Phase::kStream);
  ASSERT_EQ(outcome.journal.size(), 2u);
  EXPECT_EQ(outcome.journal[0].status, 200);
}

TEST_F(ReferenceE2E, OpenAiErrorEnvelopeInA200StreamIsRetried) {
  const Outcome outcome =
      RunCall(Scenario(Dialect::kOpenAiChat,
                       "  - content:\n      text: \"Hello, world\"\n"
                       "      faults: [{after_event: 2, inject: error_envelope, error: server}]\n"
                       "      end: {kind: no_terminator, after_event: 3}\n" +
                           kSecondResponse));
  ExpectRecoveredOnce(outcome, FailureCode::kServer);
  const auto interrupted = outcome.Of(EventType::kInterrupted);
  ASSERT_EQ(interrupted.size(), 1u);
  EXPECT_EQ(interrupted[0]->failure->phase, Phase::kStream);
  EXPECT_EQ(outcome.journal[0].status, 200);
}

TEST_F(ReferenceE2E, ResponsesResponseFailedIsRetried) {
  const Outcome outcome = RunCall(
      Scenario(Dialect::kOpenAiResponses,
               "  - content:\n      text: \"Hello, world\"\n"
               "      faults: [{after_event: 3, inject: provider_error, shape: response_failed, "
               "error: server}]\n" +
                   kSecondResponse));
  ExpectRecoveredOnce(outcome, FailureCode::kServer);
  EXPECT_EQ(outcome.journal[0].status, 200);
}

// ---------------------------------------------------------------------------------------------
// Non-retryable failures: one request, response/failed with the right code.

TEST_F(ReferenceE2E, ContextWindowIsNotRetriedInAnyDialect) {
  struct Case {
    Dialect dialect;
    std::string error;
  };
  for (const Case& c : {Case{Dialect::kOpenAiChat, "context_window"},
                        Case{Dialect::kOpenAiChat, "{kind: context_window, wording: deepseek}"},
                        Case{Dialect::kAnthropicMessages, "context_window"},
                        Case{Dialect::kAnthropicMessages,
                             "{kind: context_window, wording: anthropic_exceed_context_limit}"},
                        Case{Dialect::kOpenAiResponses, "context_window"}}) {
    SCOPED_TRACE(std::string(DialectName(c.dialect)) + " " + c.error);
    const Outcome outcome = RunCall(
        Scenario(c.dialect, "  - {status: 400, error: " + c.error + "}\n" + kSecondResponse));
    ExpectFailedOnce(outcome, FailureCode::kContextWindowExceeded, 400);
    EXPECT_EQ(outcome.last().failure->failure_class, FailureClass::kContextOverflow);
  }
}

TEST_F(ReferenceE2E, AuthIsNotRetried) {
  const Outcome outcome =
      RunCall(Scenario(Dialect::kOpenAiChat, "  - {status: 401, error: auth}\n" + kSecondResponse));
  ExpectFailedOnce(outcome, FailureCode::kAuth, 401);
}

TEST_F(ReferenceE2E, QuotaIsNotRetriedEvenWithRetryAfter) {
  for (Dialect dialect : {Dialect::kOpenAiChat, Dialect::kOpenAiResponses}) {
    SCOPED_TRACE(DialectName(dialect));
    const Outcome outcome = RunCall(Scenario(
        dialect, "  - {status: 429, error: quota, retry_after: {seconds: 1}}\n" + kSecondResponse));
    ExpectFailedOnce(outcome, FailureCode::kQuota, 429);
    EXPECT_EQ(outcome.last().failure->failure_class, FailureClass::kQuota);
  }
}

// ---------------------------------------------------------------------------------------------
// Truncation: never committed from the failed attempt; the retry's text is attempt 2's, exactly.

struct CutCase {
  std::string name;
  std::string end;  // the YAML value of `end`
  std::vector<FailureCode> codes;
  EndKind journal_end;
};

void PrintTo(const CutCase& c, std::ostream* os) { *os << c.name; }

class TruncationE2E : public ReferenceE2E, public ::testing::WithParamInterface<CutCase> {};

TEST_P(TruncationE2E, RetriesAndCommitsOnlyTheSecondAttempt) {
  const CutCase& cut = GetParam();
  for (Dialect dialect : kAllDialects) {
    SCOPED_TRACE(DialectName(dialect));
    const Outcome outcome =
        RunCall(Scenario(dialect,
                         "  - content:\n      text: \"first attempt, cut short\"\n"
                         "      chunk_size: 4\n      end: " +
                             cut.end + "\n" + kSecondResponse));
    ASSERT_EQ(outcome.Terminals(), 1);
    ASSERT_EQ(outcome.last().type, EventType::kCommitted);
    EXPECT_EQ(outcome.Committed(), kSecond);
    EXPECT_EQ(outcome.last().attempt, 2);
    // No chunk of attempt 1 reached the committed text, and attempt 1 was reported interrupted.
    const auto interrupted = outcome.Of(EventType::kInterrupted);
    ASSERT_EQ(interrupted.size(), 1u);
    const Failure& failure = *interrupted[0]->failure;
    EXPECT_NE(std::find(cut.codes.begin(), cut.codes.end(), failure.code), cut.codes.end())
        << ToString(failure.code) << ": " << failure.message;
    EXPECT_NE(failure.partial_output, PartialOutput::kCommitted);
    EXPECT_GT(interrupted[0]->wasted.bytes, 0u);
    ASSERT_EQ(outcome.journal.size(), 2u);
    EXPECT_EQ(outcome.journal[0].end, cut.journal_end) << ToString(outcome.journal[0].end);
    EXPECT_EQ(outcome.journal[1].end, EndKind::kCompleted) << ToString(outcome.journal[1].end);
    EXPECT_TRUE(outcome.BodiesIdentical());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Matrix, TruncationE2E,
    ::testing::Values(CutCase{"NoTerminator",
                              "no_terminator",
                              {FailureCode::kStreamTruncated},
                              EndKind::kCompleted},
                      CutCase{"NoFinalChunk",
                              "{kind: no_final_chunk, after_event: 3}",
                              {FailureCode::kStreamTruncated, FailureCode::kTransport},
                              EndKind::kClosedByServer},
                      CutCase{"CloseMidLine",
                              "{kind: close, after_event: 3, at_byte: 7}",
                              {FailureCode::kStreamTruncated, FailureCode::kTransport},
                              EndKind::kClosedByServer},
                      CutCase{"ResetAfterEvent",
                              "{kind: reset, after_event: 3}",
                              {FailureCode::kTransport},
                              EndKind::kResetByServer},
                      CutCase{"ResetMidEvent",
                              "{kind: reset, after_event: 2, at_byte: 5}",
                              {FailureCode::kTransport},
                              EndKind::kResetByServer}),
    [](const auto& info) { return info.param.name; });

// All events including the terminator arrive, then the connection closes without the final
// zero-length chunk: the terminator makes the answer whole (assembler.h), so attempt 1 commits.
TEST_F(ReferenceE2E, MissingFinalChunkAfterTheTerminatorStillCommits) {
  for (Dialect dialect : kAllDialects) {
    SCOPED_TRACE(DialectName(dialect));
    const Outcome outcome = RunCall(Scenario(
        dialect, "  - content: {text: \"whole answer\", end: no_final_chunk}\n" + kSecondResponse));
    ASSERT_EQ(outcome.Terminals(), 1);
    EXPECT_EQ(outcome.Committed(), "whole answer");
    EXPECT_EQ(outcome.last().attempt, 1);
    ASSERT_EQ(outcome.journal.size(), 1u);
    EXPECT_EQ(outcome.journal[0].end, EndKind::kClosedByServer) << ToString(outcome.journal[0].end);
  }
}

// ---------------------------------------------------------------------------------------------
// Stalls: the idle watchdog fires, the client closes the connection and retries.

void ExpectStallRecovered(const Outcome& outcome) {
  ExpectRecoveredOnce(outcome, FailureCode::kTimeout);
  const auto interrupted = outcome.Of(EventType::kInterrupted);
  ASSERT_EQ(interrupted.size(), 1u);
  EXPECT_EQ(interrupted[0]->failure->phase, Phase::kStream);
  ASSERT_EQ(outcome.journal.size(), 2u);
  const JournalEntry& first = outcome.journal[0];
  EXPECT_EQ(first.end, EndKind::kStalledClientGaveUp) << ToString(first.end);
  // The client gave up no earlier than its idle timeout after the last content bytes.
  ASSERT_FALSE(first.writes.empty());
  EXPECT_GE(Ms(first.ended - first.arrived), 300ms);
  EXPECT_LT(Ms(first.ended - first.arrived), 5000ms);
}

TEST_F(ReferenceE2E, StallForeverTimesOutAndRetries) {
  for (Dialect dialect : kAllDialects) {
    SCOPED_TRACE(DialectName(dialect));
    const Outcome outcome = RunCall(Scenario(
        dialect,
        "  - content: {text: \"Hello, world\", faults: [{after_event: 2, stall: forever}]}\n" +
            kSecondResponse));
    ExpectStallRecovered(outcome);
    // Nothing was written after event 2: the client gave up a full idle timeout after it.
    ASSERT_EQ(outcome.journal.size(), 2u);
    const JournalEntry& first = outcome.journal[0];
    ASSERT_FALSE(first.writes.empty());
    EXPECT_GE(Ms(first.ended - first.writes.back().at), 299ms);
    if (dialect == Dialect::kOpenAiChat) {
      // Chat's second event carries text: the timed-out attempt had uncommitted output.
      const auto interrupted = outcome.Of(EventType::kInterrupted);
      ASSERT_EQ(interrupted.size(), 1u);
      EXPECT_EQ(interrupted[0]->failure->partial_output, PartialOutput::kUncommitted);
    }
  }
}

TEST_F(ReferenceE2E, HeartbeatsDoNotKeepAStalledStreamAlive) {
  for (Dialect dialect : {Dialect::kOpenAiChat, Dialect::kAnthropicMessages}) {
    SCOPED_TRACE(DialectName(dialect));
    const Outcome outcome = RunCall(
        Scenario(dialect,
                 "  - content: {text: \"Hello, world\", faults: [{after_event: 2, stall: forever, "
                 "heartbeat: {every: 50ms}}]}\n" +
                     kSecondResponse));
    ExpectStallRecovered(outcome);
    ASSERT_EQ(outcome.journal.size(), 2u);
    // Heartbeats were really sent during the stall (at least a few of them).
    EXPECT_GE(outcome.journal[0].writes.size(), 5u);
  }
}

// ---------------------------------------------------------------------------------------------
// Malformed responses.

TEST_F(ReferenceE2E, InvalidJsonIsMalformed) {
  const Outcome outcome = RunCall(Scenario(
      Dialect::kOpenAiChat,
      "  - content: {text: \"Hello, world\", faults: [{after_event: 2, inject: invalid_json}]}\n" +
          kSecondResponse));
  const Failure* failure = outcome.FirstFailure();
  ASSERT_NE(failure, nullptr);
  EXPECT_EQ(failure->code, FailureCode::kMalformedResponse) << ToString(failure->code);
  EXPECT_EQ(failure->failure_class, FailureClass::kProtocol);
  EXPECT_EQ(outcome.Terminals(), 1);
  EXPECT_NE(outcome.Committed(), "Hello, world");
  ASSERT_GE(outcome.journal.size(), 1u);
  EXPECT_TRUE(outcome.BodiesIdentical());
}

TEST_F(ReferenceE2E, WrongContentTypeIsMalformed) {
  const Outcome outcome = RunCall(Scenario(
      Dialect::kOpenAiChat,
      "  - {content_type: text/html, content: {text: \"Hello, world\"}}\n" + kSecondResponse));
  const Failure* failure = outcome.FirstFailure();
  ASSERT_NE(failure, nullptr);
  EXPECT_EQ(failure->code, FailureCode::kMalformedResponse) << ToString(failure->code);
  EXPECT_EQ(outcome.Terminals(), 1);
  EXPECT_NE(outcome.Committed(), "Hello, world");
  ASSERT_GE(outcome.journal.size(), 1u);
}

// ---------------------------------------------------------------------------------------------
// Connection-level failures before any response.

TEST_F(ReferenceE2E, ConnectionRefusedForAWindowThenSuccess) {
  RetryPolicy policy = FastPolicy();
  policy.max_attempts = 200;
  const Outcome outcome = RunCall(Scenario(Dialect::kOpenAiChat, kSecondResponse,
                                           "listener_outages: [{from: 0ms, for: 500ms}]\n"),
                                  policy);
  ASSERT_EQ(outcome.Terminals(), 1);
  ASSERT_EQ(outcome.last().type, EventType::kCommitted);
  EXPECT_EQ(outcome.Committed(), kSecond);
  const auto interrupted = outcome.Of(EventType::kInterrupted);
  ASSERT_GE(interrupted.size(), 1u);
  for (const auto* event : interrupted) {
    EXPECT_EQ(event->failure->code, FailureCode::kTransport);
    EXPECT_EQ(event->failure->phase, Phase::kConnect);
  }
  // Refused connections never reach the provider: one request, after the window.
  ASSERT_EQ(outcome.journal.size(), 1u);
  EXPECT_GE(Ms(outcome.journal[0].arrived), 500ms);
  EXPECT_EQ(outcome.journal[0].end, EndKind::kCompleted);
}

TEST_F(ReferenceE2E, ResetBeforeHeadersThenSuccess) {
  const Outcome outcome = RunCall(
      Scenario(Dialect::kOpenAiChat, "  - connection: reset_before_headers\n" + kSecondResponse));
  ExpectRecoveredOnce(outcome, FailureCode::kTransport);
  const auto interrupted = outcome.Of(EventType::kInterrupted);
  ASSERT_EQ(interrupted.size(), 1u);
  EXPECT_EQ(interrupted[0]->failure->phase, Phase::kResponseHeaders);
  EXPECT_EQ(outcome.journal[0].end, EndKind::kResetByServer) << ToString(outcome.journal[0].end);
}

// ---------------------------------------------------------------------------------------------
// Cancellation.

TEST_F(ReferenceE2E, CancelDuringRetryAfterBackoffIsPromptAndSendsNothing) {
  const Outcome outcome =
      RunCall(Scenario(Dialect::kOpenAiChat,
                       "  - {status: 429, error: rate_limit, retry_after: {seconds: 5}}\n" +
                           kSecondResponse),
              FastPolicy(), [](CallDriver& driver, const LifecycleEvent& event) {
                if (event.type == EventType::kInterrupted) driver.Cancel();
              });
  ASSERT_EQ(outcome.Terminals(), 1);
  ASSERT_EQ(outcome.last().type, EventType::kFailed);
  EXPECT_EQ(outcome.last().failure->code, FailureCode::kAborted);
  const auto interrupted_at = outcome.IndexOf(EventType::kInterrupted);
  ASSERT_TRUE(interrupted_at.has_value());
  EXPECT_GE(outcome.events[*interrupted_at].scheduled_retry, 5000ms);
  EXPECT_LT(outcome.at.back() - outcome.at[*interrupted_at], 1s);
  ASSERT_EQ(outcome.journal.size(), 1u);
  EXPECT_EQ(outcome.journal[0].status, 429);
}

TEST_F(ReferenceE2E, CancelMidStreamAbortsAndClosesTheExchange) {
  const Outcome outcome = RunCall(
      Scenario(Dialect::kAnthropicMessages,
               "  - content: {text: \"a long answer that keeps on coming for a while\", "
               "chunk_size: 2, chunk_delay: 50ms}\n" +
                   kSecondResponse),
      FastPolicy(), [cancelled = false](CallDriver& driver, const LifecycleEvent& event) mutable {
        if (event.type == EventType::kChunk && !cancelled) {
          cancelled = true;
          driver.Cancel();
        }
      });
  ASSERT_EQ(outcome.Terminals(), 1);
  ASSERT_EQ(outcome.last().type, EventType::kFailed);
  EXPECT_EQ(outcome.last().failure->code, FailureCode::kAborted);
  EXPECT_EQ(outcome.last().failure->phase, Phase::kStream);
  EXPECT_EQ(outcome.last().failure->partial_output, PartialOutput::kUncommitted);
  ASSERT_EQ(outcome.journal.size(), 1u);
  const EndKind end = outcome.journal[0].end;
  EXPECT_TRUE(end == EndKind::kClientClosed || end == EndKind::kStalledClientGaveUp)
      << ToString(end);
}

// ---------------------------------------------------------------------------------------------
// The same request bytes on every attempt.

TEST_F(ReferenceE2E, RequestBodyIsByteIdenticalOnEveryAttempt) {
  RetryPolicy policy = FastPolicy();
  policy.max_attempts = 4;
  const Outcome outcome = RunCall(Scenario(Dialect::kAnthropicMessages,
                                           "  - {status: 500, error: server}\n"
                                           "  - connection: reset_before_headers\n"
                                           "  - content: {text: \"cut\", end: no_terminator}\n" +
                                               kSecondResponse),
                                  policy);
  ASSERT_EQ(outcome.Terminals(), 1);
  ASSERT_EQ(outcome.last().type, EventType::kCommitted);
  EXPECT_EQ(outcome.Committed(), kSecond);
  EXPECT_EQ(outcome.last().attempt, 4);
  ASSERT_EQ(outcome.journal.size(), 4u);
  for (const auto& entry : outcome.journal) {
    EXPECT_EQ(entry.body, outcome.body) << "attempt " << entry.attempt;
    EXPECT_EQ(entry.target, outcome.journal[0].target);
  }
}

}  // namespace
}  // namespace faultline::ref::e2e
