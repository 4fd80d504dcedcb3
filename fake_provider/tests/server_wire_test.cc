// Wire tests of the real server: raw sockets on loopback, checking bytes, FIN, RST and timing,
// and the journal the server keeps about each exchange.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fake_provider/plan/plan_compiler.h"
#include "fake_provider/provider_core.h"
#include "fake_provider/tests/server_test_support.h"

namespace faultline::provider::server_testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string ScenarioYaml(std::string_view name, std::string_view responses,
                         std::string_view extra = {}) {
  return fmt::format(
      "faultline: 1\nname: {}\ndescription: A wire test.\ndialect: openai-chat\n{}responses:\n{}",
      name, extra, responses);
}

constexpr std::string_view kHelloResponses = R"(  - content: {text: "Hello, world", chunk_size: 4}
)";

class ServerWireTest : public ::testing::Test {
 protected:
  void StartServer(ServerOptions options = {}) {
    server_ = std::make_unique<TestServer>(std::move(options));
  }

  // Adds a session from scenario YAML; returns its base path "/s/<id>".
  std::string AddSession(std::string_view name, std::string_view responses,
                         std::string_view extra = {}) {
    if (!server_) StartServer();
    auto added =
        server_->server().AddSession(ScenarioFromYaml(ScenarioYaml(name, responses, extra)));
    EXPECT_TRUE(added.has_value()) << (added ? "" : added.error());
    return "/s/" + std::string(name);
  }

  std::uint16_t port() const { return server_->port(); }

  std::vector<JournalEntry> JournalOf(std::string_view id) {
    return server_->server().JournalOf(id).value_or(std::vector<JournalEntry>{});
  }

  // Waits until the session's entry `index` has ended, and returns it.
  std::optional<JournalEntry> EndedEntry(std::string_view id, std::size_t index) {
    std::optional<JournalEntry> found;
    WaitFor([&] {
      auto entries = JournalOf(id);
      if (entries.size() <= index || entries[index].end == EndKind::kInProgress) return false;
      found = entries[index];
      return true;
    });
    return found;
  }

  std::unique_ptr<TestServer> server_;
};

TEST_F(ServerWireTest, UnknownPathGets404WithSessionHint) {
  const std::string base = AddSession("wire/hello", kHelloResponses);
  auto response = Fetch(port(), "GET", "/nope");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 404);
  const auto json = response->Json();
  ASSERT_TRUE(json.contains("error")) << response->body;
  EXPECT_EQ(json["error"]["sessions"].at(0)["base_url"], server_->base_url() + base);
  EXPECT_EQ(json["error"]["sessions"].at(0)["sdk_base_url"], server_->base_url() + base + "/v1");

  auto unknown = Fetch(port(), "POST", "/s/nobody/v1/chat/completions", kChatBody);
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  EXPECT_THAT(unknown->body, HasSubstr("wire/hello"));
  EXPECT_TRUE(JournalOf("wire/hello").empty());
}

TEST_F(ServerWireTest, MalformedRequestGets400ThenClose) {
  StartServer();
  RawClient client;
  ASSERT_EQ(client.Connect(port()), 0);
  ASSERT_TRUE(client.Send("THIS IS NOT HTTP\r\n\r\n"));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 400);
  EXPECT_EQ(response->Json()["error"]["type"], "bad_request");
  const auto rest = client.ReadToEnd();
  EXPECT_TRUE(rest.eof);
  EXPECT_EQ(rest.error, 0);
  EXPECT_GE(FetchStats(port())["bad_requests"].get<int>(), 1);
}

TEST_F(ServerWireTest, OversizedBodyGets413AndAnOrderlyClose) {
  ServerOptions options;
  options.max_body_bytes = 1024;
  StartServer(std::move(options));
  const std::string base = AddSession("wire/hello", kHelloResponses);
  RawClient client;
  ASSERT_EQ(client.Connect(port()), 0);
  ASSERT_TRUE(client.Send(
      RequestBytes("POST", base + "/v1/chat/completions", std::string(64 * 1024, 'x'))));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 413);
  EXPECT_THAT(response->body, HasSubstr("1024"));
  const auto rest = client.ReadToEnd();
  EXPECT_TRUE(rest.eof) << "error " << rest.error;
  EXPECT_TRUE(JournalOf("wire/hello").empty());
}

