#include "harness/judge.h"

#include <array>

#include "harness/judge_internal.h"

namespace faultline::harness {
namespace judge_internal {
namespace {

using nlohmann::json;

constexpr auto kAdvisory = report::Severity::kAdvisory;

constexpr std::array<InvariantInfo, 40> kCatalog{{
    {"LIFE-001",
     "Each call ends with exactly one terminal event (response/committed or "
     "response/failed)."},
    {"LIFE-002", "Nothing is emitted after a call's terminal event."},
    {"LIFE-003",
     "Chunks arrive only inside an open response: after its response/start, before "
     "it is interrupted or ends."},
    {"LIFE-004",
     "A failed attempt is reported (response/interrupted) before the next attempt "
     "reaches the provider."},
    {"LIFE-005",
     "The subject's count of attempts agrees with the requests that reached the provider."},
    {"COMMIT-001",
     "The committed answer is exactly what the provider sent in one attempt: no "
     "splice, no duplicate, no loss."},
    {"COMMIT-002",
     "Only a whole answer is committed: never a truncated, empty, malformed or "
     "error response."},
    {"COMMIT-003", "No request reaches the provider after the answer was committed."},
    {"RETRY-001", "A failure that the declared policy does not retry is not retried."},
    {"RETRY-002", "Attempts stay within the declared budget (max_attempts)."},
    {"RETRY-003", "Gaps between attempts stay within the declared backoff bounds."},
    {"RETRY-004",
     "Retry-After is honoured: no attempt before the server's hint; a hint over the "
     "declared cap is handled as declared."},
    {"RETRY-005", "Every attempt sends the same request body."},
    {"RETRY-006",
     "A failure that the declared policy retries is retried while its attempt budget and "
     "deadline allow."},
    {"TIME-001",
     "A stalled stream is abandoned within the declared idle timeout, and the client "
     "closes that connection."},
    {"TIME-002",
     "A response whose headers do not come is abandoned within the declared "
     "response-headers timeout."},
    {"TIME-003", "The call ends within the declared total deadline."},
    {"CANCEL-001", "A cancel ends the call promptly with ABORTED."},
    {"CANCEL-002", "No request reaches the provider after a cancel."},
    {"CANCEL-003", "A cancel during a response closes that connection promptly."},
    {"CLASS-001", "The reported failure class matches the injected fault."},
    {"RES-001",
     "No exchange is left open: by the end of the run the client has closed every "
     "connection the provider was still serving."},
    {"ROUTE-001",
     "No failover after commit: once a route delivered a whole answer, no request reaches any "
     "route."},
    {"ROUTE-002",
     "The committed answer comes from one attempt on one route: the route it names sent it "
     "whole (no splice across routes)."},
    {"ROUTE-003", "A route lacking a capability the request needs never gets the request."},
    {"ROUTE-004",
     "No request reaches a route before its own Retry-After (the declared policy's reading), "
     "while other routes stay usable at once."},
    {"ROUTE-005",
     "A route's circuit breaker opens at its declared threshold and not before: no attempt "
     "reaches it while open but the declared half-open probes, and a route whose breaker is "
     "still closed is not left to wait out a cooldown."},
    {"ROUTE-006",
     "In-stream and mid-stream errors count as route failures: before commit, the call moves on "
     "to a route the failure may go to instead of giving up."},
    {"ROUTE-007",
     "Attempts across all routes stay within the declared budget, and a call whose every route "
     "is down fails fast, without cycling through them."},
    {"ROUTE-008",
     "Request bodies differ between routes only in the declared wire model (same dialect), and "
     "every route gets its own wire model."},
    {"ROUTE-009", "Every route's connections are closed by the end of the run."},
    {"ADV-001",
     "The server's Retry-After is waited out, not pre-empted because it exceeds the "
     "client's cap or because the client ignores it.",
     kAdvisory},
    {"ADV-002", "Retry delays are jittered, so that a fleet of clients does not retry in lockstep.",
     kAdvisory},
    {"ADV-003", "A stalled stream is abandoned well before undici's 300 s body timeout.",
     kAdvisory},
    {"ADV-004",
     "Transient failures (a 429 with a short hint, a 503, a 529) are retried, not given up "
     "at once.",
     kAdvisory},
    {"ADV-005",
     "Failures that cannot succeed on a retry (quota, auth, invalid request, context "
     "overflow) are not retried.",
     kAdvisory},
    {"ADV-006",
     "After a failure that takes a whole shared-fate group down, the call does not fail over "
     "to another route of the same group (that wastes the budget).",
     kAdvisory},
    {"ADV-007",
     "A route that fails fast does not attract a growing share of the call's attempts (a "
     "router that picks by readiness or latency alone soaks up its retries there).",
     kAdvisory},
    {"ADV-008",
     "No wait holds the caller for five minutes or more without a sign: every silence, "
     "Retry-After and backoff is bounded (an idle timeout heartbeats do not defeat, a cap, a "
     "total deadline).",
     kAdvisory},
    {"ADV-009",
     "A failed attempt moves only where the failure taxonomy allows: a failure the request "
     "itself causes (invalid request, safety refusal) goes to no other route, a broken stream "
     "(truncated, malformed, empty) only to a route serving the same wire model.",
     kAdvisory},
}};

}  // namespace

CheckResult Pass(std::string_view id) { return {std::string(id), {}, CheckStatus::kPass, {}}; }
CheckResult Fail(std::string_view id, std::string evidence) {
  return {std::string(id), {}, CheckStatus::kFail, std::move(evidence)};
}
CheckResult NotApplicable(std::string_view id, std::string why) {
  return {std::string(id), {}, CheckStatus::kNotApplicable, std::move(why)};
}
CheckResult Named(std::string id, std::string statement, CheckResult result) {
  result.id = std::move(id);
  result.statement = std::move(statement);
  return result;
}

std::string Str(const json& event, const char* key) {
  const auto found = event.find(key);
  return found != event.end() && found->is_string() ? found->get<std::string>() : std::string();
}

std::string FailureField(const json& event, const char* key) {
  const auto failure = event.find("failure");
  if (failure == event.end() || !failure->is_object()) return {};
  return Str(*failure, key);
}

double ArrivedMs(const provider::JournalEntry& entry) { return Ms(entry.arrived); }
double EndedMs(const provider::JournalEntry& entry) { return Ms(entry.ended); }

std::string Quote(std::string_view text) {
  constexpr std::size_t kMax = 80;
  std::string shown(text.substr(0, kMax));
  std::string out = json(shown).dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > kMax) out += fmt::format("... ({} bytes)", text.size());
  return out;
}

View MakeView(const scenario::Scenario& scenario, const Trace& trace, const Tolerance& tolerance,
              const PolicyTwin* twin) {
  View view{scenario, trace, tolerance, ReadDeclaredPolicy(trace), twin, IsBlackBox(trace), {}, {}};
  view.calls.resize(static_cast<std::size_t>(std::max(trace.calls, 1)));
  for (const ClientRecord& record : trace.client) {
    if (record.call < 0 || record.call >= static_cast<int>(view.calls.size())) continue;
    if (EventType(record) == protocol::kHello) continue;
    CallView& call = view.calls[static_cast<std::size_t>(record.call)];
    call.records.push_back(&record);
    if (IsTerminal(record)) {
      if (call.terminal == nullptr) call.terminal = &record;
      ++call.terminals;
    }
  }
  for (const provider::JournalEntry& entry : trace.journal) {
    if (entry.attempt > 0) view.attempts.push_back(&entry);
  }
  return view;
}

bool View::refusals() const {
  if (!scenario.listener_outages.empty()) return true;
  return std::ranges::any_of(scenario.routes, [](const scenario::Route& route) {
    return route.health && route.health->failure == scenario::Health::Failure::kRefused;
  });
}

const provider::JournalEntry* NextOnRoute(const View& view, std::size_t k) {
  for (std::size_t next = k + 1; next < view.attempts.size(); ++next) {
    if (view.attempts[next]->route == view.attempts[k]->route) return view.attempts[next];
  }
  return nullptr;
}

CheckResult JudgedPerRoute(std::string_view route_check) {
  return NotApplicable(
      "", fmt::format("the scenario has routes: {} judges this per route", route_check));
}

std::string NoPolicy(const View& view) {
  if (view.declared.error)
    return "the subject's declared policy is invalid: " + *view.declared.error;
  return "the subject declares no policy in adapter/hello";
}

std::string StoppedBeforeThePolicyEnds(const View& view) {
  const std::optional<Duration>& stopped = view.trace.subject_stopped_at;
  if (!view.trace.subject_timed_out || !stopped) return {};
  if (view.twin == nullptr || !view.twin->usable() || !view.has_policy()) return {};
  // The twin's t = 0 is the first attempt; the subject's is its first response/start.
  const auto first = std::ranges::find_if(view.trace.client, [](const ClientRecord& record) {
    return EventType(record) == protocol::kStart;
  });
  if (first == view.trace.client.end()) return {};
  const double ran = Ms(*stopped - first->at);
  const std::optional<double> earliest = view.twin->earliest_end_ms();
  if (earliest && *earliest <= ran + view.tolerance.late_ms) return {};
  if (!earliest) {
    return fmt::format(
        "the runner stopped the subject {:.1f} ms after its first attempt, and its declared "
        "policy never ends the call: no timeout, cap or deadline of it ends this scenario (its "
        "twin was still running after {} h)",
        ran, std::chrono::duration_cast<std::chrono::hours>(kTwinHorizon).count());
  }
  return fmt::format(
      "the runner stopped the subject {:.1f} ms after its first attempt, and its declared policy "
      "ends the call only {:.0f} ms after it ({}); give `faultline run --timeout` more time",
      ran, *earliest, DescribeOutcomes(*view.twin));
}

namespace {

// The first silence of `entry` that the declared timeouts cut (a correct client times out in
// it), or nullptr.
const provider::Silence* TimedOutSilence(const View& view, const provider::JournalEntry& entry,
                                         bool* ambiguous) {
  if (!view.has_policy()) return nullptr;
  const ref::TimeoutConfig& timeouts = view.policy().timeouts;
  for (const provider::Silence& silence : entry.truth.silences) {
    const auto limit = silence.before_headers ? timeouts.response_headers : timeouts.idle;
    if (!limit) continue;
    if (silence.heartbeat && timeouts.heartbeats_reset_idle && !silence.before_headers) continue;
    const double limit_ms = static_cast<double>(limit->count());
    const double length = silence.to ? Ms(*silence.to - silence.from) : 1e300;
    if (length > limit_ms + view.tolerance.late_ms) return &silence;
    // A silence that ends right at the timeout may be cut short by either side first.
    if (length >= limit_ms - view.tolerance.late_ms && ambiguous != nullptr) *ambiguous = true;
  }
  return nullptr;
}

}  // namespace

std::string ExpectedClass(const View& view, const provider::JournalEntry& entry, bool* ambiguous) {
  if (TimedOutSilence(view, entry, ambiguous) != nullptr) return "timeout";
  if (entry.truth.answer) return {};
  return entry.truth.failure_class;
}

std::optional<ref::Failure> TruthFailure(const View& view, const provider::JournalEntry& entry) {
  const std::string failure_class = ExpectedClass(view, entry);
  if (failure_class.empty()) return std::nullopt;
  ref::Failure failure;
  failure.failure_class =
      ref::ParseFailureClass(failure_class).value_or(ref::FailureClass::kUnknown);
  const bool honour_header = !view.has_policy() || view.policy().should_retry_header;
  failure.retryable =
      failure_class == "timeout" ||
      (honour_header ? entry.truth.retryable : entry.truth.retryable_ignoring_header);
  failure.code = failure.failure_class == ref::FailureClass::kTimeout ? ref::FailureCode::kTimeout
                                                                      : ref::FailureCode::kUnknown;
  if (honour_header) failure.should_retry = entry.truth.should_retry;
  const bool error_status = entry.status >= 400;
  if (error_status) failure.status = entry.status;
  const bool headers_came =
      entry.status != 0 &&
      !std::ranges::any_of(entry.truth.silences, [&](const provider::Silence& s) {
        return s.before_headers && failure_class == "timeout" && !s.to;
      });
  failure.phase =
      error_status || !headers_came ? ref::Phase::kResponseHeaders : ref::Phase::kStream;
  if (failure.phase == ref::Phase::kStream && entry.truth.streamed) {
    // What the caller had seen when the stream failed: output went out before the silence it
    // times out in, or before the failure the response itself ends in.
    failure.streamed = true;
    const provider::Silence* silence = TimedOutSilence(view, entry, nullptr);
    const bool output_seen =
        silence != nullptr ? entry.truth.output_from && *entry.truth.output_from <= silence->from
                           : entry.truth.output_before_failure;
    failure.partial_output =
        output_seen ? ref::PartialOutput::kUncommitted : ref::PartialOutput::kNone;
  }
  if (failure.retryable && entry.truth.retry_after)
    failure.retry_after = std::chrono::ceil<std::chrono::milliseconds>(*entry.truth.retry_after);
  return failure;
}

std::optional<ref::GiveUpReason> PolicyForbids(const View& view,
                                               const provider::JournalEntry& entry) {
  std::optional<ref::Failure> failure = TruthFailure(view, entry);
  if (!failure) return std::nullopt;
  const ref::RetryPolicy& policy = view.policy();
  auto reason = ref::RetryForbidden(policy, *failure);
  if (reason == ref::GiveUpReason::kPhaseNotRetried && failure->phase == ref::Phase::kStream) {
    failure->phase = ref::Phase::kFinish;  // a bad end of the stream may count as either
    reason = ref::RetryForbidden(policy, *failure);
  }
  return reason;
}

namespace {

using Check = CheckResult (*)(const View&);

// `check` over every call's own view: the first failure (its evidence naming the call), else a
// pass when any call passes, else the first call's n/a.
CheckResult AcrossCalls(const std::vector<View>& calls, Check check) {
  std::optional<CheckResult> passed, not_applicable;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    CheckResult result = check(calls[i]);
    if (result.status == CheckStatus::kFail) {
      result.evidence = fmt::format("call {}: {}", i, result.evidence);
      return result;
    }
    auto& kept = result.status == CheckStatus::kPass ? passed : not_applicable;
    if (!kept) kept = std::move(result);
  }
  return passed ? *passed : *not_applicable;
}

}  // namespace

}  // namespace judge_internal

