// One accepted connection: read a request, route it (session plan, control API, 404 hint),
// answer, and loop while the connection may be kept alive.
#include <fmt/format.h>

#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "fake_provider/control_api.h"
#include "fake_provider/plan_execution.h"
#include "fake_provider/server_engine.h"

namespace faultline::provider::internal {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using Request = http::request<http::string_body>;

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
// How long a closing connection keeps reading (and discarding) what the client still sends, so
// that our last response is not destroyed by an RST for unread data.
constexpr std::chrono::seconds kLingerTimeout{2};

// Shared by the connection's coroutine and its watchdog (both on the connection's executor).
struct Connection {
  Connection(Engine& e, tcp::socket s, std::uint64_t i)
      : engine(e), socket(std::move(s)), id(i), watchdog(socket.get_executor()) {}

  // Moves the deadline the watchdog enforces; earlier deadlines re-arm it at once.
  void SetDeadline(SteadyTime deadline_at) {
    deadline = deadline_at;
    if (deadline_at < watchdog.expiry()) watchdog.cancel();
  }
  void SetDeadlineIn(std::chrono::steady_clock::duration timeout) {
    SetDeadline(std::chrono::steady_clock::now() + timeout);
  }

  Engine& engine;
  tcp::socket socket;
  std::uint64_t id;
  beast::flat_buffer buffer;
  asio::steady_timer watchdog;
  SteadyTime deadline = SteadyTime::max();
  bool timed_out = false;
  bool finished = false;
};

// Closes the socket when the deadline passes, which ends whatever the connection awaits.
asio::awaitable<void> Watchdog(std::shared_ptr<Connection> conn) {
  while (!conn->finished) {
    if (conn->deadline <= std::chrono::steady_clock::now()) {
      conn->timed_out = true;
      boost::system::error_code ignored;
      conn->socket.close(ignored);
      co_return;
    }
    conn->watchdog.expires_at(conn->deadline);
    co_await conn->watchdog.async_wait(kTuple);  // cancelled when the deadline moved: re-check
  }
}

std::string SerializeReply(const HttpReply& reply, bool keep_alive) {
  const auto reason =
      http::obsolete_reason(http::int_to_status(static_cast<unsigned>(reply.status)));
  std::string out = fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n",
                                reply.status, std::string_view(reason.data(), reason.size()),
                                reply.content_type, reply.body.size());
  for (const auto& header : reply.headers)
    out += fmt::format("{}: {}\r\n", header.name, header.value);
  if (!keep_alive) out += "Connection: close\r\n";
  out += "\r\n";
  out += reply.body;
  return out;
}

asio::awaitable<bool> WriteAll(Connection& conn, const std::string& bytes) {
  auto [ec, written] = co_await asio::async_write(conn.socket, asio::buffer(bytes), kTuple);
  conn.engine.counters().bytes_sent.fetch_add(written, std::memory_order_relaxed);
  co_return !ec;
}

asio::awaitable<bool> WriteReply(Connection& conn, const HttpReply& reply, bool keep_alive) {
  const bool written = co_await WriteAll(conn, SerializeReply(reply, keep_alive));
  co_return written;
}

// Half-closes and discards whatever the client still sends until it closes or the linger time
// passes (the watchdog ends the wait).
asio::awaitable<void> LingeringClose(Connection& conn) {
  boost::system::error_code ec;
  conn.socket.shutdown(tcp::socket::shutdown_send, ec);
  if (ec || conn.engine.stopping()) co_return;
  conn.SetDeadlineIn(std::min<std::chrono::steady_clock::duration>(
      kLingerTimeout, conn.engine.options().request_timeout));
  std::array<char, 4096> scratch;
  while (true) {
    auto [read_ec, n] = co_await conn.socket.async_read_some(asio::buffer(scratch), kTuple);
    if (read_ec) co_return;
  }
}

struct ReadResult {
  std::optional<Request> request;
  std::optional<HttpReply> rejection;  // answer, then close
};

std::optional<HttpReply> RejectionFor(const boost::system::error_code& ec,
                                      const ServerOptions& options) {
  if (ec == http::error::header_limit) {
    return JsonError(431, "request_header_fields_too_large",
                     fmt::format("the request headers exceed {} bytes", options.max_header_bytes));
  }
  if (ec == http::error::body_limit) {
    return JsonError(413, "request_too_large",
                     fmt::format("the request body exceeds {} bytes (faultline serve "
                                 "--max-body-bytes)",
                                 options.max_body_bytes));
  }
  const bool http_error =
      ec.category() == http::make_error_code(http::error::bad_target).category();
  if (http_error && ec != http::error::partial_message && ec != http::error::end_of_stream) {
    return JsonError(400, "bad_request", fmt::format("malformed HTTP request: {}", ec.message()));
  }
  return std::nullopt;
}

