#include "harness/worlds/real_world.h"

#include <fmt/format.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <set>

#include "fake_provider/admission.h"
#include "harness/trace/protocol.h"
#include "harness/worlds/adapter_process.h"
#include "harness/worlds/app_subject.h"
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

// A fault of call `call`'s process, with how the process ended.
SubjectFault ProcessFault(const AdapterRun& run, int call, std::string kind,
                          std::string_view message) {
  return SubjectFault{std::move(kind), fmt::format("call {}: {}", call, message),
                      run.signal ? std::nullopt : std::optional<int>(run.exit_status), run.signal};
}

// Why the process left nothing to judge, as a fault's kind and message: it flooded, or it ended
// without writing anything.
std::optional<std::pair<std::string, std::string>> NothingToJudge(const AdapterRun& run) {
  if (!run.overflow.empty()) {
    return std::pair{run.overflow, std::string(run.overflow == "line-too-long"
                                                   ? "the adapter wrote a line over the runner's "
                                                     "line limit"
                                                   : "the adapter wrote more output than the "
                                                     "runner's limit")};
  }
  if (!run.lines.empty() || run.timed_out) return std::nullopt;
  if (run.exit_status == 126 || run.exit_status == 127) {
    return std::pair{
        std::string("cannot-start"),
        fmt::format("the command could not be started (exit status {})", run.exit_status)};
  }
  return std::pair{
      std::string("exited"),
      fmt::format("the adapter exited with status {} before writing anything", run.exit_status)};
}

// The first way the adapter broke the protocol on call `call`, if any.
std::optional<SubjectFault> FaultOf(const AdapterRun& run, int call, bool saw_hello,
                                    bool saw_terminal, const std::optional<SubjectFault>& line) {
  if (auto nothing = NothingToJudge(run)) {
    return ProcessFault(run, call, nothing->first, nothing->second);
  }
  if (line)
    return SubjectFault{line->kind, fmt::format("call {}: {}", call, line->message), std::nullopt,
                        std::nullopt};
  if (!saw_hello)
    return ProcessFault(run, call, "no-hello", "the first line was not adapter/hello");
  if (saw_terminal || run.timed_out) return std::nullopt;
  if (run.signal) {
    return ProcessFault(
        run, call, "killed",
        fmt::format("the adapter was killed by signal {} before its terminal event", *run.signal));
  }
  return ProcessFault(
      run, call, "exited",
      fmt::format("the adapter exited with status {} before its terminal event", run.exit_status));
}

SubjectFault NotHelloFirst(EventKind first) {
  return SubjectFault{
      "no-hello", fmt::format("the first event is {}, not adapter/hello", ToString(first)), {}, {}};
}

SubjectFault EventOfNoCall(const ClientEvent& event, int call, int calls) {
  return SubjectFault{"not-protocol",
                      fmt::format("{} names call {}, but the run has {} call(s) (0 to {})",
                                  ToString(event.kind), call, calls, calls - 1),
                      {},
                      {}};
}

