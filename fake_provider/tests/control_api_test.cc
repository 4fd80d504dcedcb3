// The control API over HTTP: session CRUD, journal contents, reset, stats, errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "fake_provider/tests/server_test_support.h"

namespace faultline::provider::server_testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

constexpr std::string_view kScenarioYaml = R"(faultline: 1
name: control/limited
description: A 429 then a stream.
dialect: openai-chat
responses:
  - status: 429
    error: rate_limit
    retry_after: {seconds: 2}
  - content: {text: "Hello, world", chunk_size: 4}
)";

json ScenarioObject() {
  return {{"faultline", 1},
          {"name", "control/object"},
          {"description", "A short Anthropic stream."},
          {"dialect", "anthropic-messages"},
          {"responses", json::array({{{"content", {{"text", "Hi"}}}}})}};
}

class ControlApiTest : public ::testing::Test {
 protected:
  std::optional<HttpResponse> Call(std::string_view method, std::string_view target,
                                   std::string_view body = {}) {
    return Fetch(server_.port(), method, target, body);
  }
  std::optional<HttpResponse> Create(const json& body) {
    return Call("POST", "/_faultline/sessions", body.dump());
  }
  TestServer server_;
};

TEST_F(ControlApiTest, HealthAndEmptyList) {
  auto health = Call("GET", "/_faultline/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->Header("content-type"), "application/json");
  EXPECT_EQ(health->Json()["status"], "ok");
  auto list = Call("GET", "/_faultline/sessions");
  ASSERT_TRUE(list);
  EXPECT_EQ(list->Json()["sessions"], json::array());
}

TEST_F(ControlApiTest, CreatesFromYamlTextAndFromAnObject) {
  auto from_text = Create({{"scenario_text", kScenarioYaml}, {"seed", 7}});
  ASSERT_TRUE(from_text);
  ASSERT_EQ(from_text->status, 201) << from_text->body;
  const json session = from_text->Json();
  EXPECT_EQ(session["id"], "control/limited");
  EXPECT_EQ(session["base_url"], server_.base_url() + "/s/control/limited");
  EXPECT_EQ(session["sdk_base_url"], server_.base_url() + "/s/control/limited/v1");
  EXPECT_EQ(session["dialect"], "openai-chat");
  EXPECT_EQ(session["seed"], 7);
  EXPECT_EQ(session["attempts"], 0);

  auto from_object = Create({{"scenario", ScenarioObject()}, {"id", "mine"}});
  ASSERT_TRUE(from_object);
  ASSERT_EQ(from_object->status, 201) << from_object->body;
  EXPECT_EQ(from_object->Json()["id"], "mine");
  EXPECT_EQ(from_object->Json()["scenario"], "control/object");
  EXPECT_EQ(from_object->Json()["sdk_base_url"], server_.base_url() + "/s/mine");

  // "scenario" may also carry the text itself.
  auto text_in_scenario = Create({{"scenario", kScenarioYaml}, {"id", "again"}});
  ASSERT_TRUE(text_in_scenario);
  EXPECT_EQ(text_in_scenario->status, 201);

  auto list = Call("GET", "/_faultline/sessions");
  ASSERT_TRUE(list);
  EXPECT_EQ(list->Json()["sessions"].size(), 3u);
  EXPECT_EQ(server_.server().Sessions().size(), 3u);
}

TEST_F(ControlApiTest, RejectsDuplicatesAndInvalidInput) {
  ASSERT_EQ(Create({{"scenario_text", kScenarioYaml}})->status, 201);
  auto duplicate = Create({{"scenario_text", kScenarioYaml}});
  ASSERT_TRUE(duplicate);
  EXPECT_EQ(duplicate->status, 409);

  auto bad_yaml = Create(
      {{"scenario_text", "faultline: 1\nname: x\ndescription: d\ndialect: nope\nresponses: []\n"}});
  ASSERT_TRUE(bad_yaml);
  EXPECT_EQ(bad_yaml->status, 400);
  EXPECT_EQ(bad_yaml->Json()["error"]["type"], "invalid_scenario");
  EXPECT_THAT(bad_yaml->Json()["error"]["message"].get<std::string>(), HasSubstr("<control-api>:"));

  auto not_json = Call("POST", "/_faultline/sessions", "{nope");
  ASSERT_TRUE(not_json);
  EXPECT_EQ(not_json->status, 400);

  // The scenario's YAML posted as the body itself: the answer says how to wrap it.
  auto bare_yaml = Call("POST", "/_faultline/sessions", kScenarioYaml);
  ASSERT_TRUE(bare_yaml);
  EXPECT_EQ(bare_yaml->status, 400);
  EXPECT_THAT(bare_yaml->Json()["error"]["message"].get<std::string>(),
              HasSubstr(R"({"scenario_text": "<YAML>"})"));

  auto unknown_key = Create({{"scenario_text", kScenarioYaml}, {"ids", "typo"}});
  ASSERT_TRUE(unknown_key);
  EXPECT_EQ(unknown_key->status, 400);
  EXPECT_THAT(unknown_key->body, HasSubstr("ids"));

  auto bad_id = Create({{"scenario_text", kScenarioYaml}, {"id", "a/v1/b"}});
  ASSERT_TRUE(bad_id);
  EXPECT_EQ(bad_id->status, 400);

  auto both = Create({{"scenario_text", kScenarioYaml}, {"scenario", ScenarioObject()}});
  ASSERT_TRUE(both);
  EXPECT_EQ(both->status, 400);
}

TEST_F(ControlApiTest, JournalShowsWhatHappened) {
  ASSERT_EQ(Create({{"scenario_text", kScenarioYaml}})->status, 201);
  const std::string endpoint = "/s/control/limited/v1/chat/completions";
  auto first = Call("POST", endpoint, kChatBody);
  auto second = Call("POST", endpoint, kChatBody);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->status, 429);
  EXPECT_EQ(second->status, 200);

  json journal;
  ASSERT_TRUE(WaitFor([&] {
    journal = FetchJournal(server_.port(), "control/limited");
    return journal["entries"].size() == 2 && journal["entries"][1]["end"] != "in_progress";
  }));
  EXPECT_EQ(journal["session"], "control/limited");
  EXPECT_EQ(journal["dropped"], 0);
  const json& entry = journal["entries"][0];
  EXPECT_EQ(entry["index"], 0);
  EXPECT_EQ(entry["attempt"], 1);
  EXPECT_EQ(entry["method"], "POST");
  EXPECT_EQ(entry["target"], endpoint);
  EXPECT_EQ(entry["body"], kChatBody);
  EXPECT_EQ(entry["status"], 429);
  EXPECT_FALSE(entry["plan"].get<std::string>().empty());
  EXPECT_EQ(entry["end"], "completed");
  EXPECT_GT(entry["bytes_sent"].get<int>(), 0);
  ASSERT_EQ(entry["writes"].size(), 1u);
  EXPECT_EQ(entry["writes"][0]["size"], entry["bytes_sent"]);
  EXPECT_GE(entry["ended_us"].get<long>(), entry["arrived_us"].get<long>());
  bool saw_host = false;
  for (const auto& header : entry["headers"]) saw_host |= header[0] == "Host";
  EXPECT_TRUE(saw_host);
  EXPECT_EQ(journal["entries"][1]["attempt"], 2);
  EXPECT_GE(journal["entries"][1]["arrived_us"].get<long>(), entry["arrived_us"].get<long>());

  auto since = Call("GET", "/_faultline/sessions/control/limited/journal?since=1");
  ASSERT_TRUE(since);
  EXPECT_EQ(since->Json()["entries"].size(), 1u);

  auto session = Call("GET", "/_faultline/sessions/control/limited");
  ASSERT_TRUE(session);
  EXPECT_EQ(session->Json()["attempts"], 2);
  // Percent-encoded ids work too.
  auto encoded = Call("GET", "/_faultline/sessions/control%2Flimited");
  ASSERT_TRUE(encoded);
  EXPECT_EQ(encoded->status, 200);
}

