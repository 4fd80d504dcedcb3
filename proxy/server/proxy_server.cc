#include "proxy/server/proxy_server.h"

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <deque>
#include <string_view>

#include "beast/awaitable_tuple.h"
#include "proxy/fault_rules.h"
#include "proxy/proxy_core.h"
#include "proxy/proxy_journal.h"
#include "reference_impl/call.h"

namespace faultline::proxy {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using namespace asio::experimental::awaitable_operators;
using net::kTuple;

bool IsLoopback(const asio::ip::address& address) { return address.is_loopback(); }

// Whether the coroutine was cancelled by the operator it runs under (awaitable_operators).
asio::awaitable<bool> Cancelled() {
  const asio::cancellation_state state = co_await asio::this_coro::cancellation_state;
  co_return state.cancelled() != asio::cancellation_type::none;
}

// A coroutine that never ends on its own: it waits until the operator running it cancels it.
asio::awaitable<void> Park() {
  asio::steady_timer forever(co_await asio::this_coro::executor, Clock::time_point::max());
  co_await forever.async_wait(kTuple);
}

// One exchange's state, shared by the coroutines that drive it.
struct ExchangeRun {
  ExchangeRun(asio::any_io_executor executor, ProxyExchange exchange, Clock::time_point arrival)
      : exchange(std::move(exchange)), arrival(arrival), wake(executor), timer(executor) {}
  Duration Now() const { return std::chrono::duration_cast<Duration>(Clock::now() - arrival); }
  void Enqueue(std::vector<Action> actions) {
    for (Action& action : actions) {
      if (action.kind == Action::Kind::kSendUpstream) {
        upstream_request = std::move(action.bytes);
      } else {
        queue.push_back(std::move(action));
      }
    }
    wake.cancel();
  }

  ProxyExchange exchange;
  Clock::time_point arrival;
  asio::steady_timer wake;   // rung when actions arrive
  asio::steady_timer timer;  // the next action's time
  std::deque<Action> queue;
  std::string upstream_request;  // "" when the upstream is not called
  bool keep_alive = false;       // the client's connection carries the next request
  bool holding = false;          // a stall: the exchange ends when the client goes
  bool ended = false;            // the exchange's end is recorded
  bool client_eof = false;       // the client closed its sending side (it may still read)
};

}  // namespace

struct ProxyServer::Impl {
  Impl(ProxyOptions opts, ref::BaseUrl up)
      : options(std::move(opts)), upstream(std::move(up)), book(options.rules) {}

  asio::awaitable<void> Accept();
  asio::awaitable<void> Session(tcp::socket client);
  asio::awaitable<bool> Exchange(tcp::socket& client, provider::HttpRequest request,
                                 std::string& received);
  asio::awaitable<void> Execute(tcp::socket& client, ExchangeRun& run);
  asio::awaitable<void> Watch(tcp::socket& client, ExchangeRun& run, std::string& received);
  asio::awaitable<void> Upstream(ExchangeRun& run);
  asio::awaitable<bool> ConnectUpstream(tcp::socket& socket, ExchangeRun& run);
  void Finish(ExchangeRun& run);

  ProxyOptions options;
  ref::BaseUrl upstream;
  RuleBook book;
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  Clock::time_point start = Clock::now();
  std::uint64_t next_index = 0;
  std::uint64_t next_connection = 0;
  std::atomic<std::uint64_t> finished{0};
};

asio::awaitable<void> ProxyServer::Impl::Accept() {
  for (;;) {
    auto [ec, socket] = co_await acceptor.async_accept(kTuple);
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
    if (ec) continue;  // a connection that failed while being accepted: the next one
    asio::co_spawn(io, Session(std::move(socket)), asio::detached);
  }
}

// Reads requests one after another; each is one exchange.
asio::awaitable<void> ProxyServer::Impl::Session(tcp::socket client) {
  std::string received;  // bytes of the client's next request, not yet consumed
  asio::steady_timer idle(io);
  std::array<char, 16 * 1024> chunk{};
  for (;;) {
    provider::RequestReader reader(options.limits);
    idle.expires_after(options.request_timeout);
    while (reader.state() == provider::RequestReader::State::kReading) {
      received.erase(0, reader.Put(received));
      if (reader.state() != provider::RequestReader::State::kReading) break;
      auto read =
          co_await (client.async_read_some(asio::buffer(chunk), kTuple) || idle.async_wait(kTuple));
      if (read.index() == 1) co_return;  // too slow, or idle: the connection ends
      auto [ec, n] = std::get<0>(read);
      if (ec) {
        reader.PutEof();
        break;
      }
      received.append(chunk.data(), n);
    }
    if (reader.state() == provider::RequestReader::State::kRejected) {
      const provider::RequestRejection& rejection = *reader.rejection();
      const std::string body = fmt::format(R"({{"error":{{"type":"{}","message":"{}"}}}})",
                                           rejection.type, rejection.message);
      const std::string reply = fmt::format(
          "HTTP/1.1 {} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n"
          "connection: close\r\n\r\n{}",
          rejection.status, rejection.type, body.size(), body);
      co_await asio::async_write(client, asio::buffer(reply), kTuple);
      co_return;
    }
    if (reader.state() != provider::RequestReader::State::kComplete) co_return;
    const bool keep = co_await Exchange(client, reader.Release(), received);
    if (!keep || !client.is_open()) co_return;
  }
}

