// The server against hostile input (issue 14), over loopback sockets: each test is a reproduced
// crash, hang or wrong answer, or a limit, a security default or a redaction, with the small
// hostile input written in.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fake_provider/tests/server_test_support.h"

namespace faultline::provider::server_testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::string_view kHelloYaml = R"(faultline: 1
name: hard/hello
description: A short stream.
dialect: openai-chat
responses:
  - content: {text: "Hello, world", chunk_size: 4}
)";

std::string OutageYaml(std::string_view name) {
  return fmt::format(R"(faultline: 1
name: {}
description: Refused for a while.
dialect: openai-chat
listener_outages: [{{from: 0s, for: 1h}}]
responses:
  - content: {{text: "Hi"}}
)",
                     name);
}

// The bytes of a request with exactly these header lines (no Host unless given).
std::string RawRequest(std::string_view method, std::string_view target, std::string_view headers,
                       std::string_view body = {}) {
  return fmt::format("{} {} HTTP/1.1\r\n{}Content-Length: {}\r\nConnection: close\r\n\r\n{}",
                     method, target, headers, body.size(), body);
}

std::optional<HttpResponse> Exchange(std::uint16_t port, const std::string& bytes) {
  RawClient client;
  if (client.Connect(port) != 0 || !client.Send(bytes)) return std::nullopt;
  return client.ReadResponse(10s);
}

std::string ChunkedPost(std::string_view target, std::string_view trailers) {
  return fmt::format(
      "POST {} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
      "{:x}\r\n{}\r\n0\r\n{}\r\n",
      target, kChatBody.size(), kChatBody, trailers);
}

class HardeningTest : public ::testing::Test {
 protected:
  void Start(ServerOptions options = {}) {
    server_ = std::make_unique<TestServer>(std::move(options));
  }
  std::uint16_t port() const { return server_->port(); }
  Server& server() { return server_->server(); }
  void AddHello() {
    auto added = server().AddSession(ScenarioFromYaml(kHelloYaml));
    ASSERT_TRUE(added) << added.error();
  }
  bool Healthy() {
    auto health = Fetch(port(), "GET", "/_faultline/health");
    return health && health->status == 200;
  }
  json Rejected() { return FetchStats(port())["rejected"]; }
  // A server that journals credentials in clear only when `keep`, and one POST to the hello
  // session, journaled: its response (nullopt when none came or nothing was journaled).
  std::optional<HttpResponse> JournalOnePost(bool keep, std::string_view target,
                                             std::string_view headers, std::string_view body) {
    ServerOptions options;
    options.journal_secrets = keep;
    Start(std::move(options));
    AddHello();
    auto response = Exchange(port(), RawRequest("POST", target, headers, body));
    if (!WaitFor([&] { return server().JournalOf("hard/hello")->size() == 1; })) {
      return std::nullopt;
    }
    return response;
  }

  std::unique_ptr<TestServer> server_;
};

// Issue 14, crash 2: a trailer field of 65,535 bytes or more, on any path, aborted the server.
TEST_F(HardeningTest, AHugeTrailerIsA431OnAnyPathAndTheServerLives) {
  Start();
  AddHello();
  const std::string trailer = "X-Big: " + std::string(70'000, 'a') + "\r\n";
  for (std::string_view target :
       {"/s/hard/hello/v1/chat/completions", "/nowhere", "/_faultline/sessions"}) {
    SCOPED_TRACE(target);
    RawClient client;
    ASSERT_EQ(client.Connect(port()), 0);
    client.Send(ChunkedPost(target, trailer));
    auto response = client.ReadResponse(10s);
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 431);
    EXPECT_TRUE(client.ReadToEnd().eof);
  }
  EXPECT_TRUE(Healthy());
  EXPECT_EQ(Rejected()["header_bytes"], 3);
  EXPECT_EQ(FetchStats(port())["internal_errors"], 0);
  EXPECT_TRUE(server().JournalOf("hard/hello")->empty());
}

