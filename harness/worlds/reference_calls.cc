#include "harness/worlds/reference_calls.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <mutex>
#include <stop_token>

#include "fake_provider/admission.h"
#include "harness/trace/event.h"
#include "harness/worlds/call_lines.h"
#include "harness/worlds/reference_events.h"
#include "harness/worlds/request_body.h"
#include "harness/worlds/scripted_start.h"
#include "reference_impl/client_state.h"
#include "reference_impl/driver.h"

namespace faultline::harness {
namespace {

using Clock = std::chrono::steady_clock;

Duration Since(Clock::time_point start) {
  return std::chrono::duration_cast<Duration>(Clock::now() - start);
}

// The in-process reference client's calls of one scenario run, on one io_context that Run drives
// on the caller's thread: each call's launch when due, the scripted cancel, the run's timeout and
// a stop request. Every call is one client's: they share its breakers and retry budget.
class ReferenceCalls {
 public:
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
      trace_.client.push_back({Since(start_), call, EventFromReference(event)});
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

}  // namespace

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

void RunReferenceCalls(const scenario::Scenario& scenario, const ref::RetryPolicy& policy,
                       const RealRunOptions& options, Clock::time_point start,
                       FirstArrival first_arrival, std::vector<ref::CallRequest> requests,
                       Trace& trace) {
  ReferenceCalls run(scenario, policy, options, start, std::move(first_arrival), trace);
  run.Run(std::move(requests));
}

}  // namespace faultline::harness