asio::awaitable<bool> ProxyServer::Impl::Exchange(tcp::socket& client,
                                                  provider::HttpRequest request,
                                                  std::string& received) {
  const Clock::time_point arrival = Clock::now();
  ExchangeSetup setup;
  setup.index = ++next_index;
  setup.seed = options.seed;
  setup.now = std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
  setup.arrived = std::chrono::duration_cast<Duration>(arrival - start);
  setup.connection = ++next_connection;
  setup.upstream.authority = fmt::format("{}:{}", upstream.host, upstream.port);
  setup.upstream.path_prefix = upstream.path;
  ExchangeRun run(io.get_executor(), ProxyExchange(book, std::move(request), setup), arrival);
  run.Enqueue(run.exchange.Start());
  co_await (Execute(client, run) || Watch(client, run, received) || Upstream(run));
  if (!run.ended) {
    run.exchange.Ended(
        run.holding ? provider::EndKind::kStalledClientGaveUp : provider::EndKind::kClientClosed,
        run.Now());
  }
  Finish(run);
  co_return run.keep_alive;
}

void ProxyServer::Impl::Finish(ExchangeRun& run) {
  const ExchangeRecord& record = run.exchange.record();
  if (options.journal) options.journal(JournalLine(record));
  if (options.exchange) options.exchange(record);
  if (options.request_log) {
    options.request_log(
        fmt::format("#{} {} {} -> {}{}{} {}ms", record.client.index + 1, record.client.method,
                    record.client.target, record.client.status,
                    record.rule.empty() ? "" : " rule=" + record.rule,
                    record.faults.empty() ? "" : " " + record.faults,
                    std::chrono::duration_cast<std::chrono::milliseconds>(run.Now()).count()));
  }
  finished.fetch_add(1, std::memory_order_relaxed);
}

// Performs the actions in order, each at its time; ends with the exchange.
asio::awaitable<void> ProxyServer::Impl::Execute(tcp::socket& client, ExchangeRun& run) {
  boost::system::error_code ignored;
  for (;;) {
    while (run.queue.empty()) {
      run.wake.expires_at(Clock::time_point::max());
      co_await run.wake.async_wait(kTuple);
      if (co_await Cancelled()) co_return;
    }
    const Action action = std::move(run.queue.front());
    run.queue.pop_front();
    run.timer.expires_at(run.arrival + action.at);
    if (Clock::now() < run.timer.expiry()) {
      co_await run.timer.async_wait(kTuple);
      if (co_await Cancelled()) co_return;
    }
    switch (action.kind) {
      case Action::Kind::kWrite: {
        auto [ec, n] = co_await asio::async_write(client, asio::buffer(action.bytes), kTuple);
        if (co_await Cancelled()) co_return;
        run.exchange.Wrote(action.at, run.Now(), n);
        if (ec) {
          run.exchange.Ended(provider::EndKind::kClientClosed, run.Now(), ec.message());
          run.ended = true;
          co_return;
        }
        break;
      }
      case Action::Kind::kClose:
        client.shutdown(tcp::socket::shutdown_send, ignored);
        client.close(ignored);
        run.exchange.Ended(provider::EndKind::kClosedByServer, run.Now());
        run.ended = true;
        co_return;
      case Action::Kind::kReset:
        client.set_option(asio::socket_base::linger(true, 0), ignored);
        client.close(ignored);
        run.exchange.Ended(provider::EndKind::kResetByServer, run.Now());
        run.ended = true;
        co_return;
      case Action::Kind::kHold:
        run.holding = true;
        if (run.client_eof) co_return;  // it has gone already
        co_await Park();                // until the client goes (Watch ends the exchange)
        co_return;
      case Action::Kind::kFinish:
        run.exchange.Ended(provider::EndKind::kCompleted, run.Now());
        run.ended = true;
        run.keep_alive = true;
        co_return;
      case Action::Kind::kSendUpstream:
        break;
    }
  }
}

// Notices a client that goes away mid-exchange; keeps what it sends next (its next request).
asio::awaitable<void> ProxyServer::Impl::Watch(tcp::socket& client, ExchangeRun& run,
                                               std::string& received) {
  std::array<char, 4096> chunk{};
  while (received.size() < options.limits.max_header_bytes + options.limits.max_body_bytes) {
    auto [ec, n] = co_await client.async_read_some(asio::buffer(chunk), kTuple);
    if (co_await Cancelled()) co_return;
    if (ec == asio::error::eof && !run.holding) {
      // A half-close still reads the answer: only a failing write, or a stall, ends it now.
      run.client_eof = true;
      break;
    }
    if (ec) co_return;
    received.append(chunk.data(), n);
  }
  co_await Park();
}

