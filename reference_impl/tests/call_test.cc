// The call engine driven by hand: canned response bytes and virtual `now` values, no I/O.
#include "reference_impl/call.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "reference_impl/tests/call_harness.h"
#include "reference_impl/tests/wire_fixtures.h"

namespace faultline::ref {
namespace {

using namespace call_harness;  // NOLINT: the harness is this file's vocabulary

TEST(CallRequestTest, OpenAiRequestBytes) {
  CallRequest request = ChatRequest();
  request.idempotency_key = "idem-1";
  request.extra_headers = {{"x-portkey-config", R"({"targets":[]})"}};
  const std::string bytes = BuildHttpRequest(request);
  EXPECT_TRUE(bytes.starts_with("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"));
  EXPECT_THAT(bytes, testing::HasSubstr("Authorization: Bearer sk-test\r\n"));
  EXPECT_THAT(bytes, testing::HasSubstr("accept: text/event-stream\r\n"));
  EXPECT_THAT(bytes, testing::HasSubstr("idempotency-key: idem-1\r\n"));
  EXPECT_THAT(bytes, testing::HasSubstr("\r\nx-portkey-config: {\"targets\":[]}\r\n\r\n"))
      << "an extra header goes last, before the blank line";
  EXPECT_THAT(
      bytes, testing::HasSubstr("content-length: " + std::to_string(request.body.size()) + "\r\n"));
  EXPECT_TRUE(bytes.ends_with("\r\n\r\n" + request.body));
}

TEST(CallRequestTest, AnthropicRequestBytes) {
  CallRequest request = ChatRequest();
  request.dialect = Dialect::kAnthropicMessages;
  request.base_url = {.host = "api.local", .port = 80, .path = "/v1"};
  request.stream = false;
  const std::string bytes = BuildHttpRequest(request);
  EXPECT_TRUE(bytes.starts_with("POST /v1/messages HTTP/1.1\r\nHost: api.local\r\n"));
  EXPECT_THAT(bytes, testing::HasSubstr("x-api-key: sk-test\r\nanthropic-version: 2023-06-01\r\n"));
  EXPECT_THAT(bytes, testing::Not(testing::HasSubstr("Authorization")));
  EXPECT_THAT(bytes, testing::HasSubstr("accept: application/json\r\n"));
  EXPECT_EQ(RequestPath(Dialect::kOpenAiResponses, "/proxy"), "/proxy/v1/responses");
}

TEST(CallRequestTest, ParseBaseUrl) {
  auto url = ParseBaseUrl("http://127.0.0.1:9000/v1/");
  ASSERT_TRUE(url.has_value());
  EXPECT_EQ(url->host, "127.0.0.1");
  EXPECT_EQ(url->port, 9000);
  EXPECT_EQ(url->path, "/v1");
  auto v6 = ParseBaseUrl("http://[::1]:81");
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 81);
  EXPECT_EQ(ParseBaseUrl("http://example.com")->port, 80);
  EXPECT_FALSE(ParseBaseUrl("https://api.openai.com").has_value());
  EXPECT_FALSE(ParseBaseUrl("http://h:99999").has_value());
  EXPECT_FALSE(ParseBaseUrl("http://:80").has_value());
}

TEST(CallTest, HelloCarriesThePolicy) {
  const nlohmann::json hello = HelloEvent(TestPolicy()).ToJson();
  EXPECT_EQ(hello["type"], "adapter/hello");
  EXPECT_EQ(hello["name"], "faultline-ref");
  EXPECT_EQ(hello["policy"]["max_retries"], 2);
}

TEST(CallTest, SuccessCommitsTheAttempt) {
  Harness h;
  auto started = h.Start();
  ASSERT_TRUE(Has(started, Kind::kConnect));
  EXPECT_EQ(Find(started, Kind::kArmTimer)->at, At(1000));  // connect timeout
  auto sent = h.Connected(10);
  ASSERT_TRUE(Has(sent, Kind::kSend));
  EXPECT_EQ(Find(sent, Kind::kSend)->bytes, BuildHttpRequest(ChatRequest()));
  EXPECT_EQ(Find(sent, Kind::kArmTimer)->at, At(2010));  // header timeout
  auto done = h.Bytes(SseOk(fixtures::kChatText), 20);
  EXPECT_TRUE(Has(done, Kind::kDone));
  EXPECT_TRUE(Has(done, Kind::kCloseConnection));
  EXPECT_TRUE(h.call.done());

  ASSERT_EQ(h.events.size(), 4u);
  EXPECT_EQ(
      h.events[0].ToJson(),
      nlohmann::json::parse(R"({"type":"response/start","response_id":"call-1","attempt":1})"));
  EXPECT_EQ(h.events[1].ToJson(),
            nlohmann::json::parse(R"({"type":"assistant/chunk","response_id":"call-1","attempt":1,
                                      "text":"Hello","commitment":"uncommitted"})"));
  const nlohmann::json committed = h.events[3].ToJson();
  EXPECT_EQ(committed["type"], "response/committed");
  EXPECT_EQ(committed["text"], "Hello, world");
  EXPECT_EQ(committed["finish_reason"], "stop");
  EXPECT_EQ(committed["usage"]["input_tokens"], 12);
  EXPECT_EQ(committed["tool_calls"], nlohmann::json::array());
  // Nothing after the terminal event.
  EXPECT_TRUE(h.Closed(30).empty());
  EXPECT_TRUE(h.Timer(At(5000)).empty());
  EXPECT_TRUE(h.Cancel(40).empty());
  EXPECT_EQ(h.events.size(), 4u);
}

// The verdict is a function of the bytes, not of their segmentation: the terminator came before
// the garbage, so the answer commits whether the garbage arrives in the same write or later.
TEST(CallTest, TerminatorThenBadChunkHeaderCommitsInEverySegmentation) {
  const std::string head =
      "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", fixtures::kChatText.size());
  const std::string wire = head + size + std::string(fixtures::kChatText) + "\r\nzz;bad\r\n";
  for (std::size_t cut = 0; cut <= wire.size(); cut += 7) {
    Harness h;
    h.Start();
    h.Connected(1);
    h.Bytes(std::string_view(wire).substr(0, cut), 2);
    h.Bytes(std::string_view(wire).substr(cut), 3);
    ASSERT_EQ(h.Terminals(), 1) << "cut " << cut;
    ASSERT_EQ(h.events.back().type, EventType::kCommitted) << "cut " << cut;
    EXPECT_EQ(h.events.back().committed->text, "Hello, world");
  }
}

