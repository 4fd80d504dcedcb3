// The rule file: what it means, and every mistake reported at its line, column and field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scenarios/proxy_rules.h"

namespace faultline::scenario {
namespace {

using ::testing::HasSubstr;

TEST(FaultRulesTest, ReadsRulesAsScenarioResponseEntries) {
  auto rules = ParseProxyRules(R"(faultline: 1
description: what the proxy does to the app's calls
rules:
  - name: throttle
    match: {path: /v1/chat/completions, dialect: openai-chat, requests: [2, 4]}
    probability: 0.25
    response: {status: 429, retry_after: {http_date: 3s, form: rfc850}}
  - match: {dialect: [ollama, bedrock-converse], requests: 7}
    response:
      headers_delay: 1.5s
      content:
        faults: [{after_event: 2, stall: 10s}]
        end: {kind: reset, after_event: 3, at_byte: 10}
)",
                               "rules.yaml");
  ASSERT_TRUE(rules.has_value()) << rules.error().ToString();
  ASSERT_EQ(rules->rules.size(), 2u);
  const ProxyRule& throttle = rules->rules[0];
  EXPECT_EQ(throttle.name, "throttle");
  EXPECT_EQ(throttle.line, 4);
  EXPECT_EQ(throttle.match.path, "/v1/chat/completions");
  EXPECT_EQ(throttle.match.dialects, std::vector<Dialect>{Dialect::kOpenAiChat});
  EXPECT_EQ(throttle.match.requests, (std::vector<std::uint64_t>{2, 4}));
  EXPECT_DOUBLE_EQ(throttle.probability, 0.25);
  EXPECT_TRUE(throttle.answers);
  EXPECT_EQ(throttle.response.status, 429);
  EXPECT_EQ(throttle.response.error->kind, ErrorKind::kRateLimit);
  EXPECT_EQ(throttle.response.retry_after->form, RetryAfter::Form::kRfc850);
  const ProxyRule& live = rules->rules[1];
  EXPECT_EQ(live.name, "rule-2");
  EXPECT_FALSE(live.answers);
  EXPECT_EQ(live.match.requests, std::vector<std::uint64_t>{7});
  EXPECT_EQ(live.response.headers_delay, std::chrono::milliseconds(1500));
  ASSERT_EQ(live.response.content.faults.size(), 1u);
  EXPECT_EQ(live.response.content.faults[0].kind, EventFault::Kind::kStall);
  EXPECT_EQ(live.response.content.end.kind, Termination::Kind::kReset);
  EXPECT_EQ(live.response.content.end.at_byte, 10);
}

TEST(FaultRulesTest, JsonIsYamlToo) {
  auto rules = ParseProxyRules(
      R"({"faultline": 1, "rules": [{"response": {"connection": "reset_before_headers"}}]})",
      "rules.json");
  ASSERT_TRUE(rules.has_value()) << rules.error().ToString();
  EXPECT_TRUE(rules->rules[0].answers);
}

struct BadRules {
  std::string text;
  int line;
  int column;
  std::string path;
  std::string message;  // a part of it
};

void PrintTo(const BadRules& bad, std::ostream* out) { *out << bad.path; }

class FaultRulesErrorTest : public ::testing::TestWithParam<BadRules> {};

TEST_P(FaultRulesErrorTest, SaysWhereAndWhat) {
  auto rules = ParseProxyRules(GetParam().text, "rules.yaml");
  ASSERT_FALSE(rules.has_value());
  const LoadError& error = rules.error();
  EXPECT_EQ(error.file, "rules.yaml");
  EXPECT_EQ(error.line, GetParam().line) << error.ToString();
  EXPECT_EQ(error.column, GetParam().column) << error.ToString();
  EXPECT_EQ(error.path, GetParam().path) << error.ToString();
  EXPECT_THAT(error.message, HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Rules, FaultRulesErrorTest,
    ::testing::Values(
        BadRules{"rules: []\n", 1, 1, "", "missing required key 'faultline'"},
        BadRules{"faultline: 1\nrule: []\n", 2, 1, "rule", "rules"},  // unknown, did you mean
        BadRules{"faultline: 1\nrules:\n  - respons: {status: 429}\n", 3, 5, "rules[0].respons",
                 "response"},
        BadRules{"faultline: 1\nrules:\n  - probability: 1.5\n    response: {status: 429}\n", 3, 18,
                 "rules[0].probability", "1"},
        BadRules{"faultline: 1\nrules:\n  - match: {dialect: openai}\n    response: {}\n", 3, 22,
                 "rules[0].match.dialect", "openai-chat"},
        BadRules{"faultline: 1\nrules:\n  - match: {path: v1/chat}\n    response: {}\n", 3, 19,
                 "rules[0].match.path", "request path"},
        BadRules{"faultline: 1\nrules:\n  - match: {requests: [0]}\n    response: {}\n", 3, 24,
                 "rules[0].match.requests[0]", ""},
        BadRules{"faultline: 1\nrules:\n  - response: {status: 200}\n", 3, 16,
                 "rules[0].response.status", "leave 'status' out"},
        BadRules{"faultline: 1\nrules:\n  - response: {repeat: 2, status: 429}\n", 3, 16,
                 "rules[0].response.repeat", "no meaning in a rule"},
        BadRules{"faultline: 1\nrules:\n  - response: {body: hi}\n", 3, 16,
                 "rules[0].response.body", "the upstream's to write"},
        BadRules{"faultline: 1\nrules:\n  - response: {content: {text: hi}}\n", 3, 26,
                 "rules[0].response.content.text", "only faults and end"},
        BadRules{"faultline: 1\nrules:\n  - match: {dialect: openai-responses}\n    response:\n"
                 "      content: {faults: [{after_event: 1, inject: sequence_gap}]}\n",
                 5, 51, "rules[0].response.content.faults[0].inject", "renumber"},
        BadRules{"faultline: 1\nrules:\n  - match: {dialect: anthropic-messages}\n    response:\n"
                 "      content: {faults: [{after_event: 1, stall: 5s, heartbeat: {every: 1s}}]}\n",
                 5, 54, "rules[0].response.content.faults[0].heartbeat", "no heartbeats"},
        // Valid in one dialect only: the rule must say which.
        BadRules{"faultline: 1\nrules:\n  - response:\n      content: {faults: [{after_event: 1, "
                 "inject: provider_error}]}\n",
                 4, 51, "rules[0].response.content.faults[0].inject", "narrows it"},
        BadRules{"faultline: 1\nrules:\n  - match: {dialect: [openai-responses, gemini]}\n"
                 "    response:\n      content: {faults: [{after_event: 1, "
                 "inject: provider_error, shape: flat}]}\n",
                 5, 67, "rules[0].response.content.faults[0].shape", "this scenario is gemini"},
        BadRules{"faultline: 1\nrules:\n  - response: {status: 429, content: {end: reset}}\n", 3,
                 29, "rules[0].response.content", "2xx"},
        BadRules{"faultline: 1\nrules:\n  - response: {content: {end: {kind: close, wait: 1s}}}\n",
                 3, 45, "rules[0].response.content.end.wait", "stall"},
        BadRules{"faultline: 1\nrules: [\n", 3, 1, "", "invalid YAML"},
        BadRules{"", 1, 1, "", "empty"}));

}  // namespace
}  // namespace faultline::scenario
