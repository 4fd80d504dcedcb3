// The `request:` section's needs (reasoning, image, strict_tools, stop, prefill): what each
// reads as, and every error with its position and path, including a need a dialect the request
// goes out in cannot express.
#include <gtest/gtest.h>

#include <string>

#include "fmt/format.h"
#include "scenarios/loader.h"
#include "scenarios/tests/load_error_cases.h"

namespace faultline::scenario {
namespace {

// Line 4 holds the dialect, line 5 the request, line 6 on the answers (or `routes`).
std::string Doc(std::string_view dialect, std::string_view request,
                std::string_view rest = "responses: [{}]\n") {
  return fmt::format("faultline: 1\nname: request/x\ndescription: d\ndialect: {}\nrequest: {}\n{}",
                     dialect, request, rest);
}

TEST(LoaderRequestTest, ReadsEveryNeed) {
  auto scenario = ParseScenario(
      Doc("openai-chat",
          "{reasoning: true, image: true, strict_tools: true, stop: [END, \"\\n\\n\"], "
          "prefill: \"Sure,\"}"),
      "ok.yaml");
  ASSERT_TRUE(scenario.has_value()) << scenario.error().ToString();
  const RequestSpec& request = scenario->request;
  EXPECT_TRUE(request.reasoning);
  EXPECT_TRUE(request.image);
  EXPECT_TRUE(request.strict_tools);
  EXPECT_TRUE(request.tools);  // strict tools offer the tool
  EXPECT_EQ(request.stop, (std::vector<std::string>{"END", "\n\n"}));
  EXPECT_EQ(request.prefill, "Sure,");

  auto plain = ParseScenario(Doc("openai-responses", "{tools: true}"), "ok.yaml");
  ASSERT_TRUE(plain.has_value()) << plain.error().ToString();
  RequestSpec tools_only;
  tools_only.tools = true;
  EXPECT_EQ(plain->request, tools_only);
}

TEST(LoaderRequestTest, CallsMaySpreadOut) {
  auto spaced = ParseScenario(Doc("openai-chat", "{calls: 3, call_interval: 2500ms}"), "ok.yaml");
  ASSERT_TRUE(spaced.has_value()) << spaced.error().ToString();
  EXPECT_EQ(spaced->request.calls, 3);
  EXPECT_EQ(spaced->request.call_interval, std::chrono::milliseconds(2500));
  auto at_once = ParseScenario(Doc("openai-chat", "{calls: 3}"), "ok.yaml");
  ASSERT_TRUE(at_once.has_value()) << at_once.error().ToString();
  EXPECT_EQ(at_once->request.call_interval, Duration{0});
  // The last of 61 calls a minute apart starts exactly an hour in: still allowed.
  EXPECT_TRUE(ParseScenario(Doc("openai-chat", "{calls: 61, call_interval: 1m}"), "ok.yaml"));
}

TEST(LoaderRequestTest, ErrorsNameThePlace) {
  const std::string responses_route =
      "routes:\n  - id: chat\n  - id: resp\n    dialect: openai-responses\n";
  const std::vector<ErrorCase> cases = {
      {"stop in openai-responses", Doc("openai-responses", "{stop: [END]}"), 5, 17, "request.stop",
       "the request cannot be sent in openai-responses (the scenario's dialect): the OpenAI "
       "Responses API has no stop sequences"},
      {"stop to a responses route", Doc("openai-chat", "{stop: [END]}", responses_route), 5, 17,
       "request.stop",
       "the request cannot be sent in openai-responses (route 'resp'): the OpenAI Responses API "
       "has no stop sequences"},
      {"empty stop list", Doc("openai-chat", "{stop: []}"), 5, 17, "request.stop",
       "expected 1 to 4 stop sequences, got 0"},
      {"five stop sequences", Doc("openai-chat", "{stop: [a, b, c, d, e]}"), 5, 17, "request.stop",
       "expected 1 to 4 stop sequences, got 5"},
      {"empty stop sequence", Doc("openai-chat", "{stop: [a, \"\"]}"), 5, 21, "request.stop[1]",
       "expected a non-empty stop sequence"},
      {"strict without tools", Doc("openai-chat", "{tools: false, strict_tools: true}"), 5, 18,
       "request.tools",
       "'strict_tools: true' marks the offered tool strict; it needs 'tools: true' (or leave "
       "'tools' out)"},
      {"empty prefill", Doc("anthropic-messages", "{prefill: \"\"}"), 5, 20, "request.prefill",
       "expected the assistant's first words, got an empty string (leave 'prefill' out for "
       "none)"},
      {"prefill ending in a blank", Doc("anthropic-messages", "{prefill: \"Sure \"}"), 5, 20,
       "request.prefill",
       "the request cannot be sent in anthropic-messages (the scenario's dialect): Anthropic "
       "refuses a prefill that ends in whitespace"},
      {"thinking with a small max_tokens",
       Doc("anthropic-messages", "{reasoning: true, max_tokens: 1024}"), 5, 22, "request.reasoning",
       "the request cannot be sent in anthropic-messages (the scenario's dialect): Anthropic's "
       "extended thinking needs max_tokens above its smallest budget_tokens (1024), got "
       "max_tokens 1024"},
      {"thinking with a prefill",
       Doc("openai-chat", "{reasoning: true, max_tokens: 4000, prefill: Sure}",
           "routes:\n  - id: a\n    dialect: anthropic-messages\n"),
       5, 55, "request.prefill",
       "the request cannot be sent in anthropic-messages (route 'a'): Anthropic's extended "
       "thinking cannot be combined with a prefilled answer"},
      {"image not a flag", Doc("openai-chat", "{image: png}"), 5, 18, "request.image",
       "expected true or false, got the string \"png\""},
      {"calls spaced out without calls", Doc("openai-chat", "{call_interval: 2s}"), 5, 26,
       "request.call_interval",
       "'call_interval' spaces several calls; it needs 'calls' of 2 or more"},
      {"calls spread over more than an hour", Doc("openai-chat", "{calls: 100, call_interval: 1m}"),
       5, 38, "request.call_interval",
       "100 calls 60000 ms apart would spread over more than 3600 s, the most a scenario's calls "
       "may"},
  };
  ExpectErrors(cases);
}

}  // namespace
}  // namespace faultline::scenario
