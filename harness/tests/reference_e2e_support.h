// Shared by the end-to-end tests of the reference client against the real fake provider
// (reference_e2e_*_test.cc): a fast test policy, the fixture that runs one call against an
// in-process server, and helpers that check both the lifecycle events and the server's journal.
//
// Timing: lower bounds on waits are checked against journal times (exact up to a few ms); upper
// bounds are generous so the tests hold on a loaded 2-core machine. Every wait is bounded.
#pragma once

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

#include "fake_provider/server/server.h"
#include "fake_provider/tests/server_test_support.h"
#include "reference_impl/call.h"
#include "reference_impl/driver.h"
#include "scenarios/loader.h"

namespace faultline::ref::e2e {

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
inline RetryPolicy FastPolicy() {
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

// Every dialect, for the tests that hold in each: the fake provider's writer and the reference
// client's decoder, written apart, agree over a real socket.
inline const std::span<const Dialect> kAllDialects = faultline::ref::AllDialects();

inline std::string_view DialectName(Dialect dialect) { return faultline::ref::ToString(dialect); }

inline std::string RequestBody(Dialect dialect) {
  switch (dialect) {
    case Dialect::kOpenAiChat:
      return R"({"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Say hello."}]})";
    case Dialect::kAnthropicMessages:
      return R"({"model":"claude-sonnet-4-5","max_tokens":256,"stream":true,"messages":[{"role":"user","content":"Say hello."}]})";
    case Dialect::kOpenAiResponses:
      return R"({"model":"gpt-4o-mini","stream":true,"input":"Say hello."})";
    case Dialect::kOllama:
      return R"({"model":"llama3.2","stream":true,"messages":[{"role":"user","content":"Say hello."}]})";
    case Dialect::kGemini:
      return R"({"model":"gemini-2.5-flash","stream":true,"contents":[{"role":"user","parts":[{"text":"Say hello."}]}]})";
    case Dialect::kBedrockConverse:
      return R"({"model":"anthropic.claude-3-5-haiku-20241022-v1:0","stream":true,"messages":[{"role":"user","content":[{"text":"Say hello."}]}]})";
  }
  return {};
}

// What one call produced: its events (with arrival times), the journal of its session.
struct Outcome {
  std::vector<LifecycleEvent> events;
  std::vector<Clock::time_point> at;
  int done = 0;
  bool finished_in_time = false;
  std::string body;  // the request body the client sent, as it went on the wire
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
                        .idempotency_key = std::nullopt,
                        .extra_headers = {},
                        .routes = {}};
    outcome.body = ToWire(dialect, "", request.body).body;  // what goes on the wire
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

  // The scenario's `dialect:` line (openai-chat when it has none).
  static Dialect DialectOf(std::string_view yaml) {
    constexpr std::string_view kKey = "dialect: ";
    const std::size_t at = yaml.find(kKey);
    if (at == std::string_view::npos) return Dialect::kOpenAiChat;
    const std::string_view rest = yaml.substr(at + kKey.size());
    return faultline::ref::ParseDialect(rest.substr(0, rest.find('\n')))
        .value_or(Dialect::kOpenAiChat);
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

inline milliseconds Ms(provider::Duration d) { return duration_cast<milliseconds>(d); }

// ---------------------------------------------------------------------------------------------
// Helpers for the fault families.

// A scenario in `dialect` whose `responses:` list is `responses` (already indented by 2).
inline std::string Scenario(Dialect dialect, std::string_view responses,
                            std::string_view top = {}) {
  return "faultline: 1\nname: e2e/fault\ndescription: e2e\ndialect: " +
         std::string(DialectName(dialect)) + "\n" + std::string(top) + "responses:\n" +
         std::string(responses);
}

constexpr std::string_view kSecond = "the second attempt, committed";
const std::string kSecondResponse =
    "  - content: {text: \"" + std::string(kSecond) + "\", chunk_size: 5}\n";

// The exchange `index` of the journal, or a failure.
inline const JournalEntry* Entry(const Outcome& outcome, std::size_t index) {
  if (index >= outcome.journal.size()) return nullptr;
  return &outcome.journal[index];
}

// The call retried once after a failure with `code` and committed the second attempt's text.
inline void ExpectRecoveredOnce(const Outcome& outcome, FailureCode code) {
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
inline void ExpectFailedOnce(const Outcome& outcome, FailureCode code, int status) {
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

}  // namespace faultline::ref::e2e