asio::awaitable<boost::system::error_code> ReadParts(
    Connection& conn, http::request_parser<http::string_body>& parser) {
  auto [ec, header_bytes] =
      co_await http::async_read_header(conn.socket, conn.buffer, parser, kTuple);
  conn.engine.counters().bytes_received.fetch_add(header_bytes, std::memory_order_relaxed);
  if (ec || parser.is_done()) co_return ec;
  if (beast::iequals(parser.get()[http::field::expect], "100-continue")) {
    const bool continued = co_await WriteAll(conn, "HTTP/1.1 100 Continue\r\n\r\n");
    if (!continued) co_return asio::error::eof;
  }
  if (conn.engine.stopping()) co_return asio::error::operation_aborted;
  auto [body_ec, body_bytes] = co_await http::async_read(conn.socket, conn.buffer, parser, kTuple);
  conn.engine.counters().bytes_received.fetch_add(body_bytes, std::memory_order_relaxed);
  co_return body_ec;
}

asio::awaitable<ReadResult> ReadRequest(Connection& conn) {
  const ServerOptions& options = conn.engine.options();
  http::request_parser<http::string_body> parser;
  parser.header_limit(static_cast<std::uint32_t>(options.max_header_bytes));
  parser.body_limit(options.max_body_bytes);
  conn.SetDeadlineIn(options.request_timeout);
  const auto ec = co_await ReadParts(conn, parser);
  conn.SetDeadline(SteadyTime::max());
  ServerCounters& counters = conn.engine.counters();
  if (!ec) {
    counters.requests.fetch_add(1, std::memory_order_relaxed);
    co_return ReadResult{parser.release(), std::nullopt};
  }
  if (conn.timed_out) counters.read_timeouts.fetch_add(1, std::memory_order_relaxed);
  if (!conn.timed_out && !conn.engine.stopping()) {
    if (auto rejection = RejectionFor(ec, options)) {
      counters.bad_requests.fetch_add(1, std::memory_order_relaxed);
      co_return ReadResult{std::nullopt, std::move(rejection)};
    }
  }
  if (parser.got_some() || conn.buffer.size() > 0) {
    counters.aborted_requests.fetch_add(1, std::memory_order_relaxed);
  }
  co_return ReadResult{};
}

struct Route {
  enum class Kind { kSession, kControl, kUnknown };
  Kind kind = Kind::kUnknown;
  std::string session_id;
  std::string_view path;  // relative to the session's base URL, without the query
};

// /s/<id>/v1/...: the id is everything between "/s/" and the first "/v1/".
Route RouteTarget(std::string_view target) {
  if (target.starts_with(kControlPrefix) &&
      (target.size() == kControlPrefix.size() || target[kControlPrefix.size()] == '/' ||
       target[kControlPrefix.size()] == '?')) {
    return Route{Route::Kind::kControl, {}, {}};
  }
  constexpr std::string_view kSessionPrefix = "/s/";
  if (!target.starts_with(kSessionPrefix)) return Route{};
  const std::size_t v1 = target.find("/v1/", kSessionPrefix.size() - 1);
  if (v1 == std::string_view::npos || v1 <= kSessionPrefix.size()) return Route{};
  std::string_view path = target.substr(v1);
  path = path.substr(0, path.find('?'));
  return Route{Route::Kind::kSession,
               PercentDecode(target.substr(kSessionPrefix.size(), v1 - kSessionPrefix.size())),
               path};
}

JournalEntry EntryFor(const Connection& conn, const Request& request) {
  JournalEntry entry;
  entry.connection = conn.id;
  entry.method = std::string(request.method_string());
  entry.target = std::string(request.target());
  for (const auto& field : request) {
    entry.headers.push_back({std::string(field.name_string()), std::string(field.value())});
  }
  entry.body = request.body();
  return entry;
}