asio::awaitable<bool> ProxyServer::Impl::ConnectUpstream(tcp::socket& socket, ExchangeRun& run) {
  tcp::resolver resolver(io);
  auto [resolve_ec, endpoints] =
      co_await resolver.async_resolve(upstream.host, std::to_string(upstream.port), kTuple);
  if (co_await Cancelled()) co_return false;
  if (resolve_ec) {
    run.Enqueue(run.exchange.OnUpstreamFailed(run.Now(), resolve_ec.message()));
    co_return false;
  }
  asio::steady_timer deadline(io, options.connect_timeout);
  auto connected =
      co_await (asio::async_connect(socket, endpoints, kTuple) || deadline.async_wait(kTuple));
  if (co_await Cancelled()) co_return false;
  if (connected.index() == 1) {
    run.Enqueue(run.exchange.OnUpstreamFailed(run.Now(), "connection timed out"));
    co_return false;
  }
  if (const auto& ec = std::get<0>(std::get<0>(connected)); ec) {
    run.Enqueue(run.exchange.OnUpstreamFailed(run.Now(), ec.message()));
    co_return false;
  }
  co_return true;
}

// Sends the request upstream and feeds the answer to the exchange; then parks, so that only the
// client's side ends the exchange.
asio::awaitable<void> ProxyServer::Impl::Upstream(ExchangeRun& run) {
  if (run.upstream_request.empty()) {
    co_await Park();
    co_return;
  }
  tcp::socket socket(io);
  if (co_await ConnectUpstream(socket, run)) {
    auto [write_ec, written] =
        co_await asio::async_write(socket, asio::buffer(run.upstream_request), kTuple);
    (void)written;
    if (co_await Cancelled()) co_return;
    if (write_ec) run.Enqueue(run.exchange.OnUpstreamFailed(run.Now(), write_ec.message()));
    std::array<char, 16 * 1024> chunk{};
    while (!write_ec && run.exchange.wants_upstream()) {
      auto [ec, n] = co_await socket.async_read_some(asio::buffer(chunk), kTuple);
      if (co_await Cancelled()) co_return;
      if (n > 0)
        run.Enqueue(run.exchange.OnUpstreamBytes(std::string_view(chunk.data(), n), run.Now()));
      if (ec) {
        run.Enqueue(run.exchange.OnUpstreamEnd(run.Now(), ec == asio::error::connection_reset));
        break;
      }
    }
  }
  boost::system::error_code ignored;
  socket.close(ignored);
  co_await Park();
}

ProxyServer::ProxyServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ProxyServer::~ProxyServer() = default;

std::expected<std::unique_ptr<ProxyServer>, std::string> ProxyServer::Create(ProxyOptions options) {
  auto upstream = ref::ParseBaseUrl(options.upstream);
  if (!upstream) return std::unexpected("--upstream: " + upstream.error());
  boost::system::error_code ec;
  const asio::ip::address address = asio::ip::make_address(options.listen_address, ec);
  if (ec)
    return std::unexpected(
        fmt::format("cannot listen on {}: not an IP address", options.listen_address));
  if (!IsLoopback(address) && !options.allow_remote) {
    return std::unexpected(fmt::format(
        "listening on {} would reach beyond this machine; give --allow-remote to mean it",
        options.listen_address));
  }
  auto impl = std::make_unique<Impl>(std::move(options), std::move(*upstream));
  const tcp::endpoint endpoint(address, impl->options.port);
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return std::unexpected(fmt::format("cannot listen on {}:{}: {}", impl->options.listen_address,
                                       impl->options.port, ec.message()));
  }
  return std::unique_ptr<ProxyServer>(new ProxyServer(std::move(impl)));
}

std::string ProxyServer::base_url() const {
  const tcp::endpoint endpoint = impl_->acceptor.local_endpoint();
  const asio::ip::address address = endpoint.address();
  const std::string host = address.is_unspecified() ? "127.0.0.1"
                           : address.is_v6()        ? "[" + address.to_string() + "]"
                                                    : address.to_string();
  return fmt::format("http://{}:{}", host, endpoint.port());
}

std::uint16_t ProxyServer::port() const { return impl_->acceptor.local_endpoint().port(); }

std::uint64_t ProxyServer::exchanges() const {
  return impl_->finished.load(std::memory_order_relaxed);
}

void ProxyServer::Run() {
  asio::co_spawn(impl_->io, impl_->Accept(), asio::detached);
  impl_->io.run();
}

void ProxyServer::Stop() {
  asio::post(impl_->io, [impl = impl_.get()] {
    boost::system::error_code ignored;
    impl->acceptor.close(ignored);
    impl->io.stop();
  });
}

}  // namespace faultline::proxy
