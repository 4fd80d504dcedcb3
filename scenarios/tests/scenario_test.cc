#include "scenarios/scenario.h"

#include <gtest/gtest.h>

namespace faultline::scenario {
namespace {

TEST(DialectTest, NamesRoundTrip) {
  EXPECT_EQ(ToString(Dialect::kOpenAiChat), "openai-chat");
  EXPECT_EQ(ToString(Dialect::kAnthropicMessages), "anthropic-messages");
  EXPECT_EQ(ToString(Dialect::kOpenAiResponses), "openai-responses");
  for (Dialect dialect :
       {Dialect::kOpenAiChat, Dialect::kAnthropicMessages, Dialect::kOpenAiResponses}) {
    EXPECT_EQ(ParseDialect(ToString(dialect)), dialect);
  }
  EXPECT_EQ(ParseDialect("openai"), std::nullopt);
  EXPECT_EQ(ParseDialect("OpenAI-Chat"), std::nullopt);
  EXPECT_EQ(ParseDialect(""), std::nullopt);
}

struct KindRow {
  ErrorKind kind;
  std::string_view name;
  int status;
};

constexpr KindRow kKinds[] = {
    {ErrorKind::kInvalidRequest, "invalid_request", 400},
    {ErrorKind::kContextWindow, "context_window", 400},
    {ErrorKind::kAuth, "auth", 401},
    {ErrorKind::kPermission, "permission", 403},
    {ErrorKind::kNotFound, "not_found", 404},
    {ErrorKind::kRequestTimeout, "request_timeout", 408},
    {ErrorKind::kConflict, "conflict", 409},
    {ErrorKind::kTooLarge, "too_large", 413},
    {ErrorKind::kUnprocessable, "unprocessable", 422},
    {ErrorKind::kRateLimit, "rate_limit", 429},
    {ErrorKind::kQuota, "quota", 429},
    {ErrorKind::kServer, "server", 500},
    {ErrorKind::kBadGateway, "bad_gateway", 502},
    {ErrorKind::kUnavailable, "unavailable", 503},
    {ErrorKind::kGatewayTimeout, "gateway_timeout", 504},
    {ErrorKind::kOverloaded, "overloaded", 529},
};

TEST(ErrorKindTest, NamesAndDefaultStatuses) {
  for (const KindRow& row : kKinds) {
    EXPECT_EQ(ToString(row.kind), row.name);
    EXPECT_EQ(ParseErrorKind(row.name), row.kind) << row.name;
    EXPECT_EQ(DefaultStatus(row.kind), row.status) << row.name;
  }
  EXPECT_EQ(ParseErrorKind("rate-limit"), std::nullopt);
  EXPECT_EQ(ParseErrorKind("RATE_LIMIT"), std::nullopt);
}

TEST(ErrorKindTest, DefaultKindOfAStatus) {
  EXPECT_EQ(DefaultErrorKind(400), ErrorKind::kInvalidRequest);  // not context_window
  EXPECT_EQ(DefaultErrorKind(401), ErrorKind::kAuth);
  EXPECT_EQ(DefaultErrorKind(403), ErrorKind::kPermission);
  EXPECT_EQ(DefaultErrorKind(404), ErrorKind::kNotFound);
  EXPECT_EQ(DefaultErrorKind(408), ErrorKind::kRequestTimeout);
  EXPECT_EQ(DefaultErrorKind(409), ErrorKind::kConflict);
  EXPECT_EQ(DefaultErrorKind(413), ErrorKind::kTooLarge);
  EXPECT_EQ(DefaultErrorKind(422), ErrorKind::kUnprocessable);
  EXPECT_EQ(DefaultErrorKind(429), ErrorKind::kRateLimit);  // not quota
  EXPECT_EQ(DefaultErrorKind(500), ErrorKind::kServer);
  EXPECT_EQ(DefaultErrorKind(502), ErrorKind::kBadGateway);
  EXPECT_EQ(DefaultErrorKind(503), ErrorKind::kUnavailable);
  EXPECT_EQ(DefaultErrorKind(504), ErrorKind::kGatewayTimeout);
  EXPECT_EQ(DefaultErrorKind(529), ErrorKind::kOverloaded);
  EXPECT_EQ(DefaultErrorKind(418), ErrorKind::kInvalidRequest);
  EXPECT_EQ(DefaultErrorKind(451), ErrorKind::kInvalidRequest);
  EXPECT_EQ(DefaultErrorKind(501), ErrorKind::kServer);
  EXPECT_EQ(DefaultErrorKind(599), ErrorKind::kServer);
}

Scenario WithRepeats(std::initializer_list<int> repeats) {
  Scenario scenario;
  int status = 500;
  for (int repeat : repeats) {
    ResponseSpec response;
    response.repeat = repeat;
    response.status = status++;  // tells the entries apart
    scenario.responses.push_back(response);
  }
  return scenario;
}

TEST(ResponseForAttemptTest, OneEntryPerAttemptThenTheLastAgain) {
  const Scenario scenario = WithRepeats({1, 1, 1});
  EXPECT_EQ(ResponseForAttempt(scenario, 1).status, 500);
  EXPECT_EQ(ResponseForAttempt(scenario, 2).status, 501);
  EXPECT_EQ(ResponseForAttempt(scenario, 3).status, 502);
  EXPECT_EQ(ResponseForAttempt(scenario, 4).status, 502);
  EXPECT_EQ(ResponseForAttempt(scenario, 100).status, 502);
}

TEST(ResponseForAttemptTest, RepeatCoversConsecutiveAttempts) {
  const Scenario scenario = WithRepeats({3, 2, 1});
  const int expected[] = {500, 500, 500, 501, 501, 502, 502};
  for (int attempt = 1; attempt <= 7; ++attempt) {
    EXPECT_EQ(ResponseForAttempt(scenario, attempt).status, expected[attempt - 1]) << attempt;
  }
}

TEST(ResponseForAttemptTest, RepeatZeroAnswersEverythingThatFollows) {
  const Scenario scenario = WithRepeats({2, 0});
  EXPECT_EQ(ResponseForAttempt(scenario, 2).status, 500);
  EXPECT_EQ(ResponseForAttempt(scenario, 3).status, 501);
  EXPECT_EQ(ResponseForAttempt(scenario, 1'000'000).status, 501);
}

TEST(ResponseForAttemptTest, HugeRepeatsDoNotOverflow) {
  const Scenario scenario = WithRepeats({2'000'000'000, 2'000'000'000, 1});
  EXPECT_EQ(ResponseForAttempt(scenario, 2'000'000'000).status, 500);
  EXPECT_EQ(ResponseForAttempt(scenario, 2'000'000'001).status, 501);
  EXPECT_EQ(ResponseForAttempt(scenario, 2'147'483'647).status, 501);
}

TEST(ResponseForAttemptTest, EmptyScenarioGetsADefaultResponse) {
  const Scenario scenario;
  EXPECT_EQ(ResponseForAttempt(scenario, 1), ResponseSpec{});
}

}  // namespace
}  // namespace faultline::scenario
