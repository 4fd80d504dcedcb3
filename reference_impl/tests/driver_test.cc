// The Asio driver against a tiny in-test loopback server that replays canned bytes.
#include "reference_impl/driver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <cstdio>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "beast/awaitable_tuple.h"
#include "reference_impl/tests/wire_fixtures.h"

namespace faultline::ref {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using net::kTuple;
using std::chrono::milliseconds;

enum class End { kClose, kReset, kStall };
struct Reply {
  std::string bytes;
  End end = End::kClose;
};

// Serves one connection per reply, in order, on its own thread: reads the request (head and
// content-length body), writes the reply's bytes, then closes, resets (SO_LINGER 0) or stalls
// until the client goes.
class ScriptServer {
 public:
  explicit ScriptServer(std::vector<Reply> replies)
      : acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)),
        replies_(std::move(replies)) {
    asio::co_spawn(io_, Serve(), asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~ScriptServer() {
    io_.stop();
    thread_.join();
  }

  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
  std::vector<std::string> requests() {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  asio::awaitable<void> Serve() {
    for (const Reply& reply : replies_) {
      auto [ec, socket] = co_await acceptor_.async_accept(kTuple);
      if (ec) co_return;
      co_await Exchange(std::move(socket), reply);
    }
  }

  asio::awaitable<void> Exchange(tcp::socket socket, const Reply& reply) {
    std::string in;
    auto [ec, head] =
        co_await asio::async_read_until(socket, asio::dynamic_buffer(in), "\r\n\r\n", kTuple);
    if (ec) co_return;
    const std::size_t length = ContentLength(in.substr(0, head));
    if (in.size() < head + length) {
      auto [body_ec, n] =
          co_await asio::async_read(socket, asio::dynamic_buffer(in),
                                    asio::transfer_exactly(head + length - in.size()), kTuple);
      (void)n;
      if (body_ec) co_return;
    }
    {
      std::lock_guard lock(mutex_);
      requests_.push_back(in);
    }
    auto [write_ec, written] =
        co_await asio::async_write(socket, asio::buffer(reply.bytes), kTuple);
    (void)written;
    (void)write_ec;
    boost::system::error_code ignored;
    if (reply.end == End::kReset) {
      socket.set_option(asio::socket_base::linger(true, 0), ignored);
    } else if (reply.end == End::kStall) {
      std::array<char, 512> sink;
      for (;;) {
        auto [read_ec, n] = co_await socket.async_read_some(asio::buffer(sink), kTuple);
        (void)n;
        if (read_ec) break;
      }
    } else {
      socket.shutdown(tcp::socket::shutdown_send, ignored);
    }
    socket.close(ignored);
  }

  static std::size_t ContentLength(const std::string& head) {
    const std::size_t at = head.find("content-length: ");
    if (at == std::string::npos) return 0;
    return std::stoul(head.substr(at + 16));
  }

  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::vector<Reply> replies_;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<std::string> requests_;
};

std::string SseOk(std::string_view body) {
  return "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n" + std::string(body);
}

RetryPolicy FastPolicy() {
  RetryPolicy policy;
  policy.max_attempts = 3;
  policy.backoff.base = milliseconds(10);
  policy.backoff.cap = milliseconds(50);
  policy.min_attempt_time = milliseconds(10);
  policy.timeouts.connect = milliseconds(2000);
  policy.timeouts.response_headers = milliseconds(2000);
  policy.timeouts.idle = milliseconds(200);
  policy.timeouts.total = milliseconds(20'000);
  return policy;
}

CallRequest Request(std::uint16_t port) {
  return {.dialect = Dialect::kOpenAiChat,
          .base_url = {.host = "127.0.0.1", .port = port, .path = ""},
          .api_key = "sk-test",
          .body = R"({"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]})",
          .stream = true,
          .idempotency_key = std::nullopt,
          .extra_headers = {},
          .routes = {}};
}

