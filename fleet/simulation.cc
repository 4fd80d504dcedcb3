#include "fleet/simulation.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>
#include <vector>

#include "fleet/adaptive_throttle.h"
#include "fleet/client_rate_limiter.h"
#include "fleet/event_queue.h"
#include "fleet/finagle_budget.h"
#include "fleet/gateway.h"
#include "fleet/outcomes.h"
#include "fleet/provider_model.h"
#include "reference_impl/budget.h"
#include "reference_impl/policy.h"

namespace faultline::fleet {
namespace {

using std::chrono::milliseconds;

constexpr std::uint64_t kProgressEvery = 1 << 18;
constexpr std::size_t kGiveUpReasons =
    static_cast<std::size_t>(ref::GiveUpReason::kBudgetExhausted) + 1;

// SplitMix64: independent seeds for the run's random streams from one seed.
std::uint64_t Mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

ref::PolicyClock::time_point PolicyTime(Micros t) {
  return ref::PolicyClock::time_point(std::chrono::microseconds(t));
}

Micros Exponential(ref::RetryRng& rng, double mean_us) {
  return static_cast<Micros>(-std::log1p(-ref::Uniform01(rng)) * mean_us);
}

// One call's state: 24 bytes, so that a million clients stay small.
struct CallState {
  Micros start = 0;
  std::int32_t previous_delay_ms = -1;  // the last backoff slept (decorrelated jitter)
  std::uint32_t token = 0;              // the attempt in flight; stale events carry another
  std::uint32_t tokens = 0;             // what each of its requests costs (one prompt a call)
  std::uint16_t attempt = 0;            // attempts made so far
  bool in_flight = false;               // an attempt is waiting for its answer
  bool active = false;                  // a call is running
};

class Engine {
 public:
  explicit Engine(const RunInput& input);
  PolicyMeasures Run();

 private:
  void Seed();
  void Dispatch(const Event& event);
  void OnArrival(Micros now);
  void StartCall(std::uint32_t slot, Micros now);
  void StartAttempt(std::uint32_t slot, Micros now);
  void Send(std::uint32_t slot, Micros now);
  // The request below the last gateway layer (or the client): the provider admits, queues or
  // refuses it. A refusal is answered at once.
  Admission RequestProvider(std::uint32_t slot, std::uint32_t token, Micros now);
  // An answer from the provider, to the last gateway layer or, without one, to the client.
  void ProviderAnswered(std::uint32_t slot, Micros now, const Outcome& outcome,
                        std::optional<Micros> hint);
  // Gateway layers, the clients' first at 0: a request arrives at `layer`, it tries below, an
  // answer from below reaches it (it retries or hands an answer up to layer - 1, -1 the client).
  void ReceiveAtLayer(std::size_t layer, std::uint32_t slot, Micros now);
  void TryBelow(std::size_t layer, std::uint32_t slot, Micros now);
  void AnswerAtLayer(int layer, std::uint32_t slot, Micros now, const Outcome& outcome,
                     std::optional<Micros> hint);
  void OnGatewayRetry(const Event& event);
  void OnGatewayTimeout(const Event& event);
  // The layers from `layer` down give up what they are trying (the caller above went away, as
  // Envoy resets the upstream stream when the downstream one is reset); in-flight requests are
  // still served, wasted.
  void CancelFrom(std::size_t layer, std::uint32_t slot);
  GatewaySession& SessionAt(std::size_t layer, std::uint32_t slot) {
    return sessions_[slot * layers_.size() + layer];
  }
  void GrowCalls(std::size_t calls);
  std::uint32_t CallTokens();
  void ScheduleWake(Micros now);
  void OnWake(const Event& event);
  void Observe(Micros now, bool throttling);  // an answer, for the rate limiter
  void OnServiceDone(const Event& event);
  void OnTimeout(const Event& event);
  void Answer(std::uint32_t slot, Micros now, const Outcome& outcome,
              std::optional<Micros> hint = std::nullopt);
  void Retry(std::uint32_t slot, Micros now, const Outcome& outcome, std::optional<Micros> hint);
  // `reason` is why a failed call gave up (ignored for a success).
  void EndCall(std::uint32_t slot, Micros now, bool success,
               ref::GiveUpReason reason = ref::GiveUpReason::kNotRetryable);
  void Schedule(Micros time, EventKind kind, std::uint32_t slot, std::uint32_t token);
  // The time-series step holding `now` (the time of the event being handled).
  Bucket& At(Micros now) {
    if (now < step_start_ || now >= step_end_) [[unlikely]]
      EnterStep(now);
    return m_.series[step_index_];
  }
  void EnterStep(Micros now);
  std::optional<Micros> NextArrival(Micros now);