TEST_F(ServerWireTest, OversizedHeadersGet431) {
  ServerOptions options;
  options.max_header_bytes = 1024;
  StartServer(std::move(options));
  RawClient client;
  ASSERT_EQ(client.Connect(port()), 0);
  ASSERT_TRUE(client.Send(RequestBytes("GET", "/_faultline/health", {}, true,
                                       "X-Big: " + std::string(4000, 'a') + "\r\n")));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 431);
}

TEST_F(ServerWireTest, WrongMethodIsAnsweredButIsNotAnAttempt) {
  const std::string base = AddSession("wire/hello", kHelloResponses);
  auto wrong = Fetch(port(), "GET", base + "/v1/chat/completions");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 405);
  auto right = Fetch(port(), "POST", base + "/v1/chat/completions", kChatBody);
  ASSERT_TRUE(right);
  EXPECT_EQ(right->status, 200);
  const auto entries = JournalOf("wire/hello");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].method, "GET");
  EXPECT_EQ(entries[0].attempt, 0);
  EXPECT_EQ(entries[1].attempt, 1);
}

TEST_F(ServerWireTest, KeepAliveCarriesTwoRequests) {
  const std::string base = AddSession("wire/hello", kHelloResponses);
  RawClient client;
  ASSERT_EQ(client.Connect(port()), 0);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(client.Send(RequestBytes("POST", base + "/v1/chat/completions", kChatBody)));
    auto response = client.ReadResponse();
    ASSERT_TRUE(response) << "request " << i;
    EXPECT_EQ(response->status, 200);
    EXPECT_THAT(response->body, HasSubstr("data: [DONE]"));
  }
  auto first = EndedEntry("wire/hello", 0);
  auto second = EndedEntry("wire/hello", 1);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->connection, second->connection);
  EXPECT_EQ(first->attempt, 1);
  EXPECT_EQ(second->attempt, 2);
  EXPECT_EQ(first->end, EndKind::kCompleted);
  EXPECT_FALSE(first->further_request_at) << "the second request came after the first answer";
  EXPECT_EQ(first->body, kChatBody);
  EXPECT_EQ(first->target, base + "/v1/chat/completions");
  EXPECT_GE(first->writes.size(), 1u);
  EXPECT_EQ(first->bytes_sent, first->writes[0].size);
}

TEST_F(ServerWireTest, PipelinedRequestsAreAnsweredInOrder) {
  // The first answer takes time (its plan waits), so the second request arrives while it runs.
  const std::string base = AddSession(
      "wire/pipelined", R"(  - content: {text: "Hello, world", chunk_size: 4, chunk_delay: 30ms}
  - status: 429
    error: rate_limit
    retry_after: {seconds: 1}
)");
  RawClient client;
  ASSERT_EQ(client.Connect(port()), 0);
  const std::string request = RequestBytes("POST", base + "/v1/chat/completions", kChatBody);
  ASSERT_TRUE(client.Send(request + request));
  auto first = client.ReadResponse();
  auto second = client.ReadResponse();
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->status, 200);
  EXPECT_THAT(first->body, HasSubstr("[DONE]"));
  EXPECT_EQ(second->status, 429);
  EXPECT_EQ(second->Header("retry-after"), "1");
  auto entry = EndedEntry("wire/pipelined", 1);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->attempt, 2);
  EXPECT_EQ(entry->body, kChatBody);
  // Sent before the first answer began: journalled on it, as a request on a busy connection.
  EXPECT_TRUE(EndedEntry("wire/pipelined", 0)->further_request_at);
}

// A client that gives up on a stalled stream and sends its retry on the same connection: the
// retry's bytes come while the stalled response is still in progress, and are journalled on it
// (further_request_at: RES-002's evidence); the retry is answered there once that response ends.
// Blank lines between requests are no request.
TEST_F(ServerWireTest, ARequestSentDuringAResponseIsJournalledOnIt) {
  const std::string base = AddSession("wire/reused", R"(  - content:
      text: "Hello, world"
      chunk_size: 4
      faults:
        - {after_event: 1, stall: 3s}
  - content: {text: "Hello, world", chunk_size: 4}
)");
  RawClient client;
  ASSERT_EQ(client.Connect(port()), 0);
  const std::string request = RequestBytes("POST", base + "/v1/chat/completions", kChatBody);
  ASSERT_TRUE(client.Send(request));
  WaitFor([&] { return !JournalOf("wire/reused").empty(); });
  ASSERT_TRUE(client.Send("\r\n"));
  // The stall holds the response for 3 s: ample room, even on a loaded machine, to see that the
  // blank line came and counted for nothing.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_FALSE(JournalOf("wire/reused").front().further_request_at) << "a blank line is no request";
  ASSERT_TRUE(client.Send(request));
  auto first = client.ReadResponse();
  auto second = client.ReadResponse();
  ASSERT_TRUE(first && second);
  EXPECT_THAT(second->body, HasSubstr("[DONE]"));
  auto stalled = EndedEntry("wire/reused", 0);
  auto retry = EndedEntry("wire/reused", 1);
  ASSERT_TRUE(stalled && retry);
  ASSERT_TRUE(stalled->further_request_at);
  EXPECT_GT(*stalled->further_request_at, stalled->arrived);
  EXPECT_LT(*stalled->further_request_at, stalled->ended) << "while the response was in progress";
  EXPECT_EQ(retry->connection, stalled->connection);
  EXPECT_FALSE(retry->further_request_at);
}

