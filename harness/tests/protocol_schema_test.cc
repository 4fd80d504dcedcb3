// The adapter protocol's JSON Schema (harness/schema/adapter-protocol.schema.json) is the one home
// of the lines' shapes, and the runner applies it (protocol::ParseLine):
//  - it compiles, names every event the runner reads and the reference client's taxonomy;
//  - what the reference client writes (`faultline call --adapter`) and what the runner writes
//    (the call line, cancel) validate against it;
//  - each mistake of the shared cases (kit/tests/protocol_cases.json, which both kits and the
//    jsonschema package also read) is refused with a message naming the event and the field;
//  - a line nested deep is refused from its bytes, cheaply, before it is parsed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "harness/trace/embedded_schemas.h"
#include "harness/trace/json_schema.h"
#include "harness/trace/protocol.h"
#include "harness/worlds/request_body.h"
#include "reference_impl/call_event.h"
#include "reference_impl/policy_json.h"
#include "reference_impl/retry_after.h"
#include "reference_impl/route_json.h"
#include "scenarios/loader.h"

namespace faultline::harness {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

json Cases() {
  std::ifstream file(std::filesystem::path(FAULTLINE_SOURCE_DIR) /
                     "harness/adapters/kit/tests/protocol_cases.json");
  return json::parse(file, nullptr, false);
}

std::vector<std::string> Messages(const std::vector<SchemaViolation>& violations) {
  std::vector<std::string> out;
  for (const SchemaViolation& each : violations) out.push_back(each.ToString());
  return out;
}

TEST(ProtocolSchemaTest, TheShippedFileIsTheEmbeddedOneAndCompiles) {
  std::ifstream file(std::filesystem::path(FAULTLINE_SOURCE_DIR) /
                     "harness/schema/adapter-protocol.schema.json");
  const std::string text{std::istreambuf_iterator<char>(file), {}};
  EXPECT_EQ(text, EmbeddedSchema("protocol"));
  const json document = json::parse(text);
  EXPECT_EQ(document["$schema"], "https://json-schema.org/draft/2020-12/schema");
  EXPECT_EQ(document["$id"], "urn:faultline:schema:adapter-protocol:1");
  ASSERT_TRUE(JsonSchema::Compile(document).has_value());
  for (const auto& [name, def] : document["$defs"].items()) {
    if (!def.contains("type") || def["type"] != "object") continue;
    EXPECT_EQ(def.value("additionalProperties", json(true)), json(false)) << name;
  }
}

TEST(ProtocolSchemaTest, NamesEveryEventTheRunnerReads) {
  const json names = json::parse(EmbeddedSchema("protocol"))["properties"]["type"]["enum"];
  std::vector<std::string> kinds;
  for (auto kind : {EventKind::kHello, EventKind::kStart, EventKind::kChunk,
                    EventKind::kInterrupted, EventKind::kCommitted, EventKind::kFailed}) {
    kinds.emplace_back(ToString(kind));
    EXPECT_TRUE(protocol::Schema().Has(JsonSchema::DefinitionPointer(ToString(kind))))
        << kinds.back();
  }
  // adapter/reset answers a reset line: the process reader takes it, no run's trace holds it.
  kinds.emplace_back("adapter/reset");
  EXPECT_EQ(names.get<std::vector<std::string>>(), kinds);
  for (const char* line : {"call", "cancel", "reset", "adapter/reset"}) {
    EXPECT_TRUE(protocol::Schema().Has(JsonSchema::DefinitionPointer(line))) << line;
  }
}

TEST(ProtocolSchemaTest, ItsTaxonomyIsTheReferenceClients) {
  const json defs = json::parse(EmbeddedSchema("protocol"))["$defs"];
  const json& failure = defs["failure"]["properties"];
  const auto names = [](const json& node) { return node["enum"].get<std::vector<std::string>>(); };
  for (const std::string& name : names(failure["class"])) {
    EXPECT_TRUE(ref::ParseFailureClass(name)) << name;
  }
  for (const std::string& name : names(failure["code"])) {
    EXPECT_TRUE(ref::ParseFailureCode(name)) << name;
  }
  for (const std::string& name : names(defs["delay_source"])) {
    EXPECT_TRUE(ref::ParseDelaySource(name)) << name;
  }
  EXPECT_EQ(names(failure["class"]).size(),
            static_cast<std::size_t>(ref::FailureClass::kUnknown) + 1);
  EXPECT_EQ(names(failure["code"]).size(),
            static_cast<std::size_t>(ref::FailureCode::kUnknown) + 1);
  EXPECT_THAT(
      names(failure["phase"]),
      ::testing::ElementsAre(ToString(ref::Phase::kConnect), ToString(ref::Phase::kResponseHeaders),
                             ToString(ref::Phase::kStream), ToString(ref::Phase::kFinish)));
}

ref::Failure SomeFailure() {
  ref::Failure failure;
  failure.code = ref::FailureCode::kRateLimit;
  failure.failure_class = ref::FailureClass::kRateLimit;
  failure.phase = ref::Phase::kResponseHeaders;
  failure.retryable = true;
  failure.status = 429;
  failure.retry_after = std::chrono::milliseconds(1500);
  failure.request_id = "req_1";
  failure.message = "HTTP 429";
  failure.route_id = "primary";
  return failure;
}

// Every event the reference client writes, with every optional part it may carry.
std::vector<ref::LifecycleEvent> ReferenceEvents() {
  using ref::EventType;
  std::vector<ref::LifecycleEvent> events(7);
  events[0].type = EventType::kHello;
  events[0].name = "faultline-reference";
  events[0].version = "0.1.0";
  events[0].policy = ref::PolicyToHelloJson(ref::RetryPolicy{});
  for (std::size_t i = 1; i < events.size(); ++i) {
    events[i].response_id = "attempt-1";
    events[i].attempt = 1;
    events[i].route_id = "primary";
  }
  events[2].type = EventType::kChunk;
  events[2].text = "Hel";
  events[3].type = EventType::kChunk;
  events[3].tool_call = ref::ToolCallDelta{0, "call_1", "get_weather", "{\"ci"};
  events[4].type = EventType::kInterrupted;
  events[4].failure = SomeFailure();
  events[4].delay_source = ref::DelaySource::kFailover;
  events[4].next_route_id = "secondary";
  events[5].type = EventType::kCommitted;
  events[5].committed = ref::Completed{.text = "Hello",
                                       .reasoning = "thought",
                                       .tool_calls = {{"call_1", "get_weather", "{}"}},
                                       .finish_reason = "stop",
                                       .usage = {std::nullopt, 3}};
  events[6].type = EventType::kFailed;
  events[6].failure = SomeFailure();
  events[6].give_up = "all-routes-down";
  events[6].route_failures = {SomeFailure(), SomeFailure()};
  return events;
}

TEST(ProtocolSchemaTest, WhatTheReferenceClientWritesValidates) {
  for (const ref::LifecycleEvent& event : ReferenceEvents()) {
    const std::string line = event.ToJsonLine();
    const auto parsed = protocol::ParseLine(line);
    ASSERT_TRUE(parsed.has_value()) << line << "\n" << parsed.error().message;
    // The typed event writes the same line back, and that validates too.
    const std::string again = EventToJson(*parsed).dump();
    EXPECT_TRUE(protocol::ParseLine(again).has_value()) << again;
    EXPECT_EQ(json::parse(again), json::parse(line));
  }
}

TEST(ProtocolSchemaTest, WhatTheRunnerWritesValidates) {
  protocol::CallLine call;
  call.base_url = "http://127.0.0.1:4000/s/run1/x";
  call.api_key = "sk-faultline-test";
  call.dialect = "openai-chat";
  call.request = {{"model", "gpt-4o-mini"}, {"stream", true}};
  call.scenario = "x";
  call.seed = 18446744073709551615ULL;
  call.policy = json{{"max_attempts", 2}, {"timeouts", {{"total_ms", 4500}}}};
  call.limits =
      json{{"max_attempts", "unbounded"}, {"timeouts", {{"total_ms", 4500}, {"idle_ms", nullptr}}}};
  call.routes.push_back({.id = "primary",
                         .base_url = call.base_url + "/route/primary",
                         .dialect = "anthropic-messages",
                         .model = "claude",
                         .request = call.request,
                         .capabilities = ref::CapabilitiesToJson(ref::RouteCapabilities{}),
                         .group = "anthropic"});
  const JsonSchema& schema = protocol::Schema();
  EXPECT_THAT(Messages(schema.Validate(ToJson(call), JsonSchema::DefinitionPointer("call"))),
              ::testing::ElementsAre());
  EXPECT_THAT(
      Messages(schema.Validate(json{{"type", "cancel"}}, JsonSchema::DefinitionPointer("cancel"))),
      ::testing::ElementsAre());
  json unknown = ToJson(call);
  unknown["routes"][0]["capabilities"]["teleport"] = true;
  EXPECT_THAT(Messages(schema.Validate(unknown, JsonSchema::DefinitionPointer("call"))),
              ::testing::ElementsAre("at routes[0].capabilities: unknown field \"teleport\""));
}

// Every scenario of the catalogue gives the call line its own request, routes, policy and limits.
TEST(ProtocolSchemaTest, TheCallLineOfEveryCatalogueScenarioValidates) {
  const auto catalogue = scenario::LoadBuiltinCatalog();
  ASSERT_TRUE(catalogue.has_value());
  int with_limits = 0;
  for (const scenario::Scenario& each : *catalogue) {
    const CallTarget target = PrimaryTarget(each);
    protocol::CallLine call{.call = 2,
                            .base_url = "http://127.0.0.1:1/s/x",
                            .api_key = "sk-faultline-test",
                            .dialect = std::string(scenario::ToString(target.dialect)),
                            .request = target.body,
                            .scenario = each.name,
                            .seed = 7,
                            .policy = std::nullopt,
                            .limits = protocol::CallLimits(each),
                            .routes = RouteLines(each, [](std::string_view id) {
                              return "http://127.0.0.1:1/s/x/route/" + std::string(id);
                            })};
    if (each.policy) call.policy = json::parse(each.policy->json);
    with_limits += call.limits.has_value();
    EXPECT_THAT(
        Messages(protocol::Schema().Validate(ToJson(call), JsonSchema::DefinitionPointer("call"))),
        ::testing::ElementsAre())
        << each.name;
  }
  EXPECT_GT(with_limits, 0);
}

TEST(ProtocolSchemaTest, EverySharedCaseHasTheRunnersVerdictAndMessage) {
  const json cases = Cases();
  ASSERT_TRUE(cases.is_object());
  for (const json& line : cases["valid"]) {
    const auto parsed = protocol::ParseLine(line.dump());
    EXPECT_TRUE(parsed.has_value()) << line.dump() << "\n" << parsed.error().message;
    EXPECT_THAT(Messages(protocol::Schema().Validate(line)), ::testing::ElementsAre())
        << "the root";
  }
  ASSERT_GE(cases["invalid"].size(), 30u);
  for (const json& each : cases["invalid"]) {
    const std::string line = each["line"].dump();
    const auto parsed = protocol::ParseLine(line);
    ASSERT_FALSE(parsed.has_value()) << line;
    EXPECT_EQ(parsed.error().kind, "not-protocol") << line;
    EXPECT_EQ(parsed.error().message, each["message"].get<std::string>()) << line;
    EXPECT_THAT(parsed.error().message, HasSubstr(each["field"].get<std::string>()));
    // The root of the schema (if/then on `type`) says the same, for editors and validators.
    EXPECT_FALSE(protocol::Schema().Validate(each["line"]).empty()) << line;
  }
}

TEST(ProtocolSchemaTest, TheRunnerIsStricterThanJsonAboutIntegersAndNumbers) {
  // 1.0 is not an integer literal; 1e400 is not a number JSON can carry.
  auto parsed = protocol::ParseLine(R"({"type":"response/start","response_id":"a","attempt":1.0})");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().message,
            "response/start: at attempt: expected an integer, got the number 1.0");
  parsed = protocol::ParseLine(
      R"({"type":"response/start","response_id":"a","attempt":1,"at_ms":1e400})");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().kind, "not-json") << "the parser refuses a number out of range";
  // Integers are compared exactly over the whole uint64 range.
  parsed = protocol::ParseLine(
      R"({"type":"response/failed","failure":{"code":"TRANSPORT","class":"transport",)"
      R"("phase":"connect","retryable":true,"partial_output":"none","message":"x"},)"
      R"("wasted":{"bytes":9223372036854775808,"approx_tokens":0}})");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_THAT(parsed.error().message,
              HasSubstr("at wasted.bytes: expected at most 9223372036854775807"));
}

