// End-to-end: the reference client (reference_impl/, driven by its real Asio driver) against the
// real fake provider (fake_provider/server.h) serving inline scenarios, one test group per fault
// family. Every test checks both sides: the lifecycle events the client emitted AND the server's
// journal (what reached the provider, when, and how each exchange ended).
//
// The success tests are also the agreement test between the provider's SSE writer and the
// client's independently written SSE parser, over every framing variant the provider can produce.
//
// Timing: lower bounds on waits are checked against journal times (exact up to a few ms); upper
// bounds are generous so the tests hold on a loaded 2-core machine. Every wait is bounded.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "fake_provider/server.h"
#include "fake_provider/tests/server_test_support.h"
#include "reference_impl/call.h"
#include "reference_impl/driver.h"
#include "scenarios/loader.h"

namespace faultline::ref {
namespace {

using namespace std::chrono_literals;
using provider::EndKind;
using provider::JournalEntry;
using provider::server_testing::ScenarioFromYaml;
using provider::server_testing::TestServer;
using provider::server_testing::WaitFor;
using std::chrono::duration_cast;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// A fast test policy: small backoff, short idle timeout, a large Retry-After cap.
RetryPolicy FastPolicy() {
  RetryPolicy policy;
  policy.max_attempts = 3;
  policy.backoff.base = 20ms;
  policy.backoff.cap = 100ms;
  policy.min_attempt_time = 10ms;
  policy.retry_after.cap = 30'000ms;
  policy.timeouts.connect = 5000ms;
  policy.timeouts.response_headers = 5000ms;
  policy.timeouts.idle = 300ms;
  policy.timeouts.total = 60'000ms;
  return policy;
}

std::string_view DialectName(Dialect dialect) {
  switch (dialect) {
    case Dialect::kOpenAiChat:
      return "openai-chat";
    case Dialect::kAnthropicMessages:
      return "anthropic-messages";
    case Dialect::kOpenAiResponses:
      return "openai-responses";
  }
  return "openai-chat";
}

std::string RequestBody(Dialect dialect) {
  switch (dialect) {
    case Dialect::kOpenAiChat:
      return R"({"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Say hello."}]})";
    case Dialect::kAnthropicMessages:
      return R"({"model":"claude-sonnet-4-5","max_tokens":256,"stream":true,"messages":[{"role":"user","content":"Say hello."}]})";
    case Dialect::kOpenAiResponses:
      return R"({"model":"gpt-4o-mini","stream":true,"input":"Say hello."})";
  }
  return {};
}

// What one call produced: its events (with arrival times), the journal of its session.
struct Outcome {
  std::vector<LifecycleEvent> events;
  std::vector<Clock::time_point> at;
  int done = 0;
  bool finished_in_time = false;
  std::string body;  // the request body the client sent
  std::vector<JournalEntry> journal;

  int Terminals() const {
    int n = 0;
    for (const auto& event : events) n += event.terminal();
    return n;
  }
  const LifecycleEvent& last() const { return events.back(); }
  std::vector<const LifecycleEvent*> Of(EventType type) const {
    std::vector<const LifecycleEvent*> out;
    for (const auto& event : events) {
      if (event.type == type) out.push_back(&event);
    }
    return out;
  }
  std::optional<std::size_t> IndexOf(EventType type) const {
    for (std::size_t i = 0; i < events.size(); ++i) {
      if (events[i].type == type) return i;
    }
    return std::nullopt;
  }
  // The first failure reported (interrupted or failed).
  const Failure* FirstFailure() const {
    for (const auto& event : events) {
      if (event.failure) return &*event.failure;
    }
    return nullptr;
  }
  std::string Committed() const {
    if (events.empty() || events.back().type != EventType::kCommitted) return "<not committed>";
    return events.back().committed->text;
  }
  bool BodiesIdentical() const {
    for (const auto& entry : journal) {
      if (entry.body != body) return false;
    }
    return true;
  }
};

// One in-process fake provider per test; RunCall adds a session and drives one call against it.
class ReferenceE2E : public ::testing::Test {
 protected:
  using Hook = std::function<void(CallDriver&, const LifecycleEvent&)>;

