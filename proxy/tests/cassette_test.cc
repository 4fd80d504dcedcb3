// Record a stream through the proxy, play the cassette back with the fake provider on a socket,
// and cut it at event 3: the issue's "done when" for cassettes. Bytes are compared exactly; times
// with a stated tolerance (loopback on a loaded 2-core machine): every recorded write arrives
// within kTolerance of its recorded offset from the request.
#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "fake_provider/server/server.h"
#include "proxy/proxy_cassette.h"
#include "proxy/server/proxy_server.h"
#include "proxy/tests/proxy_test_support.h"
#include "reference_impl/driver.h"
#include "scenarios/loader.h"

namespace faultline::proxy::testing {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
constexpr auto kPatience = std::chrono::seconds(20);
constexpr auto kTolerance = std::chrono::milliseconds(150);

// The fake provider serving one scenario on its own thread.
class Provider {
 public:
  explicit Provider(scenario::Scenario scenario) {
    auto server = provider::Server::Create({});
    EXPECT_TRUE(server.has_value());
    server_ = std::move(*server);
    auto session = server_->AddSession(std::move(scenario), "s1");
    EXPECT_TRUE(session.has_value());
    base_url_ = session->base_url;
    port_ = server_->port();
    thread_ = std::thread([this] { server_->Run(); });
  }
  ~Provider() {
    server_->Stop();
    thread_.join();
  }
  const std::string& base_url() const { return base_url_; }
  std::uint16_t port() const { return port_; }
  // The session's path ("/s/s1") before the dialect's.
  std::string path() const { return base_url_.substr(base_url_.find('/', 7)); }

 private:
  std::unique_ptr<provider::Server> server_;
  std::string base_url_;
  std::uint16_t port_ = 0;
  std::thread thread_;
};

// The proxy without rules; hands over the record of its first exchange.
class Recorder {
 public:
  explicit Recorder(const std::string& upstream) {
    ProxyOptions options;
    options.upstream = upstream;
    options.exchange = [this](const ExchangeRecord& record) {
      std::lock_guard lock(mutex_);
      records_.push_back(record);
      changed_.notify_all();
    };
    auto server = ProxyServer::Create(std::move(options));
    EXPECT_TRUE(server.has_value());
    server_ = std::move(*server);
    thread_ = std::thread([this] { server_->Run(); });
  }
  ~Recorder() {
    server_->Stop();
    thread_.join();
  }
  std::uint16_t port() const { return server_->port(); }
  ExchangeRecord First() {
    std::unique_lock lock(mutex_);
    EXPECT_TRUE(changed_.wait_for(lock, kPatience, [this] { return !records_.empty(); }));
    return records_.empty() ? ExchangeRecord{} : records_.front();
  }

 private:
  std::unique_ptr<ProxyServer> server_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<ExchangeRecord> records_;
};

ref::CallRequest CallTo(std::uint16_t port, std::string path) {
  return {.dialect = ref::Dialect::kOpenAiChat,
          .base_url = {.host = "127.0.0.1", .port = port, .path = std::move(path)},
          .api_key = "sk-test-secret-value-0123456789",
          .body = R"({"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]})",
          .stream = true,
          .idempotency_key = std::nullopt,
          .extra_headers = {},
          .routes = {}};
}

ref::LifecycleEvent Call(ref::CallRequest request) {
  ref::RetryPolicy policy;
  policy.max_attempts = 1;
  policy.timeouts.total = std::chrono::seconds(30);
  asio::io_context io;
  ref::LifecycleEvent last;
  auto driver = ref::CallDriver::Launch(
      io, std::move(request), std::move(policy), {.seed = 7},
      {.on_event = [&last](const ref::LifecycleEvent& event) { last = event; }, .on_done = [] {}});
  io.run_for(kPatience);
  EXPECT_TRUE(last.terminal());
  return last;
}

// One raw exchange: the body bytes as they arrived, each run with its time from the request.
struct Arrivals {
  std::vector<std::pair<Clock::duration, std::string>> body;
  std::string all() const {
    std::string out;
    for (const auto& [at, bytes] : body) out += bytes;
    return out;
  }
};
Arrivals Fetch(std::uint16_t port, const ref::CallRequest& request) {
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  socket.connect({asio::ip::make_address("127.0.0.1"), port});
  const Clock::time_point sent = Clock::now();
  asio::write(socket, asio::buffer(ref::BuildHttpRequest(request)));
  ref::HttpResponseParser parser;
  Arrivals arrivals;
  std::array<char, 65536> chunk{};
  boost::system::error_code ec;
  while (!parser.complete() && !ec) {
    const std::size_t n = socket.read_some(asio::buffer(chunk), ec);
    const ref::HttpFeed feed = parser.Feed(std::string_view(chunk.data(), n));
    if (!feed.body.empty()) arrivals.body.emplace_back(Clock::now() - sent, feed.body);
  }
  return arrivals;
}

scenario::ResponseSpec PacedAnswer() {
  scenario::ResponseSpec spec = LongAnswer();
  spec.content.chunk_delay = std::chrono::milliseconds(40);
  return spec;
}

class CassetteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ =
        fs::temp_directory_path() /
        ("faultline-cassette-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }

  // Records the paced answer through the proxy into folder_/rec.jsonl.
  scenario::Cassette Record() {
    scenario::Scenario upstream;
    upstream.name = "upstream";
    upstream.dialect = scenario::Dialect::kOpenAiChat;
    upstream.responses = {PacedAnswer()};
    Provider provider(upstream);
    Recorder recorder(provider.base_url());
    const ref::LifecycleEvent last = Call(CallTo(recorder.port(), ""));
    EXPECT_EQ(last.type, ref::EventType::kCommitted);
    auto cassette = CassetteOf(recorder.First());
    EXPECT_TRUE(cassette.has_value()) << (cassette ? "" : cassette.error());
    std::ofstream(folder_ / "rec.jsonl") << scenario::WriteCassette(*cassette);
    return *cassette;
  }

  scenario::Scenario Replaying(std::string_view overlay) {
    const fs::path file = folder_ / "replay.yaml";
    std::ofstream(file) << "faultline: 1\nname: replay\ndescription: a recorded stream played "
                           "back\ndialect: openai-chat\nresponses:\n  - cassette: rec.jsonl\n"
                        << overlay;
    auto loaded = scenario::LoadScenarioFile(file);
    EXPECT_TRUE(loaded.has_value()) << (loaded ? "" : loaded.error().ToString());
    return *loaded;
  }

  fs::path folder_;
};

TEST_F(CassetteTest, ARecordedStreamPlaysBackWithItsBytesAndTiming) {
  const scenario::Cassette cassette = Record();
  // What was recorded: the whole stream, one write per event as the provider paced it, the
  // request's credentials redacted.
  EXPECT_EQ(cassette.dialect, "openai-chat");
  EXPECT_EQ(cassette.status, 200);
  EXPECT_EQ(cassette.end, scenario::Cassette::End::kCompleted);
  EXPECT_GE(cassette.writes.size(), 10u);
  EXPECT_EQ(WriteCassette(cassette).find("secret-value"), std::string::npos);
  auto reread = scenario::ParseCassette(scenario::WriteCassette(cassette), "rec.jsonl");
  ASSERT_TRUE(reread.has_value()) << reread.error().ToString();
  EXPECT_EQ(*reread, cassette);

  Provider replay(Replaying(""));
  const Arrivals arrivals = Fetch(replay.port(), CallTo(replay.port(), replay.path()));
  std::string recorded;
  for (const scenario::CassetteWrite& write : cassette.writes) recorded += write.bytes;
  ASSERT_EQ(arrivals.all(), recorded);  // byte for byte

  // Each recorded write's last byte arrives within kTolerance of its recorded offset.
  std::size_t recorded_end = 0;
  std::size_t received_end = 0;
  std::size_t arrival = 0;
  Clock::duration worst{0};
  for (const scenario::CassetteWrite& write : cassette.writes) {
    recorded_end += write.bytes.size();
    while (received_end < recorded_end) received_end += arrivals.body[arrival++].second.size();
    const Clock::duration error = arrivals.body[arrival - 1].first - write.at;
    worst = std::max(worst, error < Clock::duration{0} ? -error : error);
  }
  const auto worst_us = std::chrono::duration_cast<std::chrono::microseconds>(worst);
  RecordProperty("worst_write_timing_error_us", static_cast<int>(worst_us.count()));
  std::printf("cassette replay: %zu writes over %lld ms, worst timing error %lld us\n",
              cassette.writes.size(),
              static_cast<long long>(
                  std::chrono::duration_cast<std::chrono::milliseconds>(cassette.end_at).count()),
              static_cast<long long>(worst_us.count()));
  EXPECT_LE(worst, kTolerance);
  EXPECT_GE(cassette.end_at, std::chrono::milliseconds(300));  // the pacing was recorded
}

TEST_F(CassetteTest, ACutAtEventThreeOfTheRecordingIsTruncatedForTheReferenceClient) {
  Record();
  Provider replay(Replaying("    content: {end: {kind: no_terminator, after_event: 3}}\n"));
  const ref::LifecycleEvent last = Call(CallTo(replay.port(), replay.path()));
  ASSERT_EQ(last.type, ref::EventType::kFailed);
  ASSERT_TRUE(last.failure.has_value());
  EXPECT_EQ(last.failure->code, ref::FailureCode::kStreamTruncated);
  EXPECT_EQ(last.failure->failure_class, ref::FailureClass::kTruncated);
}

TEST_F(CassetteTest, AResetAtEventThreeIsATransportFailure) {
  Record();
  Provider replay(Replaying("    content: {end: {kind: reset, after_event: 3}}\n"));
  const ref::LifecycleEvent last = Call(CallTo(replay.port(), replay.path()));
  ASSERT_EQ(last.type, ref::EventType::kFailed);
  ASSERT_TRUE(last.failure.has_value());
  EXPECT_EQ(last.failure->failure_class, ref::FailureClass::kTransport);
}

TEST_F(CassetteTest, TheReplayedAnswerIsTheRecordedOne) {
  Record();
  Provider replay(Replaying(""));
  const ref::LifecycleEvent last = Call(CallTo(replay.port(), replay.path()));
  ASSERT_EQ(last.type, ref::EventType::kCommitted);
  ASSERT_TRUE(last.committed.has_value());
  EXPECT_EQ(last.committed->text, PacedAnswer().content.text);
}

}  // namespace
}  // namespace faultline::proxy::testing