// The server adds nothing to the plan and never writes early: each kSend step is one write of
// exactly its bytes, at (never before) its offset. Sizes do not depend on `now` (fixed-length
// ids and dates), so an independent ProviderSession gives the expected plan.
TEST_F(ServerWireTest, ExecutesThePlanStepByStep) {
  constexpr std::string_view kResponses =
      R"(  - content: {text: "Hello, world", chunk_size: 4, chunk_delay: 15ms}
)";
  const std::string base = AddSession("wire/timed", kResponses);
  auto compiled = std::make_shared<const CompiledScenario>(
      ScenarioFromYaml(ScenarioYaml("wire/timed", kResponses)));
  ProviderSession reference(compiled, 0, WallTime{});
  const ResponsePlan plan =
      reference.Respond({"POST", "/v1/chat/completions", kChatBody}, WallTime{});
  std::vector<const PlanStep*> sends;
  std::size_t total = 0;
  for (const auto& step : plan.steps) {
    if (step.kind == PlanStep::Kind::kSend) {
      sends.push_back(&step);
      total += step.bytes.size();
    }
  }
  ASSERT_GE(sends.size(), 3u) << "the plan should have timed writes";

  RawClient client;
  ASSERT_EQ(client.Connect(port()), 0);
  ASSERT_TRUE(client.Send(RequestBytes("POST", base + "/v1/chat/completions", kChatBody)));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  auto entry = EndedEntry("wire/timed", 0);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->end, EndKind::kCompleted);
  EXPECT_EQ(entry->bytes_sent, total);
  ASSERT_EQ(entry->writes.size(), sends.size());
  for (std::size_t i = 0; i < sends.size(); ++i) {
    const WriteRecord& write = entry->writes[i];
    EXPECT_EQ(write.size, sends[i]->bytes.size()) << "write " << i;
    EXPECT_EQ(write.planned - entry->arrived, sends[i]->at) << "write " << i;
    EXPECT_GE(write.at, write.planned) << "write " << i << " went out early";
    EXPECT_LT(write.at - write.planned, std::chrono::milliseconds(250)) << "write " << i;
  }
  EXPECT_EQ(
      FetchStats(port())["timer_lateness_us"]["count"].get<std::size_t>(),
      static_cast<std::size_t>(std::count_if(sends.begin(), sends.end(), [](const PlanStep* step) {
        return step->at > Duration::zero();
      })));
}

TEST_F(ServerWireTest, ClientDisconnectMidResponseIsJournaled) {
  const std::string base = AddSession(
      "wire/slow",
      R"(  - content: {text: "abcdefghijklmnopqrstuvwxyz0123456789", chunk_size: 2, chunk_delay: 100ms}
)");
  RawClient client;
  ASSERT_EQ(client.Connect(port()), 0);
  ASSERT_TRUE(client.Send(RequestBytes("POST", base + "/v1/chat/completions", kChatBody)));
  const auto head = client.ReadUntil(
      [](const std::string& bytes) { return bytes.find("\r\n\r\n") != std::string::npos; }, 5s);
  ASSERT_FALSE(head.timed_out);
  client.Close();
  auto entry = EndedEntry("wire/slow", 0);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->end, EndKind::kClientClosed);
  // It ended when the client left, long before the 1.8 s the plan needs.
  EXPECT_LT(entry->ended - entry->arrived, std::chrono::milliseconds(1500));
}