// Issue 14, wrong answer 4: trailers bypassed the limits and were journaled as headers.
TEST_F(HardeningTest, TrailersAreJournaledAsTrailersAndShareTheHeaderLimit) {
  ServerOptions options;
  options.max_header_bytes = 4096;
  Start(std::move(options));
  AddHello();
  auto response = Exchange(port(), ChunkedPost("/s/hard/hello/v1/chat/completions",
                                               "X-Trailer: t\r\nAuthorization: Bearer late\r\n"));
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  ASSERT_TRUE(WaitFor([&] { return server().JournalOf("hard/hello")->size() == 1; }));
  const JournalEntry entry = server().JournalOf("hard/hello")->front();
  EXPECT_EQ(entry.body, kChatBody);
  for (const auto& header : entry.headers) EXPECT_NE(header.name, "X-Trailer");
  ASSERT_EQ(entry.trailers.size(), 2u);
  EXPECT_EQ(entry.trailers[0], (scenario::Header{"X-Trailer", "t"}));
  EXPECT_THAT(entry.trailers[1].value, HasSubstr("redacted"));
  const json journal = FetchJournal(port(), "hard/hello");
  EXPECT_EQ(journal["entries"][0]["trailers"][0], json::array({"X-Trailer", "t"}));

  std::string many;
  for (int i = 0; i < 1000; ++i) many += "t: 1\r\n";  // 6,000 bytes: over the 4,096 budget
  auto refused = Exchange(port(), ChunkedPost("/s/hard/hello/v1/chat/completions", many));
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 431);
  EXPECT_EQ(server().JournalOf("hard/hello")->size(), 1u);
}

// Issue 14, wrong answer 4: "Transfer-Encoding: gzip" without chunked was read as no body, and
// the body's bytes as the next request.
TEST_F(HardeningTest, TransferEncodingWithoutChunkedIsA400AndClose) {
  Start();
  AddHello();
  RawClient client;
  ASSERT_EQ(client.Connect(port()), 0);
  ASSERT_TRUE(
      client.Send("POST /s/hard/hello/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  "Transfer-Encoding: gzip\r\n\r\n" +
                  RequestBytes("POST", "/s/hard/hello/v1/chat/completions", kChatBody)));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 400);
  EXPECT_THAT(response->body, HasSubstr("RFC 9112"));
  const auto rest = client.ReadToEnd();
  EXPECT_TRUE(rest.eof);
  EXPECT_EQ(rest.bytes, "");  // no second response: the smuggled request was not read
  EXPECT_TRUE(server().JournalOf("hard/hello")->empty());
}

std::string DeepObject(int depth) {
  std::string out;
  for (int i = 0; i < depth; ++i) out += R"({"a":)";
  return out + "1" + std::string(depth, '}');
}

