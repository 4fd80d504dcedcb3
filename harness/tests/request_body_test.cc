// The request bodies the subjects are asked to send: for every dialect and every need the
// scenario's request can name, the body carries it in the dialect's wire shape, and the client's
// own oracle (ref::NeedsOf) reads back exactly that need.
#include "harness/worlds/request_body.h"

#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <string>

#include "fmt/format.h"
#include "reference_impl/route_registry.h"

namespace faultline::harness {
namespace {

using nlohmann::json;
using scenario::Dialect;

const std::span<const Dialect> kDialects = scenario::AllDialects();

struct Need {
  std::string_view name;
  std::function<void(scenario::RequestSpec&)> ask;  // what the scenario's request says
  std::function<void(ref::RequestNeeds&)> expect;   // what NeedsOf must then report
};

const Need kNeeds[] = {
    {"tools", [](auto& r) { r.tools = true; }, [](auto& n) { n.tools = true; }},
    {"strict_tools", [](auto& r) { r.tools = r.strict_tools = true; },
     [](auto& n) { n.tools = n.strict_tools = true; }},
    {"reasoning", [](auto& r) { r.reasoning = true; }, [](auto& n) { n.reasoning = true; }},
    {"image", [](auto& r) { r.image = true; }, [](auto& n) { n.images = true; }},
    {"stop", [](auto& r) { r.stop = {"END"}; }, [](auto& n) { n.stop_sequences = true; }},
    {"prefill", [](auto& r) { r.prefill = "Sure,"; }, [](auto& n) { n.prefill = true; }},
};

// Anthropic's thinking needs max_tokens above its budget; the others take the default.
scenario::RequestSpec Base() {
  scenario::RequestSpec request;
  request.max_tokens = 2048;
  return request;
}

ref::RequestNeeds NeedsWithoutSize(const json& body) {
  ref::RequestNeeds needs = ref::NeedsOf(body.dump());
  needs.context_tokens = 0;
  return needs;
}

TEST(RequestBodyTest, NeedsOfReadsBackExactlyTheNeedAsked) {
  for (Dialect dialect : kDialects) {
    EXPECT_EQ(NeedsWithoutSize(RequestBody(dialect, Base())), ref::RequestNeeds{})
        << scenario::ToString(dialect);
    for (const Need& need : kNeeds) {
      // The loader refuses stop sequences in OpenAI Responses (it has none).
      if (need.name == "stop" && dialect == Dialect::kOpenAiResponses) continue;
      // The loader refuses strict tools where tools have no strict mode.
      if (need.name == "strict_tools" &&
          (dialect == Dialect::kGemini || dialect == Dialect::kOllama ||
           dialect == Dialect::kBedrockConverse)) {
        continue;
      }
      SCOPED_TRACE(fmt::format("{} in {}", need.name, scenario::ToString(dialect)));
      scenario::RequestSpec request = Base();
      need.ask(request);
      ref::RequestNeeds expected;
      need.expect(expected);
      EXPECT_EQ(NeedsWithoutSize(RequestBody(dialect, request)), expected)
          << RequestBody(dialect, request).dump();
    }
  }
}

TEST(RequestBodyTest, TheContextWindowIsNeededThroughMaxTokens) {
  for (Dialect dialect : kDialects) {
    scenario::RequestSpec request = Base();
    request.max_tokens = 100'000;
    const json body = RequestBody(dialect, request);
    const ref::RequestNeeds needs = ref::NeedsOf(body.dump());
    EXPECT_EQ(needs.context_tokens, 100'000 + static_cast<int>(body.dump().size() / 4))
        << scenario::ToString(dialect);
    EXPECT_EQ(ref::MissingCapability({.context_window = 64'000}, needs), "context_window");
    EXPECT_EQ(ref::MissingCapability({.context_window = 128'000}, needs), "");
  }
}

TEST(RequestBodyTest, EachDialectsWireShape) {
  scenario::RequestSpec request = Base();
  request.reasoning = request.image = request.tools = request.strict_tools = true;
  request.prefill = "Sure,";
  request.stop = {"END"};
  const json chat = RequestBody(Dialect::kOpenAiChat, request);
  EXPECT_EQ(chat["reasoning_effort"], "medium");
  EXPECT_EQ(chat["stop"], json::array({"END"}));
  EXPECT_EQ(chat["tools"][0]["function"]["strict"], true);
  EXPECT_EQ(chat["messages"][0]["content"][1]["type"], "image_url");
  EXPECT_TRUE(chat["messages"][0]["content"][1]["image_url"]["url"].get<std::string>().starts_with(
      "data:image/png;base64,"));
  EXPECT_EQ(chat["messages"][1], (json{{"role", "assistant"}, {"content", "Sure,"}}));

  request.prefill.clear();  // Anthropic's thinking refuses a prefill (the loader says so)
  const json anthropic = RequestBody(Dialect::kAnthropicMessages, request);
  EXPECT_EQ(anthropic["thinking"], (json{{"type", "enabled"}, {"budget_tokens", 1024}}));
  EXPECT_EQ(anthropic["stop_sequences"], json::array({"END"}));
  EXPECT_EQ(anthropic["tools"][0]["strict"], true);
  EXPECT_EQ(anthropic["tools"][0]["input_schema"]["additionalProperties"], false);
  EXPECT_EQ(anthropic["messages"][0]["content"][1]["source"]["type"], "base64");
  EXPECT_EQ(anthropic["messages"][0]["content"][1]["source"]["media_type"], "image/png");
  EXPECT_EQ(anthropic["messages"].size(), 1u);

  request.stop.clear();
  request.prefill = "Sure,";
  const json responses = RequestBody(Dialect::kOpenAiResponses, request);
  EXPECT_EQ(responses["reasoning"], (json{{"effort", "medium"}}));
  EXPECT_FALSE(responses.contains("stop"));
  EXPECT_EQ(responses["tools"][0]["strict"], true);
  EXPECT_EQ(responses["input"][0]["type"], "message");
  EXPECT_EQ(responses["input"][0]["content"][0]["type"], "input_text");
  EXPECT_EQ(responses["input"][0]["content"][1]["type"], "input_image");
  EXPECT_EQ(responses["input"][1]["role"], "assistant");
}

TEST(RequestBodyTest, APlainRequestKeepsItsShape) {
  const scenario::RequestSpec plain;
  EXPECT_EQ(RequestBody(Dialect::kOpenAiResponses, plain)["input"], "Say hello.");
  EXPECT_EQ(RequestBody(Dialect::kOpenAiChat, plain).dump(),
            R"({"max_tokens":256,"messages":[{"content":"Say hello.","role":"user"}],)"
            R"("model":"gpt-4o-mini","stream":true})");
  EXPECT_FALSE(RequestBody(Dialect::kAnthropicMessages, plain).contains("thinking"));
}

}  // namespace
}  // namespace faultline::harness