TEST_F(ServerWireTest, ResetPlanIsSeenAsEconnreset) {
  const std::string base = AddSession("wire/reset", R"(  - content:
      text: "Hello, world"
      chunk_size: 4
      chunk_delay: 20ms
      end: {kind: reset, after_event: 2}
)");
  RawClient client;
  ASSERT_EQ(client.Connect(port()), 0);
  ASSERT_TRUE(client.Send(RequestBytes("POST", base + "/v1/chat/completions", kChatBody)));
  const auto read = client.ReadToEnd();
  EXPECT_EQ(read.error, ECONNRESET);
  EXPECT_FALSE(read.eof);
  auto entry = EndedEntry("wire/reset", 0);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->end, EndKind::kResetByServer);
}

TEST_F(ServerWireTest, BodyWithoutLastChunkEndsWithFin) {
  const std::string base = AddSession("wire/no-final-chunk", R"(  - content:
      text: "Hello, world"
      chunk_size: 4
      end: no_final_chunk
)");
  RawClient client;
  ASSERT_EQ(client.Connect(port()), 0);
  ASSERT_TRUE(client.Send(RequestBytes("POST", base + "/v1/chat/completions", kChatBody)));
  const auto read = client.ReadToEnd();
  EXPECT_TRUE(read.eof);
  EXPECT_EQ(read.error, 0);
  EXPECT_THAT(read.bytes, HasSubstr("HTTP/1.1 200"));
  EXPECT_THAT(read.bytes, Not(HasSubstr("\r\n0\r\n\r\n")));
  HttpResponse response;
  EXPECT_EQ(ParseResponse(read.bytes, response), 0u) << "the body must be incomplete";
  auto entry = EndedEntry("wire/no-final-chunk", 0);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->end, EndKind::kClosedByServer);
}

TEST_F(ServerWireTest, StallHoldsTheConnectionForItsLength) {
  const std::string base = AddSession("wire/stall", R"(  - content:
      text: "Hello, world"
      end: {kind: stall, wait: 400ms}
)");
  RawClient client;
  ASSERT_EQ(client.Connect(port()), 0);
  // Timed from the request, not from reading the head: on a loaded machine this thread may read
  // the head late, well into the stall.
  const auto sent = Clock::now();
  ASSERT_TRUE(client.Send(RequestBytes("POST", base + "/v1/chat/completions", kChatBody)));
  const auto head = client.ReadUntil(
      [](const std::string& bytes) { return bytes.find("\r\n\r\n") != std::string::npos; }, 5s);
  ASSERT_FALSE(head.timed_out);
  const auto rest = client.ReadToEnd(10s);
  const auto held = Clock::now() - sent;
  EXPECT_TRUE(rest.eof);
  EXPECT_GE(held, 400ms);
  EXPECT_LT(held, 3s);
  auto entry = EndedEntry("wire/stall", 0);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->end, EndKind::kClosedByServer);
  EXPECT_GE(entry->ended - entry->arrived, std::chrono::milliseconds(400));
}

TEST_F(ServerWireTest, HeartbeatStallEndsWhenTheClientGivesUp) {
  const std::string base = AddSession("wire/heartbeat", R"(  - content:
      text: "Hello, world"
      end: {kind: stall, heartbeat: {every: 30ms}}
)");
  RawClient client;
  ASSERT_EQ(client.Connect(port()), 0);
  ASSERT_TRUE(client.Send(RequestBytes("POST", base + "/v1/chat/completions", kChatBody)));
  const auto read = client.ReadUntil(
      [](const std::string& bytes) {
        std::size_t count = 0;
        // The SSE comment line, not the "connection: keep-alive" header.
        for (auto pos = bytes.find("\n: keep-alive"); pos != std::string::npos;
             pos = bytes.find("\n: keep-alive", pos + 1)) {
          ++count;
        }
        return count >= 3;
      },
      5s);
  ASSERT_FALSE(read.timed_out) << read.bytes;
  client.Close();
  auto entry = EndedEntry("wire/heartbeat", 0);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->end, EndKind::kStalledClientGaveUp);
  // The response, then three heartbeats at least.
  EXPECT_GE(entry->writes.size(), 4u) << read.bytes;
}

