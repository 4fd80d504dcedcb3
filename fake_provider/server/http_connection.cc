// One accepted connection: read a request, send it where it goes (session plan, control API, 404
// hint), answer, and loop while the connection may be kept alive.
#include <fmt/format.h>

#include <array>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/status.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "beast/awaitable_tuple.h"
#include "fake_provider/http_request.h"
#include "fake_provider/server/control_api.h"
#include "fake_provider/server/plan_execution.h"
#include "fake_provider/server/server_engine.h"

namespace faultline::provider::internal {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using Request = HttpRequest;

using net::kTuple;
// How long a closing connection keeps reading (and discarding) what the client still sends, so
// that our last response is not destroyed by an RST for unread data.
constexpr std::chrono::seconds kLingerTimeout{2};
// Socket reads while a request is read.
constexpr std::size_t kRequestReadChunk = 16 * 1024;
// A connection past --max-connections must send its (health) request within this time.
constexpr std::chrono::seconds kOverflowTimeout{1};

// Shared by the connection's coroutine and its watchdog (both on the connection's executor).
struct Connection {
  Connection(Engine& e, tcp::socket s, std::uint64_t i, bool over)
      : engine(e), socket(std::move(s)), id(i), overflow(over), watchdog(socket.get_executor()) {
    boost::system::error_code ec;
    local_port = socket.local_endpoint(ec).port();
  }

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
  bool overflow;  // accepted past --max-connections: health only
  std::uint16_t local_port = 0;
  beast::flat_buffer buffer;  // received, not yet consumed
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

std::string_view Unconsumed(const beast::flat_buffer& buffer) {
  const auto data = buffer.data();
  return {static_cast<const char*>(data.data()), data.size()};
}

// Feeds what is buffered to the reader; true while it wants more bytes.
bool Parse(Connection& conn, RequestReader& reader) {
  if (conn.buffer.size() > 0) conn.buffer.consume(reader.Put(Unconsumed(conn.buffer)));
  return reader.state() == RequestReader::State::kReading;
}

// The body bytes one request still arriving holds, counted in the server-wide total while it is
// read: many slow clients each holding a large partial body must not exhaust memory.
class PendingBody {
 public:
  PendingBody(std::atomic<std::uint64_t>& total, std::size_t limit)
      : total_(total), limit_(limit) {}
  ~PendingBody() { total_.fetch_sub(held_, std::memory_order_relaxed); }
  PendingBody(const PendingBody&) = delete;
  PendingBody& operator=(const PendingBody&) = delete;

  // Records that the request now holds `bytes`; false when the total passes the limit.
  bool Hold(std::size_t bytes) {
    if (bytes <= held_) return true;  // a body only grows while it is read
    const std::size_t more = bytes - held_;
    held_ = bytes;
    return total_.fetch_add(more, std::memory_order_relaxed) + more <= limit_;
  }