// An error status whose body is cut by bad chunk bytes in the same write is still classified by
// its status (as when the bad bytes come later), not reported as a malformed head.
RetryPolicy OneAttemptPolicy() {
  RetryPolicy policy = TestPolicy();
  policy.max_attempts = 1;
  return policy;
}

TEST(CallTest, ErrorHeadAndBadBodyInOneWriteIsClassifiedByStatus) {
  Harness h(OneAttemptPolicy());
  h.Start();
  h.Connected(1);
  h.Bytes("HTTP/1.1 401 Unauthorized\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\nzz\r\n", 2);
  ASSERT_EQ(h.Terminals(), 1);
  EXPECT_EQ(h.events.back().failure->code, FailureCode::kAuth);
}

TEST(CallTest, BadHeadInPiecesFailsWithoutWaitingForMore) {
  Harness h(OneAttemptPolicy());
  h.Start();
  h.Connected(1);
  h.Bytes("HTTP/1.1 200 OK\r\nA: b\r\n", 2);
  EXPECT_EQ(h.Terminals(), 0);
  h.Bytes("Not A Header\r\n", 3);  // no blank line yet, no EOF: rejected from what came
  ASSERT_EQ(h.Terminals(), 1);
  EXPECT_EQ(h.events.back().failure->code, FailureCode::kMalformedResponse);
  EXPECT_EQ(h.events.back().failure->phase, Phase::kResponseHeaders);
}

TEST(CallTest, AbandonEndsTheCallWithAnInternalFailure) {
  Harness h;
  h.Start();
  h.Connected(1);
  h.Bytes(SseOk(TruncatedChatBody()).substr(0, 200), 2);
  auto ended = h.Take(h.call.Abandon("boom", At(3)));
  EXPECT_TRUE(Has(ended, Kind::kDone));
  EXPECT_TRUE(Has(ended, Kind::kCloseConnection));
  ASSERT_EQ(h.Terminals(), 1);
  const Failure& failure = *h.events.back().failure;
  EXPECT_EQ(failure.code, FailureCode::kUnknown);
  EXPECT_FALSE(failure.retryable);
  EXPECT_NE(failure.message.find("boom"), std::string::npos);
  EXPECT_TRUE(h.Take(h.call.Abandon("again", At(4))).empty());
}