struct Recorded {
  std::vector<LifecycleEvent> events;
  std::vector<PolicyClock::time_point> at;
  int done = 0;

  DriverCallbacks Callbacks() {
    return {.on_event =
                [this](const LifecycleEvent& event) {
                  events.push_back(event);
                  at.push_back(PolicyClock::now());
                },
            .on_done = [this] { ++done; }};
  }
  int Terminals() const {
    int n = 0;
    for (const auto& event : events) n += event.terminal();
    return n;
  }
  std::vector<std::size_t> Of(EventType type) const {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < events.size(); ++i) {
      if (events[i].type == type) out.push_back(i);
    }
    return out;
  }
};

// Runs one call to completion on a fresh io_context.
// The io_context is a member declared first: the driver holds a timer of it, so it must outlive
// the driver handle.
struct OneCall {
  OneCall(std::uint16_t port, RetryPolicy policy = FastPolicy()) {
    driver =
        CallDriver::Launch(io, Request(port), std::move(policy), {.seed = 7}, recorded.Callbacks());
    io.run();
  }
  const LifecycleEvent& last() const { return recorded.events.back(); }
  asio::io_context io;
  Recorded recorded;
  std::shared_ptr<CallDriver> driver;
};

TEST(DriverTest, Success) {
  ScriptServer server({{SseOk(fixtures::kChatText)}});
  OneCall call(server.port());
  EXPECT_EQ(call.recorded.done, 1);
  ASSERT_EQ(call.recorded.Terminals(), 1);
  ASSERT_EQ(call.last().type, EventType::kCommitted);
  EXPECT_EQ(call.last().committed->text, "Hello, world");
  EXPECT_EQ(call.recorded.Of(EventType::kChunk).size(), 2u);
  EXPECT_EQ(call.driver->connections_opened(), 1u);
  EXPECT_EQ(call.driver->connections_closed(), 1u);
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0], BuildHttpRequest(Request(server.port())));
}

TEST(DriverTest, RateLimitThenSuccessWaitsForTheHint) {
  const std::string body = R"({"error":{"type":"requests","code":"rate_limit_exceeded"}})";
  ScriptServer server(
      {{"HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\nretry-after-ms: "
        "150\r\ncontent-length: " +
        std::to_string(body.size()) + "\r\n\r\n" + body},
       {SseOk(fixtures::kChatText)}});
  OneCall call(server.port());
  const Recorded& r = call.recorded;
  ASSERT_EQ(r.Terminals(), 1);
  ASSERT_EQ(call.last().type, EventType::kCommitted);
  EXPECT_EQ(call.last().attempt, 2);
  auto interrupted = r.Of(EventType::kInterrupted);
  ASSERT_EQ(interrupted.size(), 1u);
  EXPECT_EQ(r.events[interrupted[0]].delay_source, DelaySource::kRetryAfterMs);
  EXPECT_EQ(r.events[interrupted[0]].failure->code, FailureCode::kRateLimit);
  auto starts = r.Of(EventType::kStart);
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_GE(r.at[starts[1]] - r.at[interrupted[0]], milliseconds(150));
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0], requests[1]);  // the same bytes on every attempt
  EXPECT_EQ(call.driver->connections_opened(), 2u);
  EXPECT_EQ(call.driver->connections_closed(), 2u);
}

TEST(DriverTest, ResetMidStreamThenSuccess) {
  const std::string full = SseOk(fixtures::kChatText);
  ScriptServer server({{full.substr(0, full.find(", world")), End::kReset}, {full}});
  OneCall call(server.port());
  ASSERT_EQ(call.recorded.Terminals(), 1);
  ASSERT_EQ(call.last().type, EventType::kCommitted);
  EXPECT_EQ(call.last().committed->text, "Hello, world");
  auto interrupted = call.recorded.Of(EventType::kInterrupted);
  ASSERT_EQ(interrupted.size(), 1u);
  EXPECT_EQ(call.recorded.events[interrupted[0]].failure->code, FailureCode::kTransport);
}