TEST_F(ControlApiTest, ResetForgetsAttemptsAndJournal) {
  ASSERT_EQ(Create({{"scenario_text", kScenarioYaml}})->status, 201);
  const std::string endpoint = "/s/control/limited/v1/chat/completions";
  ASSERT_EQ(Call("POST", endpoint, kChatBody)->status, 429);
  auto reset = Call("POST", "/_faultline/sessions/control/limited/reset");
  ASSERT_TRUE(reset);
  EXPECT_EQ(reset->status, 200);
  EXPECT_EQ(reset->Json()["attempts"], 0);
  EXPECT_EQ(FetchJournal(server_.port(), "control/limited")["entries"].size(), 0u);
  // The script starts over: the first attempt is the 429 again.
  EXPECT_EQ(Call("POST", endpoint, kChatBody)->status, 429);
  EXPECT_EQ(FetchJournal(server_.port(), "control/limited")["entries"][0]["index"], 0);
}

TEST_F(ControlApiTest, DeleteRemovesTheSession) {
  ASSERT_EQ(Create({{"scenario_text", kScenarioYaml}})->status, 201);
  auto deleted = Call("DELETE", "/_faultline/sessions/control/limited");
  ASSERT_TRUE(deleted);
  EXPECT_EQ(deleted->status, 200);
  EXPECT_EQ(Call("GET", "/_faultline/sessions/control/limited")->status, 404);
  EXPECT_EQ(Call("DELETE", "/_faultline/sessions/control/limited")->status, 404);
  EXPECT_EQ(Call("POST", "/s/control/limited/v1/chat/completions", kChatBody)->status, 404);
  // The id is free again.
  EXPECT_EQ(Create({{"scenario_text", kScenarioYaml}})->status, 201);
}