TEST(CallTest, NonStreamedJsonBody) {
  CallRequest request = ChatRequest();
  request.stream = false;
  Harness h(TestPolicy(), request);
  h.Start();
  h.Connected(1);
  const std::string body(fixtures::kChatBody);
  h.Bytes("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: " +
              std::to_string(body.size()) + "\r\n\r\n" + body,
          2);
  ASSERT_EQ(h.Terminals(), 1);
  const nlohmann::json committed = h.events.back().ToJson();
  EXPECT_EQ(committed["text"], "Checking.");
  EXPECT_EQ(committed["tool_calls"][0]["name"], "get_weather");
}

TEST(CallTest, RateLimitHonoursRetryAfterThenSucceeds) {
  auto storage = std::make_unique<MemoryRetryLogStorage>();
  MemoryRetryLogStorage* log_text = storage.get();
  RetryLog log(std::move(storage));
  Harness h(TestPolicy(), ChatRequest(), {.call_id = "c7", .seed = 1, .retry_log = &log});
  h.Start();
  auto failed = h.Exchange(
      JsonError(429, "retry-after: 2\r\n",
                R"({"error":{"type":"requests","code":"rate_limit_exceeded","message":"slow"}})"),
      10);
  const Action* wait = Find(failed, Kind::kWait);
  ASSERT_NE(wait, nullptr);
  EXPECT_TRUE(Has(failed, Kind::kCloseConnection));
  EXPECT_GE(wait->at, At(11) + milliseconds(2000));  // received at 11 ms; the hint is a floor
  auto interrupted = h.Of(EventType::kInterrupted);
  ASSERT_EQ(interrupted.size(), 1u);
  const nlohmann::json line = interrupted[0]->ToJson();
  EXPECT_EQ(line["response_id"], "c7-1");
  EXPECT_EQ(line["failure"]["code"], "RATE_LIMIT");
  EXPECT_EQ(line["failure"]["class"], "rate-limit");
  EXPECT_EQ(line["failure"]["status"], 429);
  EXPECT_EQ(line["failure"]["retry_after_ms"], 2000);
  EXPECT_EQ(line["delay_source"], "retry-after");
  EXPECT_GE(line["scheduled_retry_ms"].get<int>(), 2000);
  EXPECT_EQ(wait->at, At(11) + milliseconds(line["scheduled_retry_ms"].get<int>()));
  // The attempt was logged before it was sent, the retry before the wait.
  const RecoveredCall recovered = RecoverFromLog(log_text->contents, "c7");
  EXPECT_EQ(recovered.records, 2u);
  EXPECT_EQ(recovered.retries, 1);
  EXPECT_EQ(recovered.attempts_started, 1);

  // An early firing does not start the next attempt.
  auto early = h.Timer(At(1500));
  EXPECT_FALSE(Has(early, Kind::kConnect));
  auto retry = h.Timer(wait->at);
  ASSERT_TRUE(Has(retry, Kind::kConnect));
  h.Exchange(SseOk(fixtures::kChatText), 3000);
  ASSERT_EQ(h.Terminals(), 1);
  EXPECT_EQ(h.events.back().type, EventType::kCommitted);
  EXPECT_EQ(h.events.back().attempt, 2);
  EXPECT_EQ(h.events.back().committed->text, "Hello, world");
  EXPECT_EQ(h.Of(EventType::kStart).size(), 2u);
}

TEST(CallTest, RestartedCallContinuesFromTheRetryLog) {
  RecoveredCall recovered;
  recovered.retries = 2;
  recovered.last_scheduled_at = kWall0 + milliseconds(700);
  Harness h(TestPolicy(), ChatRequest(), {.call_id = "c1", .recovered = recovered});
  auto started = h.Start();
  const Action* wait = Find(started, Kind::kWait);
  ASSERT_NE(wait, nullptr);  // not before the logged retry time
  EXPECT_EQ(wait->at, At(700));
  EXPECT_FALSE(Has(started, Kind::kConnect));
  auto retry = h.Timer(At(700));
  ASSERT_TRUE(Has(retry, Kind::kConnect));
  EXPECT_EQ(h.events[0].attempt, 3);
  // Attempt 3 of 3: a retryable failure now ends the call.
  h.Exchange(SseOk(TruncatedChatBody()), 800);
  ASSERT_EQ(h.Terminals(), 1);
  EXPECT_EQ(h.events.back().type, EventType::kFailed);
  EXPECT_EQ(h.events.back().failure->code, FailureCode::kStreamTruncated);
}