  Outcome RunCall(std::string_view yaml, RetryPolicy policy = FastPolicy(), Hook hook = {}) {
    Outcome outcome;
    auto scenario = ScenarioFromYaml(yaml);
    if (scenario.name.empty()) return outcome;  // the parse error is already reported
    const std::string id = "e2e" + std::to_string(++sessions_);
    auto session = server_.server().AddSession(std::move(scenario), id);
    if (!session) {
      ADD_FAILURE() << session.error();
      return outcome;
    }
    auto base = ParseBaseUrl(session->base_url);
    if (!base) {
      ADD_FAILURE() << base.error();
      return outcome;
    }
    const Dialect dialect = DialectOf(yaml);
    CallRequest request{.dialect = dialect,
                        .base_url = *base,
                        .api_key = "sk-test",
                        .body = RequestBody(dialect),
                        .stream = true,
                        .idempotency_key = std::nullopt};
    outcome.body = request.body;
    Drive(std::move(request), std::move(policy), std::move(hook), outcome);
    // The journal lands asynchronously (the server sees the client's close after the call ended).
    WaitFor(
        [&] {
          auto journal = server_.server().JournalOf(id);
          if (!journal) return false;
          outcome.journal = *journal;
          for (const auto& entry : outcome.journal) {
            if (entry.end == EndKind::kInProgress) return false;
          }
          return true;
        },
        5s);
    return outcome;
  }

  static Dialect DialectOf(std::string_view yaml) {
    if (yaml.find("anthropic-messages") != std::string_view::npos) {
      return Dialect::kAnthropicMessages;
    }
    if (yaml.find("openai-responses") != std::string_view::npos) return Dialect::kOpenAiResponses;
    return Dialect::kOpenAiChat;
  }

  static void Drive(CallRequest request, RetryPolicy policy, Hook hook, Outcome& outcome) {
    boost::asio::io_context io;  // declared before the driver handle: it must outlive it
    std::shared_ptr<CallDriver> driver;
    DriverCallbacks callbacks{.on_event =
                                  [&](const LifecycleEvent& event) {
                                    outcome.events.push_back(event);
                                    outcome.at.push_back(Clock::now());
                                    if (hook) hook(*driver, event);
                                  },
                              .on_done = [&] { ++outcome.done; }};
    driver = CallDriver::Launch(io, std::move(request), std::move(policy), {.seed = 11},
                                std::move(callbacks));
    io.run_for(30s);
    outcome.finished_in_time = outcome.done == 1;
    if (!outcome.finished_in_time) {
      ADD_FAILURE() << "the call did not finish within 30 s";
      driver->Cancel();
      io.restart();
      io.run_for(2s);
    }
    EXPECT_EQ(driver->connections_closed(), driver->connections_opened());
  }

