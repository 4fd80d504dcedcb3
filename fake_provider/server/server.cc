// Server: the listeners, the session registry, the connection registry and the event loops.
// The per-connection protocol is in http_connection.cc, plan execution in plan_execution.cc.
#include "fake_provider/server/server.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <exception>
#include <random>
#include <thread>
#include <utility>

#include "beast/awaitable_tuple.h"
#include "fake_provider/server/server_engine.h"
#include "scenarios/route_scenario.h"

namespace faultline::provider {
namespace internal {
namespace {

using net::kTuple;
constexpr std::chrono::milliseconds kAcceptRetryDelay{20};

// Connections accepted past the limit, kept only to answer health; the oldest is closed when
// more arrive. Their requests must arrive whole within kOverflowTimeout.
constexpr std::size_t kOverflowSlots = 16;
// Descriptors kept for the listeners, the event loops and files, below the process's limit.
constexpr std::size_t kReservedDescriptors = 64;

std::string ExceptionText(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

std::string RandomToken() {
  std::random_device random;
  std::string token;
  for (int i = 0; i < 4; ++i) token += fmt::format("{:08x}", random());
  return token;
}

void CloseOn(const std::shared_ptr<ConnectionHandle>& handle) {
  asio::post(handle->executor, [handle] {
    boost::system::error_code ignored;
    if (handle->socket != nullptr) handle->socket->close(ignored);
  });
}

asio::awaitable<void> WaitForTimer(asio::steady_timer& timer) {
  co_await asio::this_coro::throw_if_cancelled(false);
  const bool cancelled = co_await Cancelled();
  if (!cancelled) co_await timer.async_wait(kTuple);
}

// Opens and binds `acceptor`; listens unless `listen` is false (a bound socket that does not
// listen refuses connections yet keeps the port reserved).
std::expected<void, std::string> OpenAcceptor(tcp::acceptor& acceptor,
                                              const tcp::endpoint& endpoint, bool listen = true) {
  boost::system::error_code ec;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec && listen) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    boost::system::error_code ignored;
    acceptor.close(ignored);
    return std::unexpected(fmt::format("cannot listen on {}:{}: {}", endpoint.address().to_string(),
                                       endpoint.port(), ec.message()));
  }
  return {};
}

}  // namespace

// A session's own listener, closed during the scenario's listener outages. Lives on the first
// io_context; `removed` is only touched there.
struct Engine::DedicatedListener {
  explicit DedicatedListener(asio::io_context& context) : acceptor(context), wake(context) {}
  tcp::acceptor acceptor;
  tcp::endpoint endpoint;  // the port is kept across outages
  asio::steady_timer wake;
  asio::steady_timer backoff{acceptor.get_executor()};
  std::shared_ptr<SessionState> session;
  bool listening = false;
  bool removed = false;