TEST(ProtocolSchemaTest, SeveralMistakesAreNamedUpToThree) {
  const auto parsed = protocol::ParseLine(
      R"({"type":"response/failed","failure":{"class":"oops","code":"X"},"aa":1,"zz":2})");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_THAT(parsed.error().message,
              ::testing::StartsWith("response/failed: unknown field \"aa\"; at failure: missing "
                                    "required fields \"phase\", \"retryable\", "
                                    "\"partial_output\", \"message\"; at failure.class: \"oops\" "
                                    "is not one of \"auth\""));
}

TEST(ProtocolSchemaTest, AResetAnswerOutsideAResetIsAProtocolError) {
  const auto parsed = protocol::ParseLine(R"({"type":"adapter/reset"})");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().message, "adapter/reset answers a reset line, and none was sent");
}

TEST(ProtocolSchemaTest, AnUnknownEventTypeListsTheEvents) {
  const auto parsed = protocol::ParseLine(R"({"type":"response/begin"})");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().message,
            "unknown event type: \"response/begin\" is not one of \"adapter/hello\", "
            "\"response/start\", \"assistant/chunk\", \"response/interrupted\", "
            "\"response/committed\", \"response/failed\", \"adapter/reset\"");
  EXPECT_FALSE(protocol::ParseLine(R"({"type":"call"})").has_value()) << "not an adapter line";
}