  TestServer server_;
  int sessions_ = 0;
};

milliseconds Ms(provider::Duration d) { return duration_cast<milliseconds>(d); }

// ---------------------------------------------------------------------------------------------
// Success in all three dialects, over every SSE framing variant of the provider's writer.

constexpr std::string_view kUnicodeText = "Grüße, 世界! Ünïcödé ✓ — and a tail of ASCII text.";

struct Framing {
  std::string name;
  std::string content_extra;  // YAML members added to `content`
};

std::vector<Framing> Framings() {
  return {
      {"Plain", ""},
      {"Crlf", "framing: {line_ending: crlf}"},
      {"Cr", "framing: {line_ending: cr}"},
      {"Mixed", "framing: {line_ending: mixed}"},
      {"Bom", "framing: {bom: true}"},
      {"Comments", "framing: {comments: true}"},
      {"MultilineData", "framing: {multiline_data: true}"},
      {"SplitWrites", "framing: {split_writes: true}"},
      {"SplitUtf8", "framing: {split_writes: true, split_utf8: true, split_delay: 3ms}"},
      {"SlowDrip", "drip: {bytes: 5, every: 1ms}"},
      {"Everything",
       "framing: {line_ending: mixed, bom: true, comments: true, multiline_data: true, "
       "split_writes: true, split_utf8: true}"},
      {"CrBomMultilineSplit",
       "framing: {line_ending: cr, bom: true, multiline_data: true, split_writes: true, "
       "split_utf8: true}"},
  };
}

void PrintTo(const Framing& f, std::ostream* os) { *os << f.name; }

class FramingE2E : public ReferenceE2E,
                   public ::testing::WithParamInterface<std::tuple<Dialect, Framing>> {};

TEST_P(FramingE2E, CommitsExactlyTheScenarioText) {
  const auto& [dialect, framing] = GetParam();
  const std::string yaml =
      "faultline: 1\nname: e2e/ok\ndescription: e2e\ndialect: " +
      std::string(DialectName(dialect)) + "\nresponses:\n  - content:\n      text: \"" +
      std::string(kUnicodeText) + "\"\n      chunk_size: 3\n      " + framing.content_extra + "\n";
  RetryPolicy policy = FastPolicy();
  policy.timeouts.idle = 3000ms;  // success tests must not depend on scheduling
  const Outcome outcome = RunCall(yaml, policy);
  ASSERT_EQ(outcome.Terminals(), 1);
  EXPECT_EQ(outcome.events.back().type, EventType::kCommitted);
  EXPECT_EQ(outcome.Committed(), kUnicodeText);
  EXPECT_EQ(outcome.last().attempt, 1);
  EXPECT_TRUE(outcome.Of(EventType::kInterrupted).empty());
  // The uncommitted chunks concatenate to the same text.
  std::string chunks;
  for (const auto* chunk : outcome.Of(EventType::kChunk)) chunks += chunk->text.value_or("");
  EXPECT_EQ(chunks, kUnicodeText);
  ASSERT_EQ(outcome.journal.size(), 1u);
  EXPECT_EQ(outcome.journal[0].status, 200);
  // The client commits at the terminal event and may close before the last bytes after it.
  const EndKind end = outcome.journal[0].end;
  EXPECT_TRUE(end == EndKind::kCompleted || end == EndKind::kClientClosed) << ToString(end);
  EXPECT_TRUE(outcome.BodiesIdentical());
}

INSTANTIATE_TEST_SUITE_P(AllDialects, FramingE2E,
                         ::testing::Combine(::testing::Values(Dialect::kOpenAiChat,
                                                              Dialect::kAnthropicMessages,
                                                              Dialect::kOpenAiResponses),
                                            ::testing::ValuesIn(Framings())),
                         [](const auto& info) {
                           std::string name(DialectName(std::get<0>(info.param)));
                           std::erase(name, '-');
                           return name + "_" + std::get<1>(info.param).name;
                         });

// ---------------------------------------------------------------------------------------------
// Helpers for the fault families.

// A scenario in `dialect` whose `responses:` list is `responses` (already indented by 2).
std::string Scenario(Dialect dialect, std::string_view responses, std::string_view top = {}) {
  return "faultline: 1\nname: e2e/fault\ndescription: e2e\ndialect: " +
         std::string(DialectName(dialect)) + "\n" + std::string(top) + "responses:\n" +
         std::string(responses);
}

constexpr std::string_view kSecond = "the second attempt, committed";
const std::string kSecondResponse =
    "  - content: {text: \"" + std::string(kSecond) + "\", chunk_size: 5}\n";

// The exchange `index` of the journal, or a failure.
const JournalEntry* Entry(const Outcome& outcome, std::size_t index) {
  if (index >= outcome.journal.size()) return nullptr;
  return &outcome.journal[index];
}

// The call retried once after a failure with `code` and committed the second attempt's text.
void ExpectRecoveredOnce(const Outcome& outcome, FailureCode code) {
  ASSERT_EQ(outcome.Terminals(), 1);
  ASSERT_EQ(outcome.last().type, EventType::kCommitted)
      << (outcome.last().failure ? outcome.last().failure->message : "");
  EXPECT_EQ(outcome.Committed(), kSecond);
  EXPECT_EQ(outcome.last().attempt, 2);
  const auto interrupted = outcome.Of(EventType::kInterrupted);
  ASSERT_EQ(interrupted.size(), 1u);
  EXPECT_EQ(interrupted[0]->attempt, 1);
  ASSERT_TRUE(interrupted[0]->failure.has_value());
  EXPECT_EQ(interrupted[0]->failure->code, code)
      << ToString(interrupted[0]->failure->code) << ": " << interrupted[0]->failure->message;
  EXPECT_TRUE(interrupted[0]->failure->retryable);
  EXPECT_NE(interrupted[0]->failure->partial_output, PartialOutput::kCommitted);
  ASSERT_EQ(outcome.journal.size(), 2u);
  EXPECT_TRUE(outcome.BodiesIdentical());
}

// The call failed at once with `code`, without a retry, and the provider saw one request.
void ExpectFailedOnce(const Outcome& outcome, FailureCode code, int status) {
  ASSERT_EQ(outcome.Terminals(), 1);
  ASSERT_EQ(outcome.last().type, EventType::kFailed);
  ASSERT_TRUE(outcome.last().failure.has_value());
  EXPECT_EQ(outcome.last().failure->code, code)
      << ToString(outcome.last().failure->code) << ": " << outcome.last().failure->message;
  EXPECT_FALSE(outcome.last().failure->retryable);
  EXPECT_EQ(outcome.last().failure->status, status);
  EXPECT_TRUE(outcome.Of(EventType::kInterrupted).empty());
  EXPECT_TRUE(outcome.Of(EventType::kCommitted).empty());
  ASSERT_EQ(outcome.journal.size(), 1u);
  EXPECT_EQ(outcome.journal[0].status, status);
}

// ---------------------------------------------------------------------------------------------
// Retry-After: the second request arrives no earlier than the server asked.

struct HintCase {
  std::string name;
  std::string response;  // the first (429) response, one YAML flow mapping
  DelaySource source;
  milliseconds floor;
};

void PrintTo(const HintCase& c, std::ostream* os) { *os << c.name; }

class RetryAfterE2E : public ReferenceE2E, public ::testing::WithParamInterface<HintCase> {};

TEST_P(RetryAfterE2E, SecondRequestWaitsForTheHint) {
  const HintCase& hint = GetParam();
  const Outcome outcome =
      RunCall(Scenario(Dialect::kOpenAiChat, "  - " + hint.response + "\n" + kSecondResponse));
  ExpectRecoveredOnce(outcome, FailureCode::kRateLimit);
  const auto interrupted = outcome.Of(EventType::kInterrupted);
  ASSERT_EQ(interrupted.size(), 1u);
  EXPECT_EQ(interrupted[0]->delay_source, hint.source) << ToString(interrupted[0]->delay_source);
  EXPECT_GE(interrupted[0]->scheduled_retry, hint.floor);
  EXPECT_EQ(interrupted[0]->failure->status, 429);
  const JournalEntry* first = Entry(outcome, 0);
  const JournalEntry* second = Entry(outcome, 1);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->status, 429);
  // The client received the 429 no earlier than the server finished writing it.
  const auto waited = Ms(second->arrived - first->ended);
  EXPECT_GE(waited, hint.floor - 3ms) << waited.count() << " ms";
  EXPECT_LT(waited, hint.floor * 2 + 3000ms) << waited.count() << " ms";
}

INSTANTIATE_TEST_SUITE_P(
    Forms, RetryAfterE2E,
    ::testing::Values(
        HintCase{"Seconds", "{status: 429, error: rate_limit, retry_after: {seconds: 1}}",
                 DelaySource::kRetryAfter, 1000ms},
        HintCase{"ImfDate",
                 "{status: 429, error: rate_limit, retry_after: {http_date: 1s, form: imf}}",
                 DelaySource::kRetryAfterDate, 1000ms},
        HintCase{"Rfc850Date",
                 "{status: 429, error: rate_limit, retry_after: {http_date: 1s, form: rfc850}}",
                 DelaySource::kRetryAfterDate, 1000ms},
        HintCase{"AsctimeDate",
                 "{status: 429, error: rate_limit, retry_after: {http_date: 1s, form: asctime}}",
                 DelaySource::kRetryAfterDate, 1000ms},
        HintCase{"RetryAfterMs", "{status: 429, error: rate_limit, retry_after_ms: 400}",
                 DelaySource::kRetryAfterMs, 400ms}),
    [](const auto& info) { return info.param.name; });

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
  for (Dialect dialect :
       {Dialect::kOpenAiChat, Dialect::kAnthropicMessages, Dialect::kOpenAiResponses}) {
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
  for (Dialect dialect :
       {Dialect::kOpenAiChat, Dialect::kAnthropicMessages, Dialect::kOpenAiResponses}) {
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
  for (Dialect dialect :
       {Dialect::kOpenAiChat, Dialect::kAnthropicMessages, Dialect::kOpenAiResponses}) {
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
}  // namespace faultline::ref