TEST_F(ServerWireTest, ListenerOutageRefusesThenAccepts) {
  StartServer();
  const auto added_at = Clock::now();
  auto added = server_->server().AddSession(ScenarioFromYaml(ScenarioYaml(
      "wire/outage", kHelloResponses, "listener_outages: [{from: 0s, for: 600ms}]\n")));
  ASSERT_TRUE(added) << added.error();
  const std::string prefix = "http://127.0.0.1:";
  ASSERT_THAT(added->base_url, HasSubstr(prefix));
  const auto session_port = static_cast<std::uint16_t>(std::stoi(added->base_url.substr(
      prefix.size(), added->base_url.find('/', prefix.size()) - prefix.size())));
  EXPECT_NE(session_port, port());

  RawClient client;
  EXPECT_EQ(client.Connect(session_port), ECONNREFUSED);
  ASSERT_TRUE(WaitFor([&] { return client.Connect(session_port) == 0; }, 10s));
  EXPECT_GE(Clock::now() - added_at, 550ms);
  ASSERT_TRUE(client.Send(RequestBytes("POST", "/s/wire/outage/v1/chat/completions", kChatBody)));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
}

// A reset re-anchors the outage schedule: the open listener closes again (connection refused
// on the same port), then comes back.
TEST_F(ServerWireTest, ResetRestartsTheListenerOutage) {
  StartServer();
  auto added = server_->server().AddSession(ScenarioFromYaml(ScenarioYaml(
      "wire/outage-reset", kHelloResponses, "listener_outages: [{from: 0s, for: 300ms}]\n")));
  ASSERT_TRUE(added) << added.error();
  const std::string prefix = "http://127.0.0.1:";
  const auto session_port = static_cast<std::uint16_t>(std::stoi(added->base_url.substr(
      prefix.size(), added->base_url.find('/', prefix.size()) - prefix.size())));
  RawClient client;
  ASSERT_TRUE(WaitFor([&] { return client.Connect(session_port) == 0; }, 10s));
  client.Close();

  ASSERT_TRUE(server_->server().ResetSession("wire/outage-reset"));
  EXPECT_TRUE(WaitFor([&] { return client.Connect(session_port) == ECONNREFUSED; }, 5s));
  ASSERT_TRUE(WaitFor([&] { return client.Connect(session_port) == 0; }, 10s));
  ASSERT_TRUE(
      client.Send(RequestBytes("POST", "/s/wire/outage-reset/v1/chat/completions", kChatBody)));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(server_->server().Sessions().at(0).base_url, added->base_url);
  client.Close();

  // Removing the session closes its port for good.
  ASSERT_TRUE(server_->server().RemoveSession("wire/outage-reset"));
  EXPECT_TRUE(WaitFor([&] { return client.Connect(session_port) == ECONNREFUSED; }, 5s));
}

TEST_F(ServerWireTest, ShutdownEndsStalledStreams) {
  const std::string base = AddSession("wire/stalled", R"(  - content:
      text: "Hello, world"
      faults: [{after_event: 1, stall: forever}]
)");
  std::vector<RawClient> clients(3);
  for (auto& client : clients) {
    ASSERT_EQ(client.Connect(port()), 0);
    ASSERT_TRUE(client.Send(RequestBytes("POST", base + "/v1/chat/completions", kChatBody)));
    ASSERT_FALSE(
        client
            .ReadUntil(
                [](const std::string& bytes) { return bytes.find("data:") != std::string::npos; },
                5s)
            .timed_out);
  }
  ASSERT_TRUE(server_->Stop());
  for (auto& client : clients) {
    const auto rest = client.ReadToEnd(5s);
    EXPECT_FALSE(rest.timed_out);
  }
  const auto entries = JournalOf("wire/stalled");
  ASSERT_EQ(entries.size(), 3u);
  for (const auto& entry : entries) EXPECT_EQ(entry.end, EndKind::kServerShutdown);
}

TEST_F(ServerWireTest, SlowHeadersTimeOut) {
  ServerOptions options;
  options.request_timeout = 300ms;
  StartServer(std::move(options));
  RawClient client;
  ASSERT_EQ(client.Connect(port()), 0);
  const auto start = Clock::now();
  ASSERT_TRUE(client.Send("POST /s/x/v1/chat/completions HTTP/1.1\r\nHost: 127"));
  const auto read = client.ReadToEnd(5s);
  EXPECT_FALSE(read.timed_out);
  EXPECT_TRUE(read.bytes.empty());
  EXPECT_GE(Clock::now() - start, 250ms);
  EXPECT_TRUE(WaitFor([&] { return FetchStats(port())["read_timeouts"] == 1; }));
  EXPECT_EQ(FetchStats(port())["aborted_requests"], 1);
}