TEST(DriverTest, StallIsCutByTheIdleWatchdog) {
  const std::string full = SseOk(fixtures::kChatText);
  ScriptServer server({{full.substr(0, full.find(", world")), End::kStall}, {full}});
  OneCall call(server.port());
  ASSERT_EQ(call.recorded.Terminals(), 1);
  ASSERT_EQ(call.last().type, EventType::kCommitted);
  auto interrupted = call.recorded.Of(EventType::kInterrupted);
  ASSERT_EQ(interrupted.size(), 1u);
  const Failure& failure = *call.recorded.events[interrupted[0]].failure;
  EXPECT_EQ(failure.code, FailureCode::kTimeout);
  EXPECT_EQ(failure.phase, Phase::kStream);
  EXPECT_EQ(failure.partial_output, PartialOutput::kUncommitted);
  EXPECT_EQ(call.driver->connections_closed(), 2u);
}

TEST(DriverTest, RefusedConnectionFailsAfterTheAttempts) {
  std::uint16_t port = 0;
  {
    asio::io_context io;
    tcp::acceptor probe(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    port = probe.local_endpoint().port();
  }  // closed: nothing listens there now
  RetryPolicy policy = FastPolicy();
  policy.max_attempts = 2;
  OneCall call(port, policy);
  ASSERT_EQ(call.recorded.Terminals(), 1);
  EXPECT_EQ(call.last().type, EventType::kFailed);
  EXPECT_EQ(call.last().failure->code, FailureCode::kTransport);
  EXPECT_EQ(call.last().failure->phase, Phase::kConnect);
  EXPECT_EQ(call.recorded.Of(EventType::kStart).size(), 2u);
}

TEST(DriverTest, ManyCallsConcurrentlyOnOneContext) {
  constexpr int kCalls = 12;
  std::vector<Reply> replies(kCalls, Reply{SseOk(fixtures::kChatText)});
  ScriptServer server(replies);
  asio::io_context io;
  std::vector<Recorded> recorded(kCalls);
  std::vector<std::shared_ptr<CallDriver>> drivers;
  for (int i = 0; i < kCalls; ++i) {
    drivers.push_back(CallDriver::Launch(io, Request(server.port()), FastPolicy(),
                                         {.call_id = "c" + std::to_string(i)},
                                         recorded[i].Callbacks()));
  }
  io.run();
  for (int i = 0; i < kCalls; ++i) {
    ASSERT_EQ(recorded[i].Terminals(), 1) << i;
    EXPECT_EQ(recorded[i].events.back().committed->text, "Hello, world");
    EXPECT_EQ(recorded[i].events.back().response_id, "c" + std::to_string(i) + "-1");
  }
}

TEST(DriverTest, CancelFromAnotherThreadMidStream) {
  const std::string full = SseOk(fixtures::kChatText);
  ScriptServer server({{full.substr(0, full.find(", world")), End::kStall}});
  RetryPolicy policy = FastPolicy();
  policy.timeouts.idle = milliseconds(60'000);  // only the cancel can end it
  asio::io_context io;
  Recorded recorded;
  std::promise<void> first_chunk;
  DriverCallbacks callbacks = recorded.Callbacks();
  auto record = callbacks.on_event;
  bool signalled = false;
  callbacks.on_event = [&](const LifecycleEvent& event) {
    record(event);
    if (event.type == EventType::kChunk && !signalled) {
      signalled = true;
      first_chunk.set_value();
    }
  };
  auto driver = CallDriver::Launch(io, Request(server.port()), policy, {}, callbacks);
  std::thread runner([&] { io.run(); });
  first_chunk.get_future().wait();
  driver->Cancel();
  runner.join();
  ASSERT_EQ(recorded.Terminals(), 1);
  EXPECT_EQ(recorded.events.back().type, EventType::kFailed);
  EXPECT_EQ(recorded.events.back().failure->code, FailureCode::kAborted);
  EXPECT_EQ(recorded.events.back().failure->phase, Phase::kStream);
  EXPECT_EQ(driver->connections_closed(), driver->connections_opened());
  EXPECT_EQ(server.requests().size(), 1u);
}

// A trailer field over 64 KiB made Beast throw inside the read coroutine; the exception was
// dropped and the call waited for the idle watchdog (TIMEOUT). It is a malformed response.
TEST(DriverTest, HugeTrailerIsAMalformedResponseAtOnce) {
  const std::string body = "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n";
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", body.size());
  const std::string wire =
      "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n" +
      std::string(size) + body + "\r\n0\r\nx-huge: " + std::string(70'000, 'h') + "\r\n\r\n";
  ScriptServer server({{wire, End::kStall}});
  RetryPolicy policy = FastPolicy();
  policy.max_attempts = 1;
  policy.timeouts.idle = milliseconds(10'000);  // a hang would show as a TIMEOUT much later
  const auto start = PolicyClock::now();
  OneCall call(server.port(), policy);
  ASSERT_EQ(call.recorded.Terminals(), 1);
  EXPECT_EQ(call.last().failure->code, FailureCode::kMalformedResponse);
  EXPECT_LT(PolicyClock::now() - start, milliseconds(5000));
  EXPECT_EQ(call.recorded.done, 1);
}

// An exception thrown by the caller's sink inside a coroutine ends the call in a defined state:
// a response/failed (UNKNOWN, naming the exception), on_done, and io.run() returns normally.
TEST(DriverTest, ExceptionInTheEventSinkEndsTheCall) {
  const std::string full = SseOk(fixtures::kChatText);
  ScriptServer server({{full.substr(0, full.find(", world")), End::kStall}});
  RetryPolicy policy = FastPolicy();
  policy.timeouts.idle = milliseconds(10'000);
  asio::io_context io;
  Recorded recorded;
  DriverCallbacks callbacks = recorded.Callbacks();
  auto record = callbacks.on_event;
  bool thrown = false;
  callbacks.on_event = [&](const LifecycleEvent& event) {
    if (event.type == EventType::kChunk && !thrown) {
      thrown = true;
      throw std::runtime_error("sink is full");
    }
    record(event);
  };
  const auto start = PolicyClock::now();
  auto driver = CallDriver::Launch(io, Request(server.port()), policy, {}, callbacks);
  testing::internal::CaptureStderr();
  io.run();
  const std::string logged = testing::internal::GetCapturedStderr();
  EXPECT_NE(logged.find("sink is full"), std::string::npos) << logged;
  EXPECT_LT(PolicyClock::now() - start, milliseconds(5000));
  EXPECT_EQ(recorded.done, 1);
  ASSERT_EQ(recorded.Terminals(), 1);
  EXPECT_EQ(recorded.events.back().failure->code, FailureCode::kUnknown);
  EXPECT_NE(recorded.events.back().failure->message.find("sink is full"), std::string::npos);
  EXPECT_EQ(driver->connections_closed(), driver->connections_opened());
}

// A sink that throws on every event, the terminal one included: the call still ends.
TEST(DriverTest, SinkThatAlwaysThrowsStillEnds) {
  ScriptServer server({{SseOk(fixtures::kChatText)}});
  asio::io_context io;
  int done = 0;
  DriverCallbacks callbacks{.on_event = [](const LifecycleEvent&) { throw 42; },
                            .on_done = [&] { ++done; }};
  auto driver = CallDriver::Launch(io, Request(server.port()), FastPolicy(), {}, callbacks);
  testing::internal::CaptureStderr();
  io.run();
  const std::string logged = testing::internal::GetCapturedStderr();
  EXPECT_NE(logged.find("not a std::exception"), std::string::npos) << logged;
  EXPECT_EQ(done, 1);
  EXPECT_EQ(driver->connections_closed(), driver->connections_opened());
}

}  // namespace
}  // namespace faultline::ref