 private:
  std::atomic<std::uint64_t>& total_;
  std::size_t limit_;
  std::size_t held_ = 0;
};

void CountRejection(ServerCounters& counters, const RequestRejection& rejection) {
  counters.bad_requests.fetch_add(1, std::memory_order_relaxed);
  if (rejection.status == 431) counters.Reject(Rejection::kHeaderBytes);
  if (rejection.status == 413) counters.Reject(Rejection::kBodyBytes);
}

// What ReadRequest got: the request, a rejection to answer, or nothing (the client went, the
// read timed out, the server is stopping). `within_budget` false: the body would have passed
// the server's pending-body budget.
ReadResult ReadOutcome(Connection& conn, RequestReader& reader, bool within_budget) {
  const ServerOptions& options = conn.engine.options();
  ServerCounters& counters = conn.engine.counters();
  if (!within_budget) {
    counters.Reject(Rejection::kPendingBody);
    return ReadResult{
        std::nullopt,
        JsonError(503, "overloaded",
                  fmt::format("the server already holds {} bytes of request bodies still arriving "
                              "(faultline serve --max-pending-body-bytes); retry later",
                              options.max_pending_body_bytes))};
  }
  if (reader.state() == RequestReader::State::kComplete) {
    counters.requests.fetch_add(1, std::memory_order_relaxed);
    return ReadResult{reader.Release(), std::nullopt};
  }
  if (conn.timed_out) counters.read_timeouts.fetch_add(1, std::memory_order_relaxed);
  if (reader.state() == RequestReader::State::kRejected && !conn.timed_out &&
      !conn.engine.stopping()) {
    const RequestRejection& rejection = *reader.rejection();
    CountRejection(counters, rejection);
    return ReadResult{std::nullopt, JsonError(rejection.status, rejection.type, rejection.message)};
  }
  if (reader.got_some() || conn.buffer.size() > 0) {
    counters.aborted_requests.fetch_add(1, std::memory_order_relaxed);
  }
  return ReadResult{};
}

bool WantsContinue(const RequestReader& reader) {
  return reader.header_done() && beast::iequals(reader.request().Header("expect"), "100-continue");
}

// Reads one request: socket reads happen here, in the coroutine, and parsing in the reader, so
// nothing a client sends can throw from inside an Asio handler. One coroutine frame for the
// whole read (every request pays for each).
asio::awaitable<ReadResult> ReadRequest(Connection& conn) {
  const ServerOptions& options = conn.engine.options();
  RequestReader reader(RequestLimits{options.max_header_bytes, options.max_body_bytes});
  conn.SetDeadlineIn(conn.overflow ? std::min<std::chrono::steady_clock::duration>(
                                         kOverflowTimeout, options.request_timeout)
                                   : options.request_timeout);
  PendingBody pending(conn.engine.counters().pending_body_bytes, options.max_pending_body_bytes);
  bool within_budget = true;
  bool continued = false;
  while (Parse(conn, reader) && !conn.engine.stopping()) {
    within_budget = pending.Hold(reader.request().body.size());
    if (!within_budget) break;
    if (!continued && WantsContinue(reader)) {
      continued = true;
      const bool written = co_await WriteAll(conn, "HTTP/1.1 100 Continue\r\n\r\n");
      if (!written) break;
    }
    auto [ec, n] =
        co_await conn.socket.async_read_some(conn.buffer.prepare(kRequestReadChunk), kTuple);
    conn.buffer.commit(n);
    conn.engine.counters().bytes_received.fetch_add(n, std::memory_order_relaxed);
    if (ec == asio::error::eof) reader.PutEof();
    if (ec) break;
  }
  conn.SetDeadline(SteadyTime::max());
  co_return ReadOutcome(conn, reader, within_budget);
}

void LogExchange(const Connection& conn, const SessionState& session, const Request& request,
                 std::string_view path, const Admission& admission, const ExchangeEnd& end) {
  if (!conn.engine.options().request_log) return;
  const auto& plan = admission.plan;
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      end.at - (admission.arrived - admission.session_start));
  conn.engine.Log(fmt::format("{} #{} {} {} -> {} [{} {}ms]", session.id(), plan.attempt,
                              request.method, path,
                              plan.summary.empty() ? std::to_string(plan.status) : plan.summary,
                              ToString(end.kind), elapsed.count()));
}

// Returns whether the connection may carry another request.
// `request`'s headers, trailers and body move into the journal.
asio::awaitable<bool> ServeSessionRequest(Connection& conn, SessionState& session, Request& request,
                                          std::string_view path) {
  Engine& engine = conn.engine;
  engine.counters().session_requests.fetch_add(1, std::memory_order_relaxed);
  const Admission admission =
      session.Admit(request, path, conn.id, engine.options().journal_secrets, engine.clock().Now());
  if (admission.started_scripted_time) {
    const std::shared_ptr<SessionState> parent = session.parent();
    engine.ScriptedTimeStarted(parent ? *parent : session);
  }
  const ExchangeContext context{engine,
                                conn.socket,
                                conn.buffer,
                                engine.options().max_header_bytes + kRequestReadChunk,
                                admission.plan,
                                admission.arrived,
                                admission.session_start,
                                *admission.journal,
                                admission.entry_index};
  const ExchangeEnd end = co_await ExecutePlan(context);
  LogExchange(conn, session, request, path, admission, end);
  if (end.kind == EndKind::kCompleted && admission.plan.keep_alive && request.keep_alive &&
      !engine.stopping()) {
    co_return true;
  }
  if (end.kind == EndKind::kCompleted || end.kind == EndKind::kClosedByServer) {
    co_await LingeringClose(conn);
  }
  co_return false;
}

asio::awaitable<bool> ServeReply(Connection& conn, const Request& request, const HttpReply& reply) {
  const bool keep_alive = request.keep_alive && !conn.engine.stopping() && !conn.overflow;
  const bool written = co_await WriteReply(conn, reply, keep_alive);
  if (!written) co_return false;
  if (!keep_alive) co_await LingeringClose(conn);
  co_return keep_alive;
}

// Runs the control API on the control worker, off the event loop; an exception becomes a 500.
asio::awaitable<HttpReply> ControlReply(Engine& engine, const Request& request) {
  auto handle = [&engine, &request]() -> asio::awaitable<HttpReply> {
    try {
      co_return HandleControlRequest(engine, request.method, request.target, request.body);
    } catch (const std::exception& e) {
      engine.LogFailure("a control request")(std::current_exception());
      co_return JsonError(500, "server_error", e.what());
    }
  };
  HttpReply reply = co_await asio::co_spawn(engine.control_executor(), handle, asio::use_awaitable);
  co_return reply;
}

HttpReply TooManyConnections(const Engine& engine) {
  return JsonError(
      503, "too_many_connections",
      fmt::format("the server holds {} connections, its limit (faultline serve "
                  "--max-connections); only GET /_faultline/health and /stats are answered",
                  engine.max_connections()));
}

asio::awaitable<bool> ServeControl(Connection& conn, const Request& request) {
  Engine& engine = conn.engine;
  engine.counters().control_requests.fetch_add(1, std::memory_order_relaxed);
  if (auto denied = ControlAccessDenied(engine.control_access(), request, conn.local_port)) {
    engine.Reject(denied->status == 401 ? Rejection::kUnauthorized : Rejection::kForbidden);
    const bool keep_alive = co_await ServeReply(conn, request, *denied);
    co_return keep_alive;
  }
  // Health and stats are cheap and must answer even when the worker is busy or the server full.
  const bool monitoring = IsMonitoringRequest(request.method, request.target);
  HttpReply reply;
  if (monitoring) {
    reply = HandleControlRequest(engine, request.method, request.target, request.body);
  } else {
    reply = co_await ControlReply(engine, request);
  }
  const bool keep_alive = co_await ServeReply(conn, request, reply);
  co_return keep_alive;
}

// Where a request goes: a session's plan, the control API, or an answer of the server's own (too
// many connections, no such session).
struct Route {
  enum class Kind { kSession, kControl, kReply };
  static Route Session(std::shared_ptr<SessionState> session, std::string_view path) {
    Route route;
    route.kind = Kind::kSession;
    route.session = std::move(session);
    route.path = path;
    return route;
  }
  static Route Control() {
    Route route;
    route.kind = Kind::kControl;
    return route;
  }
  static Route Reply(HttpReply reply) {
    Route route;
    route.reply = std::move(reply);
    return route;
  }

