#include "harness/worlds/virtual_world.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>

#include "fake_provider/admission.h"
#include "fake_provider/http_request.h"
#include "fake_provider/plan/plan_compiler.h"
#include "fake_provider/provider_core.h"
#include "fake_provider/virtual_driver.h"
#include "harness/worlds/reference_events.h"
#include "harness/worlds/request_body.h"
#include "reference_impl/call.h"
#include "reference_impl/client_state.h"
#include "scenarios/route_scenario.h"

namespace faultline::harness {
namespace {

using provider::PipeEvent;
using Time = ref::PolicyClock::time_point;

// The virtual wall clock starts on a whole second, so HTTP dates are exact at t = 0.
constexpr provider::WallTime kWallStart{std::chrono::seconds(1'767'225'600)};  // 2026-01-01

// The one session of the virtual provider, under the base URL path the client is given.
constexpr std::string_view kSessionId = "virtual";

Time At(Duration offset) { return Time{} + offset; }

// One call of the scenario and its (at most one) open connection.
struct VirtualCall {
  std::unique_ptr<ref::Call> call;
  int index = 0;
  Duration starts_at{0};  // i x the scenario's call_interval
  bool started = false;
  std::optional<Duration> connect_at;               // when the connect the client asked for is due
  int connects = 0;                                 // asked for so far (the first is never lagged)
  std::unique_ptr<provider::RequestReader> reader;  // the request being sent, if any
  std::string unread;                               // sent bytes the reader has not consumed
  std::optional<provider::VirtualExchange> exchange;
  std::optional<Duration> timer;
};

}  // namespace

struct CompiledSessions {
  // Session id ("/s/<id>" of each route, or the one session) -> the scenario it serves.
  std::vector<std::pair<std::string, std::shared_ptr<const provider::CompiledScenario>>> sessions;
  // The reference client's request of each call, the same in every run (or why there is none).
  std::expected<std::vector<ref::CallRequest>, std::string> requests;
};

namespace {

std::expected<std::vector<ref::CallRequest>, std::string> ReferenceCallRequests(
    const scenario::Scenario& scenario) {
  const CallTarget target = PrimaryTarget(scenario);
  const std::string body = target.body.dump();
  const int calls = std::max(1, scenario.request.calls);
  std::vector<ref::CallRequest> requests;
  for (int i = 0; i < calls; ++i) {
    // Every route of call i under that call's own base URL (provider::CallBaseUrl).
    auto routes = ReferenceRoutes(RouteLines(scenario, [&](std::string_view id) {
      return provider::CallBaseUrl(
          fmt::format("http://127.0.0.1/s/{}", scenario::RouteSessionId(kSessionId, id)), i, calls);
    }));
    if (!routes) return std::unexpected("the scenario's routes: " + routes.error());
    ref::CallRequest& request = requests.emplace_back();
    request.dialect = *ref::ParseDialect(scenario::ToString(target.dialect));
    request.base_url.host = "127.0.0.1";
    request.base_url.path = provider::CallBaseUrl(fmt::format("/s/{}", kSessionId), i, calls);
    request.api_key = std::string(kTestApiKey);
    request.body = body;
    request.stream = scenario.request.stream;
    request.routes = *std::move(routes);
  }
  return requests;
}

}  // namespace

std::shared_ptr<const CompiledSessions> CompileSessions(const scenario::Scenario& scenario) {
  auto compiled = std::make_shared<CompiledSessions>();
  const auto add = [&](std::string id, scenario::Scenario served) {
    compiled->sessions.emplace_back(
        std::move(id), std::make_shared<const provider::CompiledScenario>(std::move(served)));
  };
  if (scenario.routes.empty()) {
    add(std::string(kSessionId), scenario);
  } else {
    for (const scenario::Route& route : scenario.routes) {
      add(scenario::RouteSessionId(kSessionId, route.id), scenario::RouteScenario(scenario, route));
    }
  }
  compiled->requests = ReferenceCallRequests(scenario);
  return compiled;
}

namespace {

class World {
 public:
  World(const scenario::Scenario& scenario, const VirtualRunOptions& options)
      : scenario_(scenario), options_(options) {
    trace_.calls = scenario.request.calls;
    trace_.wall_start = std::chrono::system_clock::time_point(kWallStart);
    compiled_ = options.compiled ? options.compiled : CompileSessions(scenario);
    for (const auto& [id, served] : compiled_->sessions) AddSession(id, served);
  }

  std::expected<Trace, std::string> Run();

 private:
  void Record(VirtualCall& vc) {
    for (ref::LifecycleEvent& event : vc.call->TakeEvents()) {
      trace_.client.push_back({now_, vc.index, EventFromReference(std::move(event))});
    }
  }
  void AddSession(std::string id, std::shared_ptr<const provider::CompiledScenario> served) {
    auto [session, _] = sessions_.emplace(
        std::move(id),
        provider::ProviderSession(std::move(served), options_.provider_seed, kWallStart));
    session->second.AnchorOutages(kWallStart - options_.scripted_lead);
  }
  // The session under a base URL path ("/s/<id>"), as the provider resolves targets; null when
  // none (nothing listens there).
  provider::ProviderSession* SessionAt(std::string_view base_path) {
    const provider::Destination destination =
        provider::ResolveTarget(fmt::format("{}/v1/", base_path));
    const auto found = sessions_.find(destination.session_id);
    return found == sessions_.end() ? nullptr : &found->second;
  }
  // Run's steps: one reference call per call of the scenario (each its own client, or all one
  // client's); then every instant until the calls end, or never will (false: an error).
  std::expected<void, std::string> CreateCalls();
  bool StepUntilDone();
  void Apply(VirtualCall& vc, std::vector<ref::Action> actions);
  void Send(VirtualCall& vc, std::string_view bytes);
  void Close(VirtualCall& vc);
  void Deliver(VirtualCall& vc);
  std::optional<Duration> NextInstant() const;
  void Step(Duration at);

  void StartDueCalls();

  const scenario::Scenario& scenario_;
  const VirtualRunOptions& options_;
  std::shared_ptr<const CompiledSessions> compiled_;
  // One client for all calls, or one per call (VirtualRunOptions::one_client).
  std::vector<ref::ClientState> clients_;
  // One session, or one per route (scenario::RouteSessionId), all journaling into `journal_`.
  std::map<std::string, provider::ProviderSession, std::less<>> sessions_;
  provider::Journal journal_;
  std::vector<VirtualCall> calls_;
  std::uint64_t next_connection_ = 1;
  std::uint64_t requests_ = 0;  // requests the provider admitted (VirtualRunOptions::max_requests)
  Duration now_{0};
  bool cancel_pending_ = false;
  std::string error_;  // the run broke (a request the provider could not place)
  Trace trace_;
};

void World::Apply(VirtualCall& vc, std::vector<ref::Action> actions) {
  Record(vc);
  for (const ref::Action& action : actions) {
    switch (action.kind) {
      case ref::Action::Kind::kConnect:
        vc.connect_at = now_ + (vc.connects++ > 0 ? options_.retry_lag : Duration{0});
        break;
      case ref::Action::Kind::kSend:
        Send(vc, action.bytes);
        break;
      case ref::Action::Kind::kArmTimer:
      case ref::Action::Kind::kWait:
        vc.timer = std::chrono::ceil<Duration>(action.at - Time{});
        break;
      case ref::Action::Kind::kCancelTimer:
        vc.timer.reset();
        break;
      case ref::Action::Kind::kCloseConnection:
        Close(vc);
        break;
      case ref::Action::Kind::kDone:
        vc.timer.reset();
        Close(vc);
        break;
    }
  }
}

// The client's request bytes go through the provider's own request reader and admission step
// (fake_provider/admission.h), exactly as over a socket.
void World::Send(VirtualCall& vc, std::string_view bytes) {
  if (!vc.reader) vc.reader = std::make_unique<provider::RequestReader>(provider::RequestLimits{});
  vc.unread.append(bytes);
  vc.unread.erase(0, vc.reader->Put(vc.unread));
  if (vc.reader->state() == provider::RequestReader::State::kReading) return;
  if (vc.reader->state() != provider::RequestReader::State::kComplete) {
    error_ = fmt::format("the provider refused the client's request: {}",
                         vc.reader->rejection() ? vc.reader->rejection()->message : "truncated");
    vc.reader.reset();
    return;
  }
  provider::HttpRequest request = vc.reader->Release();
  vc.reader.reset();
  vc.unread.clear();
  const provider::Destination destination = provider::ResolveTarget(request.target);
  const auto session = sessions_.find(destination.session_id);
  if (destination.kind != provider::Destination::Kind::kSession || session == sessions_.end()) {
    error_ =
        fmt::format("the client sent {} to no session of the virtual provider", request.target);
    return;
  }
  provider::Admitted admitted = provider::Admit(session->second, journal_,
                                                {.request = request,
                                                 .path = destination.path,
                                                 .connection = next_connection_++,
                                                 .now = kWallStart + now_,
                                                 .session_start = kWallStart});
  vc.exchange.emplace(std::move(admitted.plan), now_, &journal_, admitted.entry_index);
  ++requests_;
}

void World::Close(VirtualCall& vc) {
  if (vc.exchange && !vc.exchange->finished()) vc.exchange->ClientClosed(now_);
  vc.exchange.reset();
  vc.connect_at.reset();
  vc.reader.reset();
  vc.unread.clear();
}

// Hands the client whatever its exchange has sent by now.
void World::Deliver(VirtualCall& vc) {
  if (!vc.exchange) return;
  for (PipeEvent& event : vc.exchange->AdvanceTo(now_)) {
    if (!vc.exchange) break;  // the client closed while reading
    switch (event.kind) {
      case PipeEvent::Kind::kBytes:
        Apply(vc, vc.call->BytesReceived(event.bytes, At(now_)));
        break;
      case PipeEvent::Kind::kClose:
        vc.exchange.reset();
        Apply(vc, vc.call->ConnectionClosed(At(now_)));
        break;
      case PipeEvent::Kind::kReset:
        vc.exchange.reset();
        Apply(vc, vc.call->ConnectionFailed(ref::TransportKind::kReset, "reset by peer", At(now_)));
        break;
    }
  }
}

std::optional<Duration> World::NextInstant() const {
  std::optional<Duration> next;
  const auto consider = [&next](std::optional<Duration> at) {
    if (at && (!next || *at < *next)) next = at;
  };
  if (cancel_pending_) consider(scenario_.cancel_at);
  for (const VirtualCall& vc : calls_) {
    if (!vc.started) consider(vc.starts_at);
    if (vc.call->done()) continue;
    consider(vc.connect_at);
    consider(vc.timer);
    if (vc.exchange) consider(vc.exchange->NextActionAt());
  }
  return next;
}

void World::StartDueCalls() {
  for (VirtualCall& vc : calls_) {
    if (vc.started || vc.starts_at > now_) continue;
    vc.started = true;
    Apply(vc, vc.call->Start(At(now_), std::chrono::system_clock::time_point(kWallStart + now_)));
  }
}

void World::Step(Duration at) {
  now_ = std::max(now_, at);
  StartDueCalls();
  for (VirtualCall& vc : calls_) {
    if (vc.call->done()) continue;
    if (vc.connect_at && *vc.connect_at <= now_) {
      vc.connect_at.reset();
      provider::ProviderSession* session = SessionAt(vc.call->target().path);
      if (session == nullptr || session->ListenerDown(kWallStart + now_)) {
        Apply(vc, vc.call->ConnectionFailed(ref::TransportKind::kRefused, "refused", At(now_)));
      } else {
        Apply(vc, vc.call->Connected(At(now_)));
      }
    }
    Deliver(vc);
    if (!vc.call->done() && vc.timer && *vc.timer <= now_) {
      vc.timer.reset();
      Apply(vc, vc.call->TimerFired(At(now_)));
    }
  }
  if (cancel_pending_ && scenario_.cancel_at && *scenario_.cancel_at <= now_) {
    cancel_pending_ = false;
    trace_.cancel_at = now_;
    for (VirtualCall& vc : calls_) Apply(vc, vc.call->Cancel(At(now_)));
  }
}

std::expected<void, std::string> World::CreateCalls() {
  if (!compiled_->requests) return std::unexpected(compiled_->requests.error());
  const std::vector<ref::CallRequest>& requests = *compiled_->requests;
  calls_.resize(requests.size());
  const std::size_t clients = options_.one_client ? 1 : calls_.size();
  for (std::size_t i = 0; i < clients; ++i) clients_.emplace_back(options_.policy);
  for (std::size_t i = 0; i < calls_.size(); ++i) {
    calls_[i].index = static_cast<int>(i);
    calls_[i].starts_at = scenario_.request.call_interval * static_cast<int>(i);
    calls_[i].call = std::make_unique<ref::Call>(
        requests[i], options_.policy,
        clients_[options_.one_client ? 0 : i].Share(
            {.call_id = fmt::format("call{}", i), .seed = options_.seed + i}));
  }
  return {};
}

bool World::StepUntilDone() {
  for (std::uint64_t steps = 0;; ++steps) {
    const std::optional<Duration> next = NextInstant();
    if (!error_.empty()) return false;
    const bool waits_forever = !next && std::ranges::any_of(calls_, [](const VirtualCall& vc) {
      return !vc.call->done();
    });
    if (!next && !waits_forever) return true;
    // Nothing will ever happen again while a call is still waiting (a dead stream and no
    // timeout at all), or the subject is still busy at the horizon: it never ends.
    const bool over_requests = options_.max_requests > 0 && requests_ > options_.max_requests;
    if (waits_forever || *next > options_.horizon || steps >= options_.max_steps || over_requests) {
      // The subject never ended (a heartbeat-only stream and no idle timeout, say): stop it,
      // as the real world's --timeout does, and let the judge say so.
      trace_.subject_timed_out = true;
      trace_.subject_stopped_at = now_;
      for (VirtualCall& vc : calls_) Close(vc);
      return true;
    }
    Step(*next);
  }
}

// The reference client's adapter/hello for `policy`, as a trace records it. Consecutive runs on
// a thread nearly always run one policy (a scenario's repetitions and seeds), and the hello spells
// out the whole policy, so the last one is kept.
const ClientEvent& HelloFor(const ref::RetryPolicy& policy) {
  thread_local std::optional<std::pair<ref::RetryPolicy, ClientEvent>> last;
  if (!last || !(last->first == policy)) {
    last.emplace(policy, EventFromReference(ref::HelloEvent(policy)));
  }
  return last->second;
}

std::expected<Trace, std::string> World::Run() {
  trace_.client.push_back({now_, 0, HelloFor(options_.policy)});
  trace_.one_client = options_.one_client;
  if (auto created = CreateCalls(); !created) return std::unexpected(created.error());
  cancel_pending_ = scenario_.cancel_at.has_value();
  StartDueCalls();
  if (!StepUntilDone()) return std::unexpected(error_);
  trace_.ended = now_;
  trace_.journal = journal_.Snapshot();
  ShiftTimes(trace_, FirstRequestAt(trace_));  // as the real world does (trace.h)
  return std::move(trace_);
}

}  // namespace

bool StoppedAtRequestBound(const Trace& trace, std::uint64_t max_requests) {
  // The run stops as the request after the bound is admitted (World::StepUntilDone).
  return trace.subject_timed_out && max_requests > 0 && trace.journal.size() > max_requests;
}

std::expected<Trace, std::string> RunVirtual(const scenario::Scenario& scenario,
                                             const VirtualRunOptions& options) {
  World world(scenario, options);
  return world.Run();
}

}  // namespace faultline::harness
