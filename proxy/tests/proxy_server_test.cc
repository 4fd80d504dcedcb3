// The proxy on loopback sockets, in front of the fake provider's own server, called by the
// reference client. Waits are bounded and generous (a loaded 2-core machine); nothing asserts a
// time, only what arrived.
#include "proxy/server/proxy_server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "fake_provider/journal_json.h"
#include "fake_provider/server/server.h"
#include "proxy/tests/proxy_test_support.h"
#include "reference_impl/driver.h"

namespace faultline::proxy::testing {
namespace {

namespace asio = boost::asio;
using ::testing::HasSubstr;
constexpr auto kPatience = std::chrono::seconds(20);

// The fake provider with one session answering `spec`, serving on its own thread.
class Upstream {
 public:
  Upstream(scenario::Dialect dialect, scenario::ResponseSpec spec) {
    auto server = provider::Server::Create({});
    EXPECT_TRUE(server.has_value());
    server_ = std::move(*server);
    scenario::Scenario scenario;
    scenario.name = "upstream";
    scenario.dialect = dialect;
    scenario.responses = {std::move(spec)};
    auto session = server_->AddSession(std::move(scenario), "up");
    EXPECT_TRUE(session.has_value());
    base_url_ = session->base_url;
    thread_ = std::thread([this] { server_->Run(); });
  }
  ~Upstream() {
    server_->Stop();
    thread_.join();
  }
  const std::string& base_url() const { return base_url_; }
  std::vector<provider::JournalEntry> journal() const { return *server_->JournalOf("up"); }

 private:
  std::unique_ptr<provider::Server> server_;
  std::string base_url_;
  std::thread thread_;
};

// The proxy in front of `upstream`, serving on its own thread; keeps its journal lines.
class Proxy {
 public:
  Proxy(const std::string& upstream, std::string_view rules) {
    ProxyOptions options;
    options.upstream = upstream;
    auto parsed = scenario::ParseProxyRules(rules, "rules.yaml");
    EXPECT_TRUE(parsed.has_value());
    if (parsed) options.rules = std::move(*parsed);
    options.journal = [this](const std::string& line) {
      std::lock_guard lock(mutex_);
      lines_.push_back(nlohmann::json::parse(line));
      changed_.notify_all();
    };
    auto server = ProxyServer::Create(std::move(options));
    EXPECT_TRUE(server.has_value()) << (server ? "" : server.error());
    server_ = std::move(*server);
    thread_ = std::thread([this] { server_->Run(); });
  }
  ~Proxy() {
    server_->Stop();
    thread_.join();
  }
  std::uint16_t port() const { return server_->port(); }
  // The first journal line, once the exchange is over (bounded wait).
  nlohmann::json FirstLine() {
    std::unique_lock lock(mutex_);
    const bool journaled = changed_.wait_for(lock, kPatience, [this] { return !lines_.empty(); });
    EXPECT_TRUE(journaled);
    return journaled ? lines_.front() : nlohmann::json::object();
  }

 private:
  std::unique_ptr<ProxyServer> server_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<nlohmann::json> lines_;
};

ref::RetryPolicy OneAttempt(std::chrono::milliseconds idle = std::chrono::seconds(10)) {
  ref::RetryPolicy policy;
  policy.max_attempts = 1;
  policy.timeouts.connect = std::chrono::seconds(10);
  policy.timeouts.response_headers = std::chrono::seconds(10);
  policy.timeouts.idle = idle;
  policy.timeouts.total = std::chrono::seconds(30);
  return policy;
}

ref::CallRequest CallThrough(const Proxy& proxy, ref::Dialect dialect) {
  return {.dialect = dialect,
          .base_url = {.host = "127.0.0.1", .port = proxy.port(), .path = ""},
          .api_key = "sk-test",
          .body = R"({"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]})",
          .stream = true,
          .idempotency_key = std::nullopt,
          .extra_headers = {},
          .routes = {}};
}

// One reference call to the end; returns its terminal event.
ref::LifecycleEvent Call(ref::CallRequest request, ref::RetryPolicy policy = OneAttempt()) {
  asio::io_context io;
  ref::LifecycleEvent last;
  auto driver = ref::CallDriver::Launch(
      io, std::move(request), std::move(policy), {.seed = 7},
      {.on_event = [&last](const ref::LifecycleEvent& event) { last = event; }, .on_done = [] {}});
  io.run_for(kPatience);
  EXPECT_TRUE(last.terminal());
  return last;
}

TEST(ProxyServerTest, ACutAtEventThreeIsATruncatedStreamForTheReferenceClient) {
  Upstream upstream(scenario::Dialect::kOpenAiChat, LongAnswer());
  Proxy proxy(upstream.base_url(), R"(faultline: 1
rules:
  - name: cut-at-3
    response: {content: {end: {kind: no_terminator, after_event: 3}}}
)");
  const ref::LifecycleEvent last = Call(CallThrough(proxy, ref::Dialect::kOpenAiChat));
  ASSERT_EQ(last.type, ref::EventType::kFailed);
  ASSERT_TRUE(last.failure.has_value());
  EXPECT_EQ(last.failure->code, ref::FailureCode::kStreamTruncated);
  EXPECT_EQ(last.failure->failure_class, ref::FailureClass::kTruncated);
  const nlohmann::json line = proxy.FirstLine();
  EXPECT_EQ(line["rule"], "cut-at-3");
  EXPECT_THAT(line["faults"].get<std::string>(), HasSubstr("end=no_terminator@3"));
  EXPECT_EQ(line["client"]["status"], 200);
  EXPECT_EQ(line["upstream"]["status"], 200);
  EXPECT_EQ(upstream.journal().size(), 1u);
}