// Validates and records the lines of call `call`'s process (of `calls`); a session-mode
// process's lines are each filed under the call they name. The first protocol break becomes the
// trace's subject fault.
void CollectLines(const AdapterRun& run, int call, int calls, bool session, Trace& trace) {
  std::optional<SubjectFault> line_fault;
  bool saw_hello = false;
  std::vector<bool> ended(static_cast<std::size_t>(calls), false);
  for (const AdapterLine& line : run.lines) {
    auto event = protocol::ParseLine(line.text);
    if (!event) {
      trace.protocol_errors.push_back(
          fmt::format("call {} at {:.1f} ms: {}", call, Ms(line.at), event.error().message));
      if (!line_fault) line_fault = SubjectFault{event.error().kind, event.error().message, {}, {}};
      continue;
    }
    const bool hello = event->kind == EventKind::kHello;
    if (!saw_hello && !hello && !line_fault) line_fault = NotHelloFirst(event->kind);
    saw_hello = saw_hello || hello;
    const int owner = session ? event->call.value_or(0) : call;
    event->call.reset();
    if (owner >= calls) {
      if (!line_fault) line_fault = EventOfNoCall(*event, owner, calls);
      continue;
    }
    ended[static_cast<std::size_t>(owner)] =
        ended[static_cast<std::size_t>(owner)] || event->terminal();
    trace.client.push_back({line.at, owner, std::move(*event)});
  }
  // A session-mode process answers for every call; any other for its own.
  for (int each = session ? 0 : call; each < (session ? calls : call + 1); ++each) {
    if (trace.subject_fault) return;
    trace.subject_fault =
        FaultOf(run, each, saw_hello, ended[static_cast<std::size_t>(each)], line_fault);
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

// The reference client's request of each of `calls` calls: call i under its own base URL
// (provider::CallBaseUrl), with its routes.
std::expected<std::vector<ref::CallRequest>, std::string> ReferenceRequests(
    const scenario::Scenario& scenario, const std::string& base_url,
    const std::vector<protocol::RouteLine>& routes, int calls) {
  const CallTarget target = PrimaryTarget(scenario);
  const std::string body = target.body.dump();
  std::vector<ref::CallRequest> requests;
  for (int i = 0; i < calls; ++i) {
    auto call_routes = ReferenceRoutes(RoutesOfCall(routes, i, calls));
    if (!call_routes) return std::unexpected("the scenario's routes: " + call_routes.error());
    auto url = ref::ParseBaseUrl(provider::CallBaseUrl(base_url, i, calls));
    if (!url) return std::unexpected(url.error());
    ref::CallRequest request;
    request.routes = *call_routes;
    request.dialect = *ref::ParseDialect(scenario::ToString(target.dialect));
    request.base_url = *url;
    request.api_key = std::string(kTestApiKey);
    request.body = body;
    request.stream = scenario.request.stream;
    requests.push_back(std::move(request));
  }
  return requests;
}

// The in-process reference client's calls of one scenario run, on one io_context that Run drives
// on the caller's thread: each call's launch when due, the scripted cancel, the run's timeout and
// a stop request. Every call is one client's: they share its breakers and retry budget.
class ReferenceCalls {
 public:
  // When the session's first request reached the provider, if one did yet.
  using FirstArrival = std::function<std::optional<Duration>()>;

  ReferenceCalls(const scenario::Scenario& scenario, const ref::RetryPolicy& policy,
                 const RealRunOptions& options, Clock::time_point start, FirstArrival first_arrival,
                 Trace& trace)
      : scenario_(scenario),
        policy_(policy),
        options_(options),
        start_(start),
        first_arrival_(std::move(first_arrival)),
        trace_(trace),
        client_(policy) {}

  // Runs call i as `requests[i]` until every call is done, recording its events in the trace.
  void Run(std::vector<ref::CallRequest> requests) {
    requests_ = std::move(requests);
    drivers_.resize(requests_.size());
    ScheduleLaunches();
    if (scenario_.cancel_at) ArmCancel({});
    ArmTimeout();
    // A stop request (from another thread) is carried onto this loop; a call already over stays
    // a finished run.
    std::stop_callback on_stop(options_.stop,
                               [this] { boost::asio::post(io_, [this] { StopRequested(); }); });
    // Run until every call is done; then the timers are the only work left.
    while (!AllDone() && !io_.stopped()) io_.run_one();
    cancel_timer_.cancel();
    timeout_timer_.cancel();
    io_.run();  // let the drivers finish closing
  }

 private:
  void Launch(int call) {
    const auto i = static_cast<std::size_t>(call);
    ref::DriverCallbacks callbacks;
    // The callbacks run on this thread (io_.run_one), but on the drivers' strands: the lock
    // keeps trace_.client safe whatever the executor does.
    callbacks.on_event = [this, call](const ref::LifecycleEvent& event) {
      std::lock_guard lock(mutex_);
      trace_.client.push_back({Since(start_), call, EventFromJson(event.ToJson())});
    };
    drivers_[i] = ref::CallDriver::Launch(
        io_, std::move(requests_[i]), policy_,
        client_.Share({.call_id = fmt::format("call{}", call), .seed = options_.seed + call}),
        std::move(callbacks));
    if (cancelled_) drivers_[i]->Cancel();  // a call due after the cancel ends at once, ABORTED
  }

  // Call i starts i x call_interval after the first; a cancel starts the rest at once (and
  // cancels them: Launch sees `cancelled_`).
  void ScheduleLaunches() {
    for (int i = 0; i < static_cast<int>(requests_.size()); ++i) {
      const auto due = scenario_.request.call_interval * i;
      if (due <= Duration{0}) {
        Launch(i);
        continue;
      }
      auto& timer = start_timers_.emplace_back(std::make_unique<boost::asio::steady_timer>(io_));
      timer->expires_at(start_ + due);
      timer->async_wait([this, i](boost::system::error_code) { Launch(i); });
    }
  }

  // The scripted cancel counts from the call's first attempt, as an adapter's does
  // (adapter_process.h) and as t = 0 is in the virtual world: its request's arrival at the
  // provider (on a loaded machine the request may leave well after the session opened), or,
  // when that attempt ended without reaching it (a refused connection), its response/start.
  // Until one is known, look again every 5 ms (and cancel anyway kCancelFallback later).
  void ArmCancel(boost::system::error_code error) {
    if (error) return;
    if (const auto first = FirstAttempt()) {
      cancel_timer_.expires_at(start_ + *first + *scenario_.cancel_at);
      cancel_timer_.async_wait([this](boost::system::error_code fired) {
        if (fired) return;
        trace_.cancel_at = Since(start_);
        CancelAll();
      });
      return;
    }
    if (Since(start_) >= *scenario_.cancel_at + kCancelFallback) {  // nothing arrives
      trace_.cancel_at = Since(start_);
      CancelAll();
      return;
    }
    cancel_timer_.expires_after(std::chrono::milliseconds(5));
    cancel_timer_.async_wait([this](boost::system::error_code next) { ArmCancel(next); });
  }

  std::optional<Duration> FirstAttempt() {
    if (const auto first = first_arrival_()) return first;
    std::lock_guard lock(mutex_);
    std::vector<std::pair<EventKind, Duration>> kinds;
    for (const ClientRecord& record : trace_.client)
      kinds.emplace_back(record.event.kind, record.at);
    return UnarrivedAttemptStart(kinds);
  }

  void ArmTimeout() {
    timeout_timer_.expires_at(start_ + options_.timeout);
    timeout_timer_.async_wait([this](boost::system::error_code error) {
      if (error) return;
      trace_.subject_timed_out = true;
      trace_.subject_stopped_at = Since(start_);
      CancelAll();
    });
  }

  void StopRequested() {
    if (AllDone() || trace_.interrupted) return;
    trace_.interrupted = true;
    trace_.subject_stopped_at = Since(start_);
    CancelAll();
  }

  void CancelAll() {
    cancelled_ = true;
    for (auto& driver : drivers_) {
      if (driver) driver->Cancel();
    }
    for (auto& timer : start_timers_) timer->cancel();
  }

  bool AllDone() {
    std::lock_guard lock(mutex_);
    return std::ranges::count_if(trace_.client, IsTerminal) >= trace_.calls;
  }

  const scenario::Scenario& scenario_;
  const ref::RetryPolicy& policy_;
  const RealRunOptions& options_;
  const Clock::time_point start_;
  const FirstArrival first_arrival_;
  Trace& trace_;
  std::mutex mutex_;
  // Before the io_context, so that it outlives any handler that still holds a call.
  const ref::ClientState client_;
  boost::asio::io_context io_;
  std::vector<std::shared_ptr<ref::CallDriver>> drivers_;
  std::vector<ref::CallRequest> requests_;  // call i's until it is launched
  bool cancelled_ = false;
  std::vector<std::unique_ptr<boost::asio::steady_timer>> start_timers_;
  boost::asio::steady_timer cancel_timer_{io_};
  boost::asio::steady_timer timeout_timer_{io_};
};

// When scripted time (listener outages, every route's health) starts for an adapter subject: at
// its first attempt, not at the session's creation nor at its hello, since an interpreter may
// take seconds to load its library and would otherwise miss an outage, or meet a route that had
// already recovered. The first hello arms it (Anchor; the listener stays as it is at 0); the
// first request's arrival, or the first response/start (OnLine: a refused connection never
// arrives), starts it; for a subject that reports no attempt and reaches nothing, a thread
// starts it kScriptedFallback after the hello, and the judge is told
// (Trace::scripted_by_fallback).
class ScriptedStart {
 public:
  ScriptedStart(provider::Server& server, std::string session_id)
      : server_(server), session_id_(std::move(session_id)) {}

  void Anchor() {
    std::call_once(anchored_, [&] {
      server_.ArmOutages(session_id_);
      std::lock_guard lock(mutex_);
      anchored_at_ = Clock::now();
      anchor_set_.notify_all();
    });
  }

  void OnLine(std::string_view line) {
    const auto event = protocol::ParseLine(line);
    if (event && event->kind == EventKind::kStart) server_.StartArmedOutages(session_id_);
  }

  // Waits until `due` after the anchor (not at all for a `due` of 0; at once on a stop request,
  // or at `give_up` when that comes first).
  void WaitPastAnchor(Duration due, Clock::time_point give_up, std::stop_token stop) {
    if (due <= Duration{0}) return;
    std::unique_lock lock(mutex_);
    if (!anchor_set_.wait_until(lock, stop, give_up, [&] { return anchored_at_.has_value(); })) {
      return;
    }
    anchor_set_.wait_until(lock, stop, std::min(give_up, *anchored_at_ + due),
                           [] { return false; });
  }

  // Ends the fallback; whether it was what started scripted time.
  bool StopFallback() {
    fallback_.request_stop();
    fallback_.join();
    return fallback_started_;
  }

 private:
  void Fallback(std::stop_token stop) {
    std::unique_lock lock(mutex_);
    if (!anchor_set_.wait(lock, stop, [&] { return anchored_at_.has_value(); })) return;
    const auto due = *anchored_at_ + kScriptedFallback;
    if (anchor_set_.wait_until(lock, stop, due, [] { return false; }) || stop.stop_requested()) {
      return;
    }
    fallback_started_ = server_.StartArmedOutages(session_id_);
  }

  provider::Server& server_;
  const std::string session_id_;
  std::once_flag anchored_;
  std::mutex mutex_;
  std::condition_variable_any anchor_set_;
  std::optional<Clock::time_point> anchored_at_;  // guarded by mutex_: the first hello
  std::atomic<bool> fallback_started_ = false;
  std::jthread fallback_{[this](std::stop_token stop) { Fallback(stop); }};  // last: uses the rest
};

// The call line every call of an adapter subject gets, but for what is each call's own
// (CallLines).
protocol::CallLine CallLineOf(const scenario::Scenario& scenario, const std::string& base_url,
                              const std::vector<protocol::RouteLine>& routes) {
  const CallTarget target = PrimaryTarget(scenario);
  protocol::CallLine call{.call = std::nullopt,
                          .base_url = base_url,
                          .api_key = std::string(kTestApiKey),
                          .dialect = std::string(scenario::ToString(target.dialect)),
                          .request = target.body,
                          .scenario = scenario.name,
                          .seed = std::nullopt,
                          .policy = std::nullopt,
                          .limits = std::nullopt,
                          .routes = routes};
  if (scenario.policy) call.policy = nlohmann::json::parse(scenario.policy->json);
  call.limits = protocol::CallLimits(scenario);
  return call;
}

// Call i's line of `calls`: under its own base URL and routes, seeded as the in-process client
// seeds call i.
std::vector<protocol::CallLine> CallLines(const protocol::CallLine& common, int calls,
                                          std::uint64_t seed) {
  std::vector<protocol::CallLine> lines;
  for (int i = 0; i < calls; ++i) {
    protocol::CallLine call = common;
    call.seed = seed + i;
    call.base_url = provider::CallBaseUrl(common.base_url, i, calls);
    call.routes = RoutesOfCall(common.routes, i, calls);
    lines.push_back(std::move(call));
  }
  return lines;
}

std::string LineText(const protocol::CallLine& call) {
  return protocol::ToJson(call).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A scenario run's calls against one adapter command (docs/adapter-protocol.md, "Session
// mode"): call 0's process says in its hello whether it serves every call (session) or each call
// gets a process of its own (per-call). Shared by the run's threads: call 0's reader thread tells
// it each line, the other calls' threads ask it where their call goes.
class CallDispatch {
 public:
  // `known`: the mode a hello of the same command declared before (the other calls need not wait
  // for this run's); `stdin`: call 0's process's.
  CallDispatch(int calls, std::optional<bool> known, std::shared_ptr<AdapterStdin> stdin)
      : calls_(calls), session_(known), stdin_(std::move(stdin)) {}

  // A line of call 0's process: its hello settles the mode; in session mode, once every call has
  // ended, its stdin closes (the adapter exits at its end).
  void OnLine(std::string_view line) {
    const auto event = protocol::ParseLine(line);
    if (!event) return;  // the protocol check reports it
    std::lock_guard lock(mutex_);
    if (event->kind == EventKind::kHello && !settled_by_hello_) {
      settled_by_hello_ = true;
      session_ = event->session;
      settled_.notify_all();
    }
    if (!event->terminal() || !session_.value_or(false)) return;
    ended_.insert(event->call.value_or(0));
    if (static_cast<int>(ended_.size()) >= calls_) stdin_->Close();
  }

  // Call 0's process ended: a mode no hello settled is per-call.
  void Ended() {
    std::lock_guard lock(mutex_);
    if (!session_) session_ = false;
    settled_.notify_all();
  }

  // Call `i` (> 0) is due: true when call 0's process serves it (its line is written there, with
  // a cancel after it when the cancel came already); false when it needs a process of its own.
  // Waits for the mode, at most until `give_up` or a stop request (then: its own process, which
  // the stop ends at once).
  bool ServedBySession(int i, const protocol::CallLine& line,
                       std::chrono::steady_clock::time_point give_up, std::stop_token stop) {
    std::unique_lock lock(mutex_);
    settled_.wait_until(lock, stop, give_up, [&] { return session_.has_value(); });
    if (!session_.value_or(false)) return false;
    protocol::CallLine numbered = line;
    numbered.call = i;
    stdin_->Write(LineText(numbered));
    if (cancelled_) stdin_->Write(CancelLine(i));
    return true;
  }

  // The scripted cancel, due now (call 0's reader thread): per-call, call 0's cancel; in session
  // mode one for every call started and not ended, and every later call's right after its line.
  void Cancel() {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
    if (!session_.value_or(false)) {
      stdin_->Write(R"({"type":"cancel"})");
      return;
    }
    for (int i = 0; i < calls_; ++i) {
      if (!ended_.contains(i)) stdin_->Write(CancelLine(i));
    }
  }

  // What a hello declared this run (nullopt: none did).
  std::optional<bool> declared() const {
    std::lock_guard lock(mutex_);
    return settled_by_hello_ ? session_ : std::nullopt;
  }
  bool session() const {
    std::lock_guard lock(mutex_);
    return session_.value_or(false);
  }

 private:
  static std::string CancelLine(int call) {
    return fmt::format(R"({{"type":"cancel","call":{}}})", call);
  }

  const int calls_;
  mutable std::mutex mutex_;
  std::condition_variable_any settled_;
  std::optional<bool> session_;  // guarded by mutex_, as the rest
  bool settled_by_hello_ = false;
  const std::shared_ptr<AdapterStdin> stdin_;
  std::set<int> ended_;  // session mode: the calls whose terminal event came
  bool cancelled_ = false;
};

// What one call of a run made: its process's run, the error of a process that could not be
// started, or nullopt when no process was its own (a session-mode adapter served it).
using CallRun = std::optional<std::expected<AdapterRun, std::string>>;

// Every call on a thread of its own: call i starts i x `interval` after scripted time's anchor
// (at once on a stop request, or when `give_up` passes first), as `run_call(i)` runs it.
std::vector<CallRun> RunEachCall(int calls, Duration interval, ScriptedStart& scripted,
                                 std::chrono::steady_clock::time_point give_up,
                                 std::stop_token stop,
                                 const std::function<CallRun(int)>& run_call) {
  std::vector<CallRun> runs(static_cast<std::size_t>(calls));
  {
    std::vector<std::jthread> threads;
    for (int i = 0; i < calls; ++i) {
      threads.emplace_back([&, i] {
        scripted.WaitPastAnchor(interval * i, give_up, stop);
        runs[static_cast<std::size_t>(i)] = run_call(i);
        scripted.Anchor();  // a first call that never wrote a line must not hold the others back
      });
    }
  }  // every thread joined
  return runs;
}

// How call `call`'s process (of `calls`) ended, into the trace: the cancel, the runner's stop,
// and its stderr and (an app's) stdout tails.
void AddProcessEnding(const AdapterRun& run, std::size_t call, std::size_t calls, Trace& trace) {
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
  const std::string label = calls > 1 ? fmt::format("[call {}] ", call) : "";
  if (!run.stderr_text.empty())
    trace.subject_stderr += label + protocol::ValidUtf8(run.stderr_text);
  if (!run.stdout_text.empty())
    trace.subject_stdout += label + protocol::ValidUtf8(run.stdout_text);
}

// What call `call`'s adapter process (of `calls`) did, into the trace; a session-mode process
// (`session`) did it for every call.
void AddAdapterRun(const AdapterRun& run, std::size_t call, std::size_t calls, bool session,
                   Trace& trace) {
  CollectLines(run, static_cast<int>(call), static_cast<int>(calls), session, trace);
  AddProcessEnding(run, call, session ? 1 : calls, trace);
}

// What call `call`'s app process (of `calls`) did, into the trace: its outcome, at its exit.
void AddAppRun(const AdapterRun& run, std::size_t call, std::size_t calls, Trace& trace) {
  const int index = static_cast<int>(call);
  if (!trace.subject_fault) trace.subject_fault = AppFault(run, index);
  if (auto outcome = AppOutcome(run))
    trace.client.push_back({run.ended, index, std::move(*outcome)});
  trace.subject_endings.push_back(fmt::format("call {}: the app {}", call, AppEnding(run)));
  AddProcessEnding(run, call, calls, trace);
}

// Every call's process into the trace (`add`), in time order, once scripted time's fallback is
// over; the error of a process that could not be started at all (no pipe, no fork).
std::expected<void, std::string> AddRuns(
    const std::vector<CallRun>& runs,
    const std::function<void(const AdapterRun&, std::size_t, std::size_t, Trace&)>& add,
    ScriptedStart& scripted, Trace& trace) {
  trace.scripted_by_fallback = scripted.StopFallback();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!runs[i]) continue;  // served by another call's process
    if (!*runs[i]) return std::unexpected(runs[i]->error());
    add(**runs[i], i, runs.size(), trace);
  }
  std::ranges::stable_sort(trace.client, {}, &ClientRecord::at);
  return {};
}

// What an app making call `call` of the session is told (app_subject.h).
AppCall AppCallOf(const scenario::Scenario& scenario, const protocol::CallLine& common,
                  const std::string& call_line, int call, int calls) {
  return AppCall{
      .base_url = provider::CallBaseUrl(common.base_url, call, calls),
      .dialect = common.dialect,
      .model = common.request.value("model", std::string()),
      .scenario = scenario.name,
      .call = call,
      .calls = calls,
      .request = common.request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
      .call_line = call_line};
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
  const int calls = std::max(1, scenario.request.calls);
  auto requests = ReferenceRequests(scenario, session->base_url, session->routes, calls);
  if (!requests) return std::unexpected(requests.error());
  Trace trace;
  trace.calls = calls;
  trace.client.push_back({Duration{0}, 0, EventFromJson(ref::HelloEvent(policy).ToJson())});
  trace.one_client = true;  // every call is one client's (ReferenceCalls)
  ReferenceCalls run(
      scenario, policy, options, session->start,
      [this, id = session->id] { return FirstArrival(id); }, trace);
  run.Run(std::move(*requests));
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
  ScriptedStart scripted(*server_, session->id);
  const std::vector<protocol::CallLine> lines = CallLines(
      CallLineOf(scenario, session->base_url, session->routes), trace.calls, options.seed);
  auto first_stdin = std::make_shared<AdapterStdin>();
  first_stdin->Write(LineText(lines[0]));  // before any other call's, should call 0 serve them
  CallDispatch dispatch(trace.calls, KnownMode(command), first_stdin);
  AdapterLaunch launch = AdapterLaunchOf(*session, scenario, command, options);
  launch.on_first_line = [&scripted] { scripted.Anchor(); };
  launch.on_line = [&scripted](std::string_view line) { scripted.OnLine(line); };
  AdapterLaunch first = launch;
  first.stdin_channel = first_stdin;
  first.on_line = [&scripted, &dispatch](std::string_view line) {
    scripted.OnLine(line);
    dispatch.OnLine(line);
  };
  first.on_cancel = [&dispatch] { dispatch.Cancel(); };
  const auto runs = RunEachCall(
      trace.calls, scenario.request.call_interval, scripted, launch.start + launch.timeout,
      options.stop, [&](int i) -> CallRun {
        if (i == 0) {
          auto run = RunAdapter(first);
          dispatch.Ended();
          return run;
        }
        const auto& line = lines[static_cast<std::size_t>(i)];
        if (dispatch.ServedBySession(i, line, launch.start + launch.timeout, options.stop)) {
          return std::nullopt;
        }
        AdapterLaunch own = launch;
        own.call_line = LineText(line);
        return RunAdapter(own);
      });
  if (const auto declared = dispatch.declared()) RememberMode(command, *declared);
  trace.one_client = dispatch.session();  // one process: its breakers and budget serve every call
  auto added = AddRuns(
      runs,
      [session_mode = dispatch.session()](const AdapterRun& run, std::size_t call,
                                          std::size_t calls, Trace& into) {
        AddAdapterRun(run, call, calls, session_mode, into);
      },
      scripted, trace);
  Close(*session, trace);
  if (!added) return std::unexpected(added.error());
  return trace;
}

std::optional<bool> RealWorld::KnownMode(const std::string& command) const {
  std::lock_guard lock(modes_mutex_);
  const auto found = modes_.find(command);
  return found == modes_.end() ? std::nullopt : std::optional<bool>(found->second);
}

void RealWorld::RememberMode(const std::string& command, bool session) {
  std::lock_guard lock(modes_mutex_);
  modes_[command] = session;
}

std::expected<Trace, std::string> RealWorld::RunAppSubject(const scenario::Scenario& scenario,
                                                           const AppSubject& app,
                                                           const RealRunOptions& options) {
  auto session = Open(scenario, options.provider_seed);
  if (!session) return std::unexpected(session.error());
  Trace trace;
  trace.calls = std::max(1, scenario.request.calls);
  trace.client.push_back({Duration{0}, 0, AppHello(app.policy)});
  trace.own_request = true;
  ScriptedStart scripted(*server_, session->id);
  // An app's attempts are seen only when they arrive: a refused one never is, so scripted time
  // starts at the launch. The app then meets no more of an outage than its policy's twin does
  // (policy_twin.h, LeadOfFirstAttempt: its first attempt at the app's first arrival, or at 0).
  scripted.Anchor();
  server_->StartArmedOutages(session->id);
  AdapterLaunch launch = AdapterLaunchOf(*session, scenario, app.command, options);
  launch.free_output = true;
  const char* no_proxy = std::getenv("NO_PROXY");
  const protocol::CallLine common = CallLineOf(scenario, session->base_url, session->routes);
  const std::vector<protocol::CallLine> lines = CallLines(common, trace.calls, options.seed);
  const auto runs =
      RunEachCall(trace.calls, scenario.request.call_interval, scripted,
                  launch.start + launch.timeout, options.stop, [&](int i) -> CallRun {
                    AdapterLaunch own = launch;
                    own.environment = AppEnvironment(
                        AppCallOf(scenario, common, LineText(lines[static_cast<std::size_t>(i)]), i,
                                  trace.calls),
                        no_proxy != nullptr ? no_proxy : "");
                    return RunAdapter(own);
                  });
  auto added = AddRuns(runs, AddAppRun, scripted, trace);
  Close(*session, trace);
  if (!added) return std::unexpected(added.error());
  return trace;
}

// The launch of every call but for its call line and the hooks on scripted time; its first
// attempt began at its request's arrival, or by the adapter's own account of an attempt that
// never arrived.
AdapterLaunch RealWorld::AdapterLaunchOf(const Session& session, const scenario::Scenario& scenario,
                                         const std::string& command,
                                         const RealRunOptions& options) const {
  return AdapterLaunch{.command = command,
                       .call_line = {},
                       .environment = {},
                       .free_output = false,
                       .cancel_at = scenario.cancel_at,
                       .first_attempt =
                           [this, id = session.id](const std::vector<AdapterLine>& lines) {
                             if (const auto first = FirstArrival(id)) return first;
                             return UnarrivedAttemptStart(LineKinds(lines));
                           },
                       .on_first_line = {},
                       .on_line = {},
                       .stdin_channel = nullptr,
                       .on_cancel = {},
                       .timeout = options.timeout,
                       .max_line_bytes = options.max_line_bytes,
                       .stop = options.stop,
                       .start = session.start};
}

}  // namespace faultline::harness