  // Up: bound and listening. Down: bound but not listening, so connections are refused while
  // the port stays ours (a closed listening socket cannot stop listening otherwise).
  std::expected<void, std::string> SetUp(bool up) {
    if (up == listening) return {};
    boost::system::error_code ec;
    if (up) {
      if (!acceptor.is_open()) {
        if (auto opened = OpenAcceptor(acceptor, endpoint, /*listen=*/false); !opened) {
          return opened;
        }
      }
      acceptor.listen(asio::socket_base::max_listen_connections, ec);
      if (ec) return std::unexpected(fmt::format("cannot listen again: {}", ec.message()));
      listening = true;
      return {};
    }
    acceptor.close(ec);
    listening = false;
    return OpenAcceptor(acceptor, endpoint, /*listen=*/false);
  }
};

Engine::Engine(ServerOptions options) : options_(std::move(options)) {
  const int threads = std::max(1, options_.threads);
  for (int i = 0; i < threads; ++i) {
    contexts_.push_back(std::make_unique<asio::io_context>(1));
    work_.push_back(asio::make_work_guard(*contexts_.back()));
  }
  acceptor_ = std::make_unique<tcp::acceptor>(*contexts_[0]);
  accept_backoff_ = std::make_unique<asio::steady_timer>(*contexts_[0]);
}

Engine::~Engine() {
  Stop();
  control_pool_.join();  // control requests in progress finish (their work is bounded)
  // Let the coroutines observe the stop and finish (only has work if Run() never ran).
  for (auto& context : contexts_) {
    context->restart();
    context->run_for(std::chrono::seconds(5));
  }
}

std::expected<void, std::string> Engine::CheckListenAddress(const asio::ip::address& address) {
  if (address.is_loopback()) return {};
  if (!options_.allow_remote) {
    return std::unexpected(fmt::format(
        "refusing to listen on {}: it is reachable from other machines, and the fake provider "
        "and its control API are for tests. Pass --allow-remote (allow_remote) to do it anyway; "
        "the control API then requires a token",
        address.to_string()));
  }
  if (options_.control_token.empty()) options_.control_token = RandomToken();
  return {};
}

std::expected<void, std::string> Engine::Listen() {
  if (options_.threads < 1 || options_.threads > 256) {
    return std::unexpected(fmt::format("threads must be 1..256, got {}", options_.threads));
  }
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(options_.listen_address, ec);
  if (ec) {
    return std::unexpected(fmt::format("bad listen address \"{}\"", options_.listen_address));
  }
  if (auto allowed = CheckListenAddress(address); !allowed) return allowed;
  if (auto opened = OpenAcceptor(*acceptor_, tcp::endpoint(address, options_.port)); !opened) {
    return opened;
  }
  endpoint_ = acceptor_->local_endpoint(ec);
  port_ = endpoint_.port();
  base_url_ = HttpBaseUrl(endpoint_.address().to_string(), port_);
  access_ = ControlAccess{options_.control_token, endpoint_.address().to_string(),
                          options_.allowed_hosts};
  max_connections_ = EffectiveMaxConnections();
  asio::co_spawn(*contexts_[0], AcceptLoop(*acceptor_, *accept_backoff_),
                 LogFailure("accept loop"));
  return {};
}

std::size_t Engine::EffectiveMaxConnections() const {
  std::size_t limit = std::max<std::size_t>(1, options_.max_connections);
  rlimit descriptors{};
  if (::getrlimit(RLIMIT_NOFILE, &descriptors) == 0 && descriptors.rlim_cur != RLIM_INFINITY) {
    const std::size_t reserve = kReservedDescriptors + kOverflowSlots + options_.max_listeners;
    const auto available = static_cast<std::size_t>(descriptors.rlim_cur);
    limit = std::min(limit, available > reserve + 1 ? available - reserve : std::size_t{1});
  }
  return limit;
}

std::string Engine::bound_address() const {
  const std::string host = endpoint_.address().to_string();
  return endpoint_.address().is_v6() ? fmt::format("[{}]:{}", host, port_)
                                     : fmt::format("{}:{}", host, port_);
}

std::function<void(std::exception_ptr)> Engine::LogFailure(std::string what) {
  return [this, what = std::move(what)](std::exception_ptr error) {
    if (!error) return;
    counters_.internal_errors.fetch_add(1, std::memory_order_relaxed);
    Log(fmt::format("faultline: {} failed: {}", what, ExceptionText(error)));
  };
}

void Engine::RunContext(asio::io_context& context) {
  for (;;) {
    try {
      context.run();
      return;
    } catch (...) {  // a handler threw: log it, count it, and keep the loop serving
      LogFailure("an event-loop handler")(std::current_exception());
    }
  }
}

void Engine::Run() {
  std::vector<std::thread> threads;
  for (std::size_t i = 1; i < contexts_.size(); ++i) {
    threads.emplace_back([this, context = contexts_[i].get()] { RunContext(*context); });
  }
  RunContext(*contexts_[0]);
  for (auto& thread : threads) thread.join();
}

void Engine::Stop() {
  if (stopping_.exchange(true, std::memory_order_acq_rel)) return;
  asio::post(*contexts_[0], [this] {
    boost::system::error_code ignored;
    acceptor_->close(ignored);
    std::lock_guard lock(sessions_mu_);
    for (auto& [id, listener] : listeners_) {
      listener->removed = true;
      listener->wake.cancel();
    }
  });
  {
    std::lock_guard lock(connections_mu_);
    for (auto& [id, handle] : connections_) CloseOn(handle);
  }
  work_.clear();
}

void Engine::Log(const std::string& line) const {
  if (options_.request_log) options_.request_log(line);
}

asio::io_context& Engine::NextContext() {
  return *contexts_[next_context_.fetch_add(1, std::memory_order_relaxed) % contexts_.size()];
}

asio::awaitable<void> Engine::AcceptLoop(tcp::acceptor& acceptor, asio::steady_timer& backoff) {
  co_await asio::this_coro::throw_if_cancelled(false);
  while (!stopping()) {
    const bool cancelled = co_await Cancelled();
    if (cancelled) co_return;
    auto [ec, socket] = co_await acceptor.async_accept(NextContext(), kTuple);
    if (!ec) {
      StartConnection(std::move(socket));
      continue;
    }
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
    // Out of file descriptors and the like: back off instead of spinning.
    backoff.expires_after(kAcceptRetryDelay);
    co_await backoff.async_wait(kTuple);
  }
}

void Engine::StartConnection(tcp::socket socket) {
  const std::uint64_t id = next_connection_id_.fetch_add(1, std::memory_order_relaxed);
  const asio::any_io_executor executor = socket.get_executor();
  auto handle = RegisterConnection(id, executor);
  if (!handle) {
    boost::system::error_code ignored;
    socket.close(ignored);
    return;
  }
  counters_.connections_total.fetch_add(1, std::memory_order_relaxed);
  counters_.connections_open.fetch_add(1, std::memory_order_relaxed);
  auto on_done = [this, id, log = LogFailure("connection")](std::exception_ptr error) {
    UnregisterConnection(id);
    counters_.connections_open.fetch_sub(1, std::memory_order_relaxed);
    log(error);
  };
  asio::co_spawn(executor, ServeConnection(*this, std::move(socket), id, std::move(handle)),
                 std::move(on_done));
}

std::shared_ptr<ConnectionHandle> Engine::RegisterConnection(
    std::uint64_t id, const asio::any_io_executor& executor) {
  std::lock_guard lock(connections_mu_);
  if (stopping()) return nullptr;
  auto handle = std::make_shared<ConnectionHandle>();
  handle->executor = executor;
  connections_.emplace(id, handle);
  if (regular_connections_ < max_connections_) {
    ++regular_connections_;
    return handle;
  }
  counters_.Reject(Rejection::kConnections);
  handle->overflow = true;
  overflow_.emplace_back(id, handle);
  TrimOverflow();
  return handle;
}

void Engine::TrimOverflow() {
  while (overflow_.size() > kOverflowSlots) {
    CloseOn(overflow_.front().second);
    overflow_.pop_front();
  }
}

void Engine::UnregisterConnection(std::uint64_t id) {
  std::lock_guard lock(connections_mu_);
  const auto it = connections_.find(id);
  if (it == connections_.end()) return;
  if (!it->second->overflow) {
    --regular_connections_;
  } else {
    std::erase_if(overflow_, [id](const auto& entry) { return entry.first == id; });
  }
  connections_.erase(it);
}

std::expected<std::shared_ptr<Engine::DedicatedListener>, std::string>
Engine::OpenDedicatedListener() {
  auto listener = std::make_shared<DedicatedListener>(*contexts_[0]);
  if (auto opened = OpenAcceptor(listener->acceptor, tcp::endpoint(endpoint_.address(), 0),
                                 /*listen=*/false);
      !opened) {
    return std::unexpected(opened.error());
  }
  boost::system::error_code ec;
  listener->endpoint = listener->acceptor.local_endpoint(ec);
  if (ec) return std::unexpected(ec.message());
  return listener;
}

// Keeps the session's listener open or closed as its outage schedule says, waking at each
// change (and when the session is reset or removed).
asio::awaitable<void> Engine::DedicatedListenerLoop(std::shared_ptr<DedicatedListener> listener) {
  using namespace asio::experimental::awaitable_operators;
  co_await asio::this_coro::throw_if_cancelled(false);
  while (!stopping() && !listener->removed) {
    const WallTime now = clock_.Now();
    const bool down = listener->session->ListenerDown(now);
    std::optional<WallTime> next = listener->session->NextListenerChange(now);
    if (auto changed = listener->SetUp(!down); !changed) {
      Log(fmt::format("faultline: session {}: {} (retrying)", listener->session->id(),
                      changed.error()));
      next = now + std::chrono::duration_cast<Duration>(kAcceptRetryDelay);
    }
    listener->wake.expires_at(next ? clock_.ToSteady(*next) : SteadyTime::max());
    if (listener->listening) {
      co_await (AcceptLoop(listener->acceptor, listener->backoff) || WaitForTimer(listener->wake));
    } else {
      co_await WaitForTimer(listener->wake);
    }
  }
  boost::system::error_code ignored;
  listener->acceptor.close(ignored);
}

void Engine::WakeListener(const std::shared_ptr<DedicatedListener>& listener, bool remove) {
  asio::post(*contexts_[0], [listener, remove] {
    if (remove) listener->removed = true;
    listener->wake.cancel();
  });
}

std::expected<void, AddSessionError> Engine::CheckSessionLimits(std::string_view id,
                                                                bool listener) {
  using Code = AddSessionError::Code;
  if (sessions_.contains(id)) {
    return std::unexpected(
        AddSessionError{Code::kDuplicate, fmt::format("a session with id \"{}\" exists", id)});
  }
  if (sessions_.size() >= options_.max_sessions) {
    counters_.Reject(Rejection::kSessions);
    return std::unexpected(AddSessionError{
        Code::kLimit, fmt::format("the server holds {} sessions, its limit (faultline serve "
                                  "--max-sessions); delete some first",
                                  sessions_.size())});
  }
  if (listener && listeners_.size() >= options_.max_listeners) {
    counters_.Reject(Rejection::kListeners);
    return std::unexpected(AddSessionError{
        Code::kLimit, fmt::format("the server holds {} listeners for sessions with listener "
                                  "outages, its limit (faultline serve --max-listeners)",
                                  listeners_.size())});
  }
  return {};
}

// A scenario with routes: the parent session, then one route session per route (server_core.h).
std::expected<std::shared_ptr<SessionState>, AddSessionError> Engine::CreateSession(
    scenario::Scenario scenario, std::string id, std::optional<std::uint64_t> seed) {
  if (id.empty()) id = scenario.name;
  std::vector<scenario::Scenario> routes;
  for (const scenario::Route& route : scenario.routes) {
    routes.push_back(scenario::RouteScenario(scenario, route));
  }
  auto parent = CreateOne(std::move(scenario), id, seed, nullptr);
  if (!parent) return parent;
  for (scenario::Scenario& route : routes) {
    const std::string route_id = scenario::RouteSessionId(id, route.route_id);
    auto created = CreateOne(std::move(route), route_id, seed, *parent);
    if (!created) {
      DeleteSession(id);
      return std::unexpected(created.error());
    }
    (*parent)->AddRoute(std::move(*created));
  }
  return parent;
}

// The limits are checked before and again after the work: opening the listener and compiling
// the scenario happen outside the lock, so a large scenario never holds up the requests that
// look sessions up.
std::expected<std::shared_ptr<SessionState>, AddSessionError> Engine::CreateOne(
    scenario::Scenario scenario, std::string id, std::optional<std::uint64_t> seed,
    std::shared_ptr<SessionState> parent) {
  using Code = AddSessionError::Code;
  if (id.empty()) id = scenario.name;
  if (auto reason = InvalidSessionIdReason(id))
    return std::unexpected(AddSessionError{Code::kInvalid, *reason});
  if (stopping())
    return std::unexpected(AddSessionError{Code::kListener, "the server is stopping"});
  const bool needs_listener =
      !scenario.listener_outages.empty() || (!scenario.route_id.empty() && scenario.route_ports);
  {
    std::lock_guard lock(sessions_mu_);
    if (auto fits = CheckSessionLimits(id, needs_listener); !fits) {
      return std::unexpected(fits.error());
    }
  }
  std::shared_ptr<DedicatedListener> listener;
  std::uint16_t port = port_;
  if (needs_listener) {
    auto opened = OpenDedicatedListener();
    if (!opened) return std::unexpected(AddSessionError{Code::kListener, opened.error()});
    listener = std::move(*opened);
    port = listener->endpoint.port();
  }
  const std::string base_url = HttpBaseUrl(endpoint_.address().to_string(), port) + "/s/" + id;
  std::shared_ptr<SessionState> session;
  try {  // the scenario is compiled here; nothing should throw, but this is an API edge
    const WallTime start = parent ? parent->start() : clock_.Now();
    session = std::make_shared<SessionState>(
        id, base_url, listener ? port : 0, std::move(scenario), seed.value_or(options_.seed), start,
        JournalLimits{.entries = options_.journal_capacity, .bytes = options_.journal_max_bytes},
        std::move(parent));
  } catch (const std::exception& e) {
    return std::unexpected(AddSessionError{Code::kInvalid, e.what()});
  }
  std::lock_guard lock(sessions_mu_);
  if (auto fits = CheckSessionLimits(id, needs_listener); !fits) {
    return std::unexpected(fits.error());
  }
  if (listener) {
    if (auto started = StartDedicatedListener(session, std::move(listener)); !started) {
      return std::unexpected(AddSessionError{Code::kListener, started.error()});
    }
  }
  sessions_.emplace(id, session);
  return session;
}

// Puts the listener in the state the outage schedule wants now, then hands it to its loop.
std::expected<void, std::string> Engine::StartDedicatedListener(
    const std::shared_ptr<SessionState>& session, std::shared_ptr<DedicatedListener> listener) {
  listener->session = session;
  if (auto up = listener->SetUp(!session->ListenerDown(clock_.Now())); !up) return up;
  listeners_.emplace(session->id(), listener);
  asio::co_spawn(*contexts_[0], DedicatedListenerLoop(std::move(listener)),
                 LogFailure("session listener"));
  return {};
}

bool Engine::DeleteSession(std::string_view id) {
  const std::shared_ptr<SessionState> session = FindSession(id);
  if (!session) return false;
  for (const auto& route : session->routes()) DeleteOne(route->id());
  return DeleteOne(id);
}

bool Engine::DeleteOne(std::string_view id) {
  std::lock_guard lock(sessions_mu_);
  const auto it = sessions_.find(id);
  if (it == sessions_.end()) return false;
  sessions_.erase(it);
  if (const auto listener = listeners_.find(id); listener != listeners_.end()) {
    WakeListener(listener->second, /*remove=*/true);
    listeners_.erase(listener);
  }
  return true;
}

bool Engine::AnchorOutages(std::string_view id) {
  std::lock_guard lock(sessions_mu_);
  const auto it = sessions_.find(id);
  if (it == sessions_.end()) return false;
  it->second->AnchorOutages(clock_.Now());
  WakeListeners(*it->second);
  return true;
}

bool Engine::ArmOutages(std::string_view id) {
  std::lock_guard lock(sessions_mu_);
  const auto it = sessions_.find(id);
  if (it == sessions_.end()) return false;
  it->second->ArmOutages();
  WakeListeners(*it->second);
  return true;
}

bool Engine::StartArmedOutages(std::string_view id) {
  std::lock_guard lock(sessions_mu_);
  const auto it = sessions_.find(id);
  if (it == sessions_.end() || !it->second->AnchorIfArmed(clock_.Now())) return false;
  WakeListeners(*it->second);
  return true;
}

std::optional<Duration> Engine::ScriptedStart(std::string_view id) const {
  std::lock_guard lock(sessions_mu_);
  const auto it = sessions_.find(id);
  if (it == sessions_.end()) return std::nullopt;
  const std::optional<WallTime> started = it->second->scripted_start();
  if (!started) return std::nullopt;
  return std::chrono::duration_cast<Duration>(*started - it->second->start());
}

void Engine::ScriptedTimeStarted(const SessionState& root) {
  std::lock_guard lock(sessions_mu_);
  WakeListeners(root);
}

void Engine::WakeListeners(const SessionState& session) {
  std::vector<std::string> ids = {session.id()};
  for (const auto& route : session.routes()) ids.push_back(route->id());
  for (const std::string& id : ids) {
    if (const auto listener = listeners_.find(id); listener != listeners_.end()) {
      WakeListener(listener->second, /*remove=*/false);
    }
  }
}

std::shared_ptr<SessionState> Engine::ResetSession(std::string_view id) {
  std::lock_guard lock(sessions_mu_);
  const auto it = sessions_.find(id);
  if (it == sessions_.end()) return nullptr;
  it->second->Reset(clock_.Now());
  WakeListeners(*it->second);
  return it->second;
}

std::shared_ptr<SessionState> Engine::FindSession(std::string_view id) const {
  std::lock_guard lock(sessions_mu_);
  const auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : it->second;
}

std::shared_ptr<SessionState> Engine::SessionOnPort(std::uint16_t port) const {
  std::lock_guard lock(sessions_mu_);
  for (const auto& [id, listener] : listeners_) {  // at most max_listeners
    if (listener->endpoint.port() == port) return listener->session;
  }
  return nullptr;
}

std::vector<std::shared_ptr<SessionState>> Engine::ListSessions() const {
  std::lock_guard lock(sessions_mu_);
  std::vector<std::shared_ptr<SessionState>> out;
  out.reserve(sessions_.size());
  for (const auto& [id, session] : sessions_) out.push_back(session);
  return out;
}

StatsSnapshot Engine::Stats() const {
  auto load = [](const auto& counter) { return counter.load(std::memory_order_relaxed); };
  StatsSnapshot stats;
  stats.requests = load(counters_.requests);
  stats.session_requests = load(counters_.session_requests);
  stats.control_requests = load(counters_.control_requests);
  stats.not_found = load(counters_.not_found);
  stats.bad_requests = load(counters_.bad_requests);
  stats.aborted_requests = load(counters_.aborted_requests);
  stats.read_timeouts = load(counters_.read_timeouts);
  stats.connections_total = load(counters_.connections_total);
  stats.connections_open = load(counters_.connections_open);
  stats.pending_body_bytes = load(counters_.pending_body_bytes);
  stats.bytes_received = load(counters_.bytes_received);
  stats.bytes_sent = load(counters_.bytes_sent);
  stats.internal_errors = load(counters_.internal_errors);
  for (std::size_t i = 0; i < stats.rejected.size(); ++i)
    stats.rejected[i] = load(counters_.rejected[i]);
  stats.limits = {{"max_header_bytes", options_.max_header_bytes},
                  {"max_body_bytes", options_.max_body_bytes},
                  {"max_pending_body_bytes", options_.max_pending_body_bytes},
                  {"max_scenario_depth", options_.scenario_limits.max_depth},
                  {"max_scenario_keys", options_.scenario_limits.max_keys},
                  {"max_scenario_bytes", options_.scenario_limits.max_bytes},
                  {"max_scenario_events", options_.scenario_limits.max_stream_events},
                  {"max_sessions", options_.max_sessions},
                  {"max_listeners", options_.max_listeners},
                  {"max_connections", max_connections_},
                  {"journal_capacity", options_.journal_capacity},
                  {"journal_max_bytes", options_.journal_max_bytes},
                  {"request_timeout_ms", options_.request_timeout.count()}};
  stats.sessions = ListSessions().size();
  stats.uptime_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - started_)
                        .count();
  stats.lateness = lateness_.Summarize();
  return stats;
}

}  // namespace internal