TEST_F(ServerWireTest, ClientVanishingMidBodyIsCountedNotJournaled) {
  const std::string base = AddSession("wire/hello", kHelloResponses);
  RawClient client;
  ASSERT_EQ(client.Connect(port()), 0);
  ASSERT_TRUE(client.Send("POST " + base +
                          "/v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"
                          "0123456789"));
  client.Reset();
  EXPECT_TRUE(WaitFor([&] { return FetchStats(port())["aborted_requests"] == 1; }));
  EXPECT_TRUE(JournalOf("wire/hello").empty());
  // The server keeps serving.
  auto response = Fetch(port(), "POST", base + "/v1/chat/completions", kChatBody);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
}

TEST_F(ServerWireTest, ExpectContinueGets100First) {
  const std::string base = AddSession("wire/hello", kHelloResponses);
  RawClient client;
  ASSERT_EQ(client.Connect(port()), 0);
  ASSERT_TRUE(client.Send(
      "POST " + base + "/v1/chat/completions HTTP/1.1\r\nHost: x\r\n" +
      "Expect: 100-continue\r\nContent-Length: " + std::to_string(kChatBody.size()) + "\r\n\r\n"));
  auto interim = client.ReadResponse();
  ASSERT_TRUE(interim);
  EXPECT_EQ(interim->status, 100);
  ASSERT_TRUE(client.Send(kChatBody));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
}

TEST_F(ServerWireTest, RequestLogHasOneLinePerRequest) {
  auto lines = std::make_shared<std::vector<std::string>>();
  auto mutex = std::make_shared<std::mutex>();
  ServerOptions options;
  options.request_log = [lines, mutex](const std::string& line) {
    std::lock_guard lock(*mutex);
    lines->push_back(line);
  };
  StartServer(std::move(options));
  const std::string base = AddSession("wire/hello", kHelloResponses);
  ASSERT_TRUE(Fetch(port(), "POST", base + "/v1/chat/completions", kChatBody));
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard lock(*mutex);
    return !lines->empty();
  }));
  std::lock_guard lock(*mutex);
  EXPECT_THAT(lines->at(0), HasSubstr("wire/hello #1 POST /v1/chat/completions -> "));
  EXPECT_THAT(lines->at(0), HasSubstr("completed"));
}

TEST_F(ServerWireTest, SeveralThreadsServeConcurrentClients) {
  ServerOptions options;
  options.threads = 2;
  StartServer(std::move(options));
  const std::string base = AddSession(
      "wire/slowish", R"(  - content: {text: "Hello, world", chunk_size: 4, chunk_delay: 20ms}
)");
  std::vector<RawClient> clients(8);
  for (auto& client : clients) {
    ASSERT_EQ(client.Connect(port()), 0);
    ASSERT_TRUE(client.Send(RequestBytes("POST", base + "/v1/chat/completions", kChatBody)));
  }
  for (auto& client : clients) {
    auto response = client.ReadResponse();
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 200);
  }
  const auto stats = FetchStats(port());
  EXPECT_EQ(stats["session_requests"], 8);
  EXPECT_GE(stats["timer_lateness_us"]["count"].get<int>(), 8);
}

TEST_F(ServerWireTest, ListensOnIpv6Loopback) {
  ServerOptions options;
  options.listen_address = "::1";
  auto server = Server::Create(std::move(options));
  if (!server) GTEST_SKIP() << "no IPv6 loopback: " << server.error();
  EXPECT_THAT((*server)->base_url(), HasSubstr("http://[::1]:"));
  std::thread thread([&] { (*server)->Run(); });
  RawClient client;
  EXPECT_EQ(client.Connect((*server)->port(), /*v6=*/true), 0);
  ASSERT_TRUE(client.Send(RequestBytes("GET", "/_faultline/health", {}, false)));
  auto response = client.ReadResponse();
  (*server)->Stop();
  thread.join();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
}

TEST_F(ServerWireTest, CreateFailsOnBadAddressOrBusyPort) {
  ServerOptions bad;
  bad.listen_address = "not-an-address";
  auto failed = Server::Create(std::move(bad));
  ASSERT_FALSE(failed);
  EXPECT_THAT(failed.error(), HasSubstr("not-an-address"));

  StartServer();
  ServerOptions busy;
  busy.port = port();
  auto clash = Server::Create(std::move(busy));
  ASSERT_FALSE(clash);
  EXPECT_THAT(clash.error(), HasSubstr("cannot listen"));
}

}  // namespace
}  // namespace faultline::provider::server_testing