// A restarted call whose log forbids another attempt ends at once, sending nothing.
void ExpectResumeRefused(const RecoveredCall& recovered, std::string_view why) {
  Harness h(TestPolicy(), ChatRequest(), {.call_id = "c1", .recovered = recovered});
  auto started = h.Start();
  EXPECT_FALSE(Has(started, Kind::kConnect)) << why;
  EXPECT_FALSE(Has(started, Kind::kWait)) << why;
  EXPECT_TRUE(Has(started, Kind::kDone)) << why;
  ASSERT_EQ(h.Terminals(), 1) << why;
  EXPECT_TRUE(h.Of(EventType::kStart).empty());
  const Failure& failure = *h.events.back().failure;
  EXPECT_EQ(failure.code, FailureCode::kRateLimit) << why;
  EXPECT_EQ(failure.failure_class, FailureClass::kRateLimit) << why;
  EXPECT_NE(failure.message.find(why), std::string::npos) << failure.message;
}

TEST(CallTest, RestartedCallWithItsAttemptsSpentSendsNothing) {
  RecoveredCall recovered;
  recovered.retries = 3;  // attempts 1..3 failed; max_attempts is 3
  recovered.last_scheduled_at = kWall0 + milliseconds(100);
  recovered.last_failure_code = FailureCode::kRateLimit;
  ExpectResumeRefused(recovered, "max_attempts is 3");
}

// Issue 30: a process killed while attempt 2 was in flight re-sent attempt 2 on restart, so a
// budget of 3 let 4 requests through. The attempt line written before the send makes it spent.
TEST(CallTest, RestartedCallDoesNotSendAgainTheAttemptInFlight) {
  RecoveredCall recovered;
  recovered.retries = 1;           // attempt 1 failed, its retry was scheduled
  recovered.attempts_started = 2;  // attempt 2 was sent, then the process died
  recovered.last_scheduled_at = kWall0 - milliseconds(50);
  Harness h(TestPolicy(), ChatRequest(), {.call_id = "c1", .recovered = recovered});
  auto started = h.Start();
  ASSERT_TRUE(Has(started, Kind::kConnect));  // its retry was due long ago: at once
  EXPECT_EQ(h.events[0].attempt, 3);
  h.Exchange(SseOk(TruncatedChatBody()), 100);
  ASSERT_EQ(h.Terminals(), 1);  // attempt 3 of 3 was the last
  EXPECT_EQ(h.Of(EventType::kStart).size(), 1u);

  recovered.retries = 2;
  recovered.attempts_started = 3;  // the last attempt of the budget was in flight
  Harness spent(TestPolicy(), ChatRequest(), {.call_id = "c1", .recovered = recovered});
  auto ended = spent.Start();
  EXPECT_FALSE(Has(ended, Kind::kConnect));
  ASSERT_EQ(spent.Terminals(), 1);
  const Failure& failure = *spent.events.back().failure;
  EXPECT_EQ(failure.code, FailureCode::kTransport);  // it ended with the process
  EXPECT_NE(failure.message.find("max_attempts is 3"), std::string::npos) << failure.message;
}

// The first attempt in flight when the process died is spent too.
TEST(CallTest, RestartedCallCountsAFirstAttemptInFlight) {
  RecoveredCall recovered;
  recovered.attempts_started = 1;
  Harness h(TestPolicy(), ChatRequest(), {.call_id = "c1", .recovered = recovered});
  ASSERT_TRUE(Has(h.Start(), Kind::kConnect));
  EXPECT_EQ(h.events[0].attempt, 2);
}

TEST(CallTest, RestartedCallDoesNotWaitLongerThanThePolicyWould) {
  RecoveredCall recovered;
  recovered.retries = 1;
  recovered.last_failure_code = FailureCode::kRateLimit;
  recovered.last_scheduled_at = kWall0 + std::chrono::hours(24 * 10);  // slept 10 days before
  ExpectResumeRefused(recovered, "longer than the policy waits");
  recovered.last_scheduled_at = std::chrono::system_clock::time_point::max();  // saturated log
  ExpectResumeRefused(recovered, "longer than the policy waits");
}