struct Server::Impl {
  explicit Impl(ServerOptions options) : engine(std::move(options)) {}
  internal::Engine engine;
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() = default;

std::expected<std::unique_ptr<Server>, std::string> Server::Create(ServerOptions options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  if (auto listening = impl->engine.Listen(); !listening) {
    return std::unexpected(listening.error());
  }
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

std::string Server::base_url() const { return impl_->engine.base_url(); }
std::uint16_t Server::port() const { return impl_->engine.port(); }
std::string Server::bound_address() const { return impl_->engine.bound_address(); }
std::string Server::control_token() const { return impl_->engine.control_access().token; }

std::expected<SessionInfo, std::string> Server::AddSession(scenario::Scenario scenario,
                                                           std::string id,
                                                           std::optional<std::uint64_t> seed) {
  auto session = impl_->engine.CreateSession(std::move(scenario), std::move(id), seed);
  if (!session) return std::unexpected(session.error().message);
  SessionInfo info = (*session)->Info();
  info.started = impl_->engine.clock().ToSteady((*session)->start());
  return info;
}

std::vector<SessionInfo> Server::Sessions() const {
  std::vector<SessionInfo> out;
  for (const auto& session : impl_->engine.ListSessions()) out.push_back(session->Info());
  return out;
}

std::optional<std::vector<JournalEntry>> Server::JournalOf(std::string_view id) const {
  auto session = impl_->engine.FindSession(id);
  if (!session) return std::nullopt;
  return session->journal()->Snapshot();
}

bool Server::ResetSession(std::string_view id) { return impl_->engine.ResetSession(id) != nullptr; }
bool Server::AnchorOutages(std::string_view id) { return impl_->engine.AnchorOutages(id); }
bool Server::ArmOutages(std::string_view id) { return impl_->engine.ArmOutages(id); }
bool Server::StartArmedOutages(std::string_view id) { return impl_->engine.StartArmedOutages(id); }
std::optional<Duration> Server::ScriptedStart(std::string_view id) const {
  return impl_->engine.ScriptedStart(id);
}

bool Server::RemoveSession(std::string_view id) { return impl_->engine.DeleteSession(id); }

void Server::Run() { impl_->engine.Run(); }
void Server::Stop() { impl_->engine.Stop(); }

}  // namespace faultline::provider