  const scenario::FleetSpec& spec_;
  const NamedPolicy& policy_;
  ProgressFn progress_;
  Outcomes outcomes_;
  ProviderModel provider_;
  ref::RetryRng policy_rng_, arrival_rng_, chaos_rng_, tokens_rng_;
  std::unique_ptr<ref::RetryBudget> budget_;
  std::optional<AdaptiveThrottle> throttle_;
  std::optional<ClientRateLimiter> limiter_;
  std::optional<FinagleRetryBudget> finagle_;
  std::deque<RequestId> waiting_;  // attempts waiting for a token of limiter_, first in line first
  std::uint32_t wake_ = 0;         // the current wake-up's token (kSend events)
  std::optional<Micros> timeout_;
  std::optional<Micros> total_;
  EventQueue queue_;
  std::vector<CallState> calls_;
  std::vector<GatewayLayer> layers_;      // the gateway layers, the clients' first
  std::vector<GatewaySession> sessions_;  // per call and layer: [slot * layers + layer]
  std::vector<std::uint32_t> free_;
  PolicyMeasures m_;
  Micros horizon_, bucket_, end_limit_;
  std::uint64_t active_ = 0;
  Micros last_end_ = 0;
  // The step At() last found, [step_start_, step_end_): one division per step, not per lookup.
  Micros step_start_ = 0, step_end_ = 0;
  std::size_t step_index_ = 0;
  // Counts by GiveUpReason, named in the measures at the end (no string work per call).
  std::array<std::uint64_t, kGiveUpReasons> give_ups_{};
};

std::optional<Micros> AttemptTimeout(const scenario::FleetSpec& spec,
                                     const ref::RetryPolicy& policy) {
  if (spec.timeout) return spec.timeout->count();
  if (policy.timeouts.response_headers) {
    return std::chrono::microseconds(*policy.timeouts.response_headers).count();
  }
  return std::nullopt;
}

Engine::Engine(const RunInput& input)
    : spec_(*input.spec),
      policy_(*input.policy),
      progress_(input.progress),
      outcomes_(input.policy->policy, input.chaos, spec_.provider.overload.status,
                AttemptTimeout(spec_, input.policy->policy)),
      provider_(spec_.provider, Mix(input.seed ^ 0x1), input.rate_limit),
      policy_rng_(Mix(input.seed ^ 0x2)),
      arrival_rng_(Mix(input.seed ^ 0x3)),
      chaos_rng_(Mix(input.seed ^ 0x4)),
      tokens_rng_(Mix(input.seed ^ 0x5)),
      timeout_(AttemptTimeout(spec_, input.policy->policy)),
      horizon_(spec_.horizon.count()),
      bucket_(spec_.bucket.count()),
      end_limit_(spec_.horizon.count() + spec_.drain.count()) {
  if (policy_.policy.budget) budget_ = std::make_unique<ref::RetryBudget>(*policy_.policy.budget);
  if (policy_.adaptive_k) throttle_.emplace(*policy_.adaptive_k);
  if (policy_.client_rate_limiter) limiter_.emplace(0);
  if (policy_.finagle_budget) finagle_.emplace(FinagleBudgetConfig{});
  if (policy_.policy.timeouts.total) {
    total_ = std::chrono::microseconds(*policy_.policy.timeouts.total).count();
  }
  m_.policy = policy_.name;
  m_.description = DescribePolicy(policy_);
  m_.source = policy_.source;
  m_.bucket_seconds = static_cast<double>(bucket_) * 1e-6;
  m_.horizon_seconds = static_cast<double>(horizon_) * 1e-6;
  m_.concurrency = spec_.provider.concurrency;
  m_.tokens_per_call = spec_.tokens_per_call;
  m_.bytes_per_call = spec_.bytes_per_call;
  m_.trigger_end_seconds = TriggerEndSeconds(spec_);
  m_.capacity_steps = CapacitySteps(spec_.provider, input.rate_limit, spec_.tokens_per_call);
  m_.series.resize(static_cast<std::size_t>(horizon_ / bucket_ + 1));
  for (std::size_t i = 0; i < spec_.gateways.size(); ++i) {
    const scenario::FleetGateway& gateway = spec_.gateways[i];
    layers_.emplace_back(gateway, input.chaos, spec_.provider.overload.status,
                         Mix(input.seed ^ (0x10 + i)));
    m_.layers.push_back(LayerMeasures{gateway.name});
  }
}

void Engine::GrowCalls(std::size_t calls) {
  calls_.resize(calls);
  sessions_.resize(calls * layers_.size());
}

// Drawn per call (its attempts resend one prompt); a constant spec draws nothing.
std::uint32_t Engine::CallTokens() {
  const double drawn = SampleAround(spec_.tokens_distribution, spec_.tokens_per_call,
                                    spec_.tokens_sigma, tokens_rng_);
  return static_cast<std::uint32_t>(
      std::clamp(drawn, 0.0, static_cast<double>(std::numeric_limits<std::int32_t>::max())));
}

void Engine::EnterStep(Micros now) {
  step_index_ = static_cast<std::size_t>(now / bucket_);
  step_start_ = static_cast<Micros>(step_index_) * bucket_;
  step_end_ = step_start_ + bucket_;
  if (step_index_ >= m_.series.size()) m_.series.resize(step_index_ + 1);
}

void Engine::Schedule(Micros time, EventKind kind, std::uint32_t slot, std::uint32_t token) {
  queue_.Push(Event{time, slot, token, kind});
}

// The next Poisson (or evenly spaced) arrival after `now` under the piecewise-constant rate.
std::optional<Micros> Engine::NextArrival(Micros now) {
  const std::vector<scenario::FleetStep>& steps = spec_.workload.rate;
  const bool poisson = spec_.workload.kind == scenario::FleetWorkload::Kind::kPoisson;
  double work = poisson ? -std::log1p(-ref::Uniform01(arrival_rng_)) : 1.0;
  double t = static_cast<double>(now);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const double end = i + 1 < steps.size() ? static_cast<double>(steps[i + 1].at.count())
                                            : static_cast<double>(horizon_);
    if (t >= end) continue;
    const double rate = steps[i].value * 1e-6;  // per microsecond
    if (rate > 0 && t + work / rate < end) return static_cast<Micros>(t + work / rate);
    work -= rate * (end - t);
    t = end;
  }
  return std::nullopt;
}

void Engine::Seed() {
  if (spec_.workload.kind != scenario::FleetWorkload::Kind::kClosed) {
    if (auto first = NextArrival(0)) Schedule(*first, EventKind::kArrival, 0, 0);
  } else {
    GrowCalls(spec_.clients);
    const double think = static_cast<double>(spec_.workload.think.count());
    for (std::uint32_t slot = 0; slot < spec_.clients; ++slot) {
      // Clients start out of step: a uniform offset within one think time.
      const auto offset = static_cast<Micros>(ref::Uniform01(arrival_rng_) * think);
      Schedule(offset, EventKind::kStartCall, slot, 0);
    }
  }
  for (const scenario::FleetBrownout& brownout : spec_.provider.brownouts) {
    Schedule((brownout.from + brownout.length).count(), EventKind::kKick, 0, 0);
  }
}

void Engine::OnArrival(Micros now) {
  if (auto next = NextArrival(now)) Schedule(*next, EventKind::kArrival, 0, 0);
  std::uint32_t slot = 0;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else if (calls_.size() < spec_.clients) {
    slot = static_cast<std::uint32_t>(calls_.size());
    GrowCalls(calls_.size() + 1);
  } else {
    ++m_.shed;  // every client is busy with a call
    return;
  }
  StartCall(slot, now);
}

void Engine::StartCall(std::uint32_t slot, Micros now) {
  CallState& call = calls_[slot];
  call.start = now;
  call.attempt = 0;
  call.previous_delay_ms = -1;
  call.tokens = CallTokens();
  call.active = true;
  ++active_;
  ++m_.calls;
  ++At(now).offered;
  if (finagle_) finagle_->Deposit(now);  // every request, not its retries
  StartAttempt(slot, now);
}

void Engine::StartAttempt(std::uint32_t slot, Micros now) {
  CallState& call = calls_[slot];
  call.token = (call.token + 1) & kTokenMask;
  ++call.attempt;
  call.in_flight = true;
  // With AWS's rate limiter on and out of tokens, the attempt waits in line for one.
  if (limiter_ && (!waiting_.empty() || !limiter_->TryAcquire(now))) {
    waiting_.push_back(RequestId{slot, call.token});
    if (waiting_.size() == 1) ScheduleWake(now);
    return;
  }
  Send(slot, now);
}

void Engine::ScheduleWake(Micros now) {
  wake_ = (wake_ + 1) & kTokenMask;  // an earlier wake-up is stale
  Schedule(limiter_->NextTokenAt(now), EventKind::kSend, 0, wake_);
}

// The limiter's bucket may hold tokens: the attempts first in line go.
void Engine::OnWake(const Event& event) {
  if (event.token != wake_) return;
  while (!waiting_.empty() && limiter_->TryAcquire(event.time)) {
    const RequestId next = waiting_.front();
    waiting_.pop_front();
    Send(next.slot, event.time);
  }
  if (!waiting_.empty()) ScheduleWake(event.time);
}

void Engine::Observe(Micros now, bool throttling) {
  limiter_->OnResponse(now, throttling);
  if (!waiting_.empty()) ScheduleWake(now);  // the fill rate changed: so did the next token
}

void Engine::Send(std::uint32_t slot, Micros now) {
  CallState& call = calls_[slot];
  const std::uint32_t token = call.token;
  ++m_.attempts;
  Bucket& bucket = At(now);
  if (call.attempt > 1) {
    ++m_.retries;
    ++bucket.retries;
  }
  if (throttle_ && throttle_->RejectLocally(now, policy_rng_)) {
    ++m_.local_rejections;
    Answer(slot, now, outcomes_.local_rejection());
    return;
  }
  if (!layers_.empty()) {
    // The gateways may retry past any answer's time: the client's timeout always stands.
    if (timeout_) Schedule(now + *timeout_, EventKind::kTimeout, slot, token);
    ReceiveAtLayer(0, slot, now);
    return;
  }
  const Admission admission = RequestProvider(slot, token, now);
  if (admission.kind == Admission::Kind::kOverloaded ||
      admission.kind == Admission::Kind::kRateLimited) {
    return;
  }
  const bool serving = admission.kind == Admission::Kind::kServing;
  // An attempt whose answer is due before its timeout needs no timeout event (the answer wins a
  // tie); a queued one may wait any time.
  const bool may_time_out = !serving || admission.done_at > now + timeout_.value_or(0);
  if (timeout_ && may_time_out) Schedule(now + *timeout_, EventKind::kTimeout, slot, token);
}

Admission Engine::RequestProvider(std::uint32_t slot, std::uint32_t token, Micros now) {
  Bucket& bucket = At(now);
  ++m_.provider_requests;
  ++bucket.attempts;
  const Admission admission = provider_.Arrive(now, RequestId{slot, token}, calls_[slot].tokens);
  bucket.queue_max = std::max<std::uint64_t>(bucket.queue_max, provider_.queue_length());
  if (admission.kind == Admission::Kind::kOverloaded ||
      admission.kind == Admission::Kind::kRateLimited) {
    ++m_.overloaded;
    ++bucket.overloaded;
    const bool limited = admission.kind == Admission::Kind::kRateLimited;
    ProviderAnswered(slot, now, limited ? outcomes_.rate_limited() : outcomes_.overload(),
                     admission.retry_after);
    return admission;
  }
  if (admission.kind == Admission::Kind::kServing) {
    bucket.busy_slot_seconds += static_cast<double>(admission.done_at - now) * 1e-6;
    Schedule(admission.done_at, EventKind::kServiceDone, slot, token);
  }
  return admission;
}

void Engine::ProviderAnswered(std::uint32_t slot, Micros now, const Outcome& outcome,
                              std::optional<Micros> hint) {
  if (layers_.empty()) {
    Answer(slot, now, outcome, hint);
    return;
  }
  AnswerAtLayer(static_cast<int>(layers_.size()) - 1, slot, now, outcome, hint);
}

void Engine::ReceiveAtLayer(std::size_t layer, std::uint32_t slot, Micros now) {
  GatewaySession& session = SessionAt(layer, slot);
  session.attempt = 0;
  session.previous_delay_ms = -1;
  ++m_.layers[layer].received;
  TryBelow(layer, slot, now);
}

// A try's token carries its layer in its low 3 bits (at most 8 layers), so that an event finds
// its session; the rest counts the layer's tries for this call.
void Engine::TryBelow(std::size_t layer, std::uint32_t slot, Micros now) {
  static_assert(scenario::kMaxGatewayLayers <= 8);
  GatewaySession& session = SessionAt(layer, slot);
  session.token = ((((session.token >> 3) + 1) << 3) | layer) & kTokenMask;
  ++session.attempt;
  session.in_flight = true;
  LayerMeasures& measures = m_.layers[layer];
  ++measures.sent;
  if (session.attempt > 1) ++measures.retries;
  const std::uint32_t token = session.token;
  if (const auto& per_try = layers_[layer].spec().per_try_timeout) {
    Schedule(now + per_try->count(), EventKind::kGatewayTimeout, slot, token);
  }
  if (layer + 1 < layers_.size()) {
    ReceiveAtLayer(layer + 1, slot, now);
  } else {
    RequestProvider(slot, token, now);
  }
}

void Engine::AnswerAtLayer(int layer, std::uint32_t slot, Micros now, const Outcome& outcome,
                           std::optional<Micros> hint) {
  if (layer < 0) {
    Answer(slot, now, outcome, hint);
    return;
  }
  const auto index = static_cast<std::size_t>(layer);
  GatewaySession& session = SessionAt(index, slot);
  const GatewayVerdict verdict = layers_[index].OnAnswer(session, now, outcome, hint);
  if (verdict.retry_in) {
    Schedule(now + *verdict.retry_in, EventKind::kGatewayRetry, slot, session.token);
    return;
  }
  AnswerAtLayer(layer - 1, slot, now, verdict.answer, verdict.hint);
}

void Engine::OnGatewayRetry(const Event& event) {
  const std::size_t layer = event.token & 7;
  if (!calls_[event.slot].active || SessionAt(layer, event.slot).token != event.token) return;
  TryBelow(layer, event.slot, event.time);
}

void Engine::OnGatewayTimeout(const Event& event) {
  const std::size_t layer = event.token & 7;
  const GatewaySession& session = SessionAt(layer, event.slot);
  if (!calls_[event.slot].active || !session.in_flight || session.token != event.token) return;
  ++m_.layers[layer].timeouts;
  CancelFrom(layer + 1, event.slot);
  AnswerAtLayer(static_cast<int>(layer), event.slot, event.time, layers_[layer].timeout(),
                std::nullopt);
}

void Engine::CancelFrom(std::size_t layer, std::uint32_t slot) {
  for (std::size_t i = layer; i < layers_.size(); ++i) {
    GatewaySession& session = SessionAt(i, slot);
    session.token = ((((session.token >> 3) + 1) << 3) | i) & kTokenMask;
    session.in_flight = false;
  }
}

void Engine::OnServiceDone(const Event& event) {
  const Micros now = event.time;
  ++m_.served;
  if (auto next = provider_.Complete(now)) {  // the freed slot takes the next queued request
    At(now).busy_slot_seconds += static_cast<double>(next->done_at - now) * 1e-6;
    Schedule(next->done_at, EventKind::kServiceDone, next->id.slot, next->id.token);
  }
  CallState& call = calls_[event.slot];
  bool current = call.active && call.in_flight;
  if (layers_.empty()) {
    current = current && call.token == event.token;
  } else {
    const GatewaySession& last = SessionAt(layers_.size() - 1, event.slot);
    current = current && last.in_flight && last.token == event.token;
  }
  if (!current) {
    ++m_.wasted_requests;
    ++At(now).wasted;
    return;
  }
  if (throttle_) throttle_->RecordAccept(now);
  const Outcome& outcome = outcomes_.Sample(chaos_rng_);
  if (outcome.success && layers_.empty()) {
    if (limiter_) Observe(now, false);
    EndCall(event.slot, now, true);
    return;
  }
  if (!outcome.success) ++m_.faults;
  ProviderAnswered(event.slot, now, outcome, std::nullopt);
}

void Engine::OnTimeout(const Event& event) {
  CallState& call = calls_[event.slot];
  if (!call.active || !call.in_flight || call.token != event.token) return;
  ++m_.timeouts;
  ++At(event.time).timeouts;
  if (!layers_.empty()) CancelFrom(0, event.slot);
  Answer(event.slot, event.time, outcomes_.timeout());
}

void Engine::Answer(std::uint32_t slot, Micros now, const Outcome& outcome,
                    std::optional<Micros> hint) {
  calls_[slot].in_flight = false;
  if (limiter_) Observe(now, outcome.throttling);
  if (outcome.success) {
    EndCall(slot, now, true);
    return;
  }
  Retry(slot, now, outcome, hint);
}

// The reference client's decision, exactly as its driver asks for it.
void Engine::Retry(std::uint32_t slot, Micros now, const Outcome& outcome,
                   std::optional<Micros> hint) {
  CallState& call = calls_[slot];
  ref::DecisionInput& input = outcomes_.Input(outcome);
  input.failure.retry_after = std::nullopt;
  if (hint) input.failure.retry_after = milliseconds((*hint + 999) / 1000);
  input.attempt = call.attempt;
  input.now = PolicyTime(now);
  input.deadline = std::nullopt;
  if (total_) input.deadline = PolicyTime(call.start + *total_);
  input.previous_delay = std::nullopt;
  if (call.previous_delay_ms >= 0) input.previous_delay = milliseconds(call.previous_delay_ms);
  // A gateway that drops Retry-After headers leaves a chaos answer's header hints unread.
  std::vector<ref::RetryHint> dropped;
  if (!outcome.header_hints) std::swap(dropped, input.hints);
  const ref::Decision decision = ref::Decide(policy_.policy, input, policy_rng_, budget_.get());
  if (!outcome.header_hints) std::swap(dropped, input.hints);
  if (!decision.retry()) {
    EndCall(slot, now, false, decision.reason);
    return;
  }
  // Last, as Decide's own budget (rule 8).
  if (finagle_ && !finagle_->TryWithdraw(now)) {
    EndCall(slot, now, false, ref::GiveUpReason::kBudgetExhausted);
    return;
  }
  call.previous_delay_ms = static_cast<std::int32_t>(
      std::min<std::int64_t>(decision.delay.count(), std::numeric_limits<std::int32_t>::max()));
  Schedule(now + decision.delay.count() * 1000, EventKind::kStartAttempt, slot, call.token);
}

void Engine::EndCall(std::uint32_t slot, Micros now, bool success, ref::GiveUpReason reason) {
  CallState& call = calls_[slot];
  call.active = false;
  call.in_flight = false;
  --active_;
  last_end_ = std::max(last_end_, now);
  m_.latency.Add(now - call.start);
  Bucket& bucket = At(now);
  if (success) {
    ++m_.succeeded;
    ++bucket.succeeded;
    if (budget_) budget_->RecordSuccess();
  } else {
    ++m_.failed;
    ++bucket.failed;
    ++give_ups_[static_cast<std::size_t>(reason)];
  }
  if (spec_.workload.kind != scenario::FleetWorkload::Kind::kClosed) {
    free_.push_back(slot);
    return;
  }
  const Micros next =
      now + Exponential(arrival_rng_, static_cast<double>(spec_.workload.think.count()));
  if (next < horizon_) Schedule(next, EventKind::kStartCall, slot, 0);
}

void Engine::Dispatch(const Event& event) {
  switch (event.kind) {
    case EventKind::kArrival:
      OnArrival(event.time);
      break;
    case EventKind::kStartCall:
      StartCall(event.slot, event.time);
      break;
    case EventKind::kStartAttempt:
      if (calls_[event.slot].token == event.token) StartAttempt(event.slot, event.time);
      break;
    case EventKind::kSend:
      OnWake(event);
      break;
    case EventKind::kServiceDone:
      OnServiceDone(event);
      break;
    case EventKind::kTimeout:
      OnTimeout(event);
      break;
    case EventKind::kGatewayRetry:
      OnGatewayRetry(event);
      break;
    case EventKind::kGatewayTimeout:
      OnGatewayTimeout(event);
      break;
    case EventKind::kKick:
      while (auto started = provider_.StartQueued(event.time)) {
        At(event.time).busy_slot_seconds +=
            static_cast<double>(started->done_at - event.time) * 1e-6;
        Schedule(started->done_at, EventKind::kServiceDone, started->id.slot, started->id.token);
      }
      break;
  }
}

PolicyMeasures Engine::Run() {
  Seed();
  Micros now = 0;
  while (!queue_.empty()) {
    const Event event = queue_.Pop();
    if (event.time > end_limit_) break;
    // Past the horizon only the calls in flight matter: once none is left, the run has drained.
    if (event.time > horizon_ && active_ == 0) break;
    now = event.time;
    Dispatch(event);
    if (++m_.events % kProgressEvery == 0 && progress_) {
      progress_(static_cast<double>(now) / static_cast<double>(horizon_), m_.events);
    }
  }
  m_.unfinished = active_;
  for (std::size_t i = 0; i < give_ups_.size(); ++i) {
    if (give_ups_[i] != 0) {
      m_.give_up_reasons[std::string(ref::ToString(static_cast<ref::GiveUpReason>(i)))] =
          give_ups_[i];
    }
  }
  m_.end_seconds = static_cast<double>(active_ == 0 ? std::max(last_end_, horizon_) : now) * 1e-6;
  Finish(m_);
  return std::move(m_);
}

}  // namespace

std::optional<double> TriggerEndSeconds(const scenario::FleetSpec& spec) {
  std::optional<double> end;
  for (const scenario::FleetBrownout& brownout : spec.provider.brownouts) {
    const double at = std::chrono::duration<double>(brownout.from + brownout.length).count();
    end = std::max(end.value_or(0), at);
  }
  const std::vector<scenario::FleetStep>& steps = spec.workload.rate;
  const auto peak = std::max_element(
      steps.begin(), steps.end(), [](const auto& a, const auto& b) { return a.value < b.value; });
  if (peak != steps.end() && peak + 1 != steps.end()) {
    const double at = std::chrono::duration<double>((peak + 1)->at).count();
    end = std::max(end.value_or(0), at);
  }
  return end;
}

PolicyMeasures Simulate(const RunInput& input) { return Engine(input).Run(); }

}  // namespace faultline::fleet
