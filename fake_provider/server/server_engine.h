// Internal to the real server: the Asio side of Server — event loops, listeners, the session
// registry and the connection registry. Connections (http_connection.cc) read their shared
// state through the accessors here.
//
// Threading: `options.threads` io_contexts, one thread each; a connection lives on one of them
// for its whole life (no strands needed), listeners live on the first. Control requests other
// than health run on a one-thread pool. Registries and counters are synchronised; everything
// else a connection touches is its own.
#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cstdint>
#include <deque>
#include <exception>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "fake_provider/server/control_api.h"
#include "fake_provider/server/server.h"
#include "fake_provider/server/server_core.h"

namespace faultline::provider::internal {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// How Stop() reaches a running connection: it posts to `executor` and closes `socket`, which
// ends every operation the connection waits for (a plan's waits end with its client watch).
// Stop deliberately avoids per-operation cancellation signals: emitting one into a coroutine
// that is finishing touches freed operation state in Asio 1.81.
struct ConnectionHandle {
  asio::any_io_executor executor;
  tcp::socket* socket = nullptr;  // set while the connection runs; only touched on `executor`
  // Accepted past --max-connections: only health is answered, quickly, and the oldest such
  // connection is closed when too many pile up.
  bool overflow = false;
};

class Engine final : public SessionHost {
 public:
  explicit Engine(ServerOptions options);
  ~Engine() override;

  std::expected<void, std::string> Listen();
  void Run();
  void Stop();

  // SessionHost.
  std::expected<std::shared_ptr<SessionState>, AddSessionError> CreateSession(
      scenario::Scenario scenario, std::string id, std::optional<std::uint64_t> seed) override;
  bool DeleteSession(std::string_view id) override;
  std::shared_ptr<SessionState> ResetSession(std::string_view id) override;
  bool AnchorOutages(std::string_view id) override;
  // Server::ArmOutages, StartArmedOutages, ScriptedStart.
  bool ArmOutages(std::string_view id);
  bool StartArmedOutages(std::string_view id);
  std::optional<Duration> ScriptedStart(std::string_view id) const;
  // A request started the scripted time of `root` (Admission::started_scripted_time): its
  // listeners and its routes' follow the schedule from now on.
  void ScriptedTimeStarted(const SessionState& root);
  std::shared_ptr<SessionState> FindSession(std::string_view id) const override;
  // The session whose dedicated listener is on `port` (it answers at that port's root too);
  // null for the shared port or none.
  std::shared_ptr<SessionState> SessionOnPort(std::uint16_t port) const;
  std::vector<std::shared_ptr<SessionState>> ListSessions() const override;
  StatsSnapshot Stats() const override;
  std::string base_url() const override { return base_url_; }
  WallTime Now() const override { return clock_.Now(); }
  const scenario::ParseLimits& scenario_limits() const override { return options_.scenario_limits; }
  void Reject(Rejection what) override { counters_.Reject(what); }

  std::uint16_t port() const { return port_; }
  std::string bound_address() const;
  std::size_t max_connections() const { return max_connections_; }  // the limit in force
  const ControlAccess& control_access() const { return access_; }
  const ServerOptions& options() const { return options_; }
  // Where control requests other than health run, off the event loops.
  asio::thread_pool::executor_type control_executor() { return control_pool_.get_executor(); }
  // A completion handler for co_spawn that logs (and counts) an exception instead of losing it.
  std::function<void(std::exception_ptr)> LogFailure(std::string what);
  const ServerClock& clock() const { return clock_; }
  ServerCounters& counters() { return counters_; }
  LatenessHistogram& lateness() { return lateness_; }
  bool stopping() const { return stopping_.load(std::memory_order_acquire); }
  void Log(const std::string& line) const;

 private:
  struct DedicatedListener;