// Issue 14, crash 1: a "scenario" object nested 60,000 deep (120 KB) crashed the server
// (SIGSEGV, recursion while serialising it).
TEST_F(HardeningTest, ADeeplyNestedScenarioIsA413) {
  Start();
  const std::string body = R"({"scenario":)" + DeepObject(60'000) + "}";
  ASSERT_LT(body.size(), 4u * 1024 * 1024);
  auto response = Fetch(port(), "POST", "/_faultline/sessions", body);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 413);
  EXPECT_EQ(response->Json()["error"]["type"], "scenario_too_large");
  EXPECT_THAT(response->body, HasSubstr("--max-scenario-depth"));

  // The same as YAML text inside the request.
  auto text = Fetch(port(), "POST", "/_faultline/sessions",
                    json{{"scenario_text", "tags: " + std::string(60'000, '[')}}.dump());
  ASSERT_TRUE(text);
  EXPECT_EQ(text->status, 413);
  EXPECT_TRUE(Healthy());
  EXPECT_EQ(Rejected()["scenario"], 2);
}

std::string ManyKeys(std::size_t count) {
  std::string out = "faultline: 1\n";
  for (std::size_t i = 0; i < count; ++i) out += fmt::format("k{}: 1\n", i);
  return out;
}

TEST_F(HardeningTest, ManyKeysAreA413) {
  Start();
  auto response = Fetch(port(), "POST", "/_faultline/sessions",
                        json{{"scenario_text", ManyKeys(100'000)}}.dump());
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 413);
  EXPECT_THAT(response->body, HasSubstr("keys"));
  EXPECT_EQ(Rejected()["scenario"], 1);
}

// Issue 14, hang 3: 100,000 keys blocked the event loop for 17 s. Now the work is linear, and
// it runs off the event loop: with the key limit lifted, health keeps answering promptly while
// the scenario is read.
TEST_F(HardeningTest, CreatingASessionNeverStallsTheEventLoop) {
  ServerOptions options;
  options.scenario_limits.max_keys = 10'000'000;
  Start(std::move(options));
  const std::string body = json{{"scenario_text", ManyKeys(150'000)}}.dump();
  // The creation itself may take many seconds on a loaded machine; only the probes are timed.
  auto creation = std::async(std::launch::async, [&] {
    return Fetch(port(), "POST", "/_faultline/sessions", body, 120s);
  });
  Clock::duration worst{0};
  int probes = 0;
  while (creation.wait_for(0s) != std::future_status::ready && probes < 1000) {
    const auto start = Clock::now();
    EXPECT_TRUE(Healthy());
    worst = std::max(worst, Clock::now() - start);
    ++probes;
  }
  auto created = creation.get();
  ASSERT_TRUE(created);
  EXPECT_EQ(created->status, 400);  // unknown key 'k0'
  EXPECT_GE(probes, 3) << "the creation finished too soon to tell";
  EXPECT_LT(worst, 500ms) << probes << " probes";
}

TEST_F(HardeningTest, SessionAndListenerLimits) {
  ServerOptions options;
  options.max_sessions = 3;
  options.max_listeners = 1;
  Start(std::move(options));
  ASSERT_TRUE(server().AddSession(ScenarioFromYaml(OutageYaml("hard/out1"))));
  auto second_listener = Fetch(port(), "POST", "/_faultline/sessions",
                               json{{"scenario_text", OutageYaml("hard/out2")}}.dump());
  ASSERT_TRUE(second_listener);
  EXPECT_EQ(second_listener->status, 429);
  EXPECT_THAT(second_listener->body, HasSubstr("--max-listeners"));

  for (std::string id : {"a", "b"}) {
    auto created = Fetch(port(), "POST", "/_faultline/sessions",
                         json{{"scenario_text", kHelloYaml}, {"id", id}}.dump());
    ASSERT_TRUE(created);
    EXPECT_EQ(created->status, 201);
  }
  auto fourth = Fetch(port(), "POST", "/_faultline/sessions",
                      json{{"scenario_text", kHelloYaml}, {"id", "c"}}.dump());
  ASSERT_TRUE(fourth);
  EXPECT_EQ(fourth->status, 429);
  EXPECT_EQ(fourth->Json()["error"]["type"], "limit_exceeded");
  EXPECT_THAT(fourth->body, HasSubstr("--max-sessions"));
  auto in_process = server().AddSession(ScenarioFromYaml(kHelloYaml), "d");
  ASSERT_FALSE(in_process);
  EXPECT_THAT(in_process.error(), HasSubstr("--max-sessions"));

  const json rejected = Rejected();
  EXPECT_EQ(rejected["listeners"], 1);
  EXPECT_EQ(rejected["sessions"], 2);
  const json limits = FetchStats(port())["limits"];
  EXPECT_EQ(limits["max_sessions"], 3);
  EXPECT_EQ(limits["max_listeners"], 1);
}

// Past --max-connections, connections get 503, except health; the oldest of those extra
// connections is closed when more pile up, so idle sockets cannot starve health either.
TEST_F(HardeningTest, ConnectionLimitKeepsHealthAnswering) {
  ServerOptions options;
  options.max_connections = 4;
  Start(std::move(options));
  AddHello();
  std::vector<RawClient> idle(4);
  for (auto& client : idle) ASSERT_EQ(client.Connect(port()), 0);
  // Stats, like health, are answered past the limit.
  ASSERT_TRUE(WaitFor([&] { return FetchStats(port())["connections_open"] >= 5; }));

  auto refused = Fetch(port(), "POST", "/s/hard/hello/v1/chat/completions", kChatBody);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503);
  EXPECT_THAT(refused->body, HasSubstr("--max-connections"));
  std::vector<RawClient> more(40);  // more idle extras than the server keeps
  for (auto& client : more) ASSERT_EQ(client.Connect(port()), 0);
  EXPECT_TRUE(Healthy());
  EXPECT_GE(Rejected()["connections"].get<int>(), 40);

  for (auto& client : idle) client.Close();
  EXPECT_TRUE(WaitFor([&] {
    auto response = Fetch(port(), "POST", "/s/hard/hello/v1/chat/completions", kChatBody);
    return response && response->status == 200;
  }));
  EXPECT_EQ(FetchStats(port())["limits"]["max_connections"], 4);
}

// Issue 14: slow clients each holding a large partial body grew the server without bound (200
// connections holding 4 MB each: 821 MB of RSS). The bodies still arriving share one budget.
TEST_F(HardeningTest, SlowLargeBodiesShareOnePendingBudget) {
  constexpr std::size_t kBudget = 1 << 20;
  constexpr std::size_t kDeclared = 600 * 1024;  // each within --max-body-bytes
  ServerOptions options;
  options.max_pending_body_bytes = kBudget;
  Start(std::move(options));
  AddHello();
  const std::string head = fmt::format(
      "POST /s/hard/hello/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
      kDeclared);
  const std::string part(kDeclared - 100 * 1024, ' ');  // 500 KB sent, the rest held back

  std::vector<RawClient> slow(2);
  for (auto& client : slow) {
    ASSERT_EQ(client.Connect(port()), 0);
    ASSERT_TRUE(client.Send(head) && client.Send(part));
  }
  ASSERT_TRUE(WaitFor([&] { return FetchStats(port())["pending_body_bytes"] == 2 * part.size(); }));

  RawClient third;  // 1,000 KB held + 500 KB more would pass the 1 MiB budget
  ASSERT_EQ(third.Connect(port()), 0);
  ASSERT_TRUE(third.Send(head));
  third.Send(part);  // the server may close before reading all of it
  auto refused = third.ReadResponse(10s);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503);
  EXPECT_THAT(refused->body, HasSubstr("--max-pending-body-bytes"));
  EXPECT_EQ(Rejected()["pending_body"], 1);

  for (auto& client : slow) client.Close();  // what they held is released
  EXPECT_TRUE(WaitFor([&] { return FetchStats(port())["pending_body_bytes"] == 0; }));
  auto served = Fetch(port(), "POST", "/s/hard/hello/v1/chat/completions", kChatBody);
  ASSERT_TRUE(served);
  EXPECT_EQ(served->status, 200);
  EXPECT_EQ(FetchStats(port())["limits"]["max_pending_body_bytes"], kBudget);
}

// Issue 14: every journal entry keeps its request's body, so 100,000 entries of 4 MiB bodies
// could hold 400 GB. A session's journal also keeps at most --max-journal-bytes of requests.
TEST_F(HardeningTest, AJournalKeepsAtMostItsBytesOfRequests) {
  constexpr std::size_t kBytes = 64 * 1024;
  ServerOptions options;
  options.journal_max_bytes = kBytes;
  Start(std::move(options));
  AddHello();
  const std::string padding(20 * 1024, ' ');  // JSON allows the whitespace; the body is 20 KiB+
  const std::string body = std::string(kChatBody) + padding;
  for (int i = 0; i < 6; ++i) {
    auto response = Fetch(port(), "POST", "/s/hard/hello/v1/chat/completions", body);
    ASSERT_TRUE(response);
    ASSERT_EQ(response->status, 200);
  }
  const json journal = FetchJournal(port(), "hard/hello");
  ASSERT_EQ(journal["entries"].size(), 3u);  // 3 x 20 KiB fit in 64 KiB, 4 do not
  EXPECT_EQ(journal["dropped"], 3);
  EXPECT_EQ(journal["entries"][0]["index"], 3);
  EXPECT_EQ(FetchStats(port())["limits"]["journal_max_bytes"], kBytes);
}

// Issue 14, security 5: --listen 0.0.0.0 bound every interface silently.
TEST_F(HardeningTest, ListeningBeyondLoopbackNeedsAllowRemoteAndThenAToken) {
  ServerOptions quiet;
  quiet.listen_address = "0.0.0.0";
  auto refused = Server::Create(std::move(quiet));
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error(), HasSubstr("--allow-remote"));

  ServerOptions remote;
  remote.listen_address = "0.0.0.0";
  remote.allow_remote = true;
  Start(std::move(remote));
  const std::string token = server().control_token();
  EXPECT_EQ(token.size(), 32u);
  EXPECT_EQ(server().bound_address(), fmt::format("0.0.0.0:{}", port()));

  auto anonymous = Fetch(port(), "GET", "/_faultline/sessions");
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->status, 401);
  EXPECT_EQ(anonymous->Header("www-authenticate"), "Bearer realm=\"faultline\"");
  auto wrong = Exchange(port(), RawRequest("GET", "/_faultline/health",
                                           "Host: 127.0.0.1\r\nAuthorization: Bearer nope\r\n"));
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  auto allowed =
      Exchange(port(), RawRequest("GET", "/_faultline/sessions",
                                  "Host: 127.0.0.1\r\nAuthorization: Bearer " + token + "\r\n"));
  ASSERT_TRUE(allowed);
  EXPECT_EQ(allowed->status, 200);
  // Sessions themselves need no token: SDKs send their own credentials.
  AddHello();
  auto session = Fetch(port(), "POST", "/s/hard/hello/v1/chat/completions", kChatBody);
  ASSERT_TRUE(session);
  EXPECT_EQ(session->status, 200);
}

TEST_F(HardeningTest, AGivenTokenIsRequiredOnLoopbackToo) {
  ServerOptions options;
  options.control_token = "s3cret-token";
  Start(std::move(options));
  EXPECT_EQ(Fetch(port(), "GET", "/_faultline/health")->status, 401);
  auto ok =
      Exchange(port(), RawRequest("GET", "/_faultline/stats",
                                  "Host: localhost\r\nAuthorization: bearer s3cret-token\r\n"));
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->Json()["rejected"]["unauthorized"], 1);
}

// Issue 14, security 6: a cross-site simple POST, or a page on a rebound DNS name, drove the
// control API.
TEST_F(HardeningTest, ForeignHostsAndOriginsAreRefused) {
  ServerOptions options;
  options.allowed_hosts = {"faultline.test"};
  Start(std::move(options));
  const std::string port_text = std::to_string(port());
  const std::string create = json{{"scenario_text", kHelloYaml}}.dump();
  struct Case {
    std::string headers;
    int status;
  };
  const std::vector<Case> cases = {
      {"Host: evil.example:" + port_text + "\r\n", 403},  // DNS rebinding
      {"Host: 127.0.0.1:" + port_text + "\r\nOrigin: http://evil.example\r\n", 403},
      {"Host: 127.0.0.1:" + port_text + "\r\nOrigin: null\r\n", 403},
      {"Host: 127.0.0.1:" + port_text + "\r\nOrigin: http://127.0.0.1:1\r\n", 403},
      {"Host: 127.0.0.1:" + port_text + "\r\nSec-Fetch-Site: cross-site\r\n", 403},
      {"Host: 127.0.0.1:1\r\n", 403},
      {"", 403},  // no Host at all
      {"Host: faultline.test:" + port_text + "\r\n", 201},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.headers);
    auto response =
        Exchange(port(), RawRequest("POST", "/_faultline/sessions",
                                    c.headers + "Content-Type: text/plain\r\n", create));
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, c.status) << response->body;
  }
  EXPECT_EQ(server().Sessions().size(), 1u);
  EXPECT_EQ(Rejected()["forbidden"], 7);
  for (const std::string& host :
       std::vector<std::string>{"localhost", "127.0.0.1", "LOCALHOST:" + port_text}) {
    auto own = Exchange(
        port(),
        RawRequest("GET", "/_faultline/health",
                   "Host: " + host + "\r\nOrigin: http://" +
                       (host.find(':') == std::string::npos ? host + ":" + port_text : host) +
                       "\r\n"));
    ASSERT_TRUE(own);
    EXPECT_EQ(own->status, 200) << host;
  }
}

// Issue 14, security 7: journals held credentials in clear.
TEST_F(HardeningTest, JournalsRedactCredentialsUnlessAskedToKeepThem) {
  const std::string headers =
      "Authorization: Bearer sk-proj-0123456789abcdef\r\nx-api-key: sk-ant-0123456789\r\n"
      "api-key: short\r\nX-Other: visible\r\n";
  for (bool keep : {false, true}) {
    SCOPED_TRACE(keep);
    ASSERT_TRUE(JournalOnePost(keep, "/s/hard/hello/v1/chat/completions",
                               "Host: 127.0.0.1\r\n" + headers, kChatBody));
    std::map<std::string, std::string> seen;
    const JournalEntry entry = server().JournalOf("hard/hello")->front();
    for (const auto& header : entry.headers) seen[header.name] = header.value;
    EXPECT_EQ(seen["X-Other"], "visible");
    if (keep) {
      EXPECT_EQ(seen["Authorization"], "Bearer sk-proj-0123456789abcdef");
      EXPECT_EQ(seen["api-key"], "short");
    } else {
      EXPECT_EQ(seen["Authorization"], "Bearer sk-p...[redacted, 31 bytes]");
      EXPECT_EQ(seen["x-api-key"], "sk-a...[redacted, 17 bytes]");
      EXPECT_EQ(seen["api-key"], "...[redacted, 5 bytes]");
      EXPECT_THAT(FetchJournal(port(), "hard/hello").dump(), Not(HasSubstr("0123456789")));
    }
    server_.reset();
  }
}

// Issue 30, item 6: the keys journals still kept (other header names, the query string, the
// body) are redacted in what GET .../journal serves; the request itself is served as sent.
TEST_F(HardeningTest, JournalsRedactKeysInHeadersQueryAndBodyUnlessAskedToKeepThem) {
  const std::string headers =
      "Host: 127.0.0.1\r\nOcp-Apim-Subscription-Key: LEAKapim\r\nX-Auth-Key: LEAKauth\r\n"
      "X-Functions-Key: LEAKfn\r\nX-Access-Key: LEAKaccess\r\nAuthentication: LEAKauthn\r\n";
  const std::string body =
      R"({"model":"gpt-4o-mini","stream":true,"api_key":"LEAKbody","options":{"auth":)"
      R"({"token":"LEAKdeep"}},"messages":[{"role":"user","content":"Say hello."}]})";
  for (bool keep : {false, true}) {
    SCOPED_TRACE(keep);
    const auto response = JournalOnePost(
        keep, "/s/hard/hello/v1/chat/completions?key=LEAKq&api_key=LEAKq2", headers, body);
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 200);
    const std::string journal = FetchJournal(port(), "hard/hello").dump();
    for (std::string_view leak : {"LEAKapim", "LEAKauth", "LEAKfn", "LEAKaccess", "LEAKauthn",
                                  "LEAKbody", "LEAKdeep", "LEAKq"}) {
      if (keep) {
        EXPECT_THAT(journal, HasSubstr(leak));
      } else {
        EXPECT_THAT(journal, Not(HasSubstr(leak)));
      }
    }
    // Judging reads the entry, which keeps the body as it came.
    EXPECT_EQ(server().JournalOf("hard/hello")->front().body, body);
    server_.reset();
  }
}

}  // namespace
}  // namespace faultline::provider::server_testing
