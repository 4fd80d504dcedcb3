#include "reference_impl/call.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <ranges>
#include <utility>
#include <variant>

#include "reference_impl/policy_json.h"

namespace faultline::ref {
namespace {

using std::chrono::milliseconds;

// An error body longer than this is classified from its first part.
constexpr std::size_t kMaxErrorBody = 1024 * 1024;

Action MakeAction(Action::Kind kind, PolicyClock::time_point at = {}, std::string_view bytes = {}) {
  Action action;
  action.kind = kind;
  action.at = at;
  action.bytes = bytes;
  return action;
}

void Add(WastedWork& total, const WastedWork& more) {
  total.bytes += more.bytes;
  total.approx_tokens += more.approx_tokens;
}

// The request's routes; without any, its one endpoint as a route that fits every request.
std::vector<CallRoute> RoutesOf(const CallRequest& request) {
  if (!request.routes.empty()) return request.routes;
  CallRoute only;
  only.dialect = request.dialect;
  only.base_url = request.base_url;
  only.body = request.body;
  only.traits.capabilities = {.tools = true,
                              .reasoning = true,
                              .images = true,
                              .strict_tools = true,
                              .stop_sequences = true,
                              .prefill = true,
                              .context_window = std::numeric_limits<int>::max()};
  return {std::move(only)};
}

std::vector<std::string> RouteBytes(const CallRequest& request,
                                    const std::vector<CallRoute>& routes) {
  std::vector<std::string> out;
  for (const CallRoute& route : routes) {
    CallRequest one = request;
    one.dialect = route.dialect;
    one.base_url = route.base_url;
    one.body = route.body;
    out.push_back(BuildHttpRequest(one));
  }
  return out;
}

// How the call moves between its routes. A call of one endpoint has no route to break a circuit
// of: its retries are the policy's alone, whatever the client's breakers say of other calls.
RoutingConfig RoutingOf(const CallRequest& request, const RetryPolicy& policy) {
  RoutingConfig routing = policy.routing;
  if (request.routes.empty()) routing.breaker.reset();
  return routing;
}

std::vector<RouteTraits> TraitsOf(const std::vector<CallRoute>& routes) {
  std::vector<RouteTraits> out;
  for (const CallRoute& route : routes) out.push_back(route.traits);
  return out;
}

}  // namespace

std::string_view ToString(Action::Kind kind) {
  switch (kind) {
    case Action::Kind::kConnect:
      return "connect";
    case Action::Kind::kSend:
      return "send";
    case Action::Kind::kArmTimer:
      return "arm-timer";
    case Action::Kind::kCancelTimer:
      return "cancel-timer";
    case Action::Kind::kCloseConnection:
      return "close-connection";
    case Action::Kind::kWait:
      return "wait";
    case Action::Kind::kDone:
      return "done";
  }
  return "unknown";
}

LifecycleEvent HelloEvent(const RetryPolicy& policy, std::string name, std::string version) {
  LifecycleEvent event;
  event.type = EventType::kHello;
  event.name = std::move(name);
  event.version = std::move(version);
  event.policy = PolicyToHelloJson(policy);
  return event;
}

Call::Call(CallRequest request, RetryPolicy policy, CallOptions options)
    : request_(std::move(request)),
      policy_(std::move(policy)),
      options_(std::move(options)),
      rng_(options_.seed),
      routes_(RoutesOf(request_)),
      route_bytes_(RouteBytes(request_, routes_)),
      registry_(TraitsOf(routes_), NeedsOf(routes_.front().body), RoutingOf(request_, policy_),
                options_.seed ^ 0x9e3779b97f4a7c15ULL,
                request_.routes.empty() ? nullptr : options_.breakers),
      last_failure_(routes_.size()) {}

std::vector<LifecycleEvent> Call::TakeEvents() { return std::exchange(events_, {}); }

std::vector<Action> Call::Start(Time now, std::chrono::system_clock::time_point wall_now) {
  std::vector<Action> out;
  if (state_ != State::kNotStarted) return out;
  start_ = now;
  wall_start_ = wall_now;
  deadline_ = CallDeadline(policy_, now);
  const auto first = registry_.First(now, StickyStart(now));
  if (!first) {
    Failure failure;
    failure.code = FailureCode::kInvalidRequest;
    failure.failure_class = FailureClass::kInvalidRequest;
    failure.message = "no route's capabilities fit the request:";
    for (std::size_t i = 0; i < routes_.size(); ++i) {
      failure.message +=
          fmt::format(" {} lacks {};", routes_[i].traits.id,
                      MissingCapability(routes_[i].traits.capabilities, NeedsOf(routes_[i].body)));
    }
    Finish(std::move(failure), /*with_response=*/false, out,
           std::string(ToString(GiveUpReason::kAllRoutesDown)));
    return out;
  }
  route_ = first->route;
  if (!options_.recovered ||
      std::max(options_.recovered->retries, options_.recovered->attempts_started) <= 0) {
    // Every route that fits may be held open by the client's breakers: wait for the first probe.
    if (first->at > now) {
      WaitForRoute(first->at, now, out);
    } else {
      BeginAttempt(now, out);
    }
    return out;
  }
  Resume(*options_.recovered, now, out);
  return out;
}

// A restarted call continues the logged count and waits for the logged retry time, but only as
// the policy would let any wait go: within its attempt budget, its longest wait and the deadline.
// An attempt that was in flight when the process died is spent: it may have reached the
// provider, so sending it again would overdraw the budget.
void Call::Resume(const RecoveredCall& recovered, Time now, std::vector<Action>& out) {
  const int spent = std::max(recovered.retries, recovered.attempts_started);
  attempt_ = spent;  // the next attempt continues the count
  const bool died_in_flight = recovered.attempts_started > recovered.retries;
  const milliseconds wait = died_in_flight ? milliseconds(0) : RecoveredWait(recovered);
  if (std::optional<std::string> refusal = RefuseResume(spent, wait, now)) {
    Failure failure;
    // The attempt in flight ended with the process: its connection was lost.
    failure.code = died_in_flight ? FailureCode::kTransport : recovered.last_failure_code;
    failure.failure_class = ClassOf(failure.code);
    failure.retryable = true;  // it was scheduled for a retry; the policy now forbids one
    if (wait > milliseconds(0)) failure.retry_after = wait;
    failure.message = fmt::format("giving up on the restarted call: {}", *refusal);
    Finish(std::move(failure), /*with_response=*/false, out);
    return;
  }
  if (wait <= milliseconds(0)) {
    BeginAttempt(now, out);
    return;
  }
  state_ = State::kBackoff;  // the logged retry time is still ahead: wait for it first
  retry_at_ = now + wait;
  armed_ = retry_at_;
  out.push_back(MakeAction(Action::Kind::kWait, *retry_at_));
}

// How long until the logged retry time, in whole ms (computed in ms: no overflow), >= 0.
milliseconds Call::RecoveredWait(const RecoveredCall& recovered) const {
  if (!recovered.last_scheduled_at) return milliseconds(0);
  const auto due =
      std::chrono::floor<milliseconds>(recovered.last_scheduled_at->time_since_epoch());
  const auto wall = std::chrono::floor<milliseconds>(wall_start_.time_since_epoch());
  return std::max(milliseconds(0), due - wall);
}

// Why the policy forbids resuming (after `retries` retries, waiting `wait`), if it does.
std::optional<std::string> Call::RefuseResume(int retries, milliseconds wait, Time now) const {
  if (policy_.max_attempts && retries >= *policy_.max_attempts) {
    return fmt::format("the retry log shows {} attempts already made, max_attempts is {}", retries,
                       *policy_.max_attempts);
  }
  // Without a Retry-After cap any logged wait is one the policy may take; the deadline decides.
  const milliseconds longest = policy_.retry_after.cap
                                   ? std::max(policy_.backoff.cap, *policy_.retry_after.cap)
                                   : milliseconds::max();
  if (wait > longest) {
    return fmt::format("the logged retry is due in {} ms, longer than the policy waits ({} ms)",
                       wait.count(), longest.count());
  }
  if (deadline_ && now + wait + policy_.min_attempt_time > *deadline_) {
    return fmt::format("the logged retry is due in {} ms, too late for the total deadline",
                       wait.count());
  }
  return std::nullopt;
}

// The wait ended: the next attempt goes to route_, unless the client's breakers stopped
// admitting it meanwhile (another call took its probe, or found it down); then the route is
// chosen again among the same candidates.
void Call::BeginWhenAdmitted(Time now, std::vector<Action>& out) {
  if (!registry_.Admits(route_, now)) {
    if (const auto again = registry_.Reselect(now)) {
      route_ = again->route;
      if (again->at > now) {
        WaitForRoute(again->at, now, out);
        return;
      }
    }
  }
  BeginAttempt(now, out);
}

// No route is ready before `at` (the breakers hold them open): wait for it, within the deadline.
void Call::WaitForRoute(Time at, Time now, std::vector<Action>& out) {
  if (deadline_ && at + policy_.min_attempt_time > *deadline_) {
    Failure failure = last_failure_[route_].value_or(Failure{});
    if (!last_failure_[route_]) {
      failure.code = FailureCode::kUnavailable;
      failure.failure_class = ClassOf(failure.code);
    }
    failure.message = fmt::format(
        "every route the call may take is held open by its circuit breaker for {} ms more, "
        "past the total deadline",
        std::chrono::ceil<milliseconds>(at - now).count());
    Finish(std::move(failure), /*with_response=*/false, out,
           std::string(ToString(GiveUpReason::kDeadline)));
    return;
  }
  state_ = State::kBackoff;
  retry_at_ = at;
  armed_ = at;
  out.push_back(MakeAction(Action::Kind::kWait, at));
}

// The route a sticky client's call starts on now, when it is one of the call's routes.
std::optional<std::size_t> Call::StickyStart(Time now) const {
  if (options_.sticky == nullptr || request_.routes.empty()) return std::nullopt;
  const std::optional<std::string> sticky = options_.sticky->At(now);
  if (!sticky) return std::nullopt;
  for (std::size_t i = 0; i < routes_.size(); ++i) {
    if (routes_[i].traits.id == *sticky) return i;
  }
  return std::nullopt;
}

void Call::BeginAttempt(Time now, std::vector<Action>& out) {
  ++attempt_;
  if (options_.retry_log) {
    // Before the attempt can reach the provider: a restart must count it as spent. A log that
    // cannot be written must not fail the call.
    (void)options_.retry_log->Record({.kind = RetryLogRecord::Kind::kAttempt,
                                      .call_id = options_.call_id,
                                      .attempt = attempt_,
                                      .scheduled_at = Wall(now)});
  }
  state_ = State::kConnecting;
  // A failover happens when its attempt begins (sticky_route.h): a call cancelled in the wait
  // before it moved the client nowhere.
  if (options_.sticky != nullptr && begun_route_ && *begun_route_ != route_) {
    options_.sticky->Moved(route_id(), now);
  }
  begun_route_ = route_;
  registry_.Begin(route_, now);
  parser_ = std::make_unique<HttpResponseParser>();
  decoder_ = std::make_unique<BodyDecoder>(routes_[route_].dialect, request_.stream);
  error_body_.clear();
  retry_at_.reset();
  events_.push_back(Event(EventType::kStart));
  phase_deadline_.reset();
  if (policy_.timeouts.connect) phase_deadline_ = now + *policy_.timeouts.connect;
  armed_.reset();
  connection_open_ = true;
  out.push_back(MakeAction(Action::Kind::kConnect));
  ArmTimer(out);
}

std::vector<Action> Call::Connected(Time now) {
  std::vector<Action> out;
  if (state_ != State::kConnecting) return out;
  state_ = State::kAwaitingHead;
  phase_deadline_.reset();
  if (policy_.timeouts.response_headers) phase_deadline_ = now + *policy_.timeouts.response_headers;
  out.push_back(MakeAction(Action::Kind::kSend, {}, route_bytes_[route_]));
  ArmTimer(out);
  return out;
}

std::vector<Action> Call::BytesReceived(std::string_view bytes, Time now) {
  std::vector<Action> out;
  if (ReadingResponse()) HandleFeed(parser_->Feed(bytes), /*eof=*/false, now, out);
  return out;
}

bool Call::ReadingResponse() const {
  return state_ == State::kAwaitingHead || state_ == State::kBody || state_ == State::kErrorBody;
}

// What the parser made of new bytes (or of the end of the connection), in wire order: the head,
// the body bytes, then a parse failure, which ends the attempt unless the body bytes before it
// already decided it (an error body is classified from what arrived).
void Call::HandleFeed(const HttpFeed& fed, bool eof, Time now, std::vector<Action>& out) {
  if (fed.head_ready) OnHead(now, out);
  const bool reading = state_ == State::kBody || state_ == State::kErrorBody;
  if (reading && !fed.body.empty()) OnBody(fed.body, now, out);
  if (fed.failure) {
    FailRead(*fed.failure, now, out);
    return;
  }
  if (state_ != State::kBody && state_ != State::kErrorBody) return;
  AfterBody(eof || fed.complete, now, out);
}

void Call::FailRead(const Failure& failure, Time now, std::vector<Action>& out) {
  if (state_ == State::kErrorBody) {
    FinishErrorBody(now, out);
  } else if (state_ == State::kBody) {
    FailAttempt(std::get<Failure>(decoder_->assembler().Interrupt(failure)), {}, now, out);
  } else if (state_ == State::kAwaitingHead) {
    FailAttempt(failure, {}, now, out);
  }  // otherwise the attempt was already decided by the bytes before the failure
}

void Call::OnHead(Time now, std::vector<Action>& out) {
  const HttpResponseHead& head = parser_->head();
  decoder_->assembler().CountBytes(parser_->bytes_received() - parser_->body_bytes());
  phase_deadline_.reset();
  if (policy_.timeouts.idle) phase_deadline_ = now + *policy_.timeouts.idle;
  if (head.status < 200 || head.status > 299) {
    state_ = State::kErrorBody;
    ArmTimer(out);
    return;
  }
  decoder_->assembler().SetResponseInfo(head.status, RequestIdOf(head.headers));
  if (auto bad = CheckContentType(request_.stream, head.headers.Find("content-type"),
                                  routes_[route_].dialect)) {
    bad->status = head.status;
    bad->request_id = RequestIdOf(head.headers);
    FailAttempt(std::move(*bad), {}, now, out);
    return;
  }
  state_ = State::kBody;
  ArmTimer(out);
}

void Call::OnBody(std::string_view body, Time now, std::vector<Action>& out) {
  if (state_ == State::kErrorBody) {
    error_body_.append(body.substr(0, kMaxErrorBody - std::min(kMaxErrorBody, error_body_.size())));
    return;
  }
  BodyDecoder::Progress progress = decoder_->Feed(body);
  for (const Delta& delta : progress.deltas) {
    LifecycleEvent chunk = Event(EventType::kChunk);
    if (const auto* text = std::get_if<TextDelta>(&delta); text && !text->text.empty()) {
      chunk.text = text->text;
    } else if (const auto* call = std::get_if<ToolCallDelta>(&delta)) {
      chunk.tool_call = *call;
    } else {
      continue;
    }
    events_.push_back(std::move(chunk));
  }
  const bool progress_made = !request_.stream || progress.meaningful_events > 0 ||
                             (policy_.timeouts.heartbeats_reset_idle && progress.heartbeats > 0);
  if (progress_made && policy_.timeouts.idle) phase_deadline_ = now + *policy_.timeouts.idle;
  CheckOutcome(now, out);
}

void Call::AfterBody(bool complete, Time now, std::vector<Action>& out) {
  if (state_ == State::kErrorBody) {
    if (complete || error_body_.size() >= kMaxErrorBody) {
      FinishErrorBody(now, out);
    } else {
      ArmTimer(out);
    }
    return;
  }
  if (state_ != State::kBody) return;
  if (complete) {
    decoder_->End();
    CheckOutcome(now, out);
    return;
  }
  ArmTimer(out);
}

void Call::FinishErrorBody(Time now, std::vector<Action>& out) {
  const HttpResponseHead& head = parser_->head();
  ClassifiedResponse classified =
      ClassifyHttpError({.status = head.status,
                         .headers = head.headers,
                         .body = error_body_,
                         .dialect = routes_[route_].dialect},
                        Wall(now), policy_.should_retry_header, policy_.retry_after.parse);
  decoder_->assembler().CountBytes(error_body_.size());
  FailAttempt(std::move(classified.failure), std::move(classified.hints), now, out);
}

void Call::CheckOutcome(Time now, std::vector<Action>& out) {
  const auto& outcome = decoder_->assembler().outcome();
  if (!outcome) return;
  if (const auto* completed = std::get_if<Completed>(&*outcome)) {
    Commit(*completed, out);
  } else {
    FailAttempt(std::get<Failure>(*outcome), {}, now, out);
  }
}

std::vector<Action> Call::ConnectionClosed(Time now) {
  std::vector<Action> out;
  if (ReadingResponse()) HandleFeed(parser_->FeedEof(), /*eof=*/true, now, out);
  return out;
}

std::vector<Action> Call::ConnectionFailed(TransportKind kind, std::string_view detail, Time now) {
  std::vector<Action> out;
  if (state_ == State::kErrorBody) {
    FinishErrorBody(now, out);  // the status is known: classify what arrived
    return out;
  }
  if (state_ != State::kConnecting && state_ != State::kAwaitingHead && state_ != State::kBody) {
    return out;
  }
  Failure failure = TransportFailure(kind, CurrentPhase(), CurrentPartial(), detail);
  if (state_ == State::kBody) {
    failure = std::get<Failure>(decoder_->assembler().Interrupt(std::move(failure)));
  }
  FailAttempt(std::move(failure), {}, now, out);
  return out;
}

std::vector<Action> Call::TimerFired(Time now) {
  std::vector<Action> out;
  if (state_ == State::kDone || state_ == State::kNotStarted) return out;
  if (state_ == State::kBackoff) {
    if (retry_at_ && now >= *retry_at_) {
      BeginWhenAdmitted(now, out);
    } else if (retry_at_) {
      out.push_back(MakeAction(Action::Kind::kWait, *retry_at_));
    }
    return out;
  }
  std::optional<Failure> failure;
  if (deadline_ && now >= *deadline_) {
    failure = TimeoutFailure(TimeoutKind::kTotal, *policy_.timeouts.total, CurrentPartial(),
                             CurrentPhase());
  } else if (phase_deadline_ && now >= *phase_deadline_) {
    if (state_ == State::kConnecting) {
      failure = TimeoutFailure(TimeoutKind::kConnect, *policy_.timeouts.connect);
    } else if (state_ == State::kAwaitingHead) {
      failure = TimeoutFailure(TimeoutKind::kResponseHeaders, *policy_.timeouts.response_headers);
    } else {
      failure = TimeoutFailure(TimeoutKind::kIdle, *policy_.timeouts.idle, CurrentPartial());
    }
  }
  if (!failure) {
    armed_.reset();  // a stale or early firing: re-arm for the real deadline
    ArmTimer(out);
    return out;
  }
  if (state_ == State::kBody) {
    failure = std::get<Failure>(decoder_->assembler().Interrupt(std::move(*failure)));
  }
  FailAttempt(std::move(*failure), {}, now, out);
  return out;
}

std::vector<Action> Call::Cancel(Time /*now*/) {
  if (state_ == State::kDone) return {};
  return End(AbortedFailure(CurrentPhase(), CurrentPartial()));
}

std::vector<Action> Call::Abandon(std::string_view what, Time /*now*/) {
  if (state_ == State::kDone) return {};
  return End(InternalFailure(what, CurrentPhase(), CurrentPartial()));
}

// Ends the call now with `failure`, whatever it was doing.
std::vector<Action> Call::End(Failure failure) {
  std::vector<Action> out;
  const bool in_attempt = state_ != State::kNotStarted && state_ != State::kBackoff;
  if (state_ == State::kBody) {
    failure = std::get<Failure>(decoder_->assembler().Interrupt(std::move(failure)));
  }
  if (in_attempt) Add(wasted_, decoder_->assembler().wasted());
  Finish(std::move(failure), in_attempt, out);
  return out;
}

void Call::FailAttempt(Failure failure, std::vector<RetryHint> hints, Time now,
                       std::vector<Action>& out) {
  Add(wasted_, decoder_->assembler().wasted());
  if (connection_open_) out.push_back(MakeAction(Action::Kind::kCloseConnection));
  connection_open_ = false;
  failure.route_id = route_id();
  registry_.RecordFailure(route_, now);
  last_failure_[route_] = failure;
  const DecisionInput input{.failure = failure,
                            .hints = std::move(hints),
                            .attempt = attempt_,
                            .now = now,
                            .deadline = deadline_,
                            .previous_delay = previous_delay_};
  Decision decision = Decide(policy_, input, rng_, options_.budget);
  const std::size_t failed_route = route_;
  if (!request_.routes.empty()) decision = Reroute(failure, decision, input, now);
  if (decision.kind == Decision::Kind::kGiveUp) {
    if (decision.reason == GiveUpReason::kAllRoutesDown) failure = AllRoutesDown(failure);
    Finish(std::move(failure), /*with_response=*/true, out, std::string(ToString(decision.reason)));
    return;
  }
  previous_delay_ = decision.delay;
  if (options_.retry_log) {
    // A log that cannot be written must not fail the call: the log only helps a restart.
    (void)options_.retry_log->Record({.kind = RetryLogRecord::Kind::kRetry,
                                      .call_id = options_.call_id,
                                      .attempt = attempt_,
                                      .scheduled_at = Wall(decision.retry_at),
                                      .delay = decision.delay,
                                      .delay_source = decision.delay_source,
                                      .failure_code = failure.code});
  }
  LifecycleEvent event = Event(EventType::kInterrupted);
  event.route_id = routes_[failed_route].traits.id;
  if (route_ != failed_route) event.next_route_id = route_id();
  event.failure = std::move(failure);
  event.scheduled_retry = decision.delay;
  event.delay_source = decision.delay_source;
  event.wasted = wasted_;
  events_.push_back(std::move(event));
  state_ = State::kBackoff;
  retry_at_ = decision.retry_at;
  phase_deadline_.reset();
  armed_ = decision.retry_at;
  out.push_back(MakeAction(Action::Kind::kWait, decision.retry_at));
}

LifecycleEvent Call::Event(EventType type) const {
  LifecycleEvent event;
  event.type = type;
  event.response_id = ResponseId();
  event.attempt = attempt_;
  event.route_id = route_id();
  return event;
}

void Call::Commit(const Completed& completed, std::vector<Action>& out) {
  LifecycleEvent event = Event(EventType::kCommitted);
  event.committed = completed;
  registry_.RecordSuccess(route_);
  events_.push_back(std::move(event));
  if (options_.budget) options_.budget->RecordSuccess();
  if (connection_open_) out.push_back(MakeAction(Action::Kind::kCloseConnection));
  connection_open_ = false;
  if (armed_) out.push_back(MakeAction(Action::Kind::kCancelTimer));
  armed_.reset();
  state_ = State::kDone;
  out.push_back(MakeAction(Action::Kind::kDone));
}

void Call::Finish(Failure failure, bool with_response, std::vector<Action>& out,
                  std::string give_up) {
  registry_.Release();  // an attempt cut short by the end keeps no probe slot of the client's
  LifecycleEvent event;
  event.type = EventType::kFailed;
  event.give_up = std::move(give_up);
  if (with_response) {
    event.response_id = ResponseId();
    event.attempt = attempt_;
    event.route_id = route_id();
  }
  if (event.give_up == ToString(GiveUpReason::kAllRoutesDown)) {
    for (const std::optional<Failure>& each : last_failure_) {
      if (each) event.route_failures.push_back(*each);
    }
  }
  event.failure = std::move(failure);
  event.wasted = wasted_;
  events_.push_back(std::move(event));
  if (connection_open_) out.push_back(MakeAction(Action::Kind::kCloseConnection));
  connection_open_ = false;
  if (armed_) out.push_back(MakeAction(Action::Kind::kCancelTimer));
  armed_.reset();
  state_ = State::kDone;
  out.push_back(MakeAction(Action::Kind::kDone));
}

void Call::ArmTimer(std::vector<Action>& out) {
  std::optional<Time> at = deadline_;
  if (phase_deadline_ && (!at || *phase_deadline_ < *at)) at = phase_deadline_;
  if (at == armed_) return;
  armed_ = at;
  if (at) {
    out.push_back(MakeAction(Action::Kind::kArmTimer, *at));
  } else {
    out.push_back(MakeAction(Action::Kind::kCancelTimer));
  }
}

Phase Call::CurrentPhase() const {
  switch (state_) {
    case State::kAwaitingHead:
      return Phase::kResponseHeaders;
    case State::kBody:
    case State::kErrorBody:
      return Phase::kStream;
    default:
      return Phase::kConnect;
  }
}

PartialOutput Call::CurrentPartial() const {
  const bool seen = state_ == State::kBody && decoder_->assembler().has_output();
  return seen ? PartialOutput::kUncommitted : PartialOutput::kNone;
}

std::chrono::system_clock::time_point Call::Wall(Time now) const {
  return wall_start_ +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(now - start_);
}

std::string Call::ResponseId() const { return fmt::format("{}-{}", options_.call_id, attempt_); }

}  // namespace faultline::ref