std::string Nested(std::string_view head, int depth, std::string_view tail) {
  std::string line(head);
  line.append(static_cast<std::size_t>(depth), '[');
  line.append(static_cast<std::size_t>(depth), ']');
  line.append(tail);
  return line;
}

TEST(ProtocolSchemaTest, ALineNestedDeepIsRefusedFromItsBytes) {
  const auto started = std::chrono::steady_clock::now();
  for (const std::string& line :
       {Nested(R"({"type":"response/committed","text":"x","zz":)", 100'000, "}"),
        Nested(R"({"type":"adapter/hello","name":"t","version":"1","policy":{"a":)", 100'000, "}}"),
        std::string(1'000'000, '{')}) {
    const auto parsed = protocol::ParseLine(line);
    ASSERT_FALSE(parsed.has_value());
    EXPECT_EQ(parsed.error().kind, "not-protocol");
    EXPECT_THAT(parsed.error().message, HasSubstr("nest deeper than 64 levels"));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
  // At the bound the line is parsed and judged by the schema; brackets in strings do not count.
  const auto at_bound = protocol::ParseLine(
      Nested(R"({"type":"adapter/hello","name":"t","version":"1","policy":{"a":)", 62, "}}"));
  EXPECT_TRUE(at_bound.has_value()) << at_bound.error().message;
  const std::string brackets(5000, '[');
  EXPECT_TRUE(
      protocol::ParseLine(R"({"type":"response/committed","text":")" + brackets + R"(\"[[[["})")
          .has_value());
}

// ---- the validator itself -------------------------------------------------------------------

TEST(JsonSchemaTest, RefusesKeywordsItDoesNotCheckAndRefsToNothing) {
  auto pattern = JsonSchema::Compile(json::parse(R"({"type":"string","pattern":"^a"})"));
  ASSERT_FALSE(pattern.has_value());
  EXPECT_THAT(pattern.error(), HasSubstr("/pattern: keyword \"pattern\" is not supported"));
  auto dangling = JsonSchema::Compile(json::parse(R"({"$ref":"#/$defs/nothing"})"));
  ASSERT_FALSE(dangling.has_value());
  EXPECT_THAT(dangling.error(), HasSubstr("#/$defs/nothing"));
  EXPECT_FALSE(JsonSchema::Compile(json::parse(R"({"type":"integr"})")).has_value());
}

TEST(JsonSchemaTest, AnyOfIfThenElseItemsAndBooleanSchemas) {
  auto schema = JsonSchema::Compile(json::parse(R"({
    "type": "array",
    "items": {
      "anyOf": [{"type": "string"}, {"type": "integer", "minimum": 10}],
      "if": {"type": "string"}, "then": {"minLength": 2}, "else": {"maximum": 20}
    },
    "$defs": {"never": false}
  })"));
  ASSERT_TRUE(schema.has_value()) << schema.error();
  EXPECT_THAT(Messages(schema->Validate(json::parse(R"(["ab", 15])"))), ::testing::ElementsAre());
  EXPECT_THAT(Messages(schema->Validate(json::parse(R"(["a", 5, 30, true])"), "", 10)),
              ::testing::ElementsAre(
                  "at [0]: expected at least 2 characters",
                  "at [1]: matches none of: expected a string, got the number 5 | expected at "
                  "least 10, got 5",
                  "at [2]: expected at most 20, got 30",
                  "at [3]: matches none of: expected a string, got true | expected an integer, "
                  "got true"));
  EXPECT_THAT(Messages(schema->Validate(json(1), "/$defs/never")),
              ::testing::ElementsAre("no value is allowed here"));
  EXPECT_THAT(Messages(schema->Validate(json(1), "/$defs/nowhere")),
              ::testing::ElementsAre("the schema has nothing at \"/$defs/nowhere\""));
}

TEST(JsonSchemaTest, ARecursiveSchemaOverADeepValueStopsAtItsDepthLimit) {
  auto schema = JsonSchema::Compile(json::parse(
      R"({"$ref":"#/$defs/a","$defs":{"a":{"type":"array","items":{"$ref":"#/$defs/a"}}}})"));
  ASSERT_TRUE(schema.has_value()) << schema.error();
  json deep = json::array();
  for (int i = 0; i < 1000; ++i) deep = json::array({std::move(deep)});
  const auto violations = schema->Validate(deep);
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_THAT(violations.front().message, HasSubstr("nests deeper than 128 levels"));
}

}  // namespace
}  // namespace faultline::harness
