// A scenario with routes on the real server: one endpoint per route (its own port when it
// refuses), the route id on every response, and one journal that names each request's route.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "fake_provider/tests/server_test_support.h"

namespace faultline::provider::server_testing {
namespace {

using ::testing::HasSubstr;

constexpr std::string_view kRoutes = R"(faultline: 1
name: routes/wire
description: A primary that refuses, a flaky secondary, a healthy tertiary.
dialect: openai-chat
routes:
  - id: primary
    health: {down: always, fail: refused}
  - id: secondary
    priority: 1
    model: second-model
    health: {fail: {status: 429, error: rate_limit, retry_after: {seconds: 7}}, down: always}
  - id: tertiary
    priority: 2
    dialect: anthropic-messages
)";

// "http://127.0.0.1:PORT/s/..." -> PORT and the path.
std::pair<std::uint16_t, std::string> Split(const std::string& base_url) {
  const std::string prefix = "http://127.0.0.1:";
  const std::size_t slash = base_url.find('/', prefix.size());
  return {static_cast<std::uint16_t>(std::stoi(base_url.substr(prefix.size(), slash))),
          base_url.substr(slash)};
}

TEST(ServerRoutesTest, EveryRouteIsItsOwnEndpointAndNamesItself) {
  TestServer server;
  auto added = server.server().AddSession(ScenarioFromYaml(kRoutes), "wire");
  ASSERT_TRUE(added) << added.error();
  ASSERT_EQ(added->routes.size(), 3u);
  EXPECT_EQ(added->routes[0].id, "primary");
  EXPECT_EQ(added->routes[1].base_url, server.base_url() + "/s/wire/route/secondary");

  // The refusing route listens on a port of its own, and nothing answers there.
  const auto [primary_port, primary_path] = Split(added->routes[0].base_url);
  EXPECT_NE(primary_port, server.port());
  EXPECT_EQ(primary_path, "/s/wire/route/primary");
  RawClient refused;
  EXPECT_EQ(refused.Connect(primary_port), ECONNREFUSED);

  auto limited =
      Fetch(server.port(), "POST", "/s/wire/route/secondary/v1/chat/completions", kChatBody);
  ASSERT_TRUE(limited);
  EXPECT_EQ(limited->status, 429);
  EXPECT_EQ(limited->Header("retry-after"), "7");
  EXPECT_EQ(limited->Header("x-faultline-route"), "secondary");

  auto answered = Fetch(server.port(), "POST", "/s/wire/route/tertiary/v1/messages",
                        R"({"model":"m","stream":false,"max_tokens":5,"messages":[]})");
  ASSERT_TRUE(answered);
  EXPECT_EQ(answered->status, 200);
  EXPECT_EQ(answered->Header("x-faultline-route"), "tertiary");

  // The session's own base URL serves no route.
  auto parent = Fetch(server.port(), "POST", "/s/wire/v1/chat/completions", kChatBody);
  ASSERT_TRUE(parent);
  EXPECT_EQ(parent->status, 404);
  EXPECT_THAT(parent->body, HasSubstr("routes"));

  // One journal, in arrival order, each entry with its route and the route's own attempts.
  std::vector<JournalEntry> journal;
  ASSERT_TRUE(WaitFor([&] {
    journal = server.server().JournalOf("wire").value_or(std::vector<JournalEntry>{});
    return journal.size() == 3 && journal[2].end != EndKind::kInProgress;
  }));
  EXPECT_EQ(journal[0].route, "secondary");
  EXPECT_EQ(journal[0].attempt, 1);
  EXPECT_EQ(journal[1].route, "tertiary");
  EXPECT_EQ(journal[1].attempt, 1);
  EXPECT_EQ(journal[2].route, "");
  EXPECT_EQ(journal[2].attempt, 0);
  EXPECT_LE(journal[0].arrived, journal[1].arrived);
  const auto json = FetchJournal(server.port(), "wire");
  EXPECT_EQ(json["entries"].at(0)["route"], "secondary");

  // The control API lists the routes; removing the session removes them and closes their ports.
  auto listed = Fetch(server.port(), "GET", "/_faultline/sessions/wire");
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed->Json()["routes"].at(2)["dialect"], "anthropic-messages");
  ASSERT_TRUE(server.server().RemoveSession("wire"));
  EXPECT_TRUE(server.server().Sessions().empty());
}

}  // namespace
}  // namespace faultline::provider::server_testing
