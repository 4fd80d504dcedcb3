#include "reference_impl/driver.h"

#include <fmt/format.h>

#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <utility>

#include "beast/awaitable_tuple.h"

namespace faultline::ref {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Strand = asio::strand<asio::io_context::executor_type>;

using net::kTuple;
constexpr std::size_t kReadChunk = 16 * 1024;

// Converts a socket error into the engine's vocabulary, once, at the Asio edge.
TransportKind KindOf(const boost::system::error_code& ec) {
  if (ec == asio::error::connection_refused || ec == asio::error::host_unreachable ||
      ec == asio::error::network_unreachable) {
    return TransportKind::kRefused;
  }
  if (ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
      ec == asio::error::connection_aborted) {
    return TransportKind::kReset;
  }
  if (ec == asio::error::eof) return TransportKind::kClosed;
  return TransportKind::kOther;
}

class Driver final : public CallDriver, public std::enable_shared_from_this<Driver> {
 public:
  Driver(asio::io_context& io, CallRequest request, RetryPolicy policy, CallOptions options,
         DriverCallbacks callbacks)
      : strand_(asio::make_strand(io)),
        timer_(strand_),
        call_(std::move(request), std::move(policy), std::move(options)),
        callbacks_(std::move(callbacks)) {}

  void Begin() {
    asio::post(strand_, [self = shared_from_this()] {
      self->Step([&] { return self->call_.Start(Now(), std::chrono::system_clock::now()); });
    });
  }

  void Cancel() override {
    asio::post(strand_, [self = shared_from_this()] {
      self->Step([&] { return self->call_.Cancel(Now()); });
    });
  }

  std::uint64_t connections_opened() const override { return opened_; }
  std::uint64_t connections_closed() const override { return closed_; }

 private:
  static PolicyClock::time_point Now() { return PolicyClock::now(); }

  // Feeds one input to the call (`input` returns its actions) and applies the result; whatever
  // throws on the way ends the call instead of escaping. Runs on the strand.
  template <typename Input>
  void Step(Input&& input) noexcept {
    try {
      Apply(input());
    } catch (...) {
      OnException(std::current_exception());
    }
  }

  // The completion handler of every coroutine: an exception it let through ends the call.
  auto Completion() {
    return [self = shared_from_this()](std::exception_ptr error) {
      if (error) self->OnException(error);
    };
  }

  void OnException(std::exception_ptr error) noexcept {
    Report(Describe(error));
    try {
      if (!call_.done()) Apply(call_.Abandon(Describe(error), Now()));
    } catch (...) {  // the sink threw again: the call still ends, without its terminal event
      Report("while ending the call: " + Describe(std::current_exception()));
    }
    try {
      Finish();
    } catch (...) {
      Report("in on_done: " + Describe(std::current_exception()));
    }
  }

  static void Report(const std::string& what) noexcept {
    std::fprintf(stderr, "faultline-ref driver: %s\n", what.c_str());
  }

  static std::string Describe(std::exception_ptr error) {
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& caught) {
      return fmt::format("exception: {}", caught.what());
    } catch (...) {
      return "an exception that is not a std::exception";
    }
  }

  // Delivers the events, then performs the actions. Runs on the strand.
  void Apply(const std::vector<Action>& actions) {
    for (const LifecycleEvent& event : call_.TakeEvents()) {
      if (callbacks_.on_event) callbacks_.on_event(event);
    }
    for (const Action& action : actions) Perform(action);
  }

  void Perform(const Action& action) {
    switch (action.kind) {
      case Action::Kind::kConnect:
        return StartConnection();
      case Action::Kind::kSend:
        return Send(action.bytes);
      case Action::Kind::kArmTimer:
      case Action::Kind::kWait:
        return ArmTimer(action.at);
      case Action::Kind::kCancelTimer:
        ++timer_generation_;
        timer_.cancel();
        return;
      case Action::Kind::kCloseConnection:
        return CloseConnection();
      case Action::Kind::kDone:
        return Finish();
    }
  }

  void StartConnection() {
    CloseConnection();
    socket_ = std::make_shared<tcp::socket>(strand_);
    ++opened_;
    asio::co_spawn(strand_, RunConnection(shared_from_this(), socket_, ++connection_generation_),
                   Completion());
  }

  void Send(std::string_view bytes) {
    if (!socket_) return;
    asio::co_spawn(strand_, RunSend(shared_from_this(), socket_, connection_generation_, bytes),
                   Completion());
  }

