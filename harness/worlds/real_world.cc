#include "harness/worlds/real_world.h"

#include <fmt/format.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <condition_variable>
#include <functional>
#include <mutex>

#include "fake_provider/admission.h"
#include "harness/trace/protocol.h"
#include "harness/worlds/adapter_process.h"
#include "harness/worlds/request_body.h"
#include "reference_impl/call.h"
#include "reference_impl/client_state.h"
#include "reference_impl/driver.h"

namespace faultline::harness {
namespace {

using Clock = std::chrono::steady_clock;

Duration Since(Clock::time_point start) {
  return std::chrono::duration_cast<Duration>(Clock::now() - start);
}

// How long the provider may take to notice that the subject's connections are gone.
constexpr auto kCloseGrace = std::chrono::seconds(2);

// The first way the adapter broke the protocol on call `call`, if any.
std::optional<SubjectFault> FaultOf(const AdapterRun& run, int call, bool saw_hello,
                                    bool saw_terminal, const std::optional<SubjectFault>& line) {
  const auto fault = [&](std::string kind, std::string message) {
    return SubjectFault{std::move(kind), fmt::format("call {}: {}", call, message),
                        run.signal ? std::nullopt : std::optional<int>(run.exit_status),
                        run.signal};
  };
  if (!run.overflow.empty()) {
    return fault(run.overflow, run.overflow == "line-too-long"
                                   ? "the adapter wrote a line over the runner's line limit"
                                   : "the adapter wrote more output than the runner's limit");
  }
  if (run.lines.empty() && !run.timed_out) {
    const bool not_found = run.exit_status == 126 || run.exit_status == 127;
    return fault(not_found ? "cannot-start" : "exited",
                 not_found ? fmt::format("the command could not be started (exit status {})",
                                         run.exit_status)
                           : fmt::format("the adapter exited with status {} before writing "
                                         "anything",
                                         run.exit_status));
  }
  if (line)
    return SubjectFault{line->kind, fmt::format("call {}: {}", call, line->message), std::nullopt,
                        std::nullopt};
  if (!saw_hello) return fault("no-hello", "the first line was not adapter/hello");
  if (!saw_terminal && !run.timed_out) {
    return fault(run.signal ? "killed" : "exited",
                 run.signal ? fmt::format("the adapter was killed by signal {} before its "
                                          "terminal event",
                                          *run.signal)
                            : fmt::format("the adapter exited with status {} before its terminal "
                                          "event",
                                          run.exit_status));
  }
  return std::nullopt;
}

// Validates and records the adapter's lines of call `call`; the first protocol break becomes the
// trace's subject fault.
void CollectLines(const AdapterRun& run, int call, Trace& trace) {
  std::optional<SubjectFault> line_fault;
  bool saw_hello = false;
  bool saw_terminal = false;
  for (const AdapterLine& line : run.lines) {
    auto event = protocol::ParseLine(line.text);
    if (!event) {
      trace.protocol_errors.push_back(
          fmt::format("call {} at {:.1f} ms: {}", call, Ms(line.at), event.error().message));
      if (!line_fault) line_fault = SubjectFault{event.error().kind, event.error().message, {}, {}};
      continue;
    }
    const bool hello = event->kind == EventKind::kHello;
    if (!saw_hello && !hello && !line_fault) {
      line_fault = SubjectFault{
          "no-hello",
          fmt::format("the first event is {}, not adapter/hello", ToString(event->kind)),
          {},
          {}};
    }
    saw_hello = saw_hello || hello;
    ClientRecord record{line.at, call, std::move(*event)};
    saw_terminal = saw_terminal || record.event.terminal();
    trace.client.push_back(std::move(record));
  }
  if (!trace.subject_fault) {
    trace.subject_fault = FaultOf(run, call, saw_hello, saw_terminal, line_fault);
  }
}

// When a call's first attempt began, from what the subject said so far (`kinds` with their
// times, in order): its response/start, once it reported that attempt over (response/interrupted
// or response/failed) while no request had reached the provider, as when nothing listens. The
// virtual world's t = 0 is that instant, and a scripted cancel counts from it there too.
template <typename Records>
std::optional<Duration> UnarrivedAttemptStart(const Records& records) {
  std::optional<Duration> start;
  for (const auto& [kind, at] : records) {
    if (kind == EventKind::kStart && !start) start = at;
    if (start && (kind == EventKind::kInterrupted || kind == EventKind::kFailed)) return start;
  }
  return std::nullopt;
}

// The kinds and times of an adapter's lines so far (lines that do not parse are skipped: the
// protocol check reports them).
std::vector<std::pair<EventKind, Duration>> LineKinds(const std::vector<AdapterLine>& lines) {
  std::vector<std::pair<EventKind, Duration>> kinds;
  for (const AdapterLine& line : lines) {
    if (auto event = protocol::ParseLine(line.text)) kinds.emplace_back(event->kind, line.at);
  }
  return kinds;
}

// The call line's routes as call `call` of `calls` gets them: each under that call's own base URL
// (provider::CallBaseUrl), as the primary's base URL is.
std::vector<protocol::RouteLine> RoutesOfCall(std::vector<protocol::RouteLine> routes, int call,
                                              int calls) {
  for (protocol::RouteLine& route : routes) {
    route.base_url = provider::CallBaseUrl(route.base_url, call, calls);
  }
  return routes;
}

}  // namespace

struct RealWorld::Session {
  std::string id;
  std::string base_url;  // the primary route's with routes
  std::vector<protocol::RouteLine> routes;
  Clock::time_point start;
};

std::expected<std::unique_ptr<RealWorld>, std::string> RealWorld::Start() {
  provider::ServerOptions options;
  options.port = 0;
  auto server = provider::Server::Create(std::move(options));
  if (!server) return std::unexpected("cannot start the fake provider: " + server.error());
  return std::unique_ptr<RealWorld>(new RealWorld(std::move(*server)));
}

RealWorld::RealWorld(std::unique_ptr<provider::Server> server)
    : server_(std::move(server)), thread_([this] { server_->Run(); }) {}

RealWorld::~RealWorld() {
  server_->Stop();
  thread_.join();
}

std::expected<RealWorld::Session, std::string> RealWorld::Open(const scenario::Scenario& scenario,
                                                               std::uint64_t seed) {
  Session session;
  session.id = fmt::format("run{}/{}", next_session_++, scenario.name);
  auto info = server_->AddSession(scenario, session.id, seed);
  if (!info) return std::unexpected("cannot open a provider session: " + info.error());
  session.base_url = info->base_url;
  // With routes, the call line's base URL is the primary route's (request_body.h).
  const std::string primary = PrimaryTarget(scenario).route_id;
  const auto url_of = [&info](std::string_view id) {
    const auto found = std::ranges::find(info->routes, id, &provider::RouteInfo::id);
    return found == info->routes.end() ? std::string() : found->base_url;
  };
  if (!primary.empty()) session.base_url = url_of(primary);
  session.routes = RouteLines(scenario, url_of);
  // One time axis for the trace: the journal counts from the session's start, so the subject's
  // events must too (AddSession may wait for a lock and compile the scenario first).
  session.start = info->started.value_or(Clock::now());
  return session;
}

std::optional<Duration> RealWorld::FirstArrival(const std::string& session_id) const {
  const auto journal = server_->JournalOf(session_id);
  if (!journal || journal->empty()) return std::nullopt;
  return journal->front().arrived;
}

// Waits (bounded) until no exchange of the session is in progress, then takes its journal.
void RealWorld::Close(Session& session, Trace& trace) {
  const auto give_up = Clock::now() + kCloseGrace;
  for (;;) {
    auto journal = server_->JournalOf(session.id);
    const bool open = journal && std::ranges::any_of(*journal, [](const auto& entry) {
                        return entry.end == provider::EndKind::kInProgress;
                      });
    if (!open || Clock::now() >= give_up) {
      if (journal) trace.journal = std::move(*journal);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  trace.ended = Since(session.start);
  trace.scripted_from = server_->ScriptedStart(session.id);
  trace.wall_start = std::chrono::time_point_cast<std::chrono::system_clock::duration>(
      std::chrono::system_clock::now() - trace.ended);
  server_->RemoveSession(session.id);
  trace.scheduling_lateness =
      std::max(probe_.WorstBetween(session.start, Clock::now()), ProviderWriteLateness(trace));
  // Time zero is the first request at the provider, not the subject's launch.
  ShiftTimes(trace, FirstRequestAt(trace));
}

std::expected<Trace, std::string> RealWorld::RunReference(const scenario::Scenario& scenario,
                                                          const ref::RetryPolicy& policy,
                                                          const RealRunOptions& options) {
  auto session = Open(scenario, options.provider_seed);
  if (!session) return std::unexpected(session.error());
  Trace trace;
  trace.calls = std::max(1, scenario.request.calls);
  trace.client.push_back({Duration{0}, 0, EventFromJson(ref::HelloEvent(policy).ToJson())});
  // The callbacks run on this thread (io.run_one below), but on the drivers' strands: the lock
  // keeps trace.client safe whatever the executor does.
  std::mutex mutex;
  // Every call is one client's: they share its breakers and retry budget. Declared before the
  // io_context, so that it outlives any handler that still holds a call.
  const ref::ClientState client(policy);
  trace.one_client = true;
  boost::asio::io_context io;
  std::vector<std::shared_ptr<ref::CallDriver>> drivers(static_cast<std::size_t>(trace.calls));
  std::vector<std::function<void()>> launches;
  bool cancelled = false;
  const CallTarget target = PrimaryTarget(scenario);
  const std::string body = target.body.dump();
  for (int i = 0; i < trace.calls; ++i) {
    auto routes = ReferenceRoutes(RoutesOfCall(session->routes, i, trace.calls));
    if (!routes) return std::unexpected("the scenario's routes: " + routes.error());
    auto url = ref::ParseBaseUrl(provider::CallBaseUrl(session->base_url, i, trace.calls));
    if (!url) return std::unexpected(url.error());
    ref::CallRequest request;
    request.routes = *routes;
    request.dialect = *ref::ParseDialect(scenario::ToString(target.dialect));
    request.base_url = *url;
    request.api_key = "sk-faultline-test";
    request.body = body;
    request.stream = scenario.request.stream;
    ref::DriverCallbacks callbacks;
    callbacks.on_event = [&, i, start = session->start](const ref::LifecycleEvent& event) {
      std::lock_guard lock(mutex);
      trace.client.push_back({Since(start), i, EventFromJson(event.ToJson())});
    };
    launches.push_back(
        [&, i, request = std::move(request), callbacks = std::move(callbacks)] mutable {
          auto& driver = drivers[static_cast<std::size_t>(i)];
          driver = ref::CallDriver::Launch(
              io, std::move(request), policy,
              client.Share({.call_id = fmt::format("call{}", i), .seed = options.seed + i}),
              std::move(callbacks));
          if (cancelled) driver->Cancel();  // a call due after the cancel ends at once, ABORTED
        });
  }
  // Call i starts i x call_interval after the first; a cancel starts the rest at once (and
  // cancels them: launches[i] sees `cancelled`).
  std::vector<std::unique_ptr<boost::asio::steady_timer>> start_timers;
  for (int i = 0; i < trace.calls; ++i) {
    const auto due = scenario.request.call_interval * i;
    if (due <= Duration{0}) {
      launches[static_cast<std::size_t>(i)]();
      continue;
    }
    auto& timer = start_timers.emplace_back(std::make_unique<boost::asio::steady_timer>(io));
    timer->expires_at(session->start + due);
    timer->async_wait(
        [&, i](boost::system::error_code) { launches[static_cast<std::size_t>(i)](); });
  }
  boost::asio::steady_timer cancel_timer(io), timeout_timer(io);
  const auto cancel_all = [&] {
    cancelled = true;
    for (auto& driver : drivers) {
      if (driver) driver->Cancel();
    }
    for (auto& timer : start_timers) timer->cancel();
  };
  // The scripted cancel counts from the call's first attempt, as an adapter's does
  // (adapter_process.h) and as t = 0 is in the virtual world: its request's arrival at the
  // provider (on a loaded machine the request may leave well after the session opened), or,
  // when that attempt ended without reaching it (a refused connection), its response/start.
  // Until one is known, look again every 5 ms (and cancel anyway kCancelFallback later).
  const auto first_attempt = [&]() -> std::optional<Duration> {
    if (const auto first = FirstArrival(session->id)) return first;
    std::lock_guard lock(mutex);
    std::vector<std::pair<EventKind, Duration>> kinds;
    for (const ClientRecord& record : trace.client)
      kinds.emplace_back(record.event.kind, record.at);
    return UnarrivedAttemptStart(kinds);
  };
  std::function<void(boost::system::error_code)> arm_cancel = [&](boost::system::error_code error) {
    if (error) return;
    if (const auto first = first_attempt()) {
      cancel_timer.expires_at(session->start + *first + *scenario.cancel_at);
      cancel_timer.async_wait([&](boost::system::error_code fired) {
        if (fired) return;
        trace.cancel_at = Since(session->start);
        cancel_all();
      });
      return;
    }
    if (Since(session->start) >= *scenario.cancel_at + kCancelFallback) {  // nothing arrives
      trace.cancel_at = Since(session->start);
      cancel_all();
      return;
    }
    cancel_timer.expires_after(std::chrono::milliseconds(5));
    cancel_timer.async_wait(arm_cancel);
  };
  if (scenario.cancel_at) arm_cancel({});
  timeout_timer.expires_at(session->start + options.timeout);
  timeout_timer.async_wait([&](boost::system::error_code error) {
    if (error) return;
    trace.subject_timed_out = true;
    trace.subject_stopped_at = Since(session->start);
    cancel_all();
  });
  const auto all_done = [&] {
    std::lock_guard lock(mutex);
    return std::ranges::count_if(trace.client, IsTerminal) >= trace.calls;
  };
  // A stop request (from another thread) is carried onto this loop; a call already over stays a
  // finished run.
  std::stop_callback on_stop(options.stop, [&] {
    boost::asio::post(io, [&] {
      if (all_done() || trace.interrupted) return;
      trace.interrupted = true;
      trace.subject_stopped_at = Since(session->start);
      cancel_all();
    });
  });
  // Run until every call is done; then the timers are the only work left.
  while (!all_done() && !io.stopped()) io.run_one();
  cancel_timer.cancel();
  timeout_timer.cancel();
  io.run();  // let the drivers finish closing
  Close(*session, trace);
  return trace;
}

std::expected<Trace, std::string> RealWorld::RunAdapterSubject(const scenario::Scenario& scenario,
                                                               const std::string& command,
                                                               const RealRunOptions& options) {
  auto session = Open(scenario, options.provider_seed);
  if (!session) return std::unexpected(session.error());
  Trace trace;
  trace.calls = std::max(1, scenario.request.calls);
  const CallTarget target = PrimaryTarget(scenario);
  protocol::CallLine call{.base_url = session->base_url,
                          .api_key = "sk-faultline-test",
                          .dialect = std::string(scenario::ToString(target.dialect)),
                          .request = target.body,
                          .scenario = scenario.name,
                          .seed = std::nullopt,
                          .policy = std::nullopt,
                          .limits = std::nullopt,
                          .routes = session->routes};
  if (scenario.policy) call.policy = nlohmann::json::parse(scenario.policy->json);
  call.limits = protocol::CallLimits(scenario);
  std::vector<std::expected<AdapterRun, std::string>> runs(static_cast<std::size_t>(trace.calls));
  // Scripted time (listener outages, every route's health) starts at the subject's first
  // attempt, not at the session's creation nor at its hello: an interpreter may take seconds to
  // load its library and would otherwise miss an outage, or meet a route that had already
  // recovered. The hello arms it (the listener stays as it is at 0); the first request's
  // arrival, or the first response/start (a refused connection never arrives), starts it; a
  // subject that reports no attempt and reaches nothing starts it kScriptedFallback after its
  // hello, and the judge is told (Trace::scripted_by_fallback).
  std::once_flag anchored;
  std::mutex anchor_mutex;
  std::condition_variable_any anchor_set;
  std::optional<Clock::time_point> anchored_at;  // guarded by anchor_mutex: the first hello
  const auto anchor = [&] {
    std::call_once(anchored, [&] {
      server_->ArmOutages(session->id);
      std::lock_guard lock(anchor_mutex);
      anchored_at = Clock::now();
      anchor_set.notify_all();
    });
  };
  const auto on_line = [&](std::string_view line) {
    const auto event = protocol::ParseLine(line);
    if (event && event->kind == EventKind::kStart) server_->StartArmedOutages(session->id);
  };
  std::atomic<bool> fallback_started = false;
  std::jthread fallback([&](std::stop_token stop) {
    std::unique_lock lock(anchor_mutex);
    if (!anchor_set.wait(lock, stop, [&] { return anchored_at.has_value(); })) return;
    const auto due = *anchored_at + kScriptedFallback;
    if (anchor_set.wait_until(lock, stop, due, [] { return false; }) || stop.stop_requested()) {
      return;
    }
    fallback_started = server_->StartArmedOutages(session->id);
  });
  // Call i starts i x call_interval after that anchor (at once on a stop request, or when the
  // run's timeout passes first).
  const auto wait_for_start = [&](std::size_t i) {
    const auto due = scenario.request.call_interval * static_cast<int>(i);
    if (due <= Duration{0}) return;
    std::stop_token stop = options.stop;
    std::unique_lock lock(anchor_mutex);
    const auto give_up = session->start + options.timeout;
    if (!anchor_set.wait_until(lock, stop, give_up, [&] { return anchored_at.has_value(); })) {
      return;
    }
    anchor_set.wait_until(lock, stop, std::min(give_up, *anchored_at + due), [] { return false; });
  };
  {
    std::vector<std::jthread> threads;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      threads.emplace_back([&, i, call] mutable {
        wait_for_start(i);
        call.seed = options.seed + i;  // as the in-process client seeds call i
        call.base_url = provider::CallBaseUrl(session->base_url, static_cast<int>(i), trace.calls);
        call.routes = RoutesOfCall(session->routes, static_cast<int>(i), trace.calls);
        AdapterLaunch launch{.command = command,
                             .call_line = protocol::ToJson(call).dump(
                                 -1, ' ', false, nlohmann::json::error_handler_t::replace),
                             .cancel_at = scenario.cancel_at,
                             .first_attempt =
                                 [&](const std::vector<AdapterLine>& lines) {
                                   if (const auto first = FirstArrival(session->id)) return first;
                                   return UnarrivedAttemptStart(LineKinds(lines));
                                 },
                             .on_first_line = anchor,
                             .on_line = on_line,
                             .timeout = options.timeout,
                             .max_line_bytes = options.max_line_bytes,
                             .stop = options.stop,
                             .start = session->start};
        runs[i] = RunAdapter(launch);
        anchor();  // a first call that never wrote a line must not hold the others back
      });
    }
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!runs[i]) {
      Close(*session, trace);
      return std::unexpected(runs[i].error());
    }
    const AdapterRun& run = *runs[i];
    CollectLines(run, static_cast<int>(i), trace);
    if (run.cancel_sent && (!trace.cancel_at || *run.cancel_sent < *trace.cancel_at)) {
      trace.cancel_at = run.cancel_sent;
    }
    trace.subject_timed_out = trace.subject_timed_out || run.timed_out;
    trace.interrupted = trace.interrupted || run.interrupted;
    // The moment the stop began, not the exit: a socket the kill closes is closed by the runner.
    const auto stopped = run.stopped.value_or(run.ended);
    if (run.timed_out && (!trace.subject_stopped_at || stopped < *trace.subject_stopped_at)) {
      trace.subject_stopped_at = stopped;
    }
    if (!run.stderr_text.empty()) {
      trace.subject_stderr += (runs.size() > 1 ? fmt::format("[call {}] ", i) : "") +
                              protocol::ValidUtf8(run.stderr_text);
    }
  }
  fallback.request_stop();
  fallback.join();
  trace.scripted_by_fallback = fallback_started;
  std::ranges::stable_sort(trace.client, {}, &ClientRecord::at);
  Close(*session, trace);
  return trace;
}

}  // namespace faultline::harness
