#include "harness/judge/judge.h"

#include <fmt/ranges.h>

#include <array>

#include "harness/judge/judge_internal.h"

namespace faultline::harness {
namespace judge_internal {
namespace {

using nlohmann::json;

constexpr auto kAdvisory = report::Severity::kAdvisory;

using Check = Verdict (*)(const View&);

struct CatalogEntry {
  std::string_view id;
  std::string_view statement;
  Check check;
  report::Severity severity = report::Severity::kViolation;
};

// The catalogue, in its order: each invariant and advisory with its check, in one table.
constexpr std::array<CatalogEntry, 46> kCatalog{{
    {"LIFE-001",
     "Each call ends with exactly one terminal event (response/committed or "
     "response/failed).",
     LifeOneTerminal},
    {"LIFE-002", "Nothing is emitted after a call's terminal event.", LifeNothingAfterTerminal},
    {"LIFE-003",
     "Chunks arrive only inside an open response: after its response/start, before "
     "it is interrupted or ends.",
     LifeChunksInsideResponse},
    {"LIFE-004",
     "A failed attempt is reported (response/interrupted) before the next attempt "
     "reaches the provider.",
     LifeInterruptBeforeRetry},
    {"LIFE-005",
     "The subject's count of attempts agrees with the requests that reached the provider.",
     LifeAttemptsAgree},
    {"COMMIT-001",
     "The committed answer is exactly what the provider sent in one attempt: no "
     "splice, no duplicate, no loss.",
     CommitOneAttempt},
    {"COMMIT-002",
     "Only a whole answer is committed: never a truncated, empty, malformed or "
     "error response.",
     CommitWholeAnswerOnly},
    {"COMMIT-003", "No request reaches the provider after the answer was committed.",
     CommitNoRetryAfter},
    {"RETRY-001", "A failure that the declared policy does not retry is not retried.",
     RetryNotRetryable},
    {"RETRY-002", "Attempts stay within the declared budget (max_attempts).", RetryWithinBudget},
    {"RETRY-003", "Gaps between attempts stay within the declared backoff bounds.",
     RetryBackoffBounds},
    {"RETRY-004",
     "Retry-After is honoured: no attempt before the server's hint; a hint over the "
     "declared cap is handled as declared.",
     RetryAfterHonoured},
    {"RETRY-005", "Every attempt sends the same request body.", RetrySameBody},
    {"RETRY-006",
     "A failure that the declared policy retries is retried while its attempt budget and "
     "deadline allow.",
     RetryWhileAllowed},
    {"RETRY-007",
     "A declared retry budget is never overdrawn, also when the calls of one client share it.",
     RetryBudgetKept},
    {"TIME-001",
     "A stalled stream is abandoned within the declared idle timeout, and the client "
     "closes that connection.",
     TimeStallDetected},
    {"TIME-002",
     "A response whose headers do not come is abandoned within the declared "
     "response-headers timeout.",
     TimeHeadersDeadline},
    {"TIME-003", "The call ends within the declared total deadline.", TimeTotalDeadline},
    {"CANCEL-001", "A cancel ends the call promptly with ABORTED.", CancelEndsPromptly},
    {"CANCEL-002", "No request reaches the provider after a cancel.", CancelNoRequestAfter},
    {"CANCEL-003", "A cancel during a response closes that connection promptly.",
     CancelClosesStream},
    {"CLASS-001", "The reported failure class matches the injected fault.", ClassMatchesFault},
    {"RES-001",
     "No exchange is left open: by the end of the run the client has closed every "
     "connection the provider was still serving.",
     ResourcesClosed},
    {"RES-002",
     "A connection is reused only when healthy: no request is sent on a connection while a "
     "response on it is still in progress (a client that gives up on a response opens a new "
     "connection for the next request).",
     ConnectionsReusedOnlyWhole},
    {"ROUTE-001",
     "No failover after commit: once a route delivered a whole answer, no request reaches any "
     "route.",
     RouteNoFailoverAfterCommit},
    {"ROUTE-002",
     "The committed answer comes from one attempt on one route: the route it names sent it "
     "whole (no splice across routes).",
     RouteNoSplice},
    {"ROUTE-003", "A route lacking a capability the request needs never gets the request.",
     RouteCapabilitiesFit},
    {"ROUTE-004",
     "No request reaches a route before its own Retry-After (the declared policy's reading), "
     "while other routes stay usable at once.",
     RouteRetryAfterHonoured},
    {"ROUTE-005",
     "A route's circuit breaker opens at its declared threshold and not before: no attempt "
     "reaches it while open but the declared half-open probes, and a route whose breaker is "
     "still closed is not left to wait out a cooldown.",
     RouteBreakerHonoured},
    {"ROUTE-006",
     "In-stream and mid-stream errors count as route failures: before commit, the call moves on "
     "to a route the failure may go to instead of giving up.",
     RouteStreamErrorsFailOver},
    {"ROUTE-007",
     "Attempts across all routes stay within the declared budget, and a call whose every route "
     "is down fails fast, without cycling through them.",
     RouteBudgetAndFastFailure},
    {"ROUTE-008",
     "Request bodies differ between routes only in the declared wire model (same dialect), and "
     "every route gets its own wire model.",
     RouteBodiesDifferOnlyInModel},
    {"ROUTE-009", "Every route's connections are closed by the end of the run.",
     RouteConnectionsClosed},
    {"ROUTE-010",
     "Each call of one client starts on the primary route, unless the client declares itself "
     "sticky: then it may start where a failover moved the client, and starts on the primary "
     "again once the declared reset_ms has passed since that failover.",
     RouteStickyHonoured},
    {"ADV-001",
     "The server's Retry-After is waited out, not pre-empted because it exceeds the "
     "client's cap or because the client ignores it.",
     AdviseRetryAfterPreempted, kAdvisory},
    {"ADV-002", "Retry delays are jittered, so that a fleet of clients does not retry in lockstep.",
     AdviseJitter, kAdvisory},
    {"ADV-003", "A stalled stream is abandoned well before undici's 300 s body timeout.",
     AdviseIdleTimeout, kAdvisory},
    {"ADV-004",
     "Transient failures (a 429 with a short hint, a 503, a 529) are retried, not given up "
     "at once, unless the server said x-should-retry: false.",
     AdviseTransientRetried, kAdvisory},
    {"ADV-005",
     "Failures that cannot succeed on a retry (quota, auth, invalid request, context "
     "overflow) are not retried.",
     AdviseNonRetryable, kAdvisory},
    {"ADV-006",
     "After a failure that takes a whole shared-fate group down, the call does not fail over "
     "to another route of the same group (that wastes the budget).",
     AdviseSharedFateFailover, kAdvisory},
    {"ADV-007",
     "A route that fails fast does not attract a growing share of the call's attempts (a "
     "router that picks by readiness or latency alone soaks up its retries there).",
     AdviseFastFailingRouteShare, kAdvisory},
    {"ADV-008",
     "No wait holds the caller for five minutes or more without a sign: every silence, "
     "Retry-After and backoff is bounded (an idle timeout heartbeats do not defeat, a cap, a "
     "total deadline).",
     AdviseBoundedWaits, kAdvisory},
    {"ADV-009",
     "A failed attempt moves only where the failure taxonomy allows: a failure the request "
     "itself causes (invalid request, safety refusal) goes to no other route, a broken stream "
     "(truncated, malformed, empty) only to a route serving the same wire model.",
     AdviseFailoverAsTheTaxonomySays, kAdvisory},
    {"ADV-010",
     "A server's x-should-retry: false is obeyed: no retry follows it, even from a client whose "
     "declared policy ignores the header.",
     AdviseShouldRetryFalseObeyed, kAdvisory},
    {"ADV-012",
     "The declared policy gives up on a failure that does not clear: its twin ends every call "
     "before the bound on a virtual run's requests (an attempt budget, a deadline or a retry "
     "budget stops it), so the checks against the twin judge the whole call.",
     AdviseTwinEnds, kAdvisory},
    // Last: it names what the other checks (and the expectations, which Judge() runs first)
    // found left out.
    {"ADV-011",
     "The declared policy states every key its checks need: a partial declaration (no extends) "
     "is judged only on what it states, and every check that needs a key it leaves out is not "
     "applicable.",
     AdviseStateEveryKey, kAdvisory},
}};

}  // namespace

Verdict Pass() { return {}; }
Verdict Fail(std::string evidence) { return {CheckStatus::kFail, std::move(evidence)}; }
Verdict NotApplicable(std::string why) { return {CheckStatus::kNotApplicable, std::move(why)}; }
CheckResult Named(std::string id, std::string statement, Verdict verdict) {
  return {std::move(id), std::move(statement), verdict.status, std::move(verdict.evidence)};
}

const ReportedFailure& FailureOf(const ClientEvent& event) {
  static const ReportedFailure kNone;
  return event.failure ? *event.failure : kNone;
}

namespace {

// n/a with `why` when some terminal event of `kind` lacks what `has` reads (an app's ending).
template <typename Has>
std::optional<Verdict> UnlessEveryTerminal(const View& view, EventKind kind, Has has,
                                           std::string why) {
  const bool unreported = std::ranges::any_of(view.trace.client, [&](const ClientRecord& record) {
    return record.event.kind == kind && !has(record.event);
  });
  if (!unreported) return std::nullopt;
  return NotApplicable(std::move(why));
}

}  // namespace

std::optional<Verdict> UnlessTextReported(const View& view) {
  return UnlessEveryTerminal(
      view, EventKind::kCommitted, [](const ClientEvent& e) { return e.text.has_value(); },
      "the subject reports that it got an answer, not the answer's text (an app judged from its "
      "exit status)");
}

std::optional<Verdict> UnlessFailureReported(const View& view) {
  return UnlessEveryTerminal(
      view, EventKind::kFailed, [](const ClientEvent& e) { return e.failure.has_value(); },
      "the subject reports that its call failed, not how (an app judged from its exit status)");
}

std::optional<Verdict> UnlessAttemptsCountable(const View& view) {
  if (!view.black_box || !view.refusals()) return std::nullopt;
  const bool counted = std::ranges::any_of(view.trace.client, [](const ClientRecord& record) {
    return record.event.terminal() && record.event.attempt.has_value();
  });
  if (counted) return std::nullopt;
  return NotApplicable(
      "the provider may refuse connections, which never reach its journal, and "
      "the subject reports no attempt count: how many attempts it made is "
      "unknown");
}

std::optional<Verdict> UnlessOutcomeKnown(const View& view) {
  if (!view.trace.outcome_unknown) return std::nullopt;
  return NotApplicable(
      "nobody reported how the calls ended (a served session judged from its "
      "journal; faultline serve --outcome states it)");
}

std::string Str(const json& object, const char* key) {
  const auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : std::string();
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
              const PolicyTwin* twin, std::set<std::string>* unstated) {
  View view{scenario, trace, tolerance, ReadDeclaredPolicy(trace), twin, IsBlackBox(trace),
            {},       {},    unstated};
  view.calls.resize(static_cast<std::size_t>(std::max(trace.calls, 1)));
  for (const ClientRecord& record : trace.client) {
    if (record.call < 0 || record.call >= static_cast<int>(view.calls.size())) continue;
    if (record.event.kind == EventKind::kHello) continue;
    CallView& call = view.calls[static_cast<std::size_t>(record.call)];
    call.records.push_back(&record);
    if (record.event.terminal()) {
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

Verdict JudgedPerRoute(std::string_view route_check) {
  return NotApplicable(
      fmt::format("the scenario has routes: {} judges this per route", route_check));
}

std::vector<std::string> Undeclared(const View& view, std::span<const std::string_view> needed) {
  std::vector<std::string> missing;
  if (!view.has_policy()) return missing;
  for (std::string_view key : needed) {
    if (view.declared.States(key)) continue;
    missing.emplace_back(key);
    if (view.unstated != nullptr) view.unstated->emplace(key);
  }
  return missing;
}

std::optional<Verdict> UnlessDeclared(const View& view, std::span<const std::string_view> needed) {
  const std::vector<std::string> missing = Undeclared(view, needed);
  if (missing.empty()) return std::nullopt;
  return NotApplicable(fmt::format(
      "the declared policy does not state {}: a declaration without extends is judged only on "
      "the keys it states (ADV-011)",
      fmt::join(missing, ", ")));
}

std::string TwinNeedsWholePolicy(const View& view) {
  if (!view.has_policy() || !view.declared.partial) return {};
  const std::vector<std::string> missing = view.declared.Unstated();
  if (view.unstated != nullptr) view.unstated->insert(missing.begin(), missing.end());
  return fmt::format(
      "the policy twin runs a whole policy, and the declaration (without extends) leaves out {} "
      "(ADV-011)",
      fmt::join(missing, ", "));
}

std::string NoPolicy(const View& view) {
  if (view.declared.error)
    return "the subject's declared policy is invalid: " + *view.declared.error;
  return "the subject declares no policy in adapter/hello";
}

namespace {

// The runner stopped the subject `ran_ms` after its first attempt: why its declared policy (its
// twin) would not have ended the call by then, else "".
std::string PolicyEndsLater(const View& view, double ran_ms) {
  const std::optional<double> earliest = view.twin->earliest_end_ms();
  if (earliest && *earliest <= ran_ms + view.tolerance.late_ms) return {};
  if (!earliest) {
    return fmt::format(
        "the runner stopped the subject {:.1f} ms after its first attempt, and its declared "
        "policy never ends the call: no timeout, cap or deadline of it ends this scenario (its "
        "twin was {})",
        ran_ms, DescribeOutcomes(*view.twin));
  }
  return fmt::format(
      "the runner stopped the subject {:.1f} ms after its first attempt, and its declared policy "
      "ends the call only {:.0f} ms after it ({}); give `faultline run --timeout` more time",
      ran_ms, *earliest, DescribeOutcomes(*view.twin));
}

}  // namespace

std::string BeyondTheTwinsBound(const View& view) {
  if (view.twin == nullptr || view.twin->request_bound == 0) return {};
  if (view.attempts.size() < view.twin->request_bound) return {};
  return fmt::format(
      "{} requests reached the provider, and the declared policy's twin stopped at {} "
      "(faultline run --max-virtual-requests): what the policy does beyond is not known (ADV-012)",
      view.attempts.size(), view.twin->request_bound);
}

std::string StoppedBeforeThePolicyEnds(const View& view) {
  const std::optional<Duration>& stopped = view.trace.subject_stopped_at;
  if (!view.trace.subject_timed_out || !stopped) return {};
  if (const std::string why = TwinNeedsWholePolicy(view); !why.empty()) {
    return fmt::format(
        "the runner stopped the subject at {:.1f} ms, and whether its policy would "
        "have ended the call by then is unknown: {}",
        Ms(*stopped), why);
  }
  if (view.twin == nullptr || !view.twin->usable() || !view.has_policy()) return {};
  // The twin's t = 0 is the first attempt; the subject's is its first response/start, or for a
  // black box (which reports none) its first request's arrival: no later than its first attempt,
  // so the time it had is never overstated.
  const auto first = std::ranges::find_if(view.trace.client, [](const ClientRecord& record) {
    return record.event.kind == EventKind::kStart;
  });
  if (first != view.trace.client.end()) return PolicyEndsLater(view, Ms(*stopped - first->at));
  if (!view.black_box || view.attempts.empty()) return {};
  return PolicyEndsLater(view, Ms(*stopped - view.attempts.front()->arrived));
}

namespace {

// The first silence of `entry` that the declared timeouts cut (a correct client times out in
// it), or nullptr.
const provider::Silence* TimedOutSilence(const View& view, const provider::JournalEntry& entry,
                                         bool* ambiguous) {
  if (!view.has_policy()) return nullptr;
  const ref::TimeoutConfig& timeouts = view.policy().timeouts;
  for (const provider::Silence& silence : entry.truth.silences) {
    // A timeout the declaration leaves out may or may not cut the silence: either class goes.
    const bool heartbeats = silence.heartbeat && !silence.before_headers;
    const std::string_view key =
        silence.before_headers ? "timeouts.response_headers_ms" : "timeouts.idle_ms";
    if (!Undeclared(view, {key}).empty() ||
        (heartbeats && !Undeclared(view, {"timeouts.heartbeats_reset_idle"}).empty())) {
      if (ambiguous != nullptr) *ambiguous = true;
      continue;
    }
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

namespace {

// Where the failure happened: in the response's head (an error status, no headers, or a failure
// the response itself puts there) or in its stream.
ref::Phase TruthPhase(const provider::JournalEntry& entry, const std::string& failure_class) {
  const bool error_status = entry.status >= 400;
  const bool headers_came =
      entry.status != 0 &&
      !std::ranges::any_of(entry.truth.silences, [&](const provider::Silence& s) {
        return s.before_headers && failure_class == "timeout" && !s.to;
      });
  return error_status || !headers_came || entry.truth.failure_in_head ? ref::Phase::kResponseHeaders
                                                                      : ref::Phase::kStream;
}

// What the caller had seen when the stream failed: output went out before the silence it times
// out in, or before the failure the response itself ends in.
void AddStreamProgress(const View& view, const provider::JournalEntry& entry,
                       ref::Failure& failure) {
  failure.streamed = true;
  const provider::Silence* silence = TimedOutSilence(view, entry, nullptr);
  const bool output_seen =
      silence != nullptr ? entry.truth.output_from && *entry.truth.output_from <= silence->from
                         : entry.truth.output_before_failure;
  failure.partial_output =
      output_seen ? ref::PartialOutput::kUncommitted : ref::PartialOutput::kNone;
  // `stream_retries: first-event` and `stream_retry_on` read which failure and how far in.
  const bool event_seen = silence != nullptr
                              ? entry.truth.events_from && *entry.truth.events_from <= silence->from
                              : entry.truth.events_before_failure;
  failure.stream_events = event_seen ? 1 : 0;
  failure.error_event = silence == nullptr && entry.truth.error_event;
}

}  // namespace

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
  if (entry.status >= 400) failure.status = entry.status;
  failure.phase = TruthPhase(entry, failure_class);
  if (failure.phase == ref::Phase::kStream && entry.truth.streamed) {
    AddStreamProgress(view, entry, failure);
  }
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

// `check` over every call's own view: the first failure (its evidence naming the call), else a
// pass when any call passes, else the first call's n/a.
Verdict AcrossCalls(const std::vector<View>& calls, Check check) {
  std::optional<Verdict> passed, not_applicable;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    Verdict result = check(calls[i]);
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
Tolerance RealTolerance(Duration lateness) {
  Tolerance tolerance = RealTolerance();
  tolerance.lateness_ms = Ms(lateness);
  tolerance.late_ms += 3 * tolerance.lateness_ms;
  tolerance.early_ms += tolerance.lateness_ms;
  return tolerance;
}

std::string EarlyRoom(const Tolerance& tolerance) {
  if (tolerance.lateness_ms <= 0) return fmt::format("-{:.0f} ms", tolerance.early_ms);
  return fmt::format(
      "-{:.0f} ms: {:.0f} ms and {:.0f} ms of scheduling lateness measured during "
      "the run",
      tolerance.early_ms, tolerance.early_ms - tolerance.lateness_ms, tolerance.lateness_ms);
}

std::string LateRoom(const Tolerance& tolerance) {
  if (tolerance.lateness_ms <= 0) return fmt::format("+{:.0f} ms", tolerance.late_ms);
  return fmt::format(
      "+{:.0f} ms: {:.0f} ms and 3 x {:.0f} ms of scheduling lateness measured "
      "during the run",
      tolerance.late_ms, tolerance.late_ms - 3 * tolerance.lateness_ms, tolerance.lateness_ms);
}

std::span<const InvariantInfo> InvariantCatalog() {
  static constexpr auto kInfo = [] {
    std::array<InvariantInfo, judge_internal::kCatalog.size()> info{};
    for (std::size_t i = 0; i < info.size(); ++i) {
      const auto& entry = judge_internal::kCatalog[i];
      info[i] = {entry.id, entry.statement, entry.severity};
    }
    return info;
  }();
  return kInfo;
}

bool IsBlackBox(const Trace& trace) {
  for (const ClientRecord& record : trace.client) {
    const EventKind type = record.event.kind;
    if (type == EventKind::kStart || type == EventKind::kChunk || type == EventKind::kInterrupted) {
      return false;
    }
  }
  return true;
}

std::vector<report::CheckResult> Judge(const scenario::Scenario& scenario, const Trace& trace,
                                       const Tolerance& tolerance, const PolicyTwin* twin) {
  using namespace judge_internal;
  std::set<std::string> unstated;  // ADV-011's evidence, noted by every check
  const View view = MakeView(scenario, trace, tolerance, twin, &unstated);
  // With several calls, each call is judged on its own requests when the journal attributes
  // them; the checks see a single call then.
  const std::optional<std::vector<Trace>> per_call = SplitByCall(trace);
  std::vector<View> call_views;
  if (per_call) {
    for (const Trace& call : *per_call) {
      call_views.push_back(MakeView(scenario, call, tolerance, twin, &unstated));
    }
  }
  // The expectations run first, so that ADV-011, last of the catalogue, sees what they needed.
  std::vector<CheckResult> expectations = ExpectChecks(view);
  std::vector<CheckResult> results;
  for (const CatalogEntry& entry : kCatalog) {
    // What the calls of one client share (its breakers, its retry budget, where its calls
    // start) is judged over the whole run; so are connections, which any call may reuse.
    const bool whole_run =
        entry.check == RouteStickyHonoured || entry.check == ConnectionsReusedOnlyWhole ||
        (trace.one_client &&
         (entry.check == RouteBreakerHonoured || entry.check == RetryBudgetKept));
    CheckResult result = Named(
        std::string(entry.id), std::string(entry.statement),
        call_views.empty() || whole_run ? entry.check(view) : AcrossCalls(call_views, entry.check));
    result.severity = entry.severity;
    results.push_back(std::move(result));
  }
  for (CheckResult& result : expectations) results.push_back(std::move(result));
  return results;
}

}  // namespace faultline::harness