void LogExchange(const Connection& conn, const SessionState& session, const Request& request,
                 std::string_view path, const Admission& admission, const ExchangeEnd& end) {
  if (!conn.engine.options().request_log) return;
  const auto& plan = admission.plan;
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      end.at - (admission.arrived - admission.session_start));
  conn.engine.Log(fmt::format("{} #{} {} {} -> {} [{} {}ms]", session.id(), plan.attempt,
                              std::string_view(request.method_string()), path,
                              plan.summary.empty() ? std::to_string(plan.status) : plan.summary,
                              ToString(end.kind), elapsed.count()));
}

// Returns whether the connection may carry another request.
asio::awaitable<bool> ServeSessionRequest(Connection& conn, SessionState& session,
                                          const Request& request, std::string_view path) {
  Engine& engine = conn.engine;
  engine.counters().session_requests.fetch_add(1, std::memory_order_relaxed);
  const RequestInfo info{request.method_string(), path, request.body()};
  const Admission admission = session.Admit(info, EntryFor(conn, request), engine.clock().Now());
  const ExchangeContext context{engine,
                                conn.socket,
                                conn.buffer,
                                engine.options().max_header_bytes + engine.options().max_body_bytes,
                                admission.plan,
                                admission.arrived,
                                admission.session_start,
                                *admission.journal,
                                admission.entry_index};
  const ExchangeEnd end = co_await ExecutePlan(context);
  LogExchange(conn, session, request, path, admission, end);
  if (end.kind == EndKind::kCompleted && admission.plan.keep_alive && request.keep_alive() &&
      !engine.stopping()) {
    co_return true;
  }
  if (end.kind == EndKind::kCompleted || end.kind == EndKind::kClosedByServer) {
    co_await LingeringClose(conn);
  }
  co_return false;
}

asio::awaitable<bool> ServeReply(Connection& conn, const Request& request, const HttpReply& reply) {
  const bool keep_alive = request.keep_alive() && !conn.engine.stopping();
  const bool written = co_await WriteReply(conn, reply, keep_alive);
  if (!written) co_return false;
  if (!keep_alive) co_await LingeringClose(conn);
  co_return keep_alive;
}

asio::awaitable<bool> Dispatch(Connection& conn, const Request& request) {
  Engine& engine = conn.engine;
  const std::string_view target = request.target();
  const Route route = RouteTarget(target);
  if (route.kind == Route::Kind::kControl) {
    engine.counters().control_requests.fetch_add(1, std::memory_order_relaxed);
    const bool keep_alive = co_await ServeReply(
        conn, request,
        HandleControlRequest(engine, request.method_string(), target, request.body()));
    co_return keep_alive;
  }
  if (route.kind == Route::Kind::kSession) {
    if (auto session = engine.FindSession(route.session_id)) {
      const bool keep_alive = co_await ServeSessionRequest(conn, *session, request, route.path);
      co_return keep_alive;
    }
  }
  engine.counters().not_found.fetch_add(1, std::memory_order_relaxed);
  if (engine.options().request_log) {
    engine.Log(fmt::format("- {} {} -> 404 (no session)", std::string_view(request.method_string()),
                           target));
  }
  const bool keep_alive = co_await ServeReply(conn, request, NotFoundHint(engine, target));
  co_return keep_alive;
}

asio::awaitable<void> ServeRequests(Connection& conn) {
  while (!conn.engine.stopping()) {
    ReadResult read = co_await ReadRequest(conn);
    if (read.rejection) {
      const bool written = co_await WriteReply(conn, *read.rejection, /*keep_alive=*/false);
      if (written) co_await LingeringClose(conn);
      co_return;
    }
    if (!read.request) co_return;
    const bool keep_alive = co_await Dispatch(conn, *read.request);
    if (!keep_alive) co_return;
  }
}

}  // namespace

asio::awaitable<void> ServeConnection(Engine& engine, tcp::socket socket,
                                      std::uint64_t connection_id,
                                      std::shared_ptr<ConnectionHandle> handle) {
  co_await asio::this_coro::throw_if_cancelled(false);
  auto conn = std::make_shared<Connection>(engine, std::move(socket), connection_id);
  boost::system::error_code ec;
  if (!engine.stopping()) {
    handle->socket = &conn->socket;
    conn->socket.set_option(tcp::no_delay(true), ec);
    conn->socket.non_blocking(true, ec);
    asio::co_spawn(conn->socket.get_executor(), Watchdog(conn), asio::detached);
    co_await ServeRequests(*conn);
    handle->socket = nullptr;
    conn->finished = true;
    conn->watchdog.cancel();
  }
  conn->socket.close(ec);
}

}  // namespace faultline::provider::internal
