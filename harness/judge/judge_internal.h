// Internal to the judge (judge.cc, invariants_*.cc): the trace, pre-digested.
#pragma once

#include <fmt/format.h>

#include <array>
#include <initializer_list>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "harness/judge/declared_policy.h"
#include "harness/judge/judge.h"
#include "harness/trace/protocol.h"

// Event kinds appear in evidence by their protocol names ("response/start").
template <>
struct fmt::formatter<faultline::harness::EventKind> : fmt::formatter<std::string_view> {
  template <typename Context>
  auto format(faultline::harness::EventKind kind, Context& context) const {
    return fmt::formatter<std::string_view>::format(faultline::harness::ToString(kind), context);
  }
};

namespace faultline::harness::judge_internal {

struct CallView {
  std::vector<const ClientRecord*> records;  // this call's lines, in order (hello excluded)
  const ClientRecord* terminal = nullptr;    // the first terminal event
  int terminals = 0;
};

struct View {
  const scenario::Scenario& scenario;
  const Trace& trace;
  Tolerance tolerance;
  DeclaredPolicy declared;
  const PolicyTwin* twin = nullptr;
  bool black_box = false;
  std::vector<CallView> calls;
  std::vector<const provider::JournalEntry*> attempts;  // requests that counted, by arrival
  bool single_call() const { return trace.calls <= 1; }
  bool has_routes() const { return !scenario.routes.empty(); }
  // Some connection may be refused (a listener outage, a route that refuses): those attempts
  // never reach the journal.
  bool refusals() const;
  // The declared policy; only valid when has_policy(). A partial declaration's keys are read
  // only after UnlessDeclared/Undeclared said it states them.
  const ref::RetryPolicy& policy() const { return declared.policy; }
  bool has_policy() const { return declared.usable(); }
  // Where the checks note the keys a partial declaration left out that they needed (ADV-011
  // names them); shared by the views of one Judge() call; null: not noted.
  std::set<std::string>* unstated = nullptr;
};

View MakeView(const scenario::Scenario& scenario, const Trace& trace, const Tolerance& tolerance,
              const PolicyTwin* twin, std::set<std::string>* unstated = nullptr);

// "the subject declares no policy" / "... an invalid policy: ..."; for n/a evidence.
std::string NoPolicy(const View& view);

// When the runner's timeout stopped the subject before its own declared policy would have ended
// its calls (the twin ends them only later, or never): why, for n/a evidence ("its declared
// policy never ends the call: ..."); else "". A subject stopped that way was consistent with its
// policy as far as the run went: LIFE-001 and EXPECT-* cannot judge it, ADV-008 advises.
std::string StoppedBeforeThePolicyEnds(const View& view);

// When the subject sent as many requests as its twin's runs were allowed (PolicyTwin::
// request_bound) or more: the twin never saw what the policy does past that point, so an ending
// there is not compared with it. Why, for n/a evidence; else "".
std::string BeyondTheTwinsBound(const View& view);

using report::CheckResult;
using report::CheckStatus;

// What one check found, before the catalogue (judge.cc) or an EXPECT-* builder names it.
struct Verdict {
  CheckStatus status = CheckStatus::kPass;
  std::string evidence;  // why it failed, or why it does not apply; "" for a pass
};
Verdict Pass();
Verdict Fail(std::string evidence);
Verdict NotApplicable(std::string why);
// `verdict` under its id and statement (the EXPECT-* checks build their statements).
CheckResult Named(std::string id, std::string statement, Verdict verdict);

// A partial declaration (declared_policy.h) is judged only on the keys it states. The keys of
// `needed` ("max_attempts", "backoff", "timeouts.idle_ms") it leaves out, each noted in
// view.unstated; empty when it states them all, or is whole, or there is no declaration.
std::vector<std::string> Undeclared(const View& view, std::span<const std::string_view> needed);
inline std::vector<std::string> Undeclared(const View& view,
                                           std::initializer_list<std::string_view> needed) {
  return Undeclared(view, std::span(needed.begin(), needed.size()));
}
// n/a naming the keys of `needed` the declaration leaves out, or nullopt when it states them all:
//   if (auto unstated = UnlessDeclared(view, {"max_attempts"})) return *unstated;
std::optional<Verdict> UnlessDeclared(const View& view, std::span<const std::string_view> needed);
inline std::optional<Verdict> UnlessDeclared(const View& view,
                                             std::initializer_list<std::string_view> needed) {
  return UnlessDeclared(view, std::span(needed.begin(), needed.size()));
}
// The keys of the retry rules (RetryForbidden, policy.h rules 3-4).
inline constexpr std::array<std::string_view, 7> kRetryRuleKeys{
    "mode",     "retryable_classes",  "retry_phases", "stream_retries", "stream_retry_on",
    "statuses", "should_retry_header"};
// Why the policy twin cannot judge a partial declaration (it runs a whole policy): the keys it
// leaves out, each noted; "" for a whole declaration.
std::string TwinNeedsWholePolicy(const View& view);

// The failure an event reports; an empty one (every field "") when it reports none.
const ReportedFailure& FailureOf(const ClientEvent& event);
// An unmodified app (`faultline run --exec`, worlds/subjects/app_subject.h) reports its outcome by
// its exit status only: a response/committed without `text`, a response/failed without `failure`.
// The checks that read what it cannot say are n/a, never passed:
//   if (auto unreported = UnlessTextReported(view)) return *unreported;
std::optional<Verdict> UnlessTextReported(const View& view);
std::optional<Verdict> UnlessFailureReported(const View& view);
// A black-box subject that reports no attempt count, where the provider may refuse connections
// (which never reach the journal): its number of attempts is unknown, n/a.
std::optional<Verdict> UnlessAttemptsCountable(const View& view);
// A served session judged from its journal alone says nothing of how its calls ended
// (Trace::outcome_unknown): the checks of an ending are n/a.
std::optional<Verdict> UnlessOutcomeKnown(const View& view);
// A string field of a JSON object ("" when absent or not a string): request bodies, never events.
std::string Str(const nlohmann::json& object, const char* key);
double ArrivedMs(const provider::JournalEntry& entry);
double EndedMs(const provider::JournalEntry& entry);
std::string Quote(std::string_view text);  // JSON-quoted, shortened for evidence

// `check(call)` for every call: the first non-empty evidence fails the check, naming its call
// when there are several.
template <typename Check>
Verdict EachCall(const View& view, Check check) {
  for (std::size_t i = 0; i < view.calls.size(); ++i) {
    if (std::string evidence = check(view.calls[i]); !evidence.empty()) {
      return Fail(view.calls.size() > 1 ? fmt::format("call {}: {}", i, evidence) : evidence);
    }
  }
  return Pass();
}

// The checks, by family.
Verdict LifeOneTerminal(const View& view);
Verdict LifeNothingAfterTerminal(const View& view);
Verdict LifeChunksInsideResponse(const View& view);
Verdict LifeInterruptBeforeRetry(const View& view);
Verdict LifeAttemptsAgree(const View& view);
Verdict CommitOneAttempt(const View& view);
Verdict CommitWholeAnswerOnly(const View& view);
Verdict CommitNoRetryAfter(const View& view);
Verdict RetryNotRetryable(const View& view);
Verdict RetryWithinBudget(const View& view);
Verdict RetryBudgetKept(const View& view);
Verdict RetryBackoffBounds(const View& view);
Verdict RetryAfterHonoured(const View& view);
Verdict RetrySameBody(const View& view);
Verdict RetryWhileAllowed(const View& view);
Verdict AdviseRetryAfterPreempted(const View& view);
Verdict AdviseJitter(const View& view);
Verdict AdviseIdleTimeout(const View& view);
Verdict AdviseTransientRetried(const View& view);
Verdict AdviseNonRetryable(const View& view);
Verdict AdviseBoundedWaits(const View& view);
Verdict AdviseShouldRetryFalseObeyed(const View& view);
Verdict AdviseTwinEnds(const View& view);
Verdict TimeStallDetected(const View& view);
Verdict TimeHeadersDeadline(const View& view);
Verdict TimeTotalDeadline(const View& view);
Verdict CancelEndsPromptly(const View& view);
Verdict CancelNoRequestAfter(const View& view);
Verdict CancelClosesStream(const View& view);
Verdict ClassMatchesFault(const View& view);
Verdict ResourcesClosed(const View& view);
Verdict ConnectionsReusedOnlyWhole(const View& view);
Verdict RouteNoFailoverAfterCommit(const View& view);
Verdict RouteNoSplice(const View& view);
Verdict RouteCapabilitiesFit(const View& view);
Verdict RouteRetryAfterHonoured(const View& view);
Verdict RouteBreakerHonoured(const View& view);
Verdict RouteStreamErrorsFailOver(const View& view);
Verdict RouteBudgetAndFastFailure(const View& view);
Verdict RouteBodiesDifferOnlyInModel(const View& view);
Verdict RouteConnectionsClosed(const View& view);
Verdict RouteStickyHonoured(const View& view);
Verdict AdviseSharedFateFailover(const View& view);
Verdict AdviseFastFailingRouteShare(const View& view);
Verdict AdviseFailoverAsTheTaxonomySays(const View& view);
// ADV-011 reads view.unstated, so it runs after every other check (judge.cc).
Verdict AdviseStateEveryKey(const View& view);
// The first attempt after view.attempts[k] on the same route (every attempt, without routes),
// or null.
const provider::JournalEntry* NextOnRoute(const View& view, std::size_t k);

// "judged per route by ROUTE-00x" for a RETRY-* check that a scenario with routes hands over.
Verdict JudgedPerRoute(std::string_view route_check);

std::vector<CheckResult> ExpectChecks(const View& view);
// The facts beyond the ending (expect_facts.cc): literal without a twin, else what stays true
// under the subject's declared policy.
std::vector<CheckResult> ExpectFactChecks(const View& view, const PolicyTwin* twin);

// Whether a reported failure's code stands for `wanted_code`: the same code, or another of the
// same class (ref::ClassOf) reported with the retryability a correct client gives the wanted
// one (`wanted_retryable`; nullopt: unknown, so only the same code will do). SERVER for a 503
// that a client calls UNAVAILABLE is such a pair: nothing a policy or a check does tells them
// apart.
bool CodeMatches(const ReportedFailure& got, std::string_view wanted_code,
                 std::optional<bool> wanted_retryable);
// The retryability a correct client gives the failure of attempt `k` (view.attempts[k]) under
// the declared policy's reading of x-should-retry; nullopt when the journal cannot say which
// attempt that is (several calls, refused connections) or the provider promises nothing.
std::optional<bool> TruthRetryable(const View& view, std::size_t k);

// The gap the client waited between the end of attempt k and the arrival of attempt k+1.
double GapMs(const View& view, std::size_t k);

// The retry hints of `entry` that a client reads as `policy` declares: from its retry_after
// sources, on a status it reads them on, when it honours hints at all. Without a declaration
// (nullptr), the Retry-After headers (kRetryAfterHeaderSources).
struct HintsRead {
  std::vector<ref::RetryHint> values;  // strongest first
  bool unreadable = false;  // a field of a source it reads holds nothing the parsers can value
};
// `wall_start`: the wall clock at the trace's time zero, which a Date.parse reading
// (retry_after.parse: date-parse) measures a date against.
HintsRead ReadHintsOf(const provider::JournalEntry& entry, const ref::RetryPolicy* policy,
                      std::chrono::system_clock::time_point wall_start);
HintsRead ReadHintsOf(const View& view, const provider::JournalEntry& entry);

// What the hints read ask of the next attempt under the declared cap. A client that reads
// several sources may act on any of them (the policy format cannot say which it prefers): it owes
// the least wait they ask within the cap (none when acting on one means its backoff: a hint over
// the cap with over_cap "backoff", or the weak ratelimit-reset over it), may take the longest
// within the cap, and may give up on a hint over the cap with over_cap "give-up".
struct HintDemand {
  std::optional<double> floor_ms;     // the least wait owed (0: none); nullopt: no hint within
  std::string floor_source;           // the source of the least hint within the cap
  std::optional<double> longest_ms;   // the longest read hint within the cap
  std::optional<double> over_cap_ms;  // the least read hint over the cap it gives up on
  bool backoff_allowed = false;       // acting on some read hint means its backoff
};
HintDemand DemandOf(const View& view, const provider::JournalEntry& entry);

// A delay range in milliseconds; an upper bound >= 1e299 means "any".
struct Window {
  double lower_ms, upper_ms;
};

// Every delay the declared policy may have waited before the retry after attempt k (needs a
// usable policy): its backoff window, or one governed by any hint the response carried (whether
// it waits the hint instead of its backoff or on top of it; a zero hint may mean "at once").
// RETRY-003 judges by it, and the timeline draws it (timeline_bounds.h).
std::vector<Window> AllowedGaps(const View& view, std::size_t k);

// The class a correct client reports for `entry` under the declared policy: a silence longer
// than the declared idle/headers timeout makes it "timeout"; else the provider's truth ("" when
// the provider promises nothing). A silence that ends within the tolerance of the timeout may
// go either way: `ambiguous` (when given) is set then.
std::string ExpectedClass(const View& view, const provider::JournalEntry& entry,
                          bool* ambiguous = nullptr);

// The failure a correct client makes of `entry` (class, retryability, status, phase), for the
// policy's own retry rules; nullopt when the provider promises nothing or it is an answer.
std::optional<ref::Failure> TruthFailure(const View& view, const provider::JournalEntry& entry);

// Why the declared policy never retries `entry`'s failure, or nullopt when it may.
std::optional<ref::GiveUpReason> PolicyForbids(const View& view,
                                               const provider::JournalEntry& entry);

}  // namespace faultline::harness::judge_internal