TEST(CallTest, RestartedCallHonoursTheTotalDeadline) {
  RetryPolicy policy = TestPolicy();
  policy.retry_after.cap = milliseconds(120'000);
  policy.timeouts.total = milliseconds(90'000);
  RecoveredCall recovered;
  recovered.retries = 1;
  recovered.last_failure_code = FailureCode::kRateLimit;
  recovered.last_scheduled_at = kWall0 + milliseconds(100'000);  // within the cap, past 90 s
  Harness h(policy, ChatRequest(), {.call_id = "c1", .recovered = recovered});
  auto started = h.Start();
  EXPECT_FALSE(Has(started, Kind::kWait));
  ASSERT_EQ(h.Terminals(), 1);
  EXPECT_NE(h.events.back().failure->message.find("deadline"), std::string::npos);
}

// A call id that is not UTF-8 reaches the retry log and the events' JSON without throwing.
TEST(CallTest, NonUtf8CallIdWithARetryLog) {
  auto storage = std::make_unique<MemoryRetryLogStorage>();
  MemoryRetryLogStorage* log_text = storage.get();
  RetryLog log(std::move(storage));
  Harness h(TestPolicy(), ChatRequest(), {.call_id = "\xff", .seed = 1, .retry_log = &log});
  h.Start();
  ASSERT_NO_THROW(h.Exchange(JsonError(503, "", "{}"), 1));
  ASSERT_EQ(h.Of(EventType::kInterrupted).size(), 1u);
  EXPECT_EQ(RecoverFromLog(log_text->contents, "\xff").retries, 1);
  for (const LifecycleEvent& event : h.events) {
    std::string line;
    ASSERT_NO_THROW(line = event.ToJsonLine());
    EXPECT_NE(line.find("\xEF\xBF\xBD-1"), std::string::npos) << line;
  }
}

TEST(CallEventTest, JsonLineReplacesInvalidUtf8) {
  LifecycleEvent event;
  event.type = EventType::kFailed;
  Failure failure;
  failure.message = "bad \xc3 body";
  failure.request_id = "req-\xff";
  event.failure = failure;
  std::string line;
  ASSERT_NO_THROW(line = event.ToJsonLine());
  const auto parsed = nlohmann::json::parse(line);
  EXPECT_EQ(parsed["failure"]["message"], "bad \xEF\xBF\xBD body");
  EXPECT_EQ(parsed["failure"]["request_id"], "req-\xEF\xBF\xBD");
}

TEST(CallTest, TruncatedStreamIsNeverCommittedNorSpliced) {
  Harness h;
  h.Start();
  auto failed = h.Exchange(SseOk(TruncatedChatBody()), 10);
  const Action* wait = Find(failed, Kind::kWait);
  ASSERT_NE(wait, nullptr);
  auto interrupted = h.Of(EventType::kInterrupted);
  ASSERT_EQ(interrupted.size(), 1u);
  EXPECT_EQ(interrupted[0]->failure->code, FailureCode::kStreamTruncated);
  EXPECT_EQ(interrupted[0]->failure->partial_output, PartialOutput::kUncommitted);
  EXPECT_GT(interrupted[0]->wasted.bytes, 0u);
  auto chunks = h.Of(EventType::kChunk);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0]->attempt, 1);
  EXPECT_EQ(*chunks[0]->text, "Hello");

  h.Timer(wait->at);
  h.Exchange(SseOk(fixtures::kChatText), 2000);
  ASSERT_EQ(h.Terminals(), 1);
  ASSERT_TRUE(h.TerminalIsLast());
  EXPECT_EQ(h.events.back().committed->text, "Hello, world");  // attempt 2's text exactly
  EXPECT_EQ(h.events.back().attempt, 2);
}

TEST(CallTest, NonRetryable400FailsAfterOneAttempt) {
  Harness h;
  h.Start();
  auto failed = h.Exchange(
      JsonError(400, "", R"({"error":{"type":"invalid_request_error","message":"bad"}})"), 10);
  EXPECT_FALSE(Has(failed, Kind::kWait));
  EXPECT_TRUE(Has(failed, Kind::kDone));
  ASSERT_EQ(h.Terminals(), 1);
  const nlohmann::json line = h.events.back().ToJson();
  EXPECT_EQ(line["type"], "response/failed");
  EXPECT_EQ(line["response_id"], "call-1");
  EXPECT_EQ(line["failure"]["code"], "INVALID_REQUEST");
  EXPECT_EQ(line["failure"]["retryable"], false);
  EXPECT_EQ(line["failure"]["phase"], "response-headers");
  EXPECT_EQ(h.Of(EventType::kStart).size(), 1u);
}

TEST(CallTest, IdleTimeoutOnAStallThenRetry) {
  Harness h;
  h.Start();
  h.Connected(10);
  const std::string response = SseOk(fixtures::kChatText);
  const std::string first = response.substr(0, response.find("\"Hello\""));  // mid event 2
  auto armed = h.Bytes(first, 100);
  ASSERT_NE(Find(armed, Kind::kArmTimer), nullptr);
  EXPECT_EQ(Find(armed, Kind::kArmTimer)->at, At(600));  // idle from the last meaningful event
  auto early = h.Timer(At(599));  // an early firing only re-arms the same deadline
  ASSERT_EQ(early.size(), 1u);
  EXPECT_EQ(early[0], (Action{.kind = Kind::kArmTimer, .bytes = {}, .at = At(600)}));
  auto fired = h.Timer(At(600));
  EXPECT_TRUE(Has(fired, Kind::kCloseConnection));
  ASSERT_TRUE(Has(fired, Kind::kWait));
  auto interrupted = h.Of(EventType::kInterrupted);
  ASSERT_EQ(interrupted.size(), 1u);
  EXPECT_EQ(interrupted[0]->failure->code, FailureCode::kTimeout);
  EXPECT_EQ(interrupted[0]->failure->phase, Phase::kStream);
  // Late bytes of the closed attempt are ignored.
  EXPECT_TRUE(h.Bytes("data: {}\n\n", 601).empty());
  h.Timer(Find(fired, Kind::kWait)->at);
  h.Exchange(SseOk(fixtures::kChatText), 2000);
  EXPECT_EQ(h.events.back().committed->text, "Hello, world");
}

TEST(CallTest, HeartbeatsDoNotResetTheIdleWatchdog) {
  for (bool heartbeats_count : {false, true}) {
    RetryPolicy policy = TestPolicy();
    policy.timeouts.heartbeats_reset_idle = heartbeats_count;
    Harness h(policy);
    h.Start();
    h.Connected(0);
    h.Bytes(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n"
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n",
        10);  // idle deadline 510
    auto after_ping = h.Bytes(": keep-alive\n\n", 400);
    const Action* armed = Find(after_ping, Kind::kArmTimer);
    if (heartbeats_count) {
      ASSERT_NE(armed, nullptr);
      EXPECT_EQ(armed->at, At(900));
    } else {
      EXPECT_EQ(armed, nullptr);
      auto fired = h.Timer(At(510));
      EXPECT_TRUE(Has(fired, Kind::kWait));
      EXPECT_EQ(h.Of(EventType::kInterrupted)[0]->failure->code, FailureCode::kTimeout);
    }
  }
}

TEST(CallTest, HeaderTimeoutAndConnectTimeout) {
  Harness h;
  h.Start();
  auto connect_timeout = h.Timer(At(1000));
  ASSERT_TRUE(Has(connect_timeout, Kind::kWait));
  EXPECT_EQ(h.Of(EventType::kInterrupted)[0]->failure->phase, Phase::kConnect);
  h.Timer(Find(connect_timeout, Kind::kWait)->at);
  const Time second_start = Find(connect_timeout, Kind::kWait)->at;
  h.Take(h.call.Connected(second_start));
  auto header_timeout = h.Timer(second_start + milliseconds(2000));
  ASSERT_TRUE(Has(header_timeout, Kind::kWait));
  EXPECT_EQ(h.Of(EventType::kInterrupted)[1]->failure->phase, Phase::kResponseHeaders);
  EXPECT_EQ(h.Of(EventType::kInterrupted)[1]->failure->code, FailureCode::kTimeout);
}

TEST(CallTest, TotalDeadlineEndsTheCall) {
  RetryPolicy policy = TestPolicy();
  policy.timeouts.idle = milliseconds(10'000);
  policy.timeouts.total = milliseconds(3000);
  Harness h(policy);
  h.Start();
  h.Connected(0);
  auto armed = h.Bytes(
      "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n",
      10);
  EXPECT_EQ(Find(armed, Kind::kArmTimer)->at, At(3000));  // the total deadline comes first
  auto fired = h.Timer(At(3000));
  EXPECT_TRUE(Has(fired, Kind::kDone));
  EXPECT_FALSE(Has(fired, Kind::kWait));
  ASSERT_EQ(h.Terminals(), 1);
  EXPECT_EQ(h.events.back().failure->code, FailureCode::kTimeout);
  EXPECT_EQ(h.events.back().failure->partial_output, PartialOutput::kUncommitted);
  EXPECT_FALSE(h.events.back().failure->retryable);
}

TEST(CallTest, DeadlineStopsRetriesThatCannotFinish) {
  RetryPolicy policy = TestPolicy();
  policy.timeouts.total = milliseconds(1500);
  policy.min_attempt_time = milliseconds(1000);
  Harness h(policy);
  h.Start();
  h.Exchange(JsonError(429, "retry-after: 1\r\n", R"({"error":{"type":"rate_limit_error"}})"), 10);
  ASSERT_EQ(h.Terminals(), 1);
  EXPECT_EQ(h.events.back().failure->code, FailureCode::kRateLimit);
}

// Cancel in each phase: connect, headers, stream, backoff.
TEST(CallTest, CancelInEveryPhaseEndsWithAborted) {
  struct Case {
    const char* name;
    int steps;  // how far to drive before cancelling
    Phase phase;
    bool has_response;
  };
  for (const Case& c :
       {Case{"connect", 0, Phase::kConnect, true},
        Case{"headers", 1, Phase::kResponseHeaders, true}, Case{"stream", 2, Phase::kStream, true},
        Case{"backoff", 3, Phase::kConnect, false}}) {
    SCOPED_TRACE(c.name);
    Harness h;
    h.Start();
    if (c.steps >= 1) h.Connected(1);
    const std::string response = SseOk(fixtures::kChatText);
    if (c.steps == 2) h.Bytes(response.substr(0, response.find(", world")), 2);
    if (c.steps == 3) h.Bytes(JsonError(503, "", "{}"), 2);
    auto cancelled = h.Cancel(5);
    EXPECT_TRUE(Has(cancelled, Kind::kDone));
    EXPECT_EQ(Has(cancelled, Kind::kCloseConnection), c.steps < 3);
    ASSERT_EQ(h.Terminals(), 1);
    const LifecycleEvent& last = h.events.back();
    EXPECT_EQ(last.failure->code, FailureCode::kAborted);
    EXPECT_EQ(last.failure->phase, c.phase);
    EXPECT_EQ(!last.response_id.empty(), c.has_response);
    // Nothing is sent, connected or emitted afterwards.
    const std::size_t events = h.events.size();
    EXPECT_TRUE(h.Timer(At(100'000)).empty());
    EXPECT_TRUE(h.Connected(6).empty());
    EXPECT_TRUE(h.Bytes(response, 7).empty());
    EXPECT_EQ(h.events.size(), events);
  }
}

TEST(CallTest, CancelBeforeStart) {
  Harness h;
  auto cancelled = h.Cancel(0);
  EXPECT_TRUE(Has(cancelled, Kind::kDone));
  EXPECT_FALSE(Has(cancelled, Kind::kConnect));
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].failure->code, FailureCode::kAborted);
  EXPECT_TRUE(h.Start().empty());
}

TEST(CallTest, RefusedConnectionIsRetried) {
  Harness h;
  h.Start();
  auto refused = h.Take(h.call.ConnectionFailed(TransportKind::kRefused, "refused", At(3)));
  ASSERT_TRUE(Has(refused, Kind::kWait));
  EXPECT_EQ(h.Of(EventType::kInterrupted)[0]->failure->code, FailureCode::kTransport);
  EXPECT_EQ(h.Of(EventType::kInterrupted)[0]->failure->phase, Phase::kConnect);
}

// Beast-style fail-Nth: cut a recorded successful response at every byte N, by a clean close or a
// reset; the call must end with exactly one terminal event, nothing after it, and commit only the
// whole answer.
struct Recording {
  Dialect dialect;
  std::string_view body;
};
constexpr Recording kRecordings[] = {{Dialect::kOpenAiChat, fixtures::kChatText},
                                     {Dialect::kAnthropicMessages, fixtures::kAnthropicText},
                                     {Dialect::kOpenAiResponses, fixtures::kResponsesText}};

void RunCutAt(std::size_t n, bool reset, int max_attempts, const Recording& recording) {
  const std::string response = SseOk(recording.body);
  RetryPolicy policy = TestPolicy();
  policy.max_attempts = max_attempts;
  CallRequest request = ChatRequest();
  request.dialect = recording.dialect;
  Harness h(policy, request);
  h.Start();
  h.Connected(1);
  h.Bytes(std::string_view(response).substr(0, n), 2);
  auto ended = reset ? h.Reset(3) : h.Closed(3);
  if (const Action* wait = Find(ended, Kind::kWait)) {
    auto retry = h.Timer(wait->at);
    ASSERT_TRUE(Has(retry, Kind::kConnect));
    h.Exchange(response, 5000);
  }
  ASSERT_TRUE(h.call.done());
  ASSERT_EQ(h.Terminals(), 1);
  ASSERT_TRUE(h.TerminalIsLast());
  const LifecycleEvent& last = h.events.back();
  if (last.type == EventType::kCommitted) {
    EXPECT_EQ(last.committed->text, "Hello, world");
  } else {
    EXPECT_EQ(max_attempts, 1);
    EXPECT_TRUE(last.failure->retryable);
  }
  if (max_attempts > 1) {
    EXPECT_EQ(last.type, EventType::kCommitted);
  }
}

TEST(CallFailNthTest, EveryCutPositionReachesOneTerminal) {
  for (const Recording& recording : kRecordings) {
    const std::size_t size = SseOk(recording.body).size();
    for (std::size_t n = 0; n <= size; ++n) {
      for (bool reset : {false, true}) {
        for (int max_attempts : {1, 2}) {
          SCOPED_TRACE(std::string(ToString(recording.dialect)) + " cut at " + std::to_string(n) +
                       " reset " + std::to_string(reset) + " attempts " +
                       std::to_string(max_attempts));
          RunCutAt(n, reset, max_attempts, recording);
          if (testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

// Delivers the first `n` bytes of the recorded response, then nothing: the armed timer (headers
// or idle watchdog) fires. The stalled attempt's connection must be closed, and the call must end
// in exactly one terminal event without committing partial output.
void RunStallAt(std::size_t n, int max_attempts, const Recording& recording) {
  const std::string response = SseOk(recording.body);
  RetryPolicy policy = TestPolicy();
  policy.max_attempts = max_attempts;
  CallRequest request = ChatRequest();
  request.dialect = recording.dialect;
  Harness h(policy, request);
  h.Start();
  h.Connected(1);
  h.Bytes(std::string_view(response).substr(0, n), 2);
  if (!h.call.done()) {
    // The timer the call armed last is the one that fires.
    auto armed = std::ranges::find_if(h.all_actions.rbegin(), h.all_actions.rend(),
                                      [](const Action& a) { return a.kind == Kind::kArmTimer; });
    ASSERT_NE(armed, h.all_actions.rend());
    const auto fired = h.Timer(armed->at);
    EXPECT_TRUE(Has(fired, Kind::kCloseConnection));
    if (const Action* wait = Find(fired, Kind::kWait)) {
      EXPECT_EQ(h.Of(EventType::kInterrupted).at(0)->failure->code, FailureCode::kTimeout);
      auto retry = h.Timer(wait->at);
      ASSERT_TRUE(Has(retry, Kind::kConnect));
      h.Exchange(response, 8000);
    }
  }
  ASSERT_TRUE(h.call.done());
  ASSERT_EQ(h.Terminals(), 1);
  ASSERT_TRUE(h.TerminalIsLast());
  const LifecycleEvent& last = h.events.back();
  if (last.type == EventType::kCommitted) {
    EXPECT_EQ(last.committed->text, "Hello, world");
  } else {
    EXPECT_EQ(max_attempts, 1);
    EXPECT_EQ(last.failure->code, FailureCode::kTimeout);
    EXPECT_TRUE(last.failure->retryable);
  }
  if (max_attempts > 1) {
    EXPECT_EQ(last.type, EventType::kCommitted);
  }
}

TEST(CallFailNthTest, StallAtEveryBytePositionReachesOneTerminal) {
  for (const Recording& recording : kRecordings) {
    const std::size_t size = SseOk(recording.body).size();
    for (std::size_t n = 0; n <= size; ++n) {
      for (int max_attempts : {1, 2}) {
        SCOPED_TRACE(std::string(ToString(recording.dialect)) + " stall at " + std::to_string(n) +
                     " attempts " + std::to_string(max_attempts));
        RunStallAt(n, max_attempts, recording);
        if (testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

TEST(CallFailNthTest, StallAtEveryEventBoundary) {
  const std::string response = SseOk(fixtures::kChatText);
  for (std::size_t n = 0; n < response.size(); n = response.find("\n\n", n + 1)) {
    SCOPED_TRACE("stall at " + std::to_string(n));
    Harness h;
    h.Start();
    h.Connected(1);
    h.Bytes(std::string_view(response).substr(0, n), 2);
    if (h.call.done()) continue;
    auto fired = h.Timer(At(5000));
    const Action* wait = Find(fired, Kind::kWait);
    ASSERT_NE(wait, nullptr);
    EXPECT_EQ(h.Of(EventType::kInterrupted)[0]->failure->code, FailureCode::kTimeout);
    h.Timer(wait->at);
    h.Exchange(response, 8000);
    ASSERT_EQ(h.Terminals(), 1);
    EXPECT_EQ(h.events.back().committed->text, "Hello, world");
    if (n == std::string::npos) break;
  }
}

}  // namespace
}  // namespace faultline::ref
