#include "harness/worlds/real_world.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <functional>

#include "fake_provider/admission.h"
#include "harness/trace/protocol.h"
#include "harness/worlds/call_lines.h"
#include "harness/worlds/reference_calls.h"
#include "harness/worlds/reference_events.h"
#include "harness/worlds/request_body.h"
#include "harness/worlds/scripted_start.h"
#include "harness/worlds/subjects/adapter_process.h"
#include "harness/worlds/subjects/app_subject.h"
#include "harness/worlds/subjects/call_dispatch.h"
#include "harness/worlds/subjects/gateway_process.h"
#include "harness/worlds/subjects/subject_trace.h"

namespace faultline::harness {
namespace {

using Clock = std::chrono::steady_clock;

Duration SinceStart(Clock::time_point start) {
  return std::chrono::duration_cast<Duration>(Clock::now() - start);
}

// How long the provider may take to notice that the subject's connections are gone.
constexpr auto kCloseGrace = std::chrono::seconds(2);

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
  std::vector<provider::RouteInfo> endpoints;  // where each route is served
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
  {
    std::lock_guard lock(idle_mutex_);
    for (auto& [command, process] : idle_) process->CloseStdin();  // all at once, then each waited
    idle_.clear();
  }
  server_->Stop();
  thread_.join();
}

std::expected<AdapterRun, std::string> RealWorld::ServeFirstCall(const AdapterLaunch& launch) {
  std::unique_ptr<AdapterProcess> process;
  {
    std::lock_guard lock(idle_mutex_);
    if (const auto found = idle_.find(launch.command); found != idle_.end()) {
      process = std::move(found->second);
      idle_.erase(found);
    }
  }
  if (!process) {
    auto started = AdapterProcess::Start(launch.command, launch.environment);
    if (!started) return std::unexpected(started.error());
    process = std::move(*started);
  }
  AdapterRun run = process->Serve(launch);
  if (process->ready()) {
    std::lock_guard lock(idle_mutex_);
    idle_.emplace(launch.command, std::move(process));
  }
  return run;
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
  session.endpoints = info->routes;
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
  trace.ended = SinceStart(session.start);
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
  trace.client.push_back({Duration{0}, 0, EventFromReference(ref::HelloEvent(policy))});
  trace.one_client = true;  // every call is one client's (ReferenceCalls)
  RunReferenceCalls(
      scenario, policy, options, session->start,
      [this, id = session->id] { return FirstArrival(id); }, std::move(*requests), trace);
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
          auto run = ServeFirstCall(first);
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
  trace.scripted_by_fallback = scripted.StopFallback();
  auto added = AddRuns(
      runs,
      [session_mode = dispatch.session()](const AdapterRun& run, std::size_t call,
                                          std::size_t calls, Trace& into) {
        AddAdapterRun(run, call, calls, session_mode, into);
      },
      trace);
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
  trace.scripted_by_fallback = scripted.StopFallback();
  auto added = AddRuns(runs, AddAppRun, trace);
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

namespace {

// The gateway's upstreams: the scenario's routes on their own ports, in priority order (the
// lowest priority's first route is the primary, every other a backup).
std::expected<std::vector<Upstream>, std::string> UpstreamsOf(
    const scenario::Scenario& scenario, const std::vector<provider::RouteInfo>& endpoints) {
  std::vector<const scenario::Route*> routes;
  for (const scenario::Route& route : scenario.routes) routes.push_back(&route);
  std::ranges::stable_sort(routes, {}, &scenario::Route::priority);
  std::vector<Upstream> upstreams;
  for (const scenario::Route* route : routes) {
    if (route->dialect != scenario.dialect || !route->model.empty()) {
      return std::unexpected(fmt::format(
          "route '{}' speaks another dialect or model than the scenario's: a gateway passes "
          "requests unchanged, so every route of a gateway scenario speaks the scenario's",
          route->id));
    }
    const auto found = std::ranges::find(endpoints, route->id, &provider::RouteInfo::id);
    const std::string root = found == endpoints.end() ? std::string() : found->root_url;
    const std::size_t colon = root.rfind(':');
    if (colon == std::string_view::npos || !root.starts_with("http://")) {
      return std::unexpected(fmt::format("route '{}' has no port of its own", route->id));
    }
    upstreams.push_back(
        {.id = route->id,
         .host = std::string(root.substr(7, colon - 7)),
         .port = static_cast<std::uint16_t>(std::stoi(std::string(root.substr(colon + 1)))),
         .backup = !upstreams.empty()});
  }
  return upstreams;
}

}  // namespace

std::expected<Trace, std::string> RealWorld::RunGatewaySubject(const scenario::Scenario& scenario,
                                                               const GatewayDefinition& gateway,
                                                               const ref::RetryPolicy& policy,
                                                               const RealRunOptions& options) {
  if (scenario.routes.empty()) {
    return std::unexpected("a gateway stands in front of routes: the scenario has none");
  }
  scenario::Scenario own_ports = scenario;
  own_ports.route_ports = true;
  auto session = Open(own_ports, options.provider_seed);
  if (!session) return std::unexpected(session.error());
  // Scripted time starts at the first request the gateway sends, not while it starts up.
  server_->ArmOutages(session->id);
  Trace trace;
  const auto upstreams = UpstreamsOf(scenario, session->endpoints);
  std::expected<std::unique_ptr<GatewayProcess>, std::string> process =
      upstreams ? GatewayProcess::Start(gateway, *upstreams) : std::unexpected(upstreams.error());
  if (!process) {
    Close(*session, trace);
    return std::unexpected(process.error());
  }
  // The client calls the gateway as its one endpoint; the gateway calls the routes.
  const int calls = std::max(1, scenario.request.calls);
  scenario::Scenario one_endpoint = scenario;
  one_endpoint.routes.clear();
  auto requests = ReferenceRequests(one_endpoint, (*process)->base_url(), {}, calls);
  if (!requests) {
    Close(*session, trace);
    return std::unexpected(requests.error());
  }
  for (ref::CallRequest& request : *requests) request.extra_headers = (*process)->client_headers();
  trace.calls = calls;
  trace.gateway = GatewayRun{gateway.name, gateway.declares.max_upstream_attempts};
  trace.client.push_back({Duration{0}, 0, EventFromJson(ref::HelloEvent(policy).ToJson())});
  trace.one_client = true;
  RunReferenceCalls(
      one_endpoint, policy, options, session->start,
      [this, id = session->id] { return FirstArrival(id); }, std::move(*requests), trace);
  trace.subject_stderr = (*process)->OutputTail();
  process->reset();  // stopped before the journal is taken: its connections end first
  Close(*session, trace);
  return trace;
}

}  // namespace faultline::harness