  asio::io_context& NextContext();
  // Runs `context` until it stops, logging any exception a handler lets escape and going on.
  void RunContext(asio::io_context& context);
  std::expected<void, std::string> CheckListenAddress(const asio::ip::address& address);
  // The connection limit in force: --max-connections, kept below the descriptor limit.
  std::size_t EffectiveMaxConnections() const;
  // Evicts the oldest overflow connection when there are too many; requires connections_mu_.
  void TrimOverflow();
  // One session (a parent's route when `parent` is set); CreateSession adds a scenario's routes.
  std::expected<std::shared_ptr<SessionState>, AddSessionError> CreateOne(
      scenario::Scenario scenario, std::string id, std::optional<std::uint64_t> seed,
      std::shared_ptr<SessionState> parent);
  bool DeleteOne(std::string_view id);
  // Re-arms the dedicated listeners of the session and of its routes; requires sessions_mu_.
  void WakeListeners(const SessionState& session);
  // Duplicate id, --max-sessions, --max-listeners (counted when refused); requires sessions_mu_.
  std::expected<void, AddSessionError> CheckSessionLimits(std::string_view id, bool listener);
  // `backoff` is owned by the caller: a timer must outlive the coroutine that waits on it when
  // that coroutine runs under `||` (the loser is cancelled through its last operation).
  asio::awaitable<void> AcceptLoop(tcp::acceptor& acceptor, asio::steady_timer& backoff);
  void StartConnection(tcp::socket socket);
  std::shared_ptr<ConnectionHandle> RegisterConnection(std::uint64_t id,
                                                       const asio::any_io_executor& executor);
  void UnregisterConnection(std::uint64_t id);
  std::expected<std::shared_ptr<DedicatedListener>, std::string> OpenDedicatedListener();
  std::expected<void, std::string> StartDedicatedListener(
      const std::shared_ptr<SessionState>& session,
      std::shared_ptr<DedicatedListener> listener);  // requires sessions_mu_
  asio::awaitable<void> DedicatedListenerLoop(std::shared_ptr<DedicatedListener> listener);
  void WakeListener(const std::shared_ptr<DedicatedListener>& listener, bool remove);

  ServerOptions options_;
  ServerClock clock_;
  ServerCounters counters_;
  LatenessHistogram lateness_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();

  std::vector<std::unique_ptr<asio::io_context>> contexts_;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::atomic<std::size_t> next_context_{0};
  std::unique_ptr<tcp::acceptor> acceptor_;
  std::unique_ptr<asio::steady_timer> accept_backoff_;
  tcp::endpoint endpoint_;
  std::uint16_t port_ = 0;
  std::string base_url_;
  ControlAccess access_;
  std::size_t max_connections_ = 0;  // EffectiveMaxConnections(), fixed by Listen()
  std::atomic<bool> stopping_{false};
  asio::thread_pool control_pool_{1};

  mutable std::mutex sessions_mu_;
  std::map<std::string, std::shared_ptr<SessionState>, std::less<>> sessions_;
  std::map<std::string, std::shared_ptr<DedicatedListener>, std::less<>> listeners_;

  std::mutex connections_mu_;
  std::unordered_map<std::uint64_t, std::shared_ptr<ConnectionHandle>> connections_;
  std::size_t regular_connections_ = 0;  // guarded by connections_mu_
  std::deque<std::pair<std::uint64_t, std::shared_ptr<ConnectionHandle>>> overflow_;  // same
  std::atomic<std::uint64_t> next_connection_id_{1};
};

// Whether the calling coroutine thread has been cancelled (by the other side of an `||`).
// Coroutines here run with throw_if_cancelled(false), and a cancellation that arrives while an
// operation's completion is already queued only marks the state; so every loop checks this before
// it starts another wait.
//
// Style note for all coroutines of the server: never put `co_await` inside a condition (`if
// (co_await f())`, `while (!co_await f())`) or in `co_return co_await`; bind the result to a
// local first. GCC 12 miscompiles the condition form in some coroutines (the frame is resumed in
// a bad state: SIGSEGV/SIGILL); tests caught it.
inline asio::awaitable<bool> Cancelled() {
  const auto state = co_await asio::this_coro::cancellation_state;
  co_return state.cancelled() != asio::cancellation_type::none;
}

// Serves one accepted connection until it closes; never throws. Defined in http_connection.cc.
asio::awaitable<void> ServeConnection(Engine& engine, tcp::socket socket,
                                      std::uint64_t connection_id,
                                      std::shared_ptr<ConnectionHandle> handle);

}  // namespace faultline::provider::internal