TEST_F(ControlApiTest, WrongMethodsAndUnknownPaths) {
  auto put = Call("PUT", "/_faultline/sessions");
  ASSERT_TRUE(put);
  EXPECT_EQ(put->status, 405);
  EXPECT_EQ(put->Header("allow"), "GET, POST");
  EXPECT_EQ(Call("POST", "/_faultline/health")->status, 405);
  auto unknown = Call("GET", "/_faultline/nope");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  EXPECT_THAT(unknown->body, HasSubstr("/_faultline/sessions"));
  EXPECT_EQ(Call("GET", "/_faultline/sessions/nobody/journal")->status, 404);
  EXPECT_EQ(Call("POST", "/_faultline/sessions/nobody/reset")->status, 404);
}

TEST_F(ControlApiTest, StatsCountRequestsAndConnections) {
  ASSERT_EQ(Create({{"scenario_text", kScenarioYaml}})->status, 201);
  ASSERT_TRUE(Call("POST", "/s/control/limited/v1/chat/completions", kChatBody));
  ASSERT_TRUE(Call("GET", "/elsewhere"));
  json stats;
  ASSERT_TRUE(WaitFor([&] {
    stats = FetchStats(server_.port());
    return stats["connections_open"] == 1;  // only the stats request itself
  }));
  EXPECT_EQ(stats["session_requests"], 1);
  EXPECT_EQ(stats["not_found"], 1);
  EXPECT_GE(stats["control_requests"].get<int>(), 2);
  EXPECT_GE(stats["requests"].get<int>(), 4);
  EXPECT_GE(stats["connections_total"].get<int>(), 4);
  EXPECT_GT(stats["bytes_sent"].get<int>(), 0);
  EXPECT_GT(stats["bytes_received"].get<int>(), 0);
  EXPECT_EQ(stats["sessions"], 1);
  EXPECT_TRUE(stats["timer_lateness_us"].contains("p99"));
}

}  // namespace
}  // namespace faultline::provider::server_testing