Tolerance VirtualTolerance() { return {1, 0}; }
Tolerance RealTolerance() { return {750, 25}; }

std::span<const InvariantInfo> InvariantCatalog() { return judge_internal::kCatalog; }

bool IsBlackBox(const Trace& trace) {
  for (const ClientRecord& record : trace.client) {
    const std::string type = EventType(record);
    if (type == protocol::kStart || type == protocol::kChunk || type == protocol::kInterrupted) {
      return false;
    }
  }
  return true;
}

std::vector<report::CheckResult> Judge(const scenario::Scenario& scenario, const Trace& trace,
                                       const Tolerance& tolerance, const PolicyTwin* twin) {
  using namespace judge_internal;
  const View view = MakeView(scenario, trace, tolerance, twin);
  // With several calls, each call is judged on its own requests when the journal attributes
  // them; the checks see a single call then.
  const std::optional<std::vector<Trace>> per_call = SplitByCall(trace);
  std::vector<View> call_views;
  if (per_call) {
    for (const Trace& call : *per_call) {
      call_views.push_back(MakeView(scenario, call, tolerance, twin));
    }
  }
  constexpr std::array<Check, kCatalog.size()> kChecks{LifeOneTerminal,
                                                       LifeNothingAfterTerminal,
                                                       LifeChunksInsideResponse,
                                                       LifeInterruptBeforeRetry,
                                                       LifeAttemptsAgree,
                                                       CommitOneAttempt,
                                                       CommitWholeAnswerOnly,
                                                       CommitNoRetryAfter,
                                                       RetryNotRetryable,
                                                       RetryWithinBudget,
                                                       RetryBackoffBounds,
                                                       RetryAfterHonoured,
                                                       RetrySameBody,
                                                       RetryWhileAllowed,
                                                       TimeStallDetected,
                                                       TimeHeadersDeadline,
                                                       TimeTotalDeadline,
                                                       CancelEndsPromptly,
                                                       CancelNoRequestAfter,
                                                       CancelClosesStream,
                                                       ClassMatchesFault,
                                                       ResourcesClosed,
                                                       RouteNoFailoverAfterCommit,
                                                       RouteNoSplice,
                                                       RouteCapabilitiesFit,
                                                       RouteRetryAfterHonoured,
                                                       RouteBreakerHonoured,
                                                       RouteStreamErrorsFailOver,
                                                       RouteBudgetAndFastFailure,
                                                       RouteBodiesDifferOnlyInModel,
                                                       RouteConnectionsClosed,
                                                       AdviseRetryAfterPreempted,
                                                       AdviseJitter,
                                                       AdviseIdleTimeout,
                                                       AdviseTransientRetried,
                                                       AdviseNonRetryable,
                                                       AdviseSharedFateFailover,
                                                       AdviseFastFailingRouteShare,
                                                       AdviseBoundedWaits,
                                                       AdviseFailoverAsTheTaxonomySays};
  std::vector<CheckResult> results;
  for (std::size_t i = 0; i < kChecks.size(); ++i) {
    // What the calls of one client share (its breakers) is judged over the whole run.
    const bool whole_run = trace.one_client && kChecks[i] == RouteBreakerHonoured;
    CheckResult result =
        call_views.empty() || whole_run ? kChecks[i](view) : AcrossCalls(call_views, kChecks[i]);
    result.id = kCatalog[i].id;
    result.statement = kCatalog[i].statement;
    result.severity = kCatalog[i].severity;
    results.push_back(std::move(result));
  }
  for (CheckResult& result : ExpectChecks(view)) results.push_back(std::move(result));
  return results;
}

}  // namespace faultline::harness