TEST(ProxyServerTest, A429WithRetryAfterReachesTheClient) {
  Upstream upstream(scenario::Dialect::kAnthropicMessages, LongAnswer());
  Proxy proxy(upstream.base_url(), R"(faultline: 1
rules:
  - response: {status: 429, retry_after: {seconds: 2}}
)");
  const ref::LifecycleEvent last = Call(CallThrough(proxy, ref::Dialect::kAnthropicMessages));
  ASSERT_EQ(last.type, ref::EventType::kFailed);
  ASSERT_TRUE(last.failure.has_value());
  EXPECT_EQ(last.failure->code, ref::FailureCode::kRateLimit);
  EXPECT_EQ(last.failure->status, 429);
  EXPECT_EQ(last.failure->retry_after, std::chrono::milliseconds(2000));
  EXPECT_TRUE(proxy.FirstLine()["upstream"].is_null());
  EXPECT_TRUE(upstream.journal().empty());  // the proxy answered; the provider never knew
}

TEST(ProxyServerTest, RetryAfterIsInjectedIntoTheUpstreamsOwn429) {
  scenario::ResponseSpec throttled;
  throttled.status = 429;
  throttled.error = ErrorOf(scenario::ErrorKind::kRateLimit);
  Upstream upstream(scenario::Dialect::kOpenAiChat, throttled);
  Proxy proxy(upstream.base_url(), R"(faultline: 1
rules:
  - response: {retry_after: {seconds: 3}}
)");
  const ref::LifecycleEvent last = Call(CallThrough(proxy, ref::Dialect::kOpenAiChat));
  ASSERT_TRUE(last.failure.has_value());
  EXPECT_EQ(last.failure->status, 429);
  EXPECT_EQ(last.failure->retry_after, std::chrono::milliseconds(3000));
  EXPECT_EQ(upstream.journal().size(), 1u);
}

// Without rules the client's bytes are the upstream's: every byte the proxy received from the
// fake provider, as it journaled them.
TEST(ProxyServerTest, WithoutRulesTheResponseIsByteIdentical) {
  for (scenario::Dialect dialect : {scenario::Dialect::kOpenAiChat, scenario::Dialect::kOllama,
                                    scenario::Dialect::kBedrockConverse}) {
    Upstream upstream(dialect, LongAnswer());
    Proxy proxy(upstream.base_url(), "faultline: 1\nrules: []\n");
    const std::string request = ref::BuildHttpRequest(CallThrough(proxy, RefDialect(dialect)));
    asio::io_context io;
    asio::ip::tcp::socket socket(io);
    socket.connect({asio::ip::make_address("127.0.0.1"), proxy.port()});
    asio::write(socket, asio::buffer(request));
    ref::HttpResponseParser parser;
    std::string received;
    std::array<char, 4096> chunk{};
    boost::system::error_code ec;
    while (!parser.complete() && !ec && received.size() < (1u << 20)) {
      const std::size_t n = socket.read_some(asio::buffer(chunk), ec);
      received.append(chunk.data(), n);
      parser.Feed(std::string_view(chunk.data(), n));
    }
    ASSERT_TRUE(parser.complete()) << scenario::ToString(dialect);
    const nlohmann::json line = proxy.FirstLine();
    if (line.contains("upstream_bytes")) {
      EXPECT_EQ(received, line["upstream_bytes"].get<std::string>()) << scenario::ToString(dialect);
    } else {  // not UTF-8: Bedrock's binary event stream
      EXPECT_EQ(provider::Base64Encode(received), line["upstream_bytes_base64"].get<std::string>())
          << scenario::ToString(dialect);
    }
    EXPECT_EQ(line["upstream"]["bytes_sent"], received.size());  // all that arrived, forwarded
    EXPECT_EQ(line["client"]["bytes_sent"], received.size());
    EXPECT_EQ(upstream.journal().size(), 1u);  // the provider answered that one request
    EXPECT_GT(line["upstream_events"].get<int>(), 10);
  }
}

TEST(ProxyServerTest, AStallForeverEndsWhenTheClientGivesUp) {
  Upstream upstream(scenario::Dialect::kOllama, LongAnswer());
  Proxy proxy(upstream.base_url(), R"(faultline: 1
rules:
  - response: {content: {faults: [{after_event: 1, stall: forever}]}}
)");
  const ref::LifecycleEvent last =
      Call(CallThrough(proxy, ref::Dialect::kOllama), OneAttempt(std::chrono::milliseconds(300)));
  ASSERT_TRUE(last.failure.has_value());
  EXPECT_EQ(last.failure->code, ref::FailureCode::kTimeout);
  const nlohmann::json line = proxy.FirstLine();
  EXPECT_EQ(line["client"]["end"],
            std::string(provider::ToString(provider::EndKind::kStalledClientGaveUp)));
  EXPECT_THAT(line["faults"].get<std::string>(), HasSubstr("stall@1"));
}

}  // namespace
}  // namespace faultline::proxy::testing