  Kind kind = Kind::kReply;
  std::shared_ptr<SessionState> session;  // kSession
  std::string_view path;                  // kSession: into the request's target
  std::optional<HttpReply> reply;         // kReply (none otherwise: a reply allocates)
};

Route RouteOf(const Connection& conn, const Request& request) {
  Engine& engine = conn.engine;
  const std::string_view target = request.target;
  const Destination destination = ResolveTarget(target);
  if (destination.kind == Destination::Kind::kControl &&
      (!conn.overflow || IsMonitoringRequest(request.method, target))) {
    return Route::Control();
  }
  if (conn.overflow) return Route::Reply(TooManyConnections(engine));
  if (destination.kind == Destination::Kind::kSession) {
    if (auto session = engine.FindSession(destination.session_id)) {
      return Route::Session(std::move(session), destination.path);
    }
  }
  // A session's own port answers at its root too: a gateway's upstreams are host:port pairs
  // that share one path (Scenario::route_ports).
  if (destination.kind == Destination::Kind::kUnknown && conn.local_port != engine.port()) {
    if (auto session = engine.SessionOnPort(conn.local_port)) {
      return Route::Session(std::move(session), target.substr(0, target.find('?')));
    }
  }
  engine.counters().not_found.fetch_add(1, std::memory_order_relaxed);
  if (engine.options().request_log) {
    engine.Log(fmt::format("- {} {} -> 404 (no session)", request.method, target));
  }
  return Route::Reply(NotFoundHint(engine, target));
}

// The connection's loop: one request after another, each served from here without a coroutine
// frame for routing (every request pays for each).
asio::awaitable<void> ServeRequests(Connection& conn) {
  while (!conn.engine.stopping()) {
    ReadResult read = co_await ReadRequest(conn);
    if (read.rejection) {
      const bool written = co_await WriteReply(conn, *read.rejection, /*keep_alive=*/false);
      if (written) co_await LingeringClose(conn);
      co_return;
    }
    if (!read.request) co_return;
    Request& request = *read.request;
    const Route route = RouteOf(conn, request);
    bool keep_alive = false;
    if (route.kind == Route::Kind::kSession) {
      keep_alive = co_await ServeSessionRequest(conn, *route.session, request, route.path);
    } else if (route.kind == Route::Kind::kControl) {
      keep_alive = co_await ServeControl(conn, request);
    } else {
      keep_alive = co_await ServeReply(conn, request, *route.reply);
    }
    if (!keep_alive) co_return;
  }
}

}  // namespace

asio::awaitable<void> ServeConnection(Engine& engine, tcp::socket socket,
                                      std::uint64_t connection_id,
                                      std::shared_ptr<ConnectionHandle> handle) {
  co_await asio::this_coro::throw_if_cancelled(false);
  auto conn =
      std::make_shared<Connection>(engine, std::move(socket), connection_id, handle->overflow);
  boost::system::error_code ec;
  if (!engine.stopping()) {
    handle->socket = &conn->socket;
    conn->socket.set_option(tcp::no_delay(true), ec);
    conn->socket.non_blocking(true, ec);
    asio::co_spawn(conn->socket.get_executor(), Watchdog(conn), engine.LogFailure("watchdog"));
    co_await ServeRequests(*conn);
    handle->socket = nullptr;
    conn->finished = true;
    conn->watchdog.cancel();
  }
  conn->socket.close(ec);
}

}  // namespace faultline::provider::internal