  void CloseConnection() {
    ++connection_generation_;  // pending completions of the old socket are ignored
    if (!socket_) return;
    boost::system::error_code ignored;
    socket_->close(ignored);
    socket_.reset();
    ++closed_;
  }

  void ArmTimer(PolicyClock::time_point at) {
    timer_.expires_at(at);  // cancels a pending wait
    asio::co_spawn(strand_, RunTimer(shared_from_this(), ++timer_generation_), Completion());
  }

  void Finish() {
    CloseConnection();
    ++timer_generation_;
    timer_.cancel();
    if (done_) return;
    done_ = true;
    if (callbacks_.on_done) callbacks_.on_done();
  }

  // Connect, then read until the connection ends or is replaced. The socket is shared so that a
  // close from Perform() leaves it alive until this coroutine's pending operation completes.
  static asio::awaitable<void> RunConnection(std::shared_ptr<Driver> self,
                                             std::shared_ptr<tcp::socket> socket,
                                             std::uint64_t generation) {
    const BaseUrl& url = self->call_.target();
    tcp::resolver resolver(self->strand_);
    auto [resolve_ec, endpoints] =
        co_await resolver.async_resolve(url.host, std::to_string(url.port), kTuple);
    if (generation != self->connection_generation_) co_return;
    if (resolve_ec) {
      self->Step([&] {
        return self->call_.ConnectionFailed(TransportKind::kResolve, resolve_ec.message(), Now());
      });
      co_return;
    }
    auto [connect_ec, endpoint] = co_await asio::async_connect(*socket, endpoints, kTuple);
    (void)endpoint;
    if (generation != self->connection_generation_) co_return;
    if (connect_ec) {
      self->Step([&] {
        return self->call_.ConnectionFailed(KindOf(connect_ec), connect_ec.message(), Now());
      });
      co_return;
    }
    self->Step([&] { return self->call_.Connected(Now()); });
    co_await ReadLoop(self, socket, generation);
  }

  static asio::awaitable<void> ReadLoop(std::shared_ptr<Driver> self,
                                        std::shared_ptr<tcp::socket> socket,
                                        std::uint64_t generation) {
    std::array<char, kReadChunk> buffer;
    while (generation == self->connection_generation_) {
      auto [ec, n] = co_await socket->async_read_some(asio::buffer(buffer), kTuple);
      if (generation != self->connection_generation_) co_return;
      if (n > 0) {
        self->Step(
            [&] { return self->call_.BytesReceived(std::string_view(buffer.data(), n), Now()); });
        if (generation != self->connection_generation_) co_return;
      }
      if (ec == asio::error::eof) {
        self->Step([&] { return self->call_.ConnectionClosed(Now()); });
        co_return;
      }
      if (ec) {
        self->Step([&] { return self->call_.ConnectionFailed(KindOf(ec), ec.message(), Now()); });
        co_return;
      }
    }
  }

  // `bytes` are the Call's request bytes, alive as long as the driver.
  static asio::awaitable<void> RunSend(std::shared_ptr<Driver> self,
                                       std::shared_ptr<tcp::socket> socket,
                                       std::uint64_t generation, std::string_view bytes) {
    auto [ec, n] = co_await asio::async_write(*socket, asio::buffer(bytes), kTuple);
    (void)n;
    if (generation != self->connection_generation_ || !ec) co_return;
    self->Step([&] { return self->call_.ConnectionFailed(KindOf(ec), ec.message(), Now()); });
  }

  static asio::awaitable<void> RunTimer(std::shared_ptr<Driver> self, std::uint64_t generation) {
    auto [ec] = co_await self->timer_.async_wait(kTuple);
    if (generation != self->timer_generation_) co_return;  // re-armed or cancelled meanwhile
    if (ec) co_return;
    self->Step([&] { return self->call_.TimerFired(Now()); });
  }

  Strand strand_;
  asio::steady_timer timer_;  // owned here, outside the coroutines that wait on it
  Call call_;
  DriverCallbacks callbacks_;
  std::shared_ptr<tcp::socket> socket_;
  std::uint64_t connection_generation_ = 0;
  std::uint64_t timer_generation_ = 0;
  std::uint64_t opened_ = 0;
  std::uint64_t closed_ = 0;
  bool done_ = false;
};

}  // namespace

std::shared_ptr<CallDriver> CallDriver::Launch(asio::io_context& io, CallRequest request,
                                               RetryPolicy policy, CallOptions options,
                                               DriverCallbacks callbacks) {
  auto driver = std::make_shared<Driver>(io, std::move(request), std::move(policy),
                                         std::move(options), std::move(callbacks));
  driver->Begin();
  return driver;
}

}  // namespace faultline::ref
